"""Compiled (numba) closed-loop path for a trajectory of N states: assembly by Newton on the independent
constraint rows, q̇ = G ẏ and q̈ = G ÿ + g with G, g by complete pivoting (RBDA §8.8), and closed-loop
inverse dynamics with actuator forces and loop forces (eqs. 8.62–8.63). The per-sample step of the latter,
and the single-state entries, are in ``constraints._sample``.

Each function here is the compiled copy of a readable reference, and tests hold the two together:

| compiled | reference |
|---|---|
| ``motion_path`` | ``constraints.motion.consistent_motion(compiled=False)`` |
| ``actuation_path`` | ``constraints.inverse.actuator_forces(compiled=False)`` |

K, k, Tᵀv_J and δ come from ``constraints._kernels.loop_geometry`` and ``loop_velocity`` (one workspace per
trajectory); τ from ``algorithms._kernels.rnea_packed`` on ``Model.kernel_pack``. No LAPACK call is compiled in: the small factorisations
are written out in ``constraints._linalg``, which keeps the first compilation short. Nothing is allocated
per sample: every workspace is made before the loop over samples (or when the independent set is chosen).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms._kernels import rnea_packed, split_tree
from urdf_dyn.constraints._kernels import loop_geometry, loop_velocity, loop_work
from urdf_dyn.constraints._linalg import _choose_given, _complement, _explicit, _lu, _lu_solve
from urdf_dyn.constraints._sample import actuate, actuation_work, explicit_G, iw_rank, set_size

__all__ = ["motion_path", "actuation_path"]


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
    actuator's is its loop-joint row of the loop Jacobian.

    Two kernels called in turn from Python: τ of every sample at once (``algorithms._kernels.rnea_packed``),
    then the per-sample loop (``_actuation_samples``). Kept apart, neither is linked into the other: numba
    re-optimises and re-generates the machine code of every kernel a kernel calls, inside the caller, so
    the loop alone compiles in less time than with RNEA in it, and the first run's worker processes
    (``cli.compile_ahead``) compile the two side by side; one more call from Python costs ≈ 1–2 µs a
    trajectory."""
    rnea_packed(ib, fb, Q, QD, QDD, f_ext, TAU, 0, Q.shape[0])
    _actuation_samples(parent, jtype, axis, X_tree, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                       nrows, act_col, Q, QD, QDD, tau_a, pref, W, rtol, check, tol, TAU, U, RES, LAM, RANK, GALL,
                       FALL, info)


@njit(cache=True)
def _actuation_samples(parent, jtype, axis, X_tree, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                       nrows, act_col, Q, QD, QDD, tau_a, pref, W, rtol, check, tol, TAU, U, RES, LAM, RANK, GALL,
                       FALL, info):
    """``actuation_path``'s loop over the samples, after RNEA wrote τ into TAU (arguments as there)."""
    N, n = Q.shape
    Et, rt = split_tree(X_tree)
    ws = loop_work(n, row_loop.shape[0])
    fw, iw = actuation_work(n, nrows, row_loop.shape[0], act_col.shape[0])
    Wi = np.empty(W.shape[0])
    for c in range(W.shape[0]):                     # W^-½, a loop: an array expression compiles a ufunc kernel
        Wi[c] = 1.0 / np.sqrt(W[c])
    info[0], info[1] = 0, 0
    every_G = info.shape[0] > 3 and info[3] == 1    # the caller asks for every sample's G
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
