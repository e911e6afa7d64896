"""The sizing job's machine checks (``job: size``, sections ``iso6015``, ``lift_chart``, ``working_range``,
``stability``, ``reference``): each reads its scenario section, refuses bad input with a one-line error naming
the key (``launch.err``), computes the check and submits its plot. One tipping polygon (``stability.track``
or ``stability.footprint``) serves the ZMP check, the lift chart and ISO 6015's tipping limit.

Reuse between the cases of a sweep (issue 27): ISO 6015, the lift chart, the working ranges and the stall
envelopes depend only on the robot and on a few scenario sections, never on the motion, the soil or the
payload. Inside ``reuse_geometry_checks()`` (the sweep's ``run_case``) each is computed once per key — the
SHA-256 of the robot file's bytes, the ``robot`` section and the sections the check reads
(``GEOMETRY_KEYS``) — and later cases get their own copy (unpickled). A sweep that varies one of those
sections, or the robot file, gets a different key and a fresh computation.

Between runs (issue 27, the warm job): the same results are kept on disk (``jobs.disk_cache``), keyed
also by the model's content and the library's sources, so that a second run of the same machine takes them
from there; ``URDF_DYN_CACHE=off`` or ``urdf-dyn run --no-cache`` recomputes them."""
from __future__ import annotations

import contextlib
import hashlib
import json
import pickle
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

__all__ = ["tipping_polygon_of", "machine_checks", "stability_check", "GEOMETRY_KEYS", "geometry_key",
           "reuse_geometry_checks", "geometry_cached", "geometry_cache_stats", "export_geometry", "import_geometry",
           "served_from_disk", "geometry_plot"]

#: the scenario sections each geometry-only check reads (besides the robot): its cache key. Whole sections,
#: so that any key inside them (a bore, a frame, a published figure) changes the key.
GEOMETRY_KEYS = {
    "iso6015": ("iso6015", "frames", "actuators", "stability", "reference"),
    "lift_chart": ("lift_chart", "actuators", "stability"),
    "working_range": ("working_range", "frames", "reference"),
    "stall": ("iso6015", "frames", "actuators", "stability", "design.friction", "design.stall_relief"),
}
_CACHE_SIZE = 32                      # entries: a sweep over a few robot files and cylinder sets
_cache: "OrderedDict[str, object]" = OrderedDict()
_stats = {"hits": 0, "misses": 0}
_from_disk: list = []
_kept: dict = {}                     # check -> its result's file in the disk cache (this job)
_lock = threading.Lock()              # the cache is per process; a Dask worker may run cases in threads
_local = threading.local()            # reuse_geometry_checks is per thread: only the sweep's cases use it


def _section(doc, path):
    node = doc
    for k in path.split("."):
        node = getattr(node, k, None) if node is not None else None
    if hasattr(node, "model_dump"):
        return node.model_dump(mode="json")
    if isinstance(node, dict):
        return {k: (v.model_dump(mode="json") if hasattr(v, "model_dump") else v) for k, v in node.items()}
    return node


def geometry_key(launch, check: str, extra=None) -> str:
    """SHA-256 (hex) of what the geometry-only ``check`` ("iso6015", "lift_chart", "working_range", "stall")
    depends on: the robot file's bytes, the ``robot`` section, the scenario sections ``GEOMETRY_KEYS[check]``
    and ``extra`` (JSON-able). Raises KeyError for an unknown check."""
    robot = launch.doc.robot
    f = (launch.path.parent / robot.file).resolve()
    try:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
    except OSError:
        digest = "missing"
    parts = {"check": check, "robot_file": str(f), "robot_sha256": digest, "robot": _section(launch.doc, "robot"),
             "sections": {k: _section(launch.doc, k) for k in GEOMETRY_KEYS[check]}, "extra": extra}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@contextlib.contextmanager
