"""ISO 10567 lift capacity of a hydraulic excavator from its closed-loop model.

**Rating** (ISO 10567:2007 as quoted by Caterpillar's Operation & Maintenance Manual, "Lifting capacities"):
the rated load at a load point is the lesser of 75 % of the static tipping load and 87 % of the hydraulic
lift capacity. Cat's standard conditions, modelled here: lift point at the stick nose (the bucket pin)
*without bucket* (the ``bucket`` link's mass is removed; its linkage and cylinder stay on the stick, the
massless bucket keeping the H-link loop closed — this moves weight between the stick and the bucket
cylinder only, not the machine's moment about a tipping line), steel track, firm level ground. A cell limited by hydraulics is marked ``*`` (Cat's chart convention).

**Load point and pose.** Radius = horizontal distance from the swing axis to the load point, height = its
height above the ground [Caterpillar Performance Handbook ed. 47, p. 7-122]. The pose that puts the
stick nose at (radius, height) is found by least squares over the boom and stick strokes (within their
URDF limits), each trial pose assembled through the loops; the bucket cylinder stays at its start stroke.
Points out of reach are NaN ("–").

**Tipping load** (statics of the whole machine, undercarriage included): the ground reaction wrench
W(L) = W₀ + L·W₁ for a vertical load L [N] at the load point (``stability.base_reaction``: RNEA summed
to the root) is linear in L; the machine tips when its centre of pressure reaches the tipping polygon
(``stability.tipping_load``, the balance point). Over front: swing 0, load along +x (the front edge binds);
over side: swing 90°, load along +y (the side edge binds). The tipping polygon is the one of the ZMP check
and of ISO 6015's tipping limit (``stability`` module docstring: Cat's roller–rail convention, quoted
there; ISO 10567's own wording of the tipping lines was not retrievable).

**Hydraulic lift capacity:** the cylinder forces u(L) = u₀ + L·u₁ from closed-loop statics
(``actuator_forces``, RBDA eq. 8.63) with the load as an external force; each cylinder's capacity is its
pressure × cap area when pushing, × annulus when pulling (``sizing.Cylinder``); the boom cylinder at the
lift-mode relief (CAT 320: 38 MPa), the other cylinders at ``holding_pressure`` (default the same). The
hydraulic capacity is the smallest L at which any cylinder reaches its capacity.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from urdf_dyn.algorithms.kinematics import link_pose
from urdf_dyn.constraints.inverse import actuator_forces
from urdf_dyn.machines.stability import base_reaction, tipping_load
from urdf_dyn.machines.stroke_map import StrokeMap, tip_jacobian, tip_levers

__all__ = ["without_links", "LiftPoint", "lift_point", "LiftChart", "LiftChartOptions", "lift_chart"]

def without_links(model, links):
    """A copy of ``model`` with the mass and inertia of ``links`` removed (e.g. the bucket, for a lift chart
    "without bucket"). Raises KeyError for an unknown link, ValueError for a link merged into another body."""
    I = np.array(model.I)
    masses = dict(model.link_masses)
    for ln in links:
        lf = model.link(ln)
        if any(o != ln and model.links[o].body == lf.body for o in model.links):
            raise ValueError(f"link {ln!r} shares its body with other links; cannot remove it alone")
        I[lf.body] = 0.0
        masses[ln] = 0.0
    I.setflags(write=False)
    return dataclasses.replace(model, I=I, link_masses=MappingProxyType(masses))


@dataclass
class LiftPoint:
    """One rated cell. tipping_N, hydraulic_N [N]: loads at the tipping / hydraulic limit (inf if none);
    limiting_cylinder: the cylinder that sets hydraulic_N; rated_kg: min(0.75 tipping, 0.87 hydraulic)/g;
    hydraulic_limited: the 87 % hydraulic term is the smaller; q (nv,): the pose."""
    tipping_N: float
    hydraulic_N: float
    limiting_cylinder: str
    rated_kg: float
    hydraulic_limited: bool
    q: np.ndarray


def _load_wrench(model, q, link, p, L):
    """f_ext for a vertical load L [N] (downward) at point p (3,) of ``link``."""
    R = link_pose(model, q, link)[:3, :3]
    f = R.T @ (np.asarray(model.gravity, float) / np.linalg.norm(model.gravity) * L)
    return {link: np.concatenate([np.cross(p, f), f])}


def lift_point(model, q, cylinders, load, polygon, lift_cylinder="boom_cyl", lift_pressure=None,
               holding_pressure=None, tipping_factor=0.75, hydraulic_factor=0.87):
    """Tipping load, hydraulic capacity and rated load at one assembled pose q (module docstring).

    load: (link, point (3,) [m] in its frame) where the load hangs; polygon: the tipping polygon (k, 2) [m]
    in root x–y (``stability.tipping_polygon``); cylinders: {actuator: Cylinder}; lift_pressure: the lift
    cylinder's [Pa] (required with cylinders), holding_pressure: the others' (default lift_pressure)."""
    g = float(np.linalg.norm(model.gravity))
    link, p = load
    W0 = base_reaction(model, q)
    W1 = base_reaction(model, q, f_ext=_load_wrench(model, q, link, p, 1.0)) - W0
    Lt = float(tipping_load(W0, W1, polygon)[0][0])
    if cylinders and lift_pressure is None:
        raise ValueError("lift_point needs lift_pressure [Pa] with cylinders")
    hold = lift_pressure if holding_pressure is None else holding_pressure
    z = np.zeros(model.nv)
    # f_ext={}: the same (batch) path as the loaded call below, so that their difference holds no rounding
    # of two paths (the single-state path answers equally to 1e-12, but not bit for bit)
    a0 = actuator_forces(model, q, z, z, warn=False, f_ext={})
    a1 = actuator_forces(model, q, z, z, warn=False, f_ext=_load_wrench(model, q, link, p, 1.0))
    Lh, lim = np.inf, ""
    for name, cyl in cylinders.items():
        if name not in a0.names:
            raise KeyError(f"cylinder {name!r} is not an actuator of {model.name} ({', '.join(a0.names)})")
        k = a0.names.index(name)
        u0, u1 = a0.u[k], a1.u[k] - a0.u[k]
        P = lift_pressure if name == lift_cylinder else hold
        if abs(u1) < 1e-9:
            continue
        cap = P * cyl.cap_area if u1 > 0 else -P * cyl.annulus_area
        L = (cap - u0) / u1
        if 0 <= L < Lh:
            Lh, lim = L, name
    rated = min(tipping_factor * Lt, hydraulic_factor * Lh) / g
    return LiftPoint(float(Lt), float(Lh), lim, float(rated), bool(hydraulic_factor * Lh < tipping_factor * Lt),
                     np.asarray(q, float).copy())


@dataclass
class LiftChart:
    """Rated loads [kg] over a (height, radius) grid.

    radii (nr,), heights (nh,) [m]; front, side (nh, nr) rated loads [kg] (NaN out of reach); front_star,
    side_star (nh, nr) bool: hydraulically limited; tipping_front_N, tipping_side_N, hydraulic_N (nh, nr)
    [N]; limiting (nh, nr) the limiting cylinder; poses (nh, nr, nv) (NaN out of reach); footprint
    lines x_tip, y_tip [m]; conditions: a one-line description of what is modelled; max_reach_m (nh,) [m]
    the largest radius reachable at each height (NaN if none) and max_front, max_side (nh,) [kg] with
    max_front_star, max_side_star the rated loads there (Cat's "max reach" column)."""
    radii: np.ndarray
    heights: np.ndarray
    front: np.ndarray
    side: np.ndarray
    front_star: np.ndarray
    side_star: np.ndarray
    tipping_front_N: np.ndarray
    tipping_side_N: np.ndarray
    hydraulic_N: np.ndarray
    limiting: np.ndarray
    poses: np.ndarray
    x_tip: float
    y_tip: float
    conditions: str = ""
    reference: dict = field(default_factory=dict)
    max_reach_m: np.ndarray = None
    max_front: np.ndarray = None
    max_side: np.ndarray = None
    max_front_star: np.ndarray = None
    max_side_star: np.ndarray = None

    def grid(self) -> list:
        """Rows for JSON: {height_m, radius_m, over_front_kg, over_side_kg, hydraulic_limited_front,
        hydraulic_limited_side} (None out of reach)."""
        out = []
        for i, h in enumerate(self.heights):
            for j, r in enumerate(self.radii):
                f, s = self.front[i, j], self.side[i, j]
                out.append(dict(height_m=float(h), radius_m=float(r),
                                over_front_kg=None if np.isnan(f) else round(float(f), 1),
                                over_side_kg=None if np.isnan(s) else round(float(s), 1),
                                hydraulic_limited_front=bool(self.front_star[i, j]),
                                hydraulic_limited_side=bool(self.side_star[i, j])))
        return out

    def to_markdown(self) -> str:
        """The chart in Cat's layout: rows = load-point height, column pairs = radius (over front | over
        side) [kg]; ``*`` = limited by hydraulic capacity rather than tipping."""
        def cell(v, star):
            return "–" if np.isnan(v) else f"{v:,.0f}{'*' if star else ''}".replace(",", " ")
        mr = self.max_reach_m is not None
        head = "| height | " + " | ".join(f"{r:.1f} m front | {r:.1f} m side" for r in self.radii) + \
            (" | max reach | front | side |" if mr else " |")
        sep = "|---:|" + "---:|---:|" * len(self.radii) + ("---:|---:|---:|" if mr else "")
        rows = [head, sep]
        for i, h in enumerate(self.heights):
            rows.append(f"| {h:+.1f} m | " + " | ".join(
                f"{cell(self.front[i, j], self.front_star[i, j])} | {cell(self.side[i, j], self.side_star[i, j])}"
                for j in range(len(self.radii))) + " |" + (
                f" {self.max_reach_m[i]:.2f} m | {cell(self.max_front[i], self.max_front_star[i])} | "
                f"{cell(self.max_side[i], self.max_side_star[i])} |" if mr and not np.isnan(self.max_reach_m[i])
                else (" – | – | – |" if mr else "")))
        note = (f"\nRated loads [kg] (ISO 10567: min(75 % tipping, 87 % hydraulic)); * hydraulically limited; "
                f"tipping lines x = {self.x_tip:.3f} m (front), y = {self.y_tip:.3f} m (side). {self.conditions}")
        return "\n".join(rows) + "\n" + note


def _default_load(model, link="stick", nose="bucket"):
    """(link, point): the stick nose = the bucket pin, from the pose of ``nose`` in ``link``'s frame."""
    q = model.q_initial()
    T = np.linalg.inv(link_pose(model, q, link)) @ link_pose(model, q, nose)
    return link, T[:3, 3].copy()


@dataclass(frozen=True)
class LiftChartOptions:
    """What a lift chart is computed for (no machine's numbers as defaults: they live in its scenario file).

    radii, heights: load-point grid [m]; footprint: the tipping polygon (k, 2) [m] in root x–y
    (``stability.tipping_polygon``, the same as the ZMP check's); lift_pressure: the lift (boom) cylinder's
    pressure [Pa]; holding_pressure: the other cylinders' [Pa] (None: = lift_pressure); without: links whose
    mass is left out (Cat: "without bucket"); load: (link, point (3,)) of the lift point (None: the stick
    nose, the bucket pin); swing, boom, stick, actuators: joint names; q0: start pose (None: the URDF's
    initial configuration); tol [m]: a grid point is out of reach if the nose misses it by more; reference:
    published figures for the report."""
    radii: tuple
    heights: tuple
    footprint: object
    lift_pressure: float
    holding_pressure: float = None
    without: tuple = ("bucket",)
    load: tuple = None
    swing: str = "swing"
    boom: str = "boom_cyl"
    stick: str = "stick_cyl"
    actuators: tuple = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
    q0: object = None
    tol: float = 0.01
    reference: dict = None


def lift_chart(model, cylinders, options: LiftChartOptions) -> LiftChart:
    """ISO 10567 lift chart (module docstring) at ``options`` (``LiftChartOptions``).

    cylinders: {actuator: Cylinder} (required: at least the lift cylinder ``options.boom``).
    Returns LiftChart. Raises KeyError for unknown names, ValueError without cylinders, for a polygon that is
    not convex or a pressure ≤ 0 (naming the option)."""
    import scipy.optimize                  # on use: 0.3 s of the import of every module that imports this one
    o = options
    radii, heights, boom, stick, swing = o.radii, o.heights, o.boom, o.stick, o.swing
    lift_pressure, holding_pressure, without, tol = o.lift_pressure, o.holding_pressure, o.without, o.tol
    if not cylinders or boom not in cylinders:
        raise ValueError(f"lift_chart needs cylinders including the lift cylinder {boom!r}")
    for name, v in (("lift_pressure", lift_pressure), ("holding_pressure", holding_pressure)):
        if v is not None and not v > 0:
            raise ValueError(f"{name} must be > 0 [Pa], got {v!r}")
    if not len(radii) or not len(heights):
        raise ValueError("radii and heights must not be empty")
    polygon = np.asarray(o.footprint, float)
    from urdf_dyn.machines.stability import polygon_margin
    polygon_margin(np.zeros((1, 2)), polygon)               # ValueError for a polygon that is not convex
    footprint = (float(polygon[:, 0].max()), float(polygon[:, 1].max()))
    load, q0, reference = o.load, o.q0, o.reference
    acts = tuple(o.actuators)
    m = without_links(model, without) if without else model
    link, p = _default_load(model) if load is None else (load[0], np.asarray(load[1], float))
    isw = m.joint_index(swing)
    q0 = m.q_initial() if q0 is None else np.asarray(q0, float)
    smap = StrokeMap(m, q0, (boom, stick), acts, step=0.001)
    lo = np.array([smap.limits(boom)[0], smap.limits(stick)[0]])
    hi = np.array([smap.limits(boom)[1], smap.limits(stick)[1]])

    def nose(q):
        P = link_pose(m, q, link)
        return P[:3, :3] @ p + P[:3, 3]

    # coarse map of the stick nose over the two strokes, for the starting guesses (each stroke assembled once,
    # the poses composed: StrokeMap.compose)
    grid = [(sb, ss) for sb in np.linspace(lo[0], hi[0], 13) for ss in np.linspace(lo[1], hi[1], 13)]
    for sb in np.linspace(lo[0], hi[0], 13):
        smap.pose({boom: sb})
    for ss in np.linspace(lo[1], hi[1], 13):
        smap.pose({stick: ss})
    levers = tip_levers(m, smap.compose([{boom: sb, stick: ss} for sb, ss in grid]), acts, (link, p), hold=acts)
    cand = [(lv.tip, np.array(x)) for lv, x in zip(levers, grid)]
    memo = {}

    def at(x):
        """(nose (3,), d nose / d (boom, stick) (3, 2)) at strokes x for the solvers, once per x (they ask for
        the value and the Jacobian at the same x), at the pose interpolated from the 1 mm sweeps
        (``StrokeMap.interpolate``: within 5e-10 of the assembled pose): the solvers run on this smooth map,
        and their result is then assembled exactly (``assembled``)."""
        key = (float(x[0]), float(x[1]))
        if key not in memo:
            if len(memo) > 10_000:
                memo.clear()
            q, G = smap.interpolate({boom: key[0], stick: key[1]})
            P, Jt = tip_jacobian(m, q[None], (link, p))
            memo[key] = (P[0], Jt[0] @ np.column_stack([G[boom], G[stick]]))
        return memo[key]

    def assembled(x, target, axes):
        """The assembled pose at strokes x, or None if its nose misses ``target`` on ``axes`` by > tol."""
        q = smap.pose({boom: float(x[0]), stick: float(x[1])})
        return q if np.max(np.abs(nose(q)[axes] - target)) <= tol else None

    def solve(r, h):
        x0 = min(cand, key=lambda c: np.hypot(c[0][0] - r, c[0][2] - h))[1]
        sol = scipy.optimize.least_squares(lambda x: at(x)[0][[0, 2]] - (r, h), x0, jac=lambda x: at(x)[1][[0, 2]],
                                           bounds=(lo, hi), xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=100)
        return assembled(np.clip(sol.x, lo, hi), np.array([r, h]), [0, 2])

    def max_reach(h):
        """Largest radius of the stick nose at height h: max x s.t. z = h (SLSQP over the two strokes)."""
        near = [c for c in cand if abs(c[0][2] - h) < 0.5]
        if not near:
            return None
        x0 = max(near, key=lambda c: c[0][0])[1]
        sol = scipy.optimize.minimize(lambda x: -at(x)[0][0], x0, jac=lambda x: -at(x)[1][0], method="SLSQP",
                                      bounds=list(zip(lo, hi)),
                                      constraints=[dict(type="eq", fun=lambda x: at(x)[0][2] - h,
                                                        jac=lambda x: at(x)[1][2][None])],
                                      options=dict(ftol=1e-10, maxiter=100))
        return assembled(np.clip(sol.x, lo, hi), np.array([h]), [2])

    nh, nr = len(heights), len(radii)
    F, S = np.full((nh, nr), np.nan), np.full((nh, nr), np.nan)
    Fs, Ss = np.zeros((nh, nr), bool), np.zeros((nh, nr), bool)
    TF, TS, HY = (np.full((nh, nr), np.nan) for _ in range(3))
    LIM = np.full((nh, nr), "", dtype=object)
    POS = np.full((nh, nr, m.nv), np.nan)
    for i, h in enumerate(heights):
        for j, r in enumerate(radii):
            q = solve(float(r), float(h))
            if q is None:
                continue
            q = q.copy()
            q[isw] = 0.0
            a = lift_point(m, q, cylinders, (link, p), polygon, boom, lift_pressure, holding_pressure)
            qs_ = q.copy()
            qs_[isw] = np.pi / 2
            b = lift_point(m, qs_, cylinders, (link, p), polygon, boom, lift_pressure, holding_pressure)
            F[i, j], Fs[i, j], S[i, j], Ss[i, j] = a.rated_kg, a.hydraulic_limited, b.rated_kg, b.hydraulic_limited
            TF[i, j], TS[i, j], HY[i, j], LIM[i, j] = a.tipping_N, b.tipping_N, a.hydraulic_N, a.limiting_cylinder
            POS[i, j] = q
    MR, MF, MS = (np.full(nh, np.nan) for _ in range(3))
    MFs, MSs = np.zeros(nh, bool), np.zeros(nh, bool)
    for i, h in enumerate(heights):
        q = max_reach(float(h))
        if q is None:
            continue
        q[isw] = 0.0
        a = lift_point(m, q, cylinders, (link, p), polygon, boom, lift_pressure, holding_pressure)
        qs_ = q.copy()
        qs_[isw] = np.pi / 2
        b = lift_point(m, qs_, cylinders, (link, p), polygon, boom, lift_pressure, holding_pressure)
        MR[i], MF[i], MS[i], MFs[i], MSs[i] = nose(q)[0], a.rated_kg, b.rated_kg, a.hydraulic_limited, b.hydraulic_limited
    cond = (f"Load at the stick nose ({link} point {np.round(p, 3).tolist()} m), without "
            f"{', '.join(without) or 'nothing removed'}; machine mass {m.total_mass:.0f} kg; boom cylinder at "
            f"{lift_pressure / 1e6:.0f} MPa, others at {(holding_pressure or lift_pressure) / 1e6:.0f} MPa.")
    return LiftChart(np.asarray(radii, float), np.asarray(heights, float), F, S, Fs, Ss, TF, TS, HY, LIM, POS,
                     float(footprint[0]), float(footprint[1]), cond, dict(reference or {}), MR, MF, MS, MFs, MSs)
