"""Compiled (numba) closed-loop path for one state or a trajectory of N states: assembly by Newton on the
independent constraint rows, q̇ = G ẏ and q̈ = G ÿ + g with G, g by complete pivoting (RBDA §8.8), and
closed-loop inverse dynamics with actuator forces and loop forces (eqs. 8.62–8.63).

Each function here is the compiled copy of a readable reference, and tests hold the two together:

| compiled | reference |
|---|---|
| ``motion_path`` | ``constraints.motion.consistent_motion(compiled=False)`` |
| ``actuation_path`` | ``constraints.inverse.actuator_forces(compiled=False)`` |

K, k, Tᵀv_J and δ come from ``constraints._kernels.loop_geometry`` and ``loop_velocity`` (one workspace per
trajectory); τ from ``algorithms._kernels._rnea_p`` on ``Model.kernel_pack``. No LAPACK call is compiled in: the small factorisations
are written out in ``constraints._linalg``, which keeps the first compilation short. Nothing is allocated
per sample: every workspace is made before the loop over samples (or when the independent set is chosen).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms._kernels import crba_packed, rnea_packed, split_tree
from urdf_dyn.constraints._kernels import _chol, _chol_solve, loop_geometry, loop_terms, loop_velocity, loop_work
from urdf_dyn.constraints._linalg import _choose_given, _complement, _cp_lu, _explicit, _loop_lambda, _lu, _lu_solve
from urdf_dyn.constraints._sample import actuate, actuation_work, explicit_G, iw_rank, set_size

__all__ = ["motion_path", "actuation_path", "forward_path"]


_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

@njit(cache=True)
def motion_path(parent, jtype, axis, X_tree, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, idx,
                dep, t, Y, YD, YDD, q0, rtol, newton_tol, maxit, close_tol, Q, QD, QDD, info):
    """Consistent (Q, QD, QDD) (N, n) for a motion of the independent coordinates idx (Y, YD, YDD (N, k)):
    at each sample, Newton on the independent rows (K_d Δq_dep = −δ_rows) from the previous samples'
    states extrapolated to third order (``_predict``; q₀ at the first, already assembled), which tracks
    the branch; then q̇ = G ẏ and q̈ = G ÿ + g (RBDA §8.8). The row set is chosen once and re-checked.
    info (2,): (0 ok | 1 loops not closed, Q[i] then holds Newton's last iterate | 2 coordinates cannot
    serve, sample index)."""
    N = t.shape[0]
    n = q0.shape[0]
    R = row_loop.shape[0]
    nd = dep.shape[0]
    nf = idx.shape[0]
    Et, rt = split_tree(X_tree)
    ws = loop_work(n, R)
    K = np.zeros((R, n))
    k = np.zeros(R)
    vJ = np.zeros(R)
    dl = np.zeros(R)
    q = q0.copy()
    qd = np.zeros(n)
    rows = np.empty(nd, np.int64)
    red = np.empty(R - nd, np.int64)
    chosen = False
    LU = np.empty((nd, nd))
    perm = np.empty(nd, np.int64)
    X = np.empty((nd + 1, nf + 1))
    b = np.empty(nd)
    x = np.empty(nd)
    G = np.zeros((n, nf))
    g = np.zeros(n)
    info[0], info[1] = 0, 0
    for i in range(N):
        _predict(t, Q, QD, QDD, i, q)
        for c in range(nf):
            q[idx[c]] = Y[i, c]
        for it in range(maxit + 1):
            loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
                          row_T, ws, K, dl)
            if not chosen:
                if not _choose_given(K, dep, rtol, rows):
                    info[0], info[1] = 2, i
                    return
                red = _complement(rows, R)
                chosen = True
            e = 0.0
            for c in range(nd):
                e = max(e, abs(dl[rows[c]]))
            if e <= newton_tol or it == maxit:
                break
            for a in range(nd):
                for c in range(nd):
                    LU[a, c] = K[rows[a], dep[c]]
                b[a] = -dl[rows[a]]
            if _lu(LU, perm) == 0.0:
                break
            _lu_solve(LU, perm, b, x)
            for c in range(nd):
                q[dep[c]] += x[c]
        e = 0.0
        for c in range(R):
            e = max(e, abs(dl[c]))
        if not e <= close_tol:
            info[0], info[1] = 1, i
            for j in range(n):                  # the last iterate, for the caller's message
                Q[i, j] = q[j]
            return
        if not _explicit(K, k, rows, dep, idx, red, rtol, G, g, LU, perm, X, -1.0):
            if not _choose_given(K, dep, rtol, rows):
                info[0], info[1] = 2, i
                return
            red = _complement(rows, R)
            _explicit(K, k, rows, dep, idx, red, -1.0, G, g, LU, perm, X, -1.0)
        for j in range(n):
            s = 0.0
            for c in range(nf):
                s += G[j, c] * YD[i, c]
            qd[j] = s
        loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, k, vJ)
        for a in range(nd):                     # g[dep] = K_d⁻¹ k[rows] (K_d's factors from _explicit)
            b[a] = k[rows[a]]
        _lu_solve(LU, perm, b, x)
        for j in range(n):
            g[j] = 0.0
        for c in range(nd):
            g[dep[c]] = x[c]
        for j in range(n):
            s = g[j]
            for c in range(nf):
                s += G[j, c] * YDD[i, c]
            Q[i, j] = q[j]
            QD[i, j] = qd[j]
            QDD[i, j] = s


@njit(cache=True)
def _predict(t, Q, QD, QDD, i, q):
    """Newton's starting point at sample i > 0 (q unchanged at i = 0): the previous state extrapolated
    by Taylor's series to third order, q + h q̇ + h²/2 q̈ + h³/6 q⃛, with q⃛ the backward difference of q̈
    (second order at the first sample and after a repeated time). Mirrors ``constraints.motion._predict``."""
    if i == 0:
        return
    n = q.shape[0]
    h = t[i] - t[i - 1]
    for j in range(n):
        q[j] = Q[i - 1, j] + h * QD[i - 1, j] + 0.5 * h * h * QDD[i - 1, j]
    if i >= 2 and t[i - 1] > t[i - 2]:
        c = h * h * h / 6.0 / (t[i - 1] - t[i - 2])
        for j in range(n):
            q[j] += c * (QDD[i - 1, j] - QDD[i - 2, j])


@njit(cache=True)
def actuation_path(parent, jtype, axis, X_tree, ib, fb, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
                   row_T, nrows, act_col, Q, QD, QDD, f_ext, tau_a, pref, W, rtol, check, tol, TAU, U, RES, LAM,
                   RANK, GALL, FALL, info):
    """Closed-loop inverse dynamics and actuator forces at N states (RBDA eqs. 8.62–8.63):

        τ_ID = RNEA(q, q̇, q̈, f_ext) − τᵃ,   G from K by complete pivoting (set chosen once, re-checked),
        A = Gᵀ B,  b = Gᵀ τ_ID,  u = W^-½ (A W^-½)⁺ b (``_forces``),  residual b − A u,
        Kᵀλ = τ_ID − B u, minimum norm (``_loop_lambda``).

    parent … X_tree: the Model's arrays (loop terms, link frames); ib, fb: ``Model.kernel_pack`` (RNEA).
    The first ``nrows`` rows of (row_loop, row_T) are the constraint rows; the others are the motion axes
    S of actuated loop joints, whose rows are B's columns. act_col (p,): tree joint of each actuator, or
    −(1 + its extra row) for a loop actuator. f_ext (Nf, NB+1, 6) body-frame wrenches, Nf = 1 or N;
    tau_a (N, n) the known passive forces. FALL[i] = 1 where A is not clearly of full rank or λ could not
    be formed, and GALL[i] (of (N, n, n)) then receives G (first n − r columns): the caller redoes those
    samples with the reference's SVD. GALL is written nowhere else, so that its pages are never touched
    in the usual case (no fallback), unless info (4,) has info[3] = 1 on entry (then every G). info (3,) or (4,):
    (0 ok | 1 state violates the loops | 3 the rank of K changed, sample index, n − r). RES is (N, n); its first n − r columns are written.

    A tree actuator's column of B is a unit vector, so its column of A = Gᵀ B is a row of G; a loop
    actuator's is its loop-joint row of the loop Jacobian."""
    N, n = Q.shape
    Et, rt = split_tree(X_tree)
    ws = loop_work(n, row_loop.shape[0])
    fw, iw = actuation_work(n, nrows, row_loop.shape[0], act_col.shape[0])
    Wi = 1.0 / np.sqrt(W)
    info[0], info[1] = 0, 0
    every_G = info.shape[0] > 3 and info[3] == 1    # the caller asks for every sample's G
    rnea_packed(ib, fb, Q, QD, QDD, f_ext, TAU, np.int64(0), np.int64(N))      # τ of every sample at once
    r = -1
    for i in range(N):
        for j in range(n):
            TAU[i, j] -= tau_a[i, j]
        s = actuate(parent, jtype, axis, Et, rt, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows,
                    act_col, Q[i], QD[i], QDD[i], TAU[i], pref, Wi, rtol, check, tol, ws, fw, iw, U[i], RES[i], LAM[i])
        if s == 1:
            info[0], info[1] = 1, i
            return
        r2 = set_size(iw)
        if r >= 0 and r2 != r:
            info[0], info[1] = 3, i
            return
        r = r2
        if every_G or s == 3:
            G = explicit_G(fw, iw, n)
            for j in range(n):
                for c in range(n - r):
                    GALL[i, j, c] = G[j, c]
        if s == 3:
            FALL[i] = 1
            continue
        RANK[i] = iw_rank(iw)
    info[2] = n - max(r, 0)


