"""The out-of-plane load cases in ``job: size``: computed when the scenario has a ``design.lateral`` section
besides what the stall envelopes need (``iso6015`` with its lip, pins): corner-tooth digging per stalling
cylinder (``machines.lateral_cases``), the swing stall against a wall and the eccentric tooth load at
``design.lateral.swing_relief`` (the swing motor's displacement from ``hydraulics.motors``), the slewing ring
at the tipping limit (``machines.slewing_ring``) and the end-stop impacts at ``cushion_length``
(``machines.end_stop``); their case-matrix rows (``machines.case_matrix.lateral_rows``) and FE free bodies
(``machines.fe_export.free_bodies``) go into the stall report's tables (``reports.fe_report``)."""
from __future__ import annotations

import numpy as np

__all__ = ["LateralReport", "run_lateral"]

STROKES = ("boom_cyl", "stick_cyl", "bucket_cyl")


class LateralReport:
    """``cases`` [LateralCase], ``end_stops`` [EndStopCase], ``ring_tipping`` (dict or None), ``rows``
    [CaseRow], ``free_bodies`` [FreeBody], ``settings`` (JSON-ready inputs: width, torque, cushion, ...)."""

    def __init__(self, cases, end_stops, ring_tipping, rows, free_bodies, settings):
        self.cases, self.end_stops, self.ring_tipping = cases, end_stops, ring_tipping
        self.rows, self.free_bodies, self.settings = rows, free_bodies, settings


def _swing_displacement(launch, motor):
    h = launch.doc.hydraulics
    m = None if h is None else h.motors.get(motor)
    if m is None:
        raise launch.err("design.lateral.swing_motor", f"no motor {motor!r} in hydraulics.motors")
    if m.displacement is not None:
        return m.displacement
    if m.torque is None:
        raise launch.err(f"hydraulics.motors.{motor}", "give displacement or torque (with relief)")
    return m.torque / (m.relief or h.relief)


