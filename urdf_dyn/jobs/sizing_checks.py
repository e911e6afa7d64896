"""The excavator's machine checks in ``job: size`` (sections ``iso6015``, ``lift_chart``, ``working_range``,
``stability``, ``reference``): each reads its scenario section, refuses bad input with a one-line error naming
the key (``scenario.err``) and computes the check; ``reports.excavator_report`` draws and writes them. One
tipping polygon (``stability.track`` or ``stability.footprint``) serves the ZMP check, the lift chart and
ISO 6015's tipping limit.

ISO 6015, the lift chart, the working ranges and the stall envelopes depend only on the robot and on a few
scenario sections (``GEOMETRY_KEYS``), never on the motion, the soil or the payload: each is taken from the
run's ``jobs.geometry_cache.GeometryCache`` (a sweep worker's memory tier, the disk tier between runs;
``URDF_DYN_CACHE=off`` or ``urdf-dyn run --no-cache`` recomputes them)."""
from __future__ import annotations

import numpy as np

__all__ = ["tipping_polygon_of", "machine_checks", "stability_check", "GEOMETRY_KEYS", "geometry_cached"]

#: the scenario sections each geometry-only check reads (besides the robot): its cache key. Whole sections,
#: so that any key inside them (a bore, a frame, a published figure) changes the key.
GEOMETRY_KEYS = {
    "iso6015": ("iso6015", "frames", "actuators", "stability", "reference"),
    "lift_chart": ("lift_chart", "actuators", "stability"),
    "working_range": ("working_range", "frames", "reference"),
    "stall": ("iso6015", "frames", "actuators", "stability", "design.friction", "design.stall_relief",
              "design.swing_bearing"),
    "lateral": ("iso6015", "frames", "actuators", "stability", "hydraulics", "soil.width", "design.stall_relief",
                "design.swing_bearing", "design.lateral"),
}


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
                              include_weight=iso.include_weight, footprint=polygon, reference=reference,
                              arm_bucket=iso.arm_bucket)
    except (KeyError, ValueError) as e:
        raise launch.err("iso6015", e.args[0]) from None


def geometry_cached(cache, launch, check: str, compute, extra=None, model=None):
    """``cache.get`` of the geometry-only ``check`` (its sections ``GEOMETRY_KEYS[check]``); ``compute()`` when
    no cache is given."""
    if cache is None:
        return compute()
    return cache.get(launch, check, GEOMETRY_KEYS[check], compute, extra=extra, model=model)


def machine_checks(launch, model, cyl, frames, cache=None):
    """ISO 6015, the lift chart and the working ranges, when asked (they do not depend on the motion), each
    from ``cache`` (a ``GeometryCache``) when it holds them. Returns {name: result}."""
    doc = launch.doc
    out = {}
    polygon = tipping_polygon_of(launch)
    if doc.iso6015 is not None:
        out["iso6015"] = geometry_cached(cache, launch, "iso6015",
                                         lambda: _iso6015(launch, model, cyl, frames, polygon), model=model)
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
        out["lift_chart"] = geometry_cached(cache, launch, "lift_chart", _lift, model=model)
    if doc.working_range is not None:
        from urdf_dyn.machines.working_range import working_range
        tip = _frame(launch, frames, "working_range.tip", doc.working_range.tip)
        ref = {k: dict(value=v.value, source=v.source) for k, v in _reference(launch, "working_range").items()}
        def _ranges():
            try:
                return working_range(model, (tip.link, tuple(tip.xyz)), reference=ref)
            except (KeyError, ValueError) as e:
                raise launch.err("working_range", e.args[0]) from None
        out["working_range"] = geometry_cached(cache, launch, "working_range", _ranges, model=model)
    return out


def stability_check(launch, model, t, Q, QD, QDD, f_ext, echo):
    """The tipping margin along the motion, when asked (``stability``). Returns the StabilityResult or None."""
    import warnings
    st = launch.doc.stability
    if st is None:
        return None
    from urdf_dyn.machines.stability import zmp_margin
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = zmp_margin(model, tipping_polygon_of(launch), Q, QD, QDD, f_ext=f_ext or None, t=t,
                             z_ground=st.ground_height)
        except ValueError as e:
            raise launch.err("stability.footprint", str(e)) from None
    for w in caught:
        echo(f"WARNING: stability: {w.message}")
    return out
