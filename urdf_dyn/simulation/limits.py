"""End stops: URDF joint limits as inelastic unilateral constraints in simulation.

A 1-dof (revolute or prismatic) joint j with a finite ``<limit lower upper>`` has an end stop at each finite
bound. A stop acts only while the joint sits on it; it pushes the joint away from the limit and never pulls.
Rows r = (joint j, side s) with s = +1 at the lower bound and s = −1 at the upper, gap_r = s (q_j − limit_r) ≥ 0.

**Contact (acceleration level).** Gauss's principle of least constraint with inequality rows: on the motion
that satisfies the loops, q̈ = G ÿ + g (RBDA eq. 8.42; G = I, g = 0 on a tree), the accelerations minimise the
acceleration energy ½ (q̈ − a)ᵀ H (q̈ − a), a = H⁻¹(τ − C), subject to s q̈_j ≥ b_r for every stop in contact.
In ÿ this is the QP

    minimise ½ ÿᵀ M ÿ − ÿᵀ Gᵀ(τ − C − H g),   M = GᵀHG,   subject to  s G_j ÿ ≥ b_r − s g_j,

whose KKT conditions are H q̈ + C = τ + Kᵀλ + Σ_r e_j s z_r with z_r ≥ 0, z_r (s q̈_j − b_r) = 0 (Signorini:
RBDA §8.1's loop forces plus a force that only pushes; Glocker & Pfeiffer, *Multibody Dynamics with Unilateral
Contacts*, 1996, ch. 7; Moreau 1988). b_r = −2α s q̇_j − α² gap_r, α = 1/t_stab, is Baumgarte's stabilisation
(RBDA §8.3, the loops' time constant), so a stop drifts back onto its limit instead of through it. The QP is
solved by ProxSuite's dense PROXQP (Bambade et al., RSS 2022), which accepts the redundant stop rows that a
closed loop produces (the boom angle and the boom cylinder stroke reach their ends together): the stop force of
a group of dependent rows is put on one row, the actuated joint's (non-zero ``<limit effort>``: the cylinder
stroke) in preference, and the others are listed as active with zero force.

**Impact (velocity level).** When a joint reaches a stop with velocity into it (an event located on the
integrator's dense output), the velocity jumps inelastically (restitution 0): v⁺ minimises the kinetic energy
of the change ½ (v⁺ − v⁻)ᵀ H (v⁺ − v⁻) subject to the loops (v⁺ = G ẏ⁺) and s v⁺_j ≥ 0 on every stop in
contact (Moreau's impact law; Pfeiffer & Glocker §7.2). The approaching joint's velocity becomes zero, the
generalised impulse p = s z [N s | N m s] is recorded, and the kinetic energy cannot increase (v⁺ is the
H-orthogonal projection of v⁻ onto a convex cone that contains 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.dynamics import bias_force, mass_matrix
from urdf_dyn.constraints.passive import passive_forces

__all__ = ["EndStops", "end_stops", "independent_rows", "stop_acceleration", "impact", "stop_samples", "next_event",
           "restart", "ends_reached", "GAP_ON", "GAP_OFF", "START_TOL"]

GAP_ON = 1e-9
"""A stop is in contact when its gap is at most this [m | rad] at a restart (event locations are ~1e-13)."""
GAP_OFF = 1e-6
"""A stop in contact leaves the contact set once its gap exceeds this [m | rad] (the joint has lifted off)."""
START_TOL = 1e-6
"""q0 may lie beyond a limit by at most this [m | rad] (assembly round-off); further out is a StateError."""


@dataclass(frozen=True)
class EndStops:
    """The end-stop rows of a model: ``joint`` (r,) names, ``v`` (r,) velocity index, ``iq`` (r,) position
    index, ``limit`` (r,) [m | rad], ``side`` (r,) +1 lower / −1 upper, ``priority`` (r,) (0: the joint is
    actuated, non-zero ``<limit effort>``; 1: a passive joint), in row order: lower stops, then upper."""
    joint: tuple
    v: np.ndarray
    iq: np.ndarray
    limit: np.ndarray
    side: np.ndarray
    priority: np.ndarray

    def __len__(self):
        return len(self.joint)

    def gaps(self, q):
        """gap (r,) = side (q − limit) [m | rad] at q (nq,): ≥ 0 inside the range."""
        return self.side * (np.asarray(q)[self.iq] - self.limit)

    def check_start(self, q0):
        """Raise StateError if q0 lies beyond a limit by more than ``START_TOL``."""
        from urdf_dyn.errors import StateError
        g = self.gaps(q0)
        bad = np.flatnonzero(g < -START_TOL)
        if bad.size:
            r = bad[0]
            which = "lower" if self.side[r] > 0 else "upper"
            raise StateError(f"q0[{self.joint[r]!r}] = {q0[self.iq[r]]:.6g} is beyond its {which} limit "
                             f"{self.limit[r]:.6g} (URDF <limit>); start inside the range or pass limits=False")

    def contact(self, q):
        """Boolean (r,): the stops in contact at q (gap ≤ ``GAP_ON``)."""
        return self.gaps(q) <= GAP_ON


def end_stops(model) -> EndStops:
    """The end stops of ``model``'s 1-dof joints with finite ``<limit lower/upper>`` (continuous joints and
    the floating/planar coordinates have none). Raises nothing; an EndStops of length 0 when there are none."""
    qi, vi = model.one_dof_indices
    rows = []
    for side, lim in ((1.0, model.lower), (-1.0, model.upper)):
        for iq, v in zip(qi, vi):
            if np.isfinite(lim[v]):
                rows.append((model.joint_names[v], int(v), int(iq), float(lim[v]), side,
                             0 if model.effort_limit[v] > 0 and np.isfinite(model.effort_limit[v]) else 1))
    cols = list(zip(*rows)) if rows else [()] * 6
    return EndStops(tuple(cols[0]), np.array(cols[1], np.int64), np.array(cols[2], np.int64),
                    np.array(cols[3], float), np.array(cols[4], float), np.array(cols[5], np.int64))


def _loop_map(model, q, qd, t_stab, data):
    """(G (nv × m), g (nv,)) with q̈ = G ÿ + g satisfying the loops (G = I, g = 0 without loops)."""
    if not model.has_constraints:
        return np.eye(model.nv), np.zeros(model.nv)
    from urdf_dyn.constraints.explicit import explicit_constraint
    ec = explicit_constraint(model, q, qd, t_stab, data=data)
    return ec.G, ec.g


def independent_rows(stops, rows, G, rtol=1e-9):
    """The subset of ``rows`` (indices into ``stops``) whose constraint rows e_j G are linearly independent,
    chosen greedily in priority order (actuated joints first, then row order): one row per dependent group."""
    order = sorted(rows, key=lambda r: (stops.priority[r], r))
    keep, basis = [], np.zeros((0, G.shape[1]))
    for r in order:
        a = G[stops.v[r]]
        if not np.any(a):
            continue
        trial = np.vstack([basis, a])
        if np.linalg.matrix_rank(trial, tol=rtol * max(1.0, np.abs(trial).max())) > basis.shape[0]:
            keep.append(r)
            basis = trial
    return sorted(keep)


def _qp(M, lin, A, lo):
    """min ½ xᵀMx + linᵀx s.t. A x ≥ lo by ProxSuite (dense PROXQP); returns (x, z ≥ 0 per row)."""
    try:
        import proxsuite
    except ImportError as e:   # a declared dependency; a broken install says so in one line
        raise ImportError("end stops need the ProxSuite QP solver: pip install proxsuite "
                          "(or simulate(..., options=SimulateOptions(limits=False)))") from e
    M = 0.5 * (M + M.T)
    res = proxsuite.proxqp.dense.solve(M, lin, None, None, A, lo, np.full(len(lo), 1e20), eps_abs=1e-12,
                                       eps_rel=1e-13, max_iter=1000)   # ‖residual‖ ≤ eps_abs + eps_rel·scale
    if res.info.status != proxsuite.proxqp.QPSolverOutput.PROXQP_SOLVED:
        raise np.linalg.LinAlgError(f"end-stop QP not solved ({res.info.status}): the stops in contact "
                                    "contradict each other or the loops")
    return np.array(res.x), np.maximum(-np.array(res.z), 0.0)   # ProxSuite: M x + lin + Aᵀ z = 0, z ≤ 0 active


def stop_acceleration(model, stops, rows, q, qd, tau, t_stab=None, passive=True, data=None):
    """q̈ (nv,) and the generalised stop forces f (nv,) [N | N m] (positive along +q) at one state with the
    stops ``rows`` (indices into ``stops``) in contact: Gauss's principle with inequality rows (module
    docstring). τ (nv,) is the controller's force; passive forces are added when ``passive``.

    Returns (q̈, f, kept rows). Raises np.linalg.LinAlgError if H is singular or the QP has no solution."""
    if passive:
        tau = tau + passive_forces(model, q, qd)
    H = mass_matrix(model, q)
    C = bias_force(model, q, qd)
    G, g = _loop_map(model, q, qd, t_stab, data)
    keep = independent_rows(stops, rows, G)
    M = G.T @ H @ G
    rhs = G.T @ (tau - C - H @ g)
    if not keep:
        ydd = np.linalg.solve(M, rhs)
        return G @ ydd + g, np.zeros(model.nv), keep
    v, s = stops.v[keep], stops.side[keep]
    alpha = 0.0 if t_stab is None else 1.0 / t_stab
    b = -2 * alpha * s * qd[v] - alpha ** 2 * stops.gaps(q)[keep]
    A = s[:, None] * G[v]
    ydd, z = _qp(M, -rhs, A, b - s * g[v])
    f = np.zeros(model.nv)
    np.add.at(f, v, s * z)
    return G @ ydd + g, f, keep


def impact(model, stops, rows, q, v, data=None):
    """Inelastic impact on the stops ``rows`` in contact: v⁺ (nv,) and the generalised impulses p (nv,)
    [N s | N m s] (positive along +q), from v⁻ = ``v`` at q (module docstring, Moreau's impact law).
    Returns (v⁺, p)."""
    H = mass_matrix(model, q)
    G, _ = _loop_map(model, q, np.zeros(model.nv), None, data)
    keep = independent_rows(stops, rows, G)
    M = G.T @ H @ G
    lin = -(G.T @ H @ v)
    p = np.zeros(model.nv)
    if not keep:
        return G @ np.linalg.solve(M, -lin), p
    vi, s = stops.v[keep], stops.side[keep]
    yd, z = _qp(M, lin, s[:, None] * G[vi], np.zeros(len(keep)))
    np.add.at(p, vi, s * z)
    vp = G @ yd
    vp[vi[np.abs(vp[vi]) < 1e-12]] = 0.0    # the solver's 1e-13 residue on a stopped joint
    return vp, p


def stop_samples(model, stops, contact, q, qd, tau, qdd, t_stab, passive, data=None):
    """Per-sample stop records: ``stop_active`` (N, nv) int8 (−1 on the lower stop, +1 on the upper, 0
    free) and ``stop_force`` (N, nv) [N | N m]; q̈ (N, nv) is replaced by the stop-constrained one at the
    samples with a stop in contact. ``contact`` (N, r) bool: the contact set the integrator used."""
    N, nv = qd.shape
    active = np.zeros((N, nv), np.int8)
    force = np.zeros((N, nv))
    qdd = qdd.copy()
    for i in np.flatnonzero(contact.any(axis=1)):
        rows = list(np.flatnonzero(contact[i]))
        qdd[i], force[i], _ = stop_acceleration(model, stops, rows, q[i], qd[i], tau[i], t_stab, passive, data)
        gaps = stops.gaps(q[i])
        for r in rows:
            j = stops.v[r]
            if gaps[r] <= GAP_ON or force[i, j] * stops.side[r] > 0:
                active[i, j] = -1 if stops.side[r] > 0 else 1
    return active, force, qdd


def next_event(stops, contact, solver, t_prev):
    """The first stop event in the step (t_prev, solver.t] just taken: ("impact", t_e) when a stop not in
    contact is reached (gap crosses 0, located by Brent's method on the step's dense output, as
    ``solve_ivp``'s events are), ("lift", solver.t) when a stop in contact has lifted off past
    ``GAP_OFF``; None when the contact set stays as it is."""
    from scipy.optimize import brentq
    g1 = stops.gaps(solver.y)
    hit = np.flatnonzero(~contact & (g1 <= 0.0))
    if hit.size:
        dense = solver.dense_output()
        t_e = solver.t
        for r in hit:
            f = (lambda t, r=r: stops.gaps(dense(t))[r])
            if f(t_prev) > 0.0 and g1[r] < 0.0:
                t_e = min(t_e, brentq(f, t_prev, solver.t, xtol=1e-15, rtol=4 * np.finfo(float).eps))
        return "impact", t_e
    if np.any(contact & (g1 > GAP_OFF)):
        return "lift", solver.t
    return None


def restart(model, stops, x, t, data, meta):
    """At an event or the start: the new contact set (r,) bool and the state after the inelastic impact
    of the stops in contact that are approached (recorded in ``meta["impacts"]``: t [s], impulses {joint:
    p [N s | N m s]}, kinetic energy before and after [J])."""
    from urdf_dyn.algorithms.dynamics import kinetic_energy
    nq = model.nq
    q, v = x[:nq], x[nq:].copy()
    contact = stops.contact(q)
    rows = list(np.flatnonzero(contact))
    if rows and np.any(stops.side[rows] * v[stops.v[rows]] < 0.0):
        e0 = float(kinetic_energy(model, q, v))
        v, p = impact(model, stops, rows, q, v, data)
        if not p.any():
            return contact, np.concatenate([q, v])
        meta.setdefault("impacts", []).append(dict(
            t=float(t), impulses={model.joint_names[j]: float(p[j]) for j in np.flatnonzero(p)},
            kinetic_before=e0, kinetic_after=float(kinetic_energy(model, q, v))))
    return contact, np.concatenate([q, v])


def ends_reached(model, t, Q, tol=1e-6):
    """Check a prescribed motion's joint positions against the URDF limits (the stroke ends of cylinders):
    t (N,) [s], Q (N, nq). Returns (names of the joints that reach or pass an end — gap ≤ ``tol`` [m | rad]
    — in model order, one line for a report naming each with its end and the first time, or, when none is
    reached, the smallest margin of a prismatic joint's stroke)."""
    stops = end_stops(model)
    if not len(stops):
        return [], "stroke ends: no joint limits in the model"
    gaps = np.asarray(Q)[:, stops.iq] * stops.side - stops.limit * stops.side     # (N, r)
    hit = [r for r in range(len(stops)) if gaps[:, r].min() <= tol]
    names = [n for n in model.joint_names if n in {stops.joint[r] for r in hit}]
    if not hit:
        lin = np.asarray(model.is_linear)[stops.v]          # the strokes (prismatic joints), if any
        cand = np.flatnonzero(lin) if lin.any() else np.arange(len(stops))
        r = int(cand[np.argmin(gaps[:, cand].min(axis=0))])
        unit = "m" if model.is_linear[stops.v[r]] else "rad"
        return [], (f"stroke ends: none reached during the motion (smallest stroke margin {gaps[:, r].min():.4g} {unit}: "
                    f"{stops.joint[r]} to its {'lower' if stops.side[r] > 0 else 'upper'} end at "
                    f"t = {t[int(np.argmin(gaps[:, r]))]:.2f} s)")
    parts = [f"{stops.joint[r]} {'lower' if stops.side[r] > 0 else 'upper'} end at t = "
             f"{t[int(np.flatnonzero(gaps[:, r] <= tol)[0])]:.2f} s" for r in hit]
    return names, "stroke ends REACHED during the motion: " + "; ".join(parts)