def run_lateral(launch, model, cyl, frames, pins, swing, footprint, n=(13, 13, 13), n_fan=36):
    """A LateralReport, or None without ``design.lateral``. ``pins`` {name: PinSpec}; ``swing`` the ring's
    joint (or None); ``footprint`` the tipping polygon. Raises ScenarioError naming the key for bad input."""
    from urdf_dyn.machines import lateral_cases as lc
    from urdf_dyn.machines.case_matrix import lateral_rows
    from urdf_dyn.machines.end_stop import end_stop_impacts
    from urdf_dyn.machines.fe_export import free_bodies
    from urdf_dyn.machines.slewing_ring import ring_at_tipping_limit
    from urdf_dyn.machines.stall import stall_envelopes, stroke_range
    from urdf_dyn.machines.stroke_map import StrokeMap
    doc = launch.doc
    spec = doc.design.lateral
    if spec is None or doc.iso6015 is None or not pins:
        return None
    iso = doc.iso6015
    lip = frames[iso.lip]
    width = spec.bucket_width or (doc.soil.width if doc.soil is not None else None)
    if width is None:
        raise launch.err("design.lateral.bucket_width", "give the bucket width (or soil.width)")
    relief = doc.design.stall_relief or iso.relief
    corner = lc.corner_point(lip.xyz, width / 2)
    settings = dict(bucket_width_m=width, corner_tooth_m=corner.tolist(), stall_relief_Pa=relief, grid=list(n),
                    n_fan=n_fan, lug_spacing_m=dict(spec.lug_spacing))
    try:
        env = stall_envelopes(model, cyl, relief, (lip.link, corner), holding_relief=iso.holding_relief,
                              footprint=footprint, n=n, n_fan=n_fan)
        kw = dict(swing=swing, spacing=dict(spec.lug_spacing))
        kw["pin_field"] = lc.case_field(model, env, pins, swing)          # shared by the three cases
        T = None
        if spec.swing_relief is not None:
            D = _swing_displacement(launch, spec.swing_motor)
            T = lc.swing_torque(D, spec.swing_relief)
            settings.update(swing_relief_Pa=spec.swing_relief, swing_displacement_m3_rad=D, swing_torque_Nm=T)
        cases = lc.corner_tooth_cases(model, env, pins, torque=T, **kw)
        if T is not None:
            cases.append(lc.swing_stall_case(model, env, pins, T, footprint, min_reach=spec.min_reach, **kw))
            cases.append(lc.eccentric_tooth_case(model, env, pins, T, footprint, min_reach=spec.min_reach, **kw))
        ring_tip = None
        if footprint is not None and swing is not None:
            down = stall_envelopes(model, cyl, relief, (lip.link, np.asarray(lip.xyz, float)),
                                   holding_relief=iso.holding_relief, footprint=None, n=n, fan_deg=[270.0])
            hold = np.max([down.fan[c]["all_N"][:, 0] for c in down.working], axis=0)
            ring_tip = ring_at_tipping_limit(model, down.Q, (lip.link, lip.xyz), footprint, hold, swing)
            ring_tip.update(relief=relief, holding=iso.holding_relief)
        stops = []
        if spec.cushion_length is not None:
            poses, speeds = _end_poses(model, cyl, doc, StrokeMap, stroke_range)
            areas = {(c, e): cyl[c].annulus_area if e == "extend" else cyl[c].cap_area for c, e in poses}
            stops = end_stop_impacts(model, poses, speeds, spec.cushion_length, spec.cushion_xi, pins, _acts(model),
                                     swing, areas)
            settings.update(cushion_length_m=spec.cushion_length, cushion_xi=spec.cushion_xi)
            from urdf_dyn.machines.reliefs import line_relief
            settings["cushion_length_at_line_relief_m"] = {
                f"{e.cylinder} {e.end}": e.required_length(line_relief(iso.holding_relief, e.cylinder)[
                    1 if e.end == "extend" else 0], spec.cushion_xi) for e in stops}
    except KeyError as e:
        raise launch.err("design.lateral", str(e.args[0])) from None
    except ValueError as e:
        raise launch.err("design.lateral", str(e)) from None
    rows = lateral_rows(cases, stops, ring_tip, list(pins))
    fb = []
    for c in cases:
        for s in c.states:
            fb += free_bodies(model, s["name"], s["q"], f_ext={c.link: _wrench(model, c.link, s)},
                              points={c.link: s["point"]})
    if ring_tip is not None:
        s = dict(q=ring_tip["q"], force=ring_tip["force"], point=ring_tip["point"])
        fb += free_bodies(model, "slewing ring at the tipping limit", s["q"],
                          f_ext={lip.link: _wrench(model, lip.link, s)}, points={lip.link: s["point"]})
    for e in stops:
        for s in e.states:
            fb += free_bodies(model, s["name"], s["q"], s["qd"], s["qdd"])
    return LateralReport(cases, stops, ring_tip, rows, fb, settings)


def _wrench(model, link, s):
    """The link-frame wrench (6,) [n; f] about the link origin of the root-frame force s["force"] at
    s["point"] (link frame), at pose s["q"]."""
    from urdf_dyn.machines.poses import body_poses
    lf = model.link(link)
    R = (body_poses(model, np.asarray(s["q"], float)[None])[0, lf.body] @ np.asarray(lf.T_body_link))[:3, :3]
    f = R.T @ np.asarray(s["force"], float)
    return np.r_[np.cross(np.asarray(s["point"], float), f), f]


def _acts(model):
    from urdf_dyn.constraints.inverse import actuators_of
    return tuple(a.name for a in actuators_of(model))


def _end_poses(model, cyl, doc, StrokeMap, stroke_range):
    """({(cylinder, end): poses (9, nv)}, {(cylinder, end): speed [m/s]}): each cylinder at each stroke end
    (``stall.stroke_range``: 1 % inside), the other two on a 3 x 3 grid of their strokes; the speed the
    valve section's flow (hydraulics.supply, else pump_flow) over the moving side's area."""
    rng = stroke_range(model, STROKES)
    smap = StrokeMap(model, model.q_initial(), STROKES, _acts(model))
    h = doc.hydraulics
    poses, speeds = {}, {}
    for c in STROKES:
        if c not in cyl:
            continue
        a, b = [o for o in STROKES if o != c]
        flow = h.supply.get(c, h.pump_flow)
        for end, x in (("extend", rng[c][1]), ("retract", rng[c][0])):
            grid = [{c: x, a: u, b: w} for u in np.linspace(*rng[a], 3) for w in np.linspace(*rng[b], 3)]
            poses[(c, end)] = smap.compose(grid)
            speeds[(c, end)] = flow / cyl[c].cap_area if end == "extend" else -flow / cyl[c].annulus_area
    return poses, speeds
