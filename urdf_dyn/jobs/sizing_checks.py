"""The excavator's machine checks in ``job: size`` (sections ``iso6015``, ``lift_chart``, ``working_range``,
``stability``, ``reference``): each reads its scenario section (checked by the plan) and computes the check; ``reports.excavator_report`` draws and writes them. One
tipping polygon (``stability.track`` or ``stability.footprint``) serves the ZMP check, the lift chart and
ISO 6015's tipping limit.

Every key these checks read is checked before any work by the plan (``jobs.excavator_plan``, through
``ExcavatorKind.plan``); a check the machine cannot compute for a valid scenario is a ModelError naming the
robot file and the check.

ISO 6015, the lift chart, the working ranges and the stall envelopes depend only on the robot and on a few
scenario sections (``GEOMETRY_KEYS``), never on the motion, the soil or the payload: each is taken from the
run's ``jobs.geometry_cache.GeometryCache`` (a sweep worker's memory tier, the disk tier between runs;
``URDF_DYN_CACHE=off`` or ``urdf-dyn run --no-cache`` recomputes them)."""
from __future__ import annotations

import numpy as np

__all__ = ["tipping_polygon_of", "machine_checks", "stability_check", "GEOMETRY_KEYS", "geometry_cached",
           "geometry_ahead"]

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


def _failed(launch, check, e):
    """A check the machine cannot compute for a valid scenario (every key was checked by the plan,
    ``jobs.excavator_plan``): a ModelError naming the robot file and the check."""
    from urdf_dyn.errors import ModelError
    return ModelError(str(e.args[0]) if e.args else str(e), file=launch.path.parent / launch.doc.robot.file,
                      element=check)


def _iso6015(launch, model, cyl, frames, polygon):
    """ISO 6015's digging forces; the lip, tip, cylinders and reliefs checked by ``jobs.excavator_plan``."""
    from urdf_dyn.machines.iso6015 import digging_forces
    iso = launch.doc.iso6015
    lip = frames[iso.lip]
    ref = _reference(launch, "iso6015")
    reference = {}
    for ours, key in (("bucket_N", "bucket_digging_force_N"), ("arm_N", "arm_digging_force_N")):
        if key in ref:
            reference[ours] = ref[key].value
    if ref:
        reference["source"] = "; ".join(sorted({v.source for v in ref.values()}))
    try:
        return digging_forces(model, cyl, iso.relief, (lip.link, tuple(lip.xyz)), holding_relief=iso.holding_relief,
                              include_weight=iso.include_weight, footprint=polygon, reference=reference,
                              arm_bucket=iso.arm_bucket)
    except (KeyError, ValueError) as e:
        raise _failed(launch, "iso6015", e) from None


def geometry_cached(cache, launch, check: str, compute, extra=None, model=None):
    """``cache.get`` of the geometry-only ``check`` (its sections ``GEOMETRY_KEYS[check]``); ``compute()`` when
    no cache is given."""
    if cache is None:
        return compute()
    return cache.get(launch, check, GEOMETRY_KEYS[check], compute, extra=extra, model=model)


def geometry_ahead(cache, launch, check: str, compute, start, extra=None, model=None) -> bool:
    """Start computing the geometry-only ``check`` beside the job (``cache.ahead``, ``start`` the job's
    ``jobs.beside.Beside.start``) unless the cache holds it; its later ``geometry_cached`` with the same
    arguments takes the result. Nothing is started without a cache."""
    if cache is None:
        return False
    return cache.ahead(launch, check, GEOMETRY_KEYS[check], compute, start, extra=extra, model=model)


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
        lc = doc.lift_chart          # the polygon and the lift cylinder: checked by the plan
        opts = LiftChartOptions(radii=tuple(lc.radii), heights=tuple(lc.heights), footprint=polygon,
                                lift_pressure=lc.lift_pressure, holding_pressure=lc.holding_pressure)
        def _lift():
            try:
                return lift_chart(model, cyl, opts)
            except (KeyError, ValueError) as e:
                raise _failed(launch, "lift_chart", e) from None
        out["lift_chart"] = geometry_cached(cache, launch, "lift_chart", _lift, model=model)
    if doc.working_range is not None:
        from urdf_dyn.machines.working_range import working_range
        tip = frames[doc.working_range.tip]
        ref = {k: dict(value=v.value, source=v.source) for k, v in _reference(launch, "working_range").items()}
        def _ranges():
            try:
                return working_range(model, (tip.link, tuple(tip.xyz)), reference=ref)
            except (KeyError, ValueError) as e:
                raise _failed(launch, "working_range", e) from None
        out["working_range"] = geometry_cached(cache, launch, "working_range", _ranges, model=model)
    return out


def stability_check(launch, model, t, Q, QD, QDD, f_ext, echo, poses=None):
    """The tipping margin along the motion, when asked (``stability``); ``poses`` the body poses at Q
    (``SizingRun.poses``). Returns the StabilityResult or None."""
    import warnings
    st = launch.doc.stability
    if st is None:
        return None
    from urdf_dyn.machines.stability import zmp_margin
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = zmp_margin(model, tipping_polygon_of(launch), Q, QD, QDD, f_ext=f_ext or None, t=t,
                             z_ground=st.ground_height, poses=poses)
        except ValueError as e:
            raise _failed(launch, "stability", e) from None
    for w in caught:
        echo(f"WARNING: stability: {w.message}")
    return out
