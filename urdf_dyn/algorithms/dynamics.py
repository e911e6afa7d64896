"""Tree dynamics: inverse dynamics (RNEA), joint-space inertia (CRBA), bias forces, forward dynamics (ABA
or CRBA + LᵀL), energy.  Equation of motion (RBDA eq. 3.1): H(q) q̈ + C(q, q̇) = τ.

Every function accepts one state (q of shape (nq,), the others (nv,)) or a batch of N states ((N, nq),
(N, nv)) and returns results of the matching shape. Units: q [rad | m], q̇ [rad/s | m/s], q̈ [rad/s² | m/s²],
τ [N m | N] in the order of ``model.joint_names`` (q in the order of ``model.q_names``; nq = nv without a
floating joint). On a floating or planar joint q̇, q̈ and τ are the child link's spatial velocity,
acceleration and force in its own frame, linear part first (Pinocchio's free-flyer convention). Gravity is ``model.gravity`` in the base (root link) frame.

External forces ``f_ext`` are a mapping {link name: wrench}, each wrench (6,) or (N, 6) = [n; f]
(torque [N m] about the link origin, then force [N]), expressed in the link frame — Pinocchio's LOCAL
convention, with Featherstone's angular-first order.
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms import _calls as K
from urdf_dyn.algorithms._kernels import ltl_solve
from urdf_dyn._checks import batch_states
from urdf_dyn.errors import StateError
from urdf_dyn.algorithms.spatial import pose_to_plux

__all__ = ["inverse_dynamics", "mass_matrix", "bias_force", "gravity_torques", "forward_dynamics",
           "kinetic_energy", "potential_energy", "coordinate_parents"]


_F8 = np.dtype(np.float64)
_ND = np.ndarray

# One plain state (1-D float64 ndarrays, any strides) goes straight to the compiled single-state entry with
# the model's packed arrays (``Model.kernel_single``): the class, dtype and number of dimensions are what the
# entry (which unboxes without typing) trusts, so they are checked here; the entry checks the sizes (nq, nv)
# and finiteness itself and returns a nonzero status when something is wrong; the general path then explains.
# Everything else (lists, other dtypes or shapes, batches, f_ext) takes the general, checking path.


def _out(x, single, what="result"):
    if not np.all(np.isfinite(x)):  # never return NaN silently (e.g. overflow from absurd inputs)
        raise StateError(f"the {what} is not finite: the inputs are out of any physical range (overflow)")
    return x[0] if single else x


def f_ext_body(model, f_ext, N):
    """External link wrenches in the kernels' layout. ``f_ext`` maps link name -> wrench (6,) or (N, 6)
    [N m; N] in the link frame, about its origin (RBDA §2.9 order [n; f]); returns (Nf, NB+1, 6) forces in
    body coordinates (Nf = 1 when every wrench is constant, N otherwise; (0, NB+1, 6) for none). Raises
    StateError naming an unknown link or a wrong shape. Used by every subpackage that applies external
    forces (inverse dynamics, base reactions)."""
    if not f_ext:
        return np.zeros((0, model.NB + 1, 6))  # the kernels' "no external forces"
    rows = [np.asarray(w, float) for w in f_ext.values()]
    Nf = max(1 if r.ndim == 1 else r.shape[0] for r in rows)
    if Nf not in (1, N):
        raise StateError(f"f_ext has batches of {Nf} wrenches but the state has {N}")
    out = np.zeros((Nf, model.NB + 1, 6))
    for link, w in f_ext.items():
        w = np.asarray(w, float)
        if w.shape not in ((6,), (Nf, 6)) or not np.all(np.isfinite(w)):
            raise StateError(f"f_ext[{link!r}] must be a finite wrench of shape (6,) or ({Nf}, 6); got {w.shape}")
        lf = model.link(link)
        X_bl = pose_to_plux(np.ascontiguousarray(lf.T_body_link))  # body -> link (motion)
        out[:, lf.body] += np.atleast_2d(w) @ X_bl  # f_body = X_blᵀ f_link
    return out


def inverse_dynamics(model, q, qd, qdd, f_ext=None):
    """Joint forces τ (nv,) or (N, nv) [N m | N] that produce q̈ at (q, q̇): RNEA, RBDA Table 5.1.

    Raises StateError for arrays of the wrong shape or with NaN/inf."""
    if f_ext is None:
        sv, _, ib, fb = model.kernel_single
        if (q.__class__ is qd.__class__ is qdd.__class__ is _ND and q.dtype is qd.dtype is qdd.dtype is _F8
                and q.ndim == qd.ndim == qdd.ndim == 1):
            tau = np.empty(sv)
            if K.rnea1(ib, fb, q, qd, qdd, tau) == 0:
                return tau
    s, single, N = batch_states(model, q=q, qd=qd, qdd=qdd)
    tau = K.rnea(*model.kernel_pack, s["q"], s["qd"], s["qdd"], f_ext_body(model, f_ext, N))
    return _out(tau, single, "inverse dynamics")


def bias_force(model, q, qd, f_ext=None):
    """Bias force C(q, q̇) (nv,) or (N, nv) [N m | N]: Coriolis, centrifugal, gravity and external forces;
    the τ that gives q̈ = 0 (RBDA §5.3, eq. 3.1)."""
    s, single, _ = batch_states(model, q=q, qd=qd)
    C = inverse_dynamics(model, s["q"], s["qd"], np.zeros_like(s["qd"]), f_ext)
    return C[0] if single else C


def gravity_torques(model, q):
    """Gravity torques g(q) = C(q, 0) (nv,) or (N, nv) [N m | N]: the joint forces that hold the robot still."""
    q = np.asarray(q, float)
    return bias_force(model, q, np.zeros(q.shape[:-1] + (model.nv,)))


def mass_matrix(model, q):
    """Joint-space inertia matrix H(q), (nv, nv) or (N, nv, nv) [kg m² | kg]: CRBA, RBDA Table 6.2.
    Symmetric positive definite for a model whose every body has positive mass or inertia."""
    _, sH, ib, fb = model.kernel_single
    if q.__class__ is _ND and q.dtype is _F8 and q.ndim == 1:
        H = np.zeros(sH)
        if K.crba1(ib, fb, q, H) == 0:
            return H
    s, single, N = batch_states(model, q=q)
    return _out(K.crba(*model.kernel_pack, s["q"]), single, "mass matrix")


def coordinate_parents(model) -> np.ndarray:
    """λ for joint coordinates (0-based, −1 for a joint on the base): the sparsity pattern of H (RBDA §6.5)."""
    return np.asarray(model.parent[1:], dtype=np.int64) - 1


def forward_dynamics(model, q, qd, tau, f_ext=None, algorithm="aba"):
    """Joint accelerations q̈ (nv,) or (N, nv) from H q̈ = τ − C.

    Args:
        algorithm: ``"aba"`` (articulated-body algorithm, RBDA Table 7.1, O(n)) or ``"crba"`` (H by CRBA and
            C by RNEA, solved by the sparse LᵀL factorisation of RBDA §6.5, O(n²)–O(n³)).

    Raises StateError for bad arrays; ValueError for an unknown algorithm; np.linalg.LinAlgError if H is not
    positive definite (a body without mass and inertia at the end of a chain)."""
    if f_ext is None and algorithm == "aba":
        sv, _, ib, fb = model.kernel_single
        if (q.__class__ is qd.__class__ is tau.__class__ is _ND and q.dtype is qd.dtype is tau.dtype is _F8
                and q.ndim == qd.ndim == tau.ndim == 1):
            qdd = np.empty(sv)
            try:
                if K.aba1(ib, fb, q, qd, tau, qdd) == 0:
                    return qdd
            except ZeroDivisionError:  # a zero articulated inertia; the general path below explains
                pass
    s, single, N = batch_states(model, q=q, qd=qd, tau=tau)
    fx = f_ext_body(model, f_ext, N)
    if algorithm == "aba":
        try:
            qdd = K.aba(*model.kernel_pack, s["q"], s["qd"], s["tau"], fx)
        except ZeroDivisionError:
            raise np.linalg.LinAlgError("forward dynamics: a joint moves a body with zero articulated inertia (H is "
                                        "singular: a massless link at the end of a chain, or a massless body "
                                        "whose joint moves nothing else)") from None
    elif algorithm == "crba":
        H = K.crba(*model.kernel_pack, s["q"])
        C = K.rnea(*model.kernel_pack, s["q"], s["qd"], np.zeros((N, model.nv)), fx)
        qdd = np.zeros((N, model.nv))
        if not ltl_solve(coordinate_parents(model), H, s["tau"] - C, qdd):
            raise np.linalg.LinAlgError("joint-space inertia H is not positive definite: a chain ends in a "
                                        "body with no mass or inertia")
    else:
        raise ValueError(f"unknown forward-dynamics algorithm {algorithm!r}; use 'aba' or 'crba'")
    if not np.all(np.isfinite(qdd)):
        raise np.linalg.LinAlgError("forward dynamics gave non-finite accelerations: a joint moves a body "
                                    "with zero articulated inertia (massless link at the end of a chain?)")
    return _out(qdd, single)


def kinetic_energy(model, q, qd):
    """Kinetic energy ½ q̇ᵀ H q̇ [J], scalar or (N,)."""
    s, single, _ = batch_states(model, q=q, qd=qd)
    H = mass_matrix(model, s["q"])
    T = 0.5 * np.einsum("ni,nij,nj->n", s["qd"], H, s["qd"])
    return float(T[0]) if single else T


def potential_energy(model, q):
    """Gravitational potential energy −Σ m_i gᵀ c_i [J] (zero at the base origin), scalar or (N,)."""
    from urdf_dyn.algorithms.kinematics import body_poses
    s, single, _ = batch_states(model, q=q)
    T = body_poses(model, s["q"])  # (N, NB+1, 4, 4)
    I = np.asarray(model.I)
    m = I[:, 3, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.stack([I[:, 2, 4], I[:, 0, 5], I[:, 1, 3]], axis=1) / np.where(m > 0, m, 1.0)[:, None]
    c_world = np.einsum("nbij,bj->nbi", T[:, :, :3, :3], c) + T[:, :, :3, 3]
    V = -np.einsum("b,nbi,i->n", m, c_world, np.asarray(model.gravity))
    return float(V[0]) if single else V
