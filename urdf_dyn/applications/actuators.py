"""Closed-loop inverse dynamics and actuator forces (RBDA §8.12, eqs. 8.61–8.63).

The spanning tree's equation of motion with the loop-closure forces,  τ = H q̈ + C − τᵃ − Kᵀλ  (8.61),
projected onto the motion freedom G (K G = 0) eliminates λ:

    Gᵀ τ = Gᵀ τ_ID,     τ_ID = ID(q, q̇, q̈) − τᵃ                                        (8.62)

where τᵃ are the known forces (URDF damping, Gazebo springs). Actuators u (p forces, N or N·m) act
through τ = B u: a tree actuator on joint j is the column e_j; an actuated loop joint k with motion axis S_k
(in Fp) is the column (^{Fp}X_0 (J_s − J_p))ᵀ S_k. Then  Gᵀ B u = Gᵀ τ_ID  (8.63), with G_u = Bᵀ G:

- properly actuated   (p = rank G_u = n − r):  the unique u;
- redundantly actuated (p > rank G_u): the weighted minimum-norm u (W = diag(weights)), or, with bounds,
  bounded least squares (scipy.optimize.lsq_linear) — the null-space component is chosen inside limits;
- under-actuated      (rank G_u < n − r): the least-squares u; ``residual`` = Gᵀ(τ_ID − B u), the part of
  the motion the actuators cannot produce, is reported with a warning.
A machine can be both redundantly and under-actuated. The loop-joint forces λ then follow from
Kᵀλ = τ_ID − B u (minimum norm where loops are redundant): ``loop_forces[name]`` is the wrench [n; f]
(N·m, N) on the successor in Fp coordinates — the pin load.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from urdf_dyn._checks import as_batch
from urdf_dyn.constraints.explicit import explicit_constraint
from urdf_dyn.constraints.forward import _loop_forces
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.algorithms.dynamics import inverse_dynamics
from urdf_dyn.errors import StateError
from urdf_dyn.constraints.loops import LoopState, loop_constraints, numerical_rank

__all__ = ["Actuator", "actuators_of", "actuation_matrix", "constrained_inverse_dynamics", "actuator_forces",
           "ActuatorForces", "ActuationWarning"]


class ActuationWarning(UserWarning):
    """The actuators cannot produce the requested motion (under-actuated), or exceed their limits."""


@dataclass(frozen=True)
class Actuator:
    """An actuator: ``name``, ``kind`` ("joint" for a tree joint, "loop" for an actuated loop joint),
    ``joint`` (the tree joint or loop joint it drives), ``unit`` (N or N m), ``limit`` (effort, inf if none)."""
    name: str
    kind: str
    joint: str
    unit: str
    limit: float


def actuators_of(model, actuated=None):
    """The actuators of ``model``: tree joints from ``<transmission>`` (all joints if the URDF has neither
    transmissions nor actuated loops) and loop joints with ``actuated="true"``, or the given list of
    joint / loop names. Raises KeyError for an unknown name."""
    loops = {lp.name: lp for lp in model.loops}
    if actuated is None:
        names = [lp.name for lp in model.loops if lp.actuated]
        tree = list(model.actuated_joints) if (model.transmissions or not names) else []
        names = tree + names
    else:
        names = list(actuated)
    out = []
    for n in names:
        if n in loops:
            lp = loops[n]
            if lp.S.shape[1] != 1:
                raise KeyError(f"loop {n!r} ({lp.type}) has {lp.S.shape[1]} freedoms; only 1-dof loop joints "
                               "can carry an actuator")
            out.append(Actuator(n, "loop", n, "N" if lp.type == "prismatic" else "N m", lp.effort))
        else:
            i = model.joint_index(n)
            out.append(Actuator(n, "joint", n, "N" if model.joint_types[i] == "prismatic" else "N m",
                                float(model.effort_limit[i])))
    return tuple(out)


def actuation_matrix(model, q, acts):
    """B (nv × p): joint forces τ = B u produced by actuator forces u (module docstring)."""
    B = np.zeros((model.nv, len(acts)))
    st = None
    for c, a in enumerate(acts):
        if a.kind == "joint":
            B[model.joint_index(a.joint), c] = 1.0
        else:
            st = st or LoopState(model, q)
            lp = next(lp for lp in model.loops if lp.name == a.joint)
            XFp, _ = st.loop_frames(lp)
            J = XFp @ (st.body_jacobian(lp.s) - st.body_jacobian(lp.p))
            B[:, c] = J.T @ np.asarray(lp.S)[:, 0]
    return B


def _consistency(model, q, qd, qdd, K, k, tol):
    st = LoopState(model, q, qd)
    d = np.abs(st.deltas()).max(initial=0.0)
    v = np.abs(K @ qd).max(initial=0.0)
    a = np.abs(K @ qdd - k).max(initial=0.0)
    scale = 1.0 + np.abs(qd).max() + np.abs(qdd).max()
    if d > tol or v > tol * scale or a > tol * scale * scale:
        raise StateError(f"{model.name}: q, q̇, q̈ do not satisfy the loop constraints (position error {d:.3g}, "
                         f"velocity {v:.3g}, acceleration {a:.3g}); assemble q, project q̇ and q̈ first "
                         "(urdf_dyn.motion.consistent_motion)")


def constrained_inverse_dynamics(model, q, qd, qdd, check=True, tol=1e-6, passive=True, f_ext=None):
    """Closed-loop inverse dynamics (RBDA eq. 8.62) at one consistent state.

    Returns (τ_ID (nv,) [N m | N], G (nv × (nv − r))): any τ with Gᵀτ = Gᵀτ_ID produces q̈. τ_ID is the
    spanning tree's RNEA minus the known passive forces (damping, springs) when ``passive``, with the
    external wrenches ``f_ext`` ({link: (6,) [n; f] in the link frame about its origin, N m and N}, as
    ``inverse_dynamics``) acting on the links. Raises StateError if (q, q̇, q̈) violate the loop constraints by more than ``tol`` (scaled)."""
    from urdf_dyn._checks import one_state
    one_state("constrained_inverse_dynamics", q=q, qd=qd, qdd=qdd)
    n = model.nv
    q, qd, qdd = (as_batch(x, nm, n)[0][0] for x, nm in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
    K, k = loop_constraints(model, q, qd)
    if check and model.has_constraints:
        _consistency(model, q, qd, qdd, K, k, tol)
    tau = inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
    if passive:
        tau = tau - passive_forces(model, q, qd)
    G = explicit_constraint(model, q, qd, K=K, k=k).G if model.has_constraints else np.eye(n)
    return tau, G


@dataclass
class ActuatorForces:
    """Actuator forces for one state or a batch of N states.

    names, units, limits: per actuator; u: (p,) or (N, p) [N | N m]; case: "properly actuated",
    "redundantly actuated", "under-actuated" or "redundantly and under-actuated"; rank_Gu: rank of G_u;
    dof: n − r; residual: Gᵀ(τ_ID − B u) ((n−r,) or (N, n−r)), zero unless under-actuated;
    loop_forces: {loop name: (6,) or (N, 6)} pin wrenches [n; f] on the successor in Fp (N·m, N);
    over_limit: names of actuators whose |u| exceeds their effort limit somewhere."""
    names: tuple
    units: tuple
    limits: np.ndarray
    u: np.ndarray
    case: str
    rank_Gu: int
    dof: int
    residual: np.ndarray
    loop_forces: dict
    over_limit: tuple
    tau_ID: np.ndarray = None
    details: dict = field(default_factory=dict)


def _solve_one(A, b, weights, bounds, rtol):
    p = A.shape[1]
    w = np.ones(p) if weights is None else np.asarray(weights, float)
    if np.any(w <= 0):
        raise ValueError("actuator weights must be > 0")
    Wi = 1.0 / np.sqrt(w)  # minimise uᵀ W u: substitute u = W^-½ z, minimum-norm z
    if bounds is not None:
        lo, hi = bounds
        res = scipy.optimize.lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=1e-12, lsmr_tol="auto")
        u = res.x
        # among equally good solutions lsq_linear may return any; if the unbounded minimum-norm answer is
        # feasible, prefer it
        u_mn = Wi * (np.linalg.pinv(A * Wi, rcond=rtol) @ b)
        if np.all(u_mn >= lo - 1e-9) and np.all(u_mn <= hi + 1e-9):
            u = u_mn
        return u
    return Wi * (np.linalg.pinv(A * Wi, rcond=rtol) @ b)


def actuator_forces(model, q, qd, qdd, actuated=None, weights=None, bounds=None, rtol=1e-6, check=True,
                    warn=True, f_ext=None) -> ActuatorForces:
    """Actuator forces that produce (q, q̇, q̈) — RBDA eq. 8.63 (module docstring for the cases).

    Args:
        q, qd, qdd: (nv,) one consistent state, or (N, nv) a trajectory.
        actuated: actuator names (tree joints and/or actuated loop joints); default from the URDF.
        weights: (p,) positive weights W of the minimum-norm solution (redundant actuation).
        bounds: "limits" for the URDF effort limits, or (lower (p,), upper (p,)) [N | N m]; bounded least
            squares via scipy.optimize.lsq_linear.
        f_ext: external wrenches {link: (6,) or (N, 6)} [n; f] in the link frame about its origin (N m, N),
            e.g. soil forces on the bucket; they enter the inverse dynamics and the pin loads.
    Raises StateError for inconsistent states; KeyError for unknown actuator names. Warns
    (ActuationWarning) when under-actuated or over a limit."""
    n = model.nv
    Q, single = as_batch(q, "q", n)
    QD = as_batch(qd, "qd", n, Q.shape[0])[0]
    QDD = as_batch(qdd, "qdd", n, Q.shape[0])[0]
    acts = actuators_of(model, actuated)
    p = len(acts)
    limits = np.array([a.limit for a in acts])
    if isinstance(bounds, str):
        if bounds != "limits":
            raise ValueError(f"bounds must be 'limits' or (lower, upper), got {bounds!r}")
        bounds = (-limits, limits)
    if bounds is not None:
        bounds = (np.broadcast_to(np.asarray(bounds[0], float), (p,)), np.broadcast_to(np.asarray(bounds[1], float), (p,)))
    fx = {}
    for link, w in (f_ext or {}).items():
        w = np.asarray(w, float)
        if w.shape not in ((6,), (Q.shape[0], 6)):
            raise StateError(f"f_ext[{link!r}] must have shape (6,) or ({Q.shape[0]}, 6), got {w.shape}")
        fx[link] = np.broadcast_to(w, (Q.shape[0], 6))
    U, R, LF, TAU, ranks, dofs = [], [], [], [], [], []
    for i, (qi, qdi, qddi) in enumerate(zip(Q, QD, QDD)):
        tau, G = constrained_inverse_dynamics(model, qi, qdi, qddi, check=check,
                                              f_ext={k: v[i] for k, v in fx.items()} or None)
        B = actuation_matrix(model, qi, acts)
        A = G.T @ B
        b = G.T @ tau
        u = _solve_one(A, b, weights, bounds, rtol) if p else np.zeros(0)
        res = b - A @ u
        K, _ = loop_constraints(model, qi, qdi)
        lam = np.linalg.lstsq(K.T, tau - B @ u, rcond=rtol)[0] if K.size else np.zeros(0)
        U.append(u)
        R.append(res)
        LF.append(_loop_forces(model, lam))
        TAU.append(tau)
        ranks.append(numerical_rank(A, rtol)[0] if p else 0)
        dofs.append(G.shape[1])
    rank, dof = min(ranks), dofs[0]
    under = rank < dof
    redundant = p > rank
    case = ("redundantly and under-actuated" if under and redundant else "under-actuated" if under
            else "redundantly actuated" if redundant else "properly actuated")
    U, R, TAU = np.array(U).reshape(-1, p), np.array(R), np.array(TAU)
    over = tuple(a.name for i, a in enumerate(acts) if np.isfinite(limits[i]) and limits[i] > 0
                 and np.any(np.abs(U[:, i]) > limits[i] * (1 + 1e-9)))
    if warn and under and np.abs(R).max(initial=0.0) > 1e-9 * (1 + np.abs(TAU).max()):
        warnings.warn(f"{model.name}: under-actuated (rank G_u = {rank} < {dof} degrees of freedom): the "
                      f"actuators cannot produce this motion; largest unproduced generalised force "
                      f"{np.abs(R).max():.3g}", ActuationWarning, stacklevel=2)
    if warn and over:
        warnings.warn(f"{model.name}: over the effort limit: {', '.join(over)}", ActuationWarning, stacklevel=2)
    lf = {k: np.array([d[k] for d in LF]) for k in (LF[0] if LF else {})}
    if single:
        U, R, TAU = U[0], R[0], TAU[0]
        lf = {k: v[0] for k, v in lf.items()}
    return ActuatorForces(tuple(a.name for a in acts), tuple(a.unit for a in acts), limits, U, case, rank, dof,
                          R, lf, over, TAU)
