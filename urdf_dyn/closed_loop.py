"""Closed-loop forward dynamics, explicit constraints and assembly (RBDA §8.3–8.8, §8.11, §8.13).

The spanning tree's equation of motion with loop-closure forces (RBDA eq. 8.34–8.35):

    H q̈ + C = τ + Kᵀ λ,      K q̈ = k (+ k_stab)

``constrained_forward_dynamics`` solves it by five independent methods (results agree to rounding):

- ``"direct"``   — RBDA §8.5 method 1: the (n + n^c) KKT system by a rank-revealing least-squares solver
                   (SVD), so redundant constraints (r < n^c) are handled.
- ``"lambda"``   — method 2 (eqs. 8.36–8.41): H = LᵀL (§6.5, exploits branch-induced sparsity),
                   A = K H⁻¹ Kᵀ, λ = A⁺ b with a relative-tolerance pseudo-inverse when r < n^c.
- ``"nullspace"``— method 3 (eqs. 8.42–8.46): q̈ = G ÿ + g with G, g from K by Gaussian elimination with
                   complete pivoting (§8.8), then GᵀHG ÿ = Gᵀ(τ − C − H g).
- ``"sparse"``   — §8.13: the bodies' Newton–Euler equations in base coordinates with every tree and loop
                   joint's constraint force as unknowns (eq. 8.64), solved by scipy.sparse (SuperLU).
- ``"gauss"``    — Gauss's principle of least constraint: minimise (q̈ − a)ᵀ H (q̈ − a) subject to
                   K q̈ = k, with a = H⁻¹(τ − C): q̈ = a + L⁻ᵀ (K L⁻ᵀ)⁺ (k − K a), H = L Lᵀ (Udwadia–Kalaba;
                   DESIGN §4 on the paper's erroneous (AB)⁺ = B⁺A⁺).

λ has one entry per constraint row: for loop joint k, the wrench T_k λ_k (in Fp coordinates, [n; f] in
N·m and N) acts on the successor, its negative on the predecessor. Where rows are redundant, λ is the
minimum-norm solution (only Kᵀλ is unique).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.optimize
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ._checks import as_batch
from .dynamics import bias_force, mass_matrix
from .errors import ModelError, StateError
from .loops import ConstraintWarning, LoopState, constraint_terms, loop_constraints, numerical_rank
from .spatial import crf, crm

__all__ = ["constrained_forward_dynamics", "ConstrainedAccel", "explicit_constraint", "ExplicitConstraint",
           "complete_pivot_lu", "assemble", "project_velocity", "METHODS", "UserLoopClosure",
           "passive_forces"]

METHODS = ("direct", "lambda", "nullspace", "sparse", "gauss")


@dataclass
class ConstrainedAccel:
    """Result of closed-loop forward dynamics at one state.

    qdd (nv,): joint accelerations; lam (n^c,): constraint-force multipliers; loop_forces: {loop name:
    wrench (6,) [n; f] on the successor in Fp coordinates, N·m and N}; rank: r of K; residual: ‖K q̈ − k‖;
    method: the method used."""
    qdd: np.ndarray
    lam: np.ndarray
    loop_forces: dict
    rank: int
    residual: float
    method: str
    diagnostics: dict = field(default_factory=dict)


def passive_forces(model, q, qd):
    """Passive joint forces (nv,) [N m | N]: URDF damping −b q̇ and Gazebo springs −k (q − q_ref) of tree
    joints, and the damping of 1-dof loop joints (``<loop>``'s ``<dynamics damping>``), which acts along
    the loop joint's axis S between its bodies: τ += −b (bᵀq̇) b with b = (^{Fp}X_0 (J_s − J_p))ᵀ S."""
    tau = -np.asarray(model.damping) * qd
    if model.spring_stiffness is not None:
        tau = tau - np.asarray(model.spring_stiffness) * (q - np.asarray(model.spring_reference))
    damped = [lp for lp in model.loops if lp.damping > 0 and lp.S.shape[1] == 1]
    if damped:
        st = LoopState(model, q)
        for lp in damped:
            XFp, _ = st.loop_frames(lp)
            b = (XFp @ (st.body_jacobian(lp.s) - st.body_jacobian(lp.p))).T @ np.asarray(lp.S)[:, 0]
            tau = tau - lp.damping * (b @ qd) * b
    return tau


# ---------------------------------------------------------------------------------------------------------
# §8.8: G, g by Gaussian elimination with complete pivoting
# ---------------------------------------------------------------------------------------------------------
def complete_pivot_lu(K, rtol=1e-6, prefer_last=()):
    """Row-echelon reduction of K (m×n) with complete pivoting (RBDA §8.8).

    Returns (rank r, pivot columns (r,) — the dependent coordinates, free columns (n−r,) — independent,
    pivot rows (r,) — a maximal independent set of rows). Columns listed in ``prefer_last`` are chosen as
    pivots only when no other column has a pivot above the tolerance, so that they stay independent
    (URDF+'s ``independent="true"``)."""
    A = np.array(K, float)
    m, n = A.shape
    scale = np.abs(A).max() if A.size else 0.0
    tol = rtol * scale
    rows, cols = list(range(m)), list(range(n))
    piv_rows, piv_cols = [], []
    pref = set(prefer_last)
    R = A.copy()
    for _ in range(min(m, n)):
        sub_r = [i for i in rows if i not in piv_rows]
        best = None
        for group in ([c for c in cols if c not in piv_cols and c not in pref],
                      [c for c in cols if c not in piv_cols and c in pref]):
            if not group or not sub_r:
                continue
            blk = np.abs(R[np.ix_(sub_r, group)])
            i, j = np.unravel_index(np.argmax(blk), blk.shape)
            if blk[i, j] > tol:
                best = (sub_r[i], group[j])
                break
        if best is None:
            break
        pr, pc = best
        piv_rows.append(pr)
        piv_cols.append(pc)
        for i in sub_r:
            if i != pr:
                R[i] -= (R[i, pc] / R[pr, pc]) * R[pr]
    free = [c for c in cols if c not in piv_cols]
    return len(piv_cols), np.array(piv_cols, int), np.array(free, int), np.array(piv_rows, int)


@dataclass
class ExplicitConstraint:
    """q̇ = G ẏ and q̈ = G ÿ + g (RBDA eqs. 3.11, 8.42): G (nv × (nv−r)), g (nv,), and the names of the
    independent coordinates y (a subset of the joint names)."""
    G: np.ndarray
    g: np.ndarray
    independent: tuple
    rank: int


def explicit_constraint(model, q, qd, t_stab=None, rtol=1e-6, K=None, k=None, independent=None) -> ExplicitConstraint:
    """G, g with K G = 0 and K g = k (+ k_stab) from complete-pivot elimination (RBDA §8.8).

    ``independent``: joint names to use as the independent coordinates y (e.g. the actuated joints of a
    properly actuated machine); by default the elimination chooses them, preferring joints marked
    ``independent="true"``. Raises ValueError if the given set cannot parametrise the motion here (the
    other coordinates' columns of K are rank-deficient, or the count is not n − r)."""
    if K is None:
        K, k = loop_constraints(model, q, qd, t_stab)
    n = model.nv
    if independent is not None:
        free = np.array([model.joint_index(j) for j in independent], int)
        dep = np.array([i for i in range(n) if i not in set(free.tolist())], int)
        r, _, _ = numerical_rank(K, rtol)
        rd, piv_cols, _, prow = complete_pivot_lu(K[:, dep], rtol)
        if len(free) != n - r or rd != len(dep):
            raise ValueError(f"{model.name}: {', '.join(independent)} cannot serve as independent coordinates "
                             f"here (need {n - r} that leave the others determined; rank of the others' "
                             f"constraint columns {rd} of {len(dep)})")
        order = np.argsort(piv_cols)  # pivot rows matched to dep columns in dep order
        prow = prow[order] if len(prow) else prow
        dep = dep[np.sort(piv_cols)] if len(piv_cols) else dep
    else:
        pref = [model.joint_index(j) for j in model.independent]
        r, dep, free, prow = complete_pivot_lu(K, rtol, prefer_last=pref)
    Kd, Ki = K[np.ix_(prow, dep)], K[np.ix_(prow, free)]
    G = np.zeros((n, n - r))
    g = np.zeros(n)
    if r:
        G[dep] = -np.linalg.solve(Kd, Ki)
        g[dep] = np.linalg.solve(Kd, k[prow])
    G[free, np.arange(n - r)] = 1.0
    return ExplicitConstraint(G, g, tuple(model.joint_names[i] for i in free), r)


class UserLoopClosure:
    """A user-supplied loop-closure function (RBDA §8.11): ``gamma(y, yd) -> (q, G, g)`` with q = γ(y),
    G = ∂γ/∂y and g = Ġ ẏ, for independent coordinates ``independent`` (joint names). Forward dynamics
    then solves GᵀHG ÿ = Gᵀ(τ − C − H g) (eq. 8.45) without K."""

    def __init__(self, model, independent, gamma):
        self.model = model
        self.independent = tuple(independent)
        self.idx = [model.joint_index(j) for j in self.independent]
        self.gamma = gamma

    def state(self, y, yd):
        q, G, g = self.gamma(np.asarray(y, float), np.asarray(yd, float))
        q, G, g = np.asarray(q, float), np.asarray(G, float), np.asarray(g, float)
        return q, G @ yd, G, g

    def forward_dynamics(self, y, yd, tau):
        """(ÿ, q, q̇, q̈) from eq. 8.46 for tree joint forces τ (nv,)."""
        q, qd, G, g = self.state(y, yd)
        H = mass_matrix(self.model, q)
        C = bias_force(self.model, q, qd)
        ydd = np.linalg.solve(G.T @ H @ G, G.T @ (tau - C - H @ g))
        return ydd, q, qd, G @ ydd + g


# ---------------------------------------------------------------------------------------------------------
# forward dynamics
# ---------------------------------------------------------------------------------------------------------
def _loop_forces(model, lam):
    out, i = {}, 0
    for lp in model.loops:
        out[lp.name] = np.asarray(lp.T) @ lam[i:i + lp.nc]
        i += lp.nc
    for mi in model.mimic:
        out[f"mimic:{mi.joint}"] = lam[i:i + 1]
        i += 1
    return out


def _sparse_method(model, st, tau, K, k, rtol, f_ext_body=None):
    """RBDA §8.13, eq. 8.64, in base coordinates: [I PT; (PT)ᵀ 0] [a; −λ] = [rhs; c]."""
    NB, nv = model.NB, model.nv
    a_g = model.a_grav
    blocks_I, rhs = [], []
    for i in range(1, NB + 1):
        Xi = st.X0[i]
        I0 = Xi.T @ np.asarray(model.I[i]) @ Xi  # body inertia in base coordinates
        v = st.v0[i]
        blocks_I.append(I0)
        rhs.append(-crf(v) @ I0 @ v + I0 @ a_g)
    rhs = np.concatenate(rhs)
    cols, c = [], []  # constraint columns of PT (6NB,) and right-hand sides
    # tree joints: 5 constraint directions each (T_j ⟂ S_j in body coordinates), and the active force τ S
    for j in range(1, NB + 1):
        Sb = st.S[j]
        Tb = np.linalg.svd(Sb[None, :])[2][1:].T  # 6×5 orthonormal complement of S_j
        T0 = st.X0[j].T @ Tb                      # force transform body -> base
        Sa = st.X0[j].T @ Sb                      # active force direction (Tᵃ = S for unit axes)
        par = model.parent[j]
        rhs[6 * (j - 1):6 * j] += Sa * tau[j - 1]
        if par > 0:
            rhs[6 * (par - 1):6 * par] -= Sa * tau[j - 1]
        vj, vp = st.v0[j], st.v0[par]
        Tdot = crf(vj) @ T0                       # T fixed in body j
        for col in range(5):
            vec = np.zeros(6 * NB)
            vec[6 * (j - 1):6 * j] = T0[:, col]
            if par > 0:
                vec[6 * (par - 1):6 * par] = -T0[:, col]
            cols.append(vec)
            c.append(-Tdot[:, col] @ (vj - vp))
    # loop joints: the independent rows of K (redundant ones dropped by complete pivoting); the row's
    # constraint force direction in base coordinates is d = Xᵀ T. Its right side is k without the
    # velocity-product term that K q̈ = k moved there: dᵀ(a_s − a_p) = k + dᵀ(a^vp_s − a^vp_p).
    r, _, _, prow = complete_pivot_lu(K, rtol)
    nl = sum(lp.nc for lp in model.loops)
    row_dirs = []
    for lp in model.loops:
        XFp, _ = st.loop_frames(lp)
        T, _ = st.T_of(lp)
        for col in range(lp.nc):
            row_dirs.append((lp, XFp.T @ T[:, col]))
    mimic_rows = []
    for ri in sorted(prow):
        if ri < nl:
            lp, d0 = row_dirs[ri]
            vec = np.zeros(6 * NB)
            if lp.s > 0:
                vec[6 * (lp.s - 1):6 * lp.s] += d0
            if lp.p > 0:
                vec[6 * (lp.p - 1):6 * lp.p] -= d0
            cols.append(vec)
            c.append(k[ri] + d0 @ (st.avp0[lp.s] - st.avp0[lp.p]))
        else:
            mimic_rows.append(ri)
    if mimic_rows:
        raise NotImplementedError("the sparse method does not handle <mimic> couplings; use another method")
    PT = np.array(cols).T
    nc_all = PT.shape[1]
    A = sp.bmat([[sp.block_diag(blocks_I), sp.csr_matrix(PT)], [sp.csr_matrix(PT.T), None]], format="csc")
    sol = spla.spsolve(A, np.concatenate([rhs, c]))
    a = sol[:6 * NB].reshape(NB, 6)
    lam_tree_loop = -sol[6 * NB:]
    qdd = np.zeros(nv)
    for j in range(1, NB + 1):
        par = model.parent[j]
        S0 = st.S0[j]
        arel = a[j - 1] - (a[par - 1] if par > 0 else 0.0) - crm(st.v0[j]) @ (S0 * st.qd[j - 1])
        qdd[j - 1] = S0 @ arel / (S0 @ S0)
    lam = np.zeros(K.shape[0])
    lam[np.sort(prow)] = lam_tree_loop[5 * NB:]
    return qdd, lam, nc_all


def constrained_forward_dynamics(model, q, qd, tau, method="nullspace", t_stab=None, rtol=1e-6,
                                 passive=False) -> ConstrainedAccel:
    """Closed-loop forward dynamics at one state (RBDA §8.3–8.5, §8.13).

    Args:
        q, qd, tau: (nv,) spanning-tree joint positions [rad | m], velocities and forces [N m | N].
        method: one of ``METHODS`` (module docstring).
        t_stab: Baumgarte time constant [s] (RBDA §8.3); None for the exact constraint K q̈ = k.
        rtol: relative tolerance for ranks and pseudo-inverses (overconstrained loops).
        passive: add URDF joint damping and Gazebo springs to τ.

    Returns a ConstrainedAccel. Raises StateError for bad arrays, ValueError for an unknown method. Warns
    (ConstraintWarning) if the constraints are inconsistent (‖K q̈ − k‖ large: e.g. a locked mechanism).
    """
    n = model.nv
    q = as_batch(q, "q", n)[0][0]
    qd = as_batch(qd, "qd", n)[0][0]
    tau = as_batch(tau, "tau", n)[0][0]
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if passive:
        tau = tau + passive_forces(model, q, qd)
    st, K, k = constraint_terms(model, q, qd, t_stab)
    H = mass_matrix(model, q)
    C = bias_force(model, q, qd)
    rhs = tau - C
    r, sv, tol = numerical_rank(K, rtol)
    if sv.size and np.any((sv > tol) & (sv < 1e3 * tol)):
        warnings.warn(f"{model.name}: loop constraints near-singular here (smallest kept singular value "
                      f"{sv[sv > tol][-1]:.3g}, tolerance {tol:.3g}): near a change of mobility (RBDA §8.10); "
                      "the minimum-norm answer is returned", ConstraintWarning, stacklevel=2)
    diag = {}
    if method == "direct":
        nc = K.shape[0]
        A = np.block([[H, K.T], [K, np.zeros((nc, nc))]])
        x = sla.lstsq(A, np.r_[rhs, k], cond=rtol * 1e-3)[0]
        qdd, lam = x[:n], -x[n:]
    elif method == "lambda":
        from . import _kernels as _Kn
        from .dynamics import coordinate_parents
        lam_c = coordinate_parents(model)
        L = H[None].copy()
        cols = np.ascontiguousarray(np.c_[rhs, K.T].T)  # solve H X = [rhs, Kᵀ] with one LᵀL factorisation
        X = np.zeros_like(cols)
        for i in range(cols.shape[0]):
            L[0] = H
            _Kn.ltl_solve(lam_c, L, cols[i:i + 1], X[i:i + 1])
        a0, HinvKT = X[0], X[1:].T
        A = K @ HinvKT
        b = k - K @ a0
        lam = np.linalg.pinv(A, rcond=rtol, hermitian=True) @ b
        qdd = a0 + HinvKT @ lam
    elif method == "nullspace":
        ec = explicit_constraint(model, q, qd, rtol=rtol, K=K, k=k)
        G, g = ec.G, ec.g
        ydd = np.linalg.solve(G.T @ H @ G, G.T @ (rhs - H @ g))
        qdd = G @ ydd + g
        lam = np.linalg.lstsq(K.T, H @ qdd - rhs, rcond=rtol)[0] if K.size else np.zeros(0)
        diag["independent"] = ec.independent
    elif method == "gauss":
        Lc = np.linalg.cholesky(H)
        a = sla.cho_solve((Lc, True), rhs, check_finite=False)
        B = sla.solve_triangular(Lc, K.T, lower=True, check_finite=False).T  # K L⁻ᵀ (inputs already checked)
        z = np.linalg.pinv(B, rcond=rtol) @ (k - K @ a)
        qdd = a + sla.solve_triangular(Lc.T, z, lower=False, check_finite=False)
        lam = np.linalg.lstsq(K.T, H @ qdd - rhs, rcond=rtol)[0] if K.size else np.zeros(0)
    else:  # sparse
        qdd, lam, nall = _sparse_method(model, st, tau, K, k, rtol)
        diag["sparse_system_size"] = 6 * model.NB + nall
    res = float(np.linalg.norm(K @ qdd - k)) if K.size else 0.0
    scale = max(1.0, float(np.linalg.norm(k)), float(np.linalg.norm(K, ord=np.inf) * np.linalg.norm(qdd)))
    if res > 1e-6 * scale:
        warnings.warn(f"{model.name}: loop constraints inconsistent at this state (‖K q̈ − k‖ = {res:.3g}); "
                      "the least-squares answer is returned", ConstraintWarning, stacklevel=2)
    return ConstrainedAccel(qdd, lam, _loop_forces(model, lam), r, res, method, diag)


def fast_qdd(model, q, qd, tau, t_stab=None, rtol=1e-6, passive=True):
    """q̈ only, for the simulator's inner loop: RBDA §8.5 method 2 without the public function's argument
    checks, rank diagnostics and λ bookkeeping (q, q̇, τ must be valid float64 (nv,) arrays). Computes
    H (CRBA) and C (RNEA) with the kernels, K, k with the compiled loop kernel, H = L Lᵀ (Cholesky),
    A = K H⁻¹ Kᵀ and λ = A⁺ b by a symmetric eigendecomposition with the same relative tolerance as
    ``constrained_forward_dynamics(method="lambda")``, which the tests compare it with."""
    if passive:
        tau = tau + passive_forces(model, q, qd)
    from . import _kernels as _Kn
    from .loops import _pack
    pack = _pack(model)
    hit = _ROWS.get(id(model))
    if pack is not None and not model.mimic and hit is not None and hit[0] is model:
        n = model.nv
        qdd = np.empty((1, n))
        status = _Kn.cl_qdd(model.parent, model.jtype, model.axis, model.X_tree, model.I, -model.a_grav,
                            q.reshape(1, n), qd.reshape(1, n), np.ascontiguousarray(tau, float).reshape(1, n),
                            pack["p"], pack["s"], pack["XP"], pack["XS"], pack["axis"], pack["mode"],
                            pack["row_loop"], pack["row_T"], hit[1], 0.0 if t_stab is None else 1.0 / t_stab,
                            rtol, qdd)
        if status == 0:
            return qdd[0]
    _, K, k = constraint_terms(model, q, qd, t_stab)
    return qdd_from_terms(model, q, qd, tau, K, k, rtol)


def qdd_from_terms(model, q, qd, tau, K, k, rtol=1e-6):
    """q̈ from H q̈ + C = τ + Kᵀλ, K q̈ = k for given K, k (RBDA §8.5 method 2: H = L Lᵀ, A = K H⁻¹ Kᵀ,
    λ = A⁺ b by a symmetric eigendecomposition). τ already holds every applied force."""
    from . import _kernels as _Kn
    n = model.nv
    q2, qd2 = q.reshape(1, n), qd.reshape(1, n)
    H = np.zeros((1, n, n))
    _Kn._crba(model.parent, model.jtype, model.axis, model.X_tree, model.I, q2, H, 0, 1)
    C = np.zeros((1, n))
    _Kn._rnea(model.parent, model.jtype, model.axis, model.X_tree, model.I, -model.a_grav, q2, qd2,
              np.zeros((1, n)), np.zeros((1, model.NB + 1, 6)), C, 0, 1)
    L = np.linalg.cholesky(H[0])
    X = sla.cho_solve((L, True), np.column_stack([tau - C[0], K.T]), check_finite=False)
    a0, HinvKT = X[:, 0], X[:, 1:]
    # Redundant loop rows (planar loops in 3-D): solve with an independent row subset, chosen once per
    # model by complete pivoting (§8.8), so A_r = K_r H⁻¹ K_rᵀ is positive definite (Cholesky). If the
    # dropped rows are then not satisfied (near a singular pose the subset may no longer span), fall back
    # to the pseudo-inverse of the full A by a symmetric eigendecomposition.
    hit = _ROWS.get(id(model))
    if hit is not None and hit[0] is model and K.shape[0]:
        rows = hit[1]
        A = K[rows] @ HinvKT[:, rows]
        try:
            La = np.linalg.cholesky(A)
            d = np.diag(La)
            if d.size and d.min() > np.sqrt(rtol) * d.max():
                lam = sla.cho_solve((La, True), k[rows] - K[rows] @ a0, check_finite=False)
                qdd = a0 + HinvKT[:, rows] @ lam
                if np.linalg.norm(K @ qdd - k) <= 1e-7 * (np.linalg.norm(k) + np.linalg.norm(K) * np.linalg.norm(qdd)):
                    return qdd
        except np.linalg.LinAlgError:
            pass
    A = K @ HinvKT
    w, V = np.linalg.eigh(A)
    keep = w > rtol * max(w[-1], 0.0) if w.size else w > 0
    lam = V[:, keep] @ ((V[:, keep].T @ (k - K @ a0)) / w[keep])
    if len(_ROWS) > 64:
        _ROWS.clear()
    _ROWS[id(model)] = (model, np.sort(complete_pivot_lu(K, rtol)[3]).astype(np.int64))
    return a0 + HinvKT @ lam


_ROWS = {}  # model id -> (model, independent rows of K) for qdd_from_terms


# ---------------------------------------------------------------------------------------------------------
# assembly
# ---------------------------------------------------------------------------------------------------------
def assemble(model, q_guess=None, hold=(), tol=1e-6, max_nfev=200):
    """Close every loop by least squares (scipy.optimize.least_squares), keeping the joints in ``hold`` at
    their values in ``q_guess`` (default: ``<initial_configuration>``). Starting from a guess near the wanted
    branch keeps that branch; the step is bounded to stay near it.

    Returns q (nv,). Raises ModelError if the loops cannot be closed (residual above ``tol`` [m, rad]),
    naming the worst loop — e.g. a held joint value out of the mechanism's reach. ``tol`` sits above the
    ~1e-9 that rounding in a file leaves in overconstrained (planar) loops, which no q can remove."""
    n = model.nv
    q0 = model.q_initial() if q_guess is None else as_batch(q_guess, "q_guess", n)[0][0]
    held = [model.joint_index(j) for j in hold]
    free = [i for i in range(n) if i not in held]
    if not model.has_constraints:
        return q0.copy()

    def fun(x):
        q = q0.copy()
        q[free] = x
        return LoopState(model, q).deltas()

    def jac(x):
        q = q0.copy()
        q[free] = x
        K, _ = loop_constraints(model, q, np.zeros(n))
        return K[:, free]

    sol = scipy.optimize.least_squares(fun, q0[free], jac=jac, method="trf", xtol=1e-15, ftol=1e-15,
                                       gtol=1e-15, max_nfev=max_nfev, x_scale="jac")
    q = q0.copy()
    q[free] = sol.x
    res = LoopState(model, q).deltas()
    if np.max(np.abs(res), initial=0.0) > tol:
        worst = _worst_loop(model, q)
        raise ModelError(f"{model.name}: cannot assemble the loops (largest residual {np.abs(res).max():.3g} at "
                         f"{worst}); held joints: {', '.join(hold) or 'none'} — a held value may be out of reach",
                         file=model.source)
    return q


def _worst_loop(model, q):
    from .loops import loop_residuals
    r = loop_residuals(model, q)
    return max(r, key=lambda kk: np.abs(r[kk]).max())


def project_velocity(model, q, qd, hold=()):
    """The velocity closest to ``qd`` (least squares) that satisfies K q̇ = 0, keeping the joints in
    ``hold`` at their given velocities. Returns (nv,)."""
    n = model.nv
    qd = as_batch(qd, "qd", n)[0][0]
    K, _ = loop_constraints(model, q, np.zeros(n))
    held = [model.joint_index(j) for j in hold]
    free = [i for i in range(n) if i not in held]
    rhs = -K[:, held] @ qd[held] if held else np.zeros(K.shape[0])
    Kf = K[:, free]
    x = qd[free] + np.linalg.lstsq(Kf, rhs - Kf @ qd[free], rcond=1e-9)[0]
    out = qd.copy()
    out[free] = x
    return out