@njit(cache=True)
def _lambda_work(R, r, n):
    """Scratch of ``_linalg._loop_lambda`` for R rows of rank r and n coordinates: (C, Ct, M, L, nu, w, nz)."""
    return (np.zeros((R - r, r)), np.zeros((r, R - r)), np.zeros((r, r)), np.zeros((r, r)), np.zeros(r),
            np.zeros(max(r, n)), np.zeros(R - r, np.int64))


@njit(cache=True)
def forward_path(parent, jtype, axis, X_tree, ib, fb, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                 pref, x, damping, stiffness, q_ref, alpha, rtol, qdd, lam, LF, free, out):
    """Closed-loop forward dynamics at one state by RBDA §8.5 method 3 (eqs. 8.42–8.46), the compiled copy of
    ``constraints.forward.constrained_forward_dynamics(loop_solver="nullspace")``:

        K, k (+ Baumgarte k_stab = −2α Tᵀv_J − α² δ),  G, g by complete pivoting of K (RBDA §8.8, pref last),
        Gᵀ H G ÿ = Gᵀ(τ − C − H g) (Cholesky),  q̈ = G ÿ + g,  minimum-norm λ with Kᵀλ = H q̈ − (τ − C).

    x (3, n): the state's rows q, q̇, τ. τ gets the tree joints' passive forces −b q̇ − k (q − q_ref) (damping (n,) or (0,), stiffness and q_ref
    (n,) or (0,)). Writes qdd (n,), lam (R,), LF (L, 6) the loop wrenches T λ on the successors in Fp,
    free (n,) the independent coordinates (first n − r), and out (4,) = (status, r, ‖K q̈ − k‖, scale):
    status 0 ok; 1 the caller's readable path decides (a pivot within 10⁴·rtol of max|K|, near a change
    of mobility where the reference warns; H or Gᵀ H G not positive definite; λ not found; ‖K q̈ − k‖ above
    10⁻⁶ · scale, where the reference warns); 2 a non-finite input or result."""
    n = x.shape[1]
    q, qd, tau = x[0], x[1], x[2]
    R = row_loop.shape[0]
    nb = parent.shape[0]
    out[0] = 2.0
    for j in range(n):
        if not (np.isfinite(q[j]) and np.isfinite(qd[j]) and np.isfinite(tau[j])):
            return
    out[0] = 1.0
    K = np.zeros((R, n))
    k = np.zeros(R)
    vJ = np.zeros(R)
    dl = np.zeros(R)
    loop_terms(parent, jtype, axis, X_tree, q, qd, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
               K, k, vJ, dl)
    kmax = 0.0
    for a in range(R):
        k[a] = k[a] - 2.0 * alpha * vJ[a] - alpha * alpha * dl[a]
        for j in range(n):
            kmax = max(kmax, abs(K[a, j]))
    A = K.copy()
    nmax = min(R, n)
    prow = np.empty(nmax, np.int64)
    pcol = np.empty(nmax, np.int64)
    r = _cp_lu(A, pref, rtol, prow, pcol, free)
    for c in range(r):
        if abs(A[prow[c], pcol[c]]) < 1e4 * rtol * kmax:
            return
    rows = prow[:r].copy()
    dep = pcol[:r].copy()
    nf = n - r
    fr = free[:nf].copy()
    red = _complement(rows, R)
    G = np.zeros((n, nf))
    g = np.zeros(n)
    LU = np.empty((r, r))
    perm = np.empty(r, np.int64)
    X = np.empty((r + 1, nf + 1))
    _explicit(K, k, rows, dep, fr, red, -1.0, G, g, LU, perm, X, -1.0)
    q2 = np.zeros((3, n))                   # q, q̇, 0 as rows of one state for the tree kernels
    for j in range(n):
        q2[0, j] = q[j]
        q2[1, j] = qd[j]
    H = np.zeros((1, n, n))
    C = np.zeros((1, n))
    crba_packed(ib, fb, q2[:1], H, np.int64(0), np.int64(1))
    rnea_packed(ib, fb, q2[:1], q2[1:2], q2[2:], np.zeros((0, nb, 6)), C, np.int64(0), np.int64(1))
    rhs = np.empty(n)
    for j in range(n):
        rhs[j] = tau[j] - C[0, j]
    for j in range(damping.shape[0]):
        rhs[j] -= damping[j] * qd[j]
    for j in range(stiffness.shape[0]):
        rhs[j] -= stiffness[j] * (q[j] - q_ref[j])
    HG = np.zeros((n, nf + 1))              # [H G, H g]
    for i in range(n):
        for j in range(n):
            hij = H[0, i, j]
            for c in range(nf):
                HG[i, c] += hij * G[j, c]
            HG[i, nf] += hij * g[j]
    M = np.zeros((nf, nf))
    y = np.zeros(nf)
    for a in range(nf):
        s = 0.0
        for i in range(n):
            s += G[i, a] * (rhs[i] - HG[i, nf])
        y[a] = s
        for c in range(a + 1):
            s = 0.0
            for i in range(n):
                s += G[i, a] * HG[i, c]
            M[a, c] = s
            M[c, a] = s
    L = np.zeros((nf, nf))
    if not _chol(M, L):
        return
    _chol_solve(L, y)
    f = np.empty(n)
    for i in range(n):
        s = g[i]
        for c in range(nf):
            s += G[i, c] * y[c]
        qdd[i] = s
    for i in range(n):                      # f = H q̈ − (τ − C) = K ᵀ λ
        s = -rhs[i]
        for j in range(n):
            s += H[0, i, j] * qdd[j]
        f[i] = s
    for a in range(R):
        lam[a] = 0.0
    if R:
        Cw, Ct, Mr, Lr, nu, w, nz = _lambda_work(R, r, n)
        if not _loop_lambda(K, rows, dep, red, f, lam, LU, perm, Cw, Ct, Mr, Lr, nu, w, nz):
            return
    for l in range(LF.shape[0]):
        for c in range(6):
            LF[l, c] = 0.0
    for a in range(R):
        l = row_loop[a]
        for c in range(6):
            LF[l, c] += row_T[a, c] * lam[a]
    res = 0.0
    nk = 0.0
    nKi = 0.0
    nq = 0.0
    for a in range(R):
        s = -k[a]
        ra = 0.0
        for j in range(n):
            s += K[a, j] * qdd[j]
            ra += abs(K[a, j])
        res += s * s
        nk += k[a] * k[a]
        nKi = max(nKi, ra)
    for j in range(n):
        nq += qdd[j] * qdd[j]
    out[1] = r
    out[2] = np.sqrt(res)
    out[3] = max(1.0, np.sqrt(nk), nKi * np.sqrt(nq))
    for j in range(n):
        if not np.isfinite(qdd[j]):
            out[0] = 2.0
            return
    for a in range(R):
        if not np.isfinite(lam[a]):
            out[0] = 2.0
            return
    if out[2] > 1e-6 * out[3]:
        return
    out[0] = 0.0