def reuse_geometry_checks():
    """Within this block (in this thread), ``geometry_cached`` keeps each geometry-only result (in this
    process, at most ``_CACHE_SIZE`` of them, least recently used dropped) and serves copies of it for an
    equal key."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def geometry_cached(launch, check: str, compute, extra=None, model=None):
    """``compute()`` — or a copy of the result stored under ``geometry_key(launch, check, extra)``:

    - inside ``reuse_geometry_checks`` (a sweep's cases), the result computed on the first call with that
      key in this process, held pickled, so each case unpickles its own copy (a case that changed its copy
      cannot change another's; 20 ms for the 13 MB stall envelopes, a deep copy takes 80 ms);
    - with ``model`` given and the disk cache on (``jobs.disk_cache``: ``URDF_DYN_CACHE``, ``urdf-dyn run
      --no-cache``), the result an earlier run kept on disk for the same key, the same model content and
      the same library sources; a result computed here is kept there.

    Errors are not stored. ``served_from_disk()`` lists the checks this process took from the disk."""
    from urdf_dyn.jobs import disk_cache
    reuse = getattr(_local, "depth", 0)
    on_disk = model is not None and disk_cache.enabled()
    if not reuse and not on_disk:
        return compute()
    key = geometry_key(launch, check, extra)
    if reuse:
        with _lock:
            blob = _cache.get(key)
            if blob is not None:
                _stats["hits"] += 1
                _cache.move_to_end(key)
            else:
                _stats["misses"] += 1
        if blob is not None:
            return pickle.loads(blob)
    kept = disk_cache.path_of(key, model) if on_disk else None
    result = disk_cache.load(kept) if on_disk else None
    if result is not None:
        with _lock:
            _from_disk.append(check)
            _kept[check] = kept
    else:
        result = compute()
        if on_disk and disk_cache.store(kept, result):
            with _lock:
                _kept[check] = kept
    if reuse:
        blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        with _lock:
            _cache[key] = blob
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return result


def served_from_disk(clear=False) -> list:
    """The checks ("iso6015", "lift_chart", "working_range", "stall") this process took from the disk cache,
    in order; ``clear`` empties the list and forgets the kept results' files (a job calls it at its start)."""
    with _lock:
        out = list(_from_disk)
        if clear:
            _from_disk.clear()
            _kept.clear()
    return out


def geometry_plot(plots, check: str, path, fn, *args):
    """Submit the plot ``fn(*args)`` (which writes ``path``) of the geometry-only ``check`` to ``plots`` —
    or, when the check's result is kept on disk (``geometry_cached`` with a model) and an earlier run kept
    its plot, copy that plot to ``path``. A plot drawn here is kept beside its result. Returns what
    ``plots.submit`` returns (str(path); None from a sink that draws nothing)."""
    from urdf_dyn.jobs import disk_cache
    with _lock:
        result_path = _kept.get(check)
    if result_path is None or not getattr(plots, "draws", True):
        return plots.submit(path, fn, *args)
    kept = disk_cache.kept_plot_path(result_path, Path(path).name)
    if disk_cache.copy_out(kept, path):
        return str(path)
    return plots.submit(path, _draw_and_keep, kept, path, fn, *args)


def _draw_and_keep(kept, path, fn, *args):
    """``fn(*args)``, then a copy of ``path`` kept as ``kept`` (in a plot worker: module level, picklable)."""
    from urdf_dyn.jobs import disk_cache
    out = fn(*args)
    disk_cache.keep_file(path, kept)
    return out


def export_geometry() -> dict:
    """This process's geometry cache: {key: pickled result} (to hand to other processes of a sweep)."""
    with _lock:
        return dict(_cache)


def import_geometry(blobs: dict) -> int:
    """Add ``blobs`` ({key: pickled result}, from ``export_geometry`` of another process of the same
    sweep) to this process's cache; returns how many were new. The keys say what each result was computed
    from, so a result serves only the cases with equal inputs."""
    new = 0
    with _lock:
        for k, v in blobs.items():
            if k not in _cache:
                _cache[k], new = v, new + 1
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return new


def geometry_cache_stats(clear=False) -> dict:
    """{"hits", "misses", "entries"} of this process's geometry cache; ``clear`` empties it and resets the counts."""
    with _lock:
        out = dict(_stats, entries=len(_cache))
        if clear:
            _cache.clear()
            _stats.update(hits=0, misses=0)
    return out


def tipping_polygon_of(launch):
    """The one tipping polygon (k, 2) [m] of the ZMP check, the lift chart and ISO 6015's tipping limit, from
    ``stability.track`` or ``stability.footprint`` (None without a stability section)."""
    st = launch.doc.stability
    if st is None:
        return None
    if (st.track is None) == (st.footprint is None):
        raise launch.err("stability", "give exactly one of track: {roller_length, gauge} or footprint: [[x, y], ...]")
    if st.track is not None:
        from urdf_dyn.machines.stability import tipping_polygon
        return tipping_polygon(st.track.roller_length, st.track.gauge)
    from urdf_dyn.machines.stability import polygon_margin
    try:
        polygon_margin(np.zeros((1, 2)), st.footprint)
    except ValueError as e:
        raise launch.err("stability.footprint", str(e)) from None
    return np.asarray(st.footprint, float)


def _reference(launch, prefix):
    """{key without the prefix: value} and the sources, of the scenario's ``reference:`` figures."""
    ref = {k[len(prefix) + 1:]: v for k, v in launch.doc.reference.items() if k.startswith(prefix + ".")}
    return ref


def _frame(launch, frames, key, name):
    fr = frames.get(name)
    if fr is None:
        raise launch.err(key, f"unknown frame {name!r} (frames: {', '.join(frames) or 'none'})")
    return fr


def _iso6015(launch, model, cyl, frames, polygon):
    from urdf_dyn.machines.iso6015 import digging_forces
    iso = launch.doc.iso6015
    lip = _frame(launch, frames, "iso6015.lip", iso.lip)
    if iso.tip is not None:
        tip = _frame(launch, frames, "iso6015.tip", iso.tip)
        if tip.link != lip.link:
            raise launch.err("iso6015.lip", f"the lip ({lip.link}) and the tip ({tip.link}) must be on one link")
        if np.linalg.norm(lip.xyz) > np.linalg.norm(tip.xyz) + 1e-9:
            raise launch.err("iso6015.lip", f"the lip ({np.linalg.norm(lip.xyz):.3f} m from the {lip.link} pivot) is "
                             f"farther out than the tooth tip ({np.linalg.norm(tip.xyz):.3f} m)")
    h = iso.holding_relief
    for k, v in (h.items() if isinstance(h, dict) else [(None, h)]):
        key = "iso6015.holding_relief" + (f".{k}" if k else "")
        if not (v.head > 0 and v.rod > 0 if hasattr(v, "head") else v > 0):   # a {head, rod} pair is checked by its schema
            raise launch.err(key, f"must be > 0 [Pa], got {v:g}")
        if k is not None and k not in cyl:
            raise launch.err(key, f"no such cylinder ({', '.join(cyl) or 'none in actuators.cylinders'})")
    ref = _reference(launch, "iso6015")
    reference = {}
    for ours, key in (("bucket_N", "bucket_digging_force_N"), ("arm_N", "arm_digging_force_N")):
        if key in ref:
            reference[ours] = ref[key].value
    if ref:
        reference["source"] = "; ".join(sorted({v.source for v in ref.values()}))
    try:
        return digging_forces(model, cyl, iso.relief, (lip.link, tuple(lip.xyz)), holding_relief=h,
                              include_weight=iso.include_weight, footprint=polygon, reference=reference)
    except (KeyError, ValueError) as e:
        raise launch.err("iso6015", e.args[0]) from None


def machine_checks(launch, model, cyl, frames, plots, outdir, plotted):
    """ISO 6015, the lift chart and the working ranges, when asked (they do not depend on the motion:
    computed first, so that their plots are drawn while the motion is), each plot submitted to ``plots`` as
    soon as its result exists (its path put in ``plotted``). Returns {name: result}."""
    doc = launch.doc
    out = {}
    polygon = tipping_polygon_of(launch)
    if doc.iso6015 is not None:
        out["iso6015"] = geometry_cached(launch, "iso6015", lambda: _iso6015(launch, model, cyl, frames, polygon),
                                         model=model)
        path = Path(outdir) / "digging_envelope.png"
        plotted["envelope_png"] = geometry_plot(plots, "iso6015", path, out["iso6015"].plot_envelope, path)
    if doc.lift_chart is not None:
        from urdf_dyn.machines.lift_chart import LiftChartOptions, lift_chart
        lc = doc.lift_chart
        if polygon is None:
            raise launch.err("lift_chart", "needs the tipping polygon of the ZMP check: add stability: {track: "
                             "{roller_length, gauge}} (or stability.footprint)")
        opts = LiftChartOptions(radii=tuple(lc.radii), heights=tuple(lc.heights), footprint=polygon,
                                lift_pressure=lc.lift_pressure, holding_pressure=lc.holding_pressure)
        def _lift():
            try:
                return lift_chart(model, cyl, opts)
            except (KeyError, ValueError) as e:
                raise launch.err("lift_chart", e.args[0]) from None
        out["lift_chart"] = geometry_cached(launch, "lift_chart", _lift, model=model)
        path = Path(outdir) / "lift_chart.png"
        plotted["lift_chart_png"] = geometry_plot(plots, "lift_chart", path, out["lift_chart"].plot, path)
    if doc.working_range is not None:
        from urdf_dyn.machines.working_range import working_range
        tip = _frame(launch, frames, "working_range.tip", doc.working_range.tip)
        ref = {k: dict(value=v.value, source=v.source) for k, v in _reference(launch, "working_range").items()}
        def _ranges():
            try:
                return working_range(model, (tip.link, tuple(tip.xyz)), reference=ref)
            except (KeyError, ValueError) as e:
                raise launch.err("working_range", e.args[0]) from None
        out["working_range"] = geometry_cached(launch, "working_range", _ranges, model=model)
        path = Path(outdir) / "working_range.png"
        plotted["working_range_png"] = geometry_plot(plots, "working_range", path, out["working_range"].plot, path)
    return out


def stability_check(launch, model, t, Q, QD, QDD, f_ext, echo, plots, outdir, plotted):
    """The tipping margin along the motion, when asked (its plot submitted to ``plots``). Returns
    {"stability": result} or {}."""
    import warnings

    from urdf_dyn.reports.report import sizing_plot
    doc = launch.doc
    out = {}
    if doc.stability is not None:
        from urdf_dyn.machines.stability import zmp_margin
        st = doc.stability
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out["stability"] = zmp_margin(model, tipping_polygon_of(launch), Q, QD, QDD, f_ext=f_ext or None,
                                              t=t, z_ground=st.ground_height)
            except ValueError as e:
                raise launch.err("stability.footprint", str(e)) from None
        for w in caught:
            echo(f"WARNING: stability: {w.message}")
        plotted["zmp_png"] = sizing_plot(plots, "zmp_png", outdir, out["stability"])
    return out
