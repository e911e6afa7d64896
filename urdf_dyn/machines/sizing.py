"""Actuator sizing from a motion: forces over time, peak and RMS, mechanical power and work, hydraulic
cylinder pressures, loop-joint pin loads; written as CSV, PNG plots and a Markdown table.

Sign conventions: u > 0 is the force (torque) an actuator applies in its joint's + direction — for a
cylinder modelled as a prismatic rod joint, u > 0 pushes (extends). Mechanical power P = u·ṡ (W), with ṡ
the joint velocity; the **net work** ∫ P dt (J) and the **positive work** ∫ max(P, 0) dt (J, what the pumps
supply without regeneration; ``hydraulics``).

Pin loads: the force and moment a loop joint (pin) transmits, |f| and |n| of its constraint wrench, **per
pin**: the model lumps a pair of identical cylinders in parallel (``Cylinder.count`` = 2) into one rod and
one loop, so the loop closing that cylinder (its predecessor or successor is the cylinder's barrel or rod)
stands for ``count`` pins, each carrying 1/count of the load (the pair is symmetric). Moments below
round-off (1e-9 × the largest pin force × 1 m; a planar machine's revolute pins carry none) are set to 0. A hydraulic cylinder of
bore D and rod diameter d (``count`` in parallel) needs the cap-side pressure u / (count·πD²/4) when
pushing and the rod-side pressure −u / (count·π(D²−d²)/4) when pulling; reported in bar (1e5 Pa).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn._checks import renamed_keywords

__all__ = ["Cylinder", "SizingResult", "size_motion", "pin_counts", "sizing_table"]


@dataclass(frozen=True)
class Cylinder:
    """Hydraulic cylinder geometry: bore and rod diameters [m], number of identical cylinders in parallel."""
    bore: float
    rod: float
    count: int = 1

    @property
    def cap_area(self) -> float:
        return self.count * np.pi * self.bore ** 2 / 4

    @property
    def annulus_area(self) -> float:
        return self.count * np.pi * (self.bore ** 2 - self.rod ** 2) / 4

    def pressures(self, u):
        """(cap-side, rod-side) pressures [bar] (N,) needed for forces u [N]."""
        u = np.asarray(u, float)
        return np.where(u > 0, u / self.cap_area, 0.0) / 1e5, np.where(u < 0, -u / self.annulus_area, 0.0) / 1e5


@dataclass
class SizingResult:
    """Time series and summary per actuator (see module docstring). t (N,); u, s, sd, power (N, p);
    names, units, limits per actuator; case, rank_Gu, dof; pin_force, pin_moment: {loop: (N,)} [N, N m]
    per pin; pin_count: {loop: pins the loop stands for} (module docstring);
    pressures: {actuator: (cap (N,), rod (N,))} [bar]; residual (N, dof) for under-actuated machines."""
    t: np.ndarray
    names: tuple
    units: tuple
    limits: np.ndarray
    u: np.ndarray
    s: np.ndarray
    sd: np.ndarray
    power: np.ndarray
    case: str
    rank_Gu: int
    dof: int
    pin_force: dict
    pin_moment: dict
    pressures: dict = field(default_factory=dict)
    residual: np.ndarray = None
    over_limit: tuple = ()
    cylinders: dict = field(default_factory=dict)
    pin_count: dict = field(default_factory=dict)

    def capacities(self, i):
        """(push, pull) capacity [N | N m] of actuator i: the effort limit when pushing; when pulling, the
        limit × annulus / cap area for a cylinder in ``cylinders`` (the URDF limit is the cap-side force at
        relief), else the same limit."""
        lim = float(self.limits[i])
        c = self.cylinders.get(self.names[i])
        return lim, (lim * c.annulus_area / c.cap_area if c is not None else lim)

    def summary(self):
        """Rows: name, unit, peak |u|, RMS u, limit, peak power [W], net_work ∫ P dt [J], work_pos
        ∫ max(P, 0) dt [J]."""
        rows = []
        for i, n in enumerate(self.names):
            P = self.power[:, i]
            rows.append(dict(name=n, unit=self.units[i], peak=float(np.max(np.abs(self.u[:, i]))),
                             rms=float(np.sqrt(np.mean(self.u[:, i] ** 2))), limit=float(self.limits[i]),
                             peak_power=float(np.max(np.abs(P))), net_work=float(np.trapezoid(P, self.t)),
                             work_pos=float(np.trapezoid(np.maximum(P, 0), self.t))))
        return rows


@renamed_keywords(Q="q", QD="qd", QDD="qdd")
def size_motion(model, t, q, qd, qdd, actuated=None, cylinders=None, weights=None, bounds=None, models=None,
                progress=None, f_ext=None) -> SizingResult:
    """Actuator forces along a consistent motion (t (N,), q, qd, qdd (N, nv)).

    ``cylinders``: {actuator name: Cylinder} for hydraulic pressures and pins per loop (module docstring). ``models``: optional (N,) sequence of
    models per sample (e.g. with a payload only while the bucket is full); default ``model`` throughout.
    ``f_ext``: external wrenches {link: (N, 6)} [n; f] in the link frame (N m, N), one per sample.
    ``progress`` is accepted for compatibility; the batched call has no per-sample progress bar."""
    from urdf_dyn.constraints.inverse import actuator_forces
    N = len(t)
    q, qd, qdd = (np.asarray(x, float) for x in (q, qd, qdd))
    # one batched call per distinct model (e.g. empty and loaded bucket): the compiled path runs each
    # group in one call; the samples keep their order
    if models is None:
        groups = {id(model): (model, np.arange(N))}
    else:
        keys = np.fromiter(map(id, models), np.int64, N)
        groups = {k: (models[int(np.argmax(keys == k))], np.flatnonzero(keys == k))
                  for k in dict.fromkeys(keys.tolist())}
    parts = []
    for m, ix in groups.values():
        fx = {k: np.broadcast_to(np.asarray(v, float), (N, 6))[ix] for k, v in f_ext.items()} if f_ext else None
        parts.append((ix, actuator_forces(m, q[ix], qd[ix], qdd[ix], actuated=actuated, weights=weights,
                                          bounds=bounds, warn=False, f_ext=fx)))
    a0 = parts[0][1]
    p = len(a0.names)
    U, RES = np.zeros((N, p)), np.zeros((N, a0.dof))
    LF = {k: np.zeros((N, 6)) for k in a0.loop_forces}
    for ix, af in parts:
        U[ix] = np.reshape(af.u, (len(ix), p))
        RES[ix] = np.reshape(af.residual, (len(ix), -1))
        for k in LF:
            LF[k][ix] = np.reshape(af.loop_forces[k], (len(ix), -1))
    idx = [model.joint_index(n) if n in model.joint_names else None for n in a0.names]
    S = np.column_stack([q[:, j] if j is not None else np.full(N, np.nan) for j in idx]).reshape(N, -1)
    SD = np.column_stack([qd[:, j] if j is not None else np.full(N, np.nan) for j in idx]).reshape(N, -1)
    power = U * np.nan_to_num(SD)
    count = pin_counts(model, cylinders or {})
    sq = {k: v * v for k, v in LF.items()}
    pin_f = {k: np.sqrt(v[:, 3] + v[:, 4] + v[:, 5]) / count.get(k, 1) for k, v in sq.items()}
    pin_m = {k: np.sqrt(v[:, 0] + v[:, 1] + v[:, 2]) / count.get(k, 1) for k, v in sq.items()}
    tol = 1e-9 * max([float(f.max(initial=0.0)) for f in pin_f.values()] + [1.0])   # N × 1 m
    pin_m = {k: np.where(m < tol, 0.0, m) for k, m in pin_m.items()}
    rank = min(af.rank_Gu for _, af in parts)
    cases = {af.case for _, af in parts}
    case = a0.case if len(cases) == 1 else " / ".join(sorted(cases))
    over = tuple(n for k, n in enumerate(a0.names) if np.isfinite(a0.limits[k]) and a0.limits[k] > 0
                 and np.any(np.abs(U[:, k]) > a0.limits[k] * (1 + 1e-9)))
    res = SizingResult(np.asarray(t, float), a0.names, a0.units, a0.limits, U, S, SD, power, case, rank, a0.dof,
                       pin_f, pin_m, residual=RES, over_limit=over,
                       pin_count={k: count.get(k, 1) for k in pin_f})
    for name, cyl in (cylinders or {}).items():
        if name not in a0.names:
            raise KeyError(f"cylinder {name!r} is not an actuator ({', '.join(a0.names)})")
        res.pressures[name] = cyl.pressures(U[:, a0.names.index(name)])
    res.cylinders = dict(cylinders or {})
    return res


def pin_counts(model, cylinders) -> dict:
    """{loop name: pins} for the loops that close a cylinder of ``cylinders`` ({actuator: Cylinder}) with
    ``count`` > 1: a loop whose predecessor or successor body is the cylinder joint's body or its parent
    (the rod or the barrel). Other loops are one pin each (left out)."""
    out = {}
    for name, c in cylinders.items():
        if c.count <= 1 or name not in model.joint_names:
            continue
        b = model.joint_index(name) + 1                   # body of tree joint j (one body per joint)
        bodies = {b, int(model.parent[b])}
        for lp in model.loops:
            if lp.p in bodies or lp.s in bodies:
                out[lp.name] = int(c.count)
    return out


def sizing_table(res: SizingResult) -> str:
    """Markdown table: per actuator peak push and pull, RMS, capacity use per direction (a cylinder's pull
    against its annulus), peak power, net work, positive work, pressures; then pin loads per pin. Forces in
    kN, torques in kN·m."""
    lines = ["| actuator | peak push | peak pull | RMS | push capacity | push use | pull capacity | pull use | "
             "peak power | net work | positive work | cap p max | rod p max | over |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for i, r in enumerate(res.summary()):
        u = res.u[:, i]
        push, pull = float(np.maximum(u, 0).max(initial=0)), float(np.maximum(-u, 0).max(initial=0))
        cp, cl = res.capacities(i)
        has = np.isfinite(cp) and cp > 0
        p = res.pressures.get(r["name"])
        cap = f"{p[0].max():.0f} bar" if p is not None else "–"
        rod = f"{p[1].max():.0f} bar" if p is not None else "–"
        scale, unit = _scaled(r["unit"])
        fmt = lambda x: f"{x / scale:.4g} {unit}"  # noqa: E731
        use = lambda x, c: f"{100 * x / c:.0f} %" if has else "–"  # noqa: E731
        over = "OVER" if (r["name"] in res.over_limit or (has and pull > cl * (1 + 1e-9))) else ""
        lines.append(f"| {r['name']} | {fmt(push)} | {fmt(pull)} | {fmt(r['rms'])} | "
                     f"{fmt(cp) if has else 'none'} | {use(push, cp)} | {fmt(cl) if has else 'none'} | "
                     f"{use(pull, cl)} | {r['peak_power'] / 1e3:.3g} kW | {r['net_work'] / 1e3:.3g} kJ | "
                     f"{r['work_pos'] / 1e3:.3g} kJ | "
                     f"{cap} | {rod} | {over} |")
    if res.pin_force:
        lines += ["", "| loop joint | pins | peak force per pin | peak moment per pin |", "|---|---:|---:|---:|"]
        for k in res.pin_force:
            lines.append(f"| {k} | {res.pin_count.get(k, 1)} | {res.pin_force[k].max() / 1e3:.4g} kN | "
                         f"{res.pin_moment[k].max() / 1e3:.4g} kN·m |")
    return "\n".join(lines)


def _scaled(unit):
    """(scale, unit) for printing forces [N] in kN and torques [N m] in kN·m."""
    return (1e3, "kN") if unit == "N" else (1e3, "kN·m")
