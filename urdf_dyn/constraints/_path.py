"""Compiled (numba) closed-loop path for one state or a trajectory of N states: assembly by Newton on the
independent constraint rows, q̇ = G ẏ and q̈ = G ÿ + g with G, g by complete pivoting (RBDA §8.8), and
closed-loop inverse dynamics with actuator forces and loop forces (eqs. 8.62–8.63).

Each function here is the compiled copy of a readable reference, and tests hold the two together:

| compiled | reference |
|---|---|
| ``_cp_lu`` | ``constraints.explicit.complete_pivot_lu`` |
| ``_lu``, ``_lu_solve`` | ``constraints.explicit.lu_partial``, ``lu_solve`` |
| ``_explicit`` | ``constraints.explicit.explicit_from_set`` |
| ``motion_path`` | ``applications.motion.consistent_motion(compiled=False)`` |
| ``actuation_path`` | ``applications.actuators.actuator_forces(compiled=False)`` |

K, k, Tᵀv_J and δ come from ``constraints._kernels.loop_geometry`` and ``loop_velocity`` (one workspace per
trajectory); τ from ``algorithms._kernels._rnea``. No LAPACK call is compiled in: the small factorisations
are written out, which keeps the first compilation short.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.algorithms._kernels import _rnea, _split_tree
from urdf_dyn.constraints._kernels import loop_geometry, loop_velocity, loop_work

__all__ = ["motion_path", "actuation_path"]


@njit(cache=True)
def _cp_lu(A, pref, rtol, piv_rows, piv_cols, free):
    """Complete pivoting of A (m×n, overwritten), columns with pref[j] taken last; returns r and fills
    piv_rows[:r], piv_cols[:r] and free[:n−r] (ascending). Mirrors ``complete_pivot_lu``."""
    m, n = A.shape
    scale = 0.0
    for i in range(m):
        for j in range(n):
            scale = max(scale, abs(A[i, j]))
    tol = rtol * scale
    rdone = np.zeros(m, np.bool_)
    cdone = np.zeros(n, np.bool_)
    r = 0
    for _ in range(min(m, n)):
        bi, bj = -1, -1
        for grp in range(2):
            best = -1.0
            bi, bj = -1, -1
            for i in range(m):
                if rdone[i]:
                    continue
                for j in range(n):
                    if cdone[j] or pref[j] != (grp == 1):
                        continue
                    a = abs(A[i, j])
                    if a > best:
                        best, bi, bj = a, i, j
            if bi >= 0 and best > tol:
                break
            bi, bj = -1, -1
        if bi < 0:
            break
        piv_rows[r], piv_cols[r] = bi, bj
        r += 1
        for i in range(m):
            if rdone[i] or i == bi:
                continue
            f = A[i, bj] / A[bi, bj]
            for j in range(n):
                A[i, j] -= f * A[bi, j]
        rdone[bi] = True
        cdone[bj] = True
    c = 0
    for j in range(n):
        if not cdone[j]:
            free[c] = j
            c += 1
    return r


@njit(cache=True)
def _lu(A, perm):
    """In-place LU with partial pivoting of a small square A; returns the smallest |U_ii| (``lu_partial``)."""
    r = A.shape[0]
    for j in range(r):
        perm[j] = j
    dmin = np.inf
    for j in range(r):
        p = j
        for i in range(j + 1, r):
            if abs(A[i, j]) > abs(A[p, j]):
                p = i
        if p != j:
            for c in range(r):
                A[j, c], A[p, c] = A[p, c], A[j, c]
            perm[j], perm[p] = perm[p], perm[j]
        piv = A[j, j]
        dmin = min(dmin, abs(piv))
        if piv == 0.0:
            return 0.0
        for i in range(j + 1, r):
            A[i, j] /= piv
        for i in range(j + 1, r):
            for c in range(j + 1, r):
                A[i, c] -= A[i, j] * A[j, c]
    return dmin


@njit(cache=True)
def _lu_solve(LU, perm, b, x):
    """x = A⁻¹ b from ``_lu``'s factors (b (r,) unchanged)."""
    r = LU.shape[0]
    for i in range(r):
        x[i] = b[perm[i]]
    for i in range(r):
        s = x[i]
        for c in range(i):
            s -= LU[i, c] * x[c]
        x[i] = s
    for i in range(r - 1, -1, -1):
        s = x[i]
        for c in range(i + 1, r):
            s -= LU[i, c] * x[c]
        x[i] = s / LU[i, i]


@njit(cache=True)
def _explicit(K, k, rows, dep, free, rtol, check, G, g):
    """G (n × nf), g (n,) of RBDA §8.8 for the set (rows, dep, free); returns False when ``check`` finds
    the set no longer serves (as ``explicit_from_set``)."""
    n = K.shape[1]
    r = rows.shape[0]
    nf = free.shape[0]
    kmax = 0.0
    for i in range(K.shape[0]):
        for j in range(n):
            kmax = max(kmax, abs(K[i, j]))
    G[:, :] = 0.0
    g[:] = 0.0
    for c in range(nf):
        G[free[c], c] = 1.0
    if r:
        LU = np.empty((r, r))
        for i in range(r):
            for j in range(r):
                LU[i, j] = K[rows[i], dep[j]]
        perm = np.empty(r, np.int64)
        dmin = _lu(LU, perm)
        if check and not dmin > rtol * kmax:
            return False
        b = np.empty(r)
        x = np.empty(r)
        for c in range(nf):
            for i in range(r):
                b[i] = -K[rows[i], free[c]]
            _lu_solve(LU, perm, b, x)
            for i in range(r):
                G[dep[i], c] = x[i]
        for i in range(r):
            b[i] = k[rows[i]]
        _lu_solve(LU, perm, b, x)
        for i in range(r):
            g[dep[i]] = x[i]
    if check:
        gmax = 1.0
        for i in range(n):
            for c in range(nf):
                gmax = max(gmax, abs(G[i, c]))
        for i in range(K.shape[0]):
            for c in range(nf):
                s = 0.0
                for j in range(n):
                    s += K[i, j] * G[j, c]
                if abs(s) > rtol * kmax * gmax:
                    return False
    return True


@njit(cache=True)
def _lu_solve_t(LU, perm, b, x):
    """x = A⁻ᵀ b from ``_lu``'s factors of A (P A = L U ⇒ Aᵀ = Uᵀ Lᵀ P)."""
    r = LU.shape[0]
    y = np.empty(r)
    for i in range(r):                      # Uᵀ y = b
        s = b[i]
        for c in range(i):
            s -= LU[c, i] * y[c]
        y[i] = s / LU[i, i]
    for i in range(r - 1, -1, -1):          # Lᵀ z = y
        s = y[i]
        for c in range(i + 1, r):
            s -= LU[c, i] * y[c]
        y[i] = s
    for i in range(r):                      # x = Pᵀ z
        x[perm[i]] = y[i]


@njit(cache=True)
def _chol(A):
    """Lower Cholesky factor of a small SPD matrix and the ratio min/max of its diagonal (0 if not SPD)."""
    m = A.shape[0]
    L = np.zeros((m, m))
    for j in range(m):
        s = A[j, j]
        for c in range(j):
            s -= L[j, c] * L[j, c]
        if not s > 0.0:
            return L, 0.0
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, m):
            s = A[i, j]
            for c in range(j):
                s -= L[i, c] * L[j, c]
            L[i, j] = s / L[j, j]
    dmin, dmax = np.inf, 0.0
    for j in range(m):
        dmin = min(dmin, L[j, j])
        dmax = max(dmax, L[j, j])
    return L, (dmin / dmax if m else 1.0)


@njit(cache=True)
def _chol_solve(L, b):
    """x = (L Lᵀ)⁻¹ b."""
    m = L.shape[0]
    x = b.copy()
    for i in range(m):
        s = x[i]
        for c in range(i):
            s -= L[i, c] * x[c]
        x[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for c in range(i + 1, m):
            s -= L[c, i] * x[c]
        x[i] = s / L[i, i]
    return x


#: full rank is declared without an SVD only when the factor's pivots stay within this ratio (much wider
#: than the rank tolerance rtol of the reference's SVD); closer calls go to the reference for that sample
_WELL = 1e-3


@njit(cache=True)
def _forces(A, bb, Wi, u):
    """Weighted minimum-norm / least-squares u of A u = b for A (m × p) of full rank (RBDA eq. 8.63):
    p = m: u = A⁻¹ b; p > m: u = W⁻¹Aᵀ(A W⁻¹ Aᵀ)⁻¹ b; p < m: u = (AᵀA)⁻¹Aᵀ b. Returns the rank, or −1 when
    A is not clearly of full rank (the caller then uses the SVD of the reference)."""
    m, p = A.shape
    Aw = np.empty((m, p))
    for a in range(m):
        for c in range(p):
            Aw[a, c] = A[a, c] * Wi[c]
    if p == m:
        perm = np.empty(m, np.int64)
        amax = 0.0
        for a in range(m):
            for c in range(p):
                amax = max(amax, abs(Aw[a, c]))
        if not _lu(Aw, perm) > _WELL * amax:
            return -1
        z = np.empty(m)
        _lu_solve(Aw, perm, bb, z)
        for c in range(p):
            u[c] = Wi[c] * z[c]
        return p
    if p > m:
        M = Aw @ np.ascontiguousarray(Aw.T)
        L, ratio = _chol(M)
        if not ratio > _WELL:
            return -1
        y = _chol_solve(L, bb)
        for c in range(p):
            s = 0.0
            for a in range(m):
                s += Aw[a, c] * y[a]
            u[c] = Wi[c] * s
        return m
    M = np.ascontiguousarray(Aw.T) @ Aw
    L, ratio = _chol(M)
    if not ratio > _WELL:
        return -1
    y = np.zeros(p)
    for c in range(p):
        for a in range(m):
            y[c] += Aw[a, c] * bb[a]
    z = _chol_solve(L, y)
    for c in range(p):
        u[c] = Wi[c] * z[c]
    return p


@njit(cache=True)
def _loop_lambda(K, rows, dep, f, lam):
    """Minimum-norm λ with Kᵀλ = f (least squares if f is outside the row space of K), through the
    independent rows K_r = K[rows] (RBDA §8.8): every row is K_i = c_i K_r with c_i = K_i[dep] K_d⁻¹, so
    Kᵀλ = K_rᵀ ν with ν = Cᵀλ; ν = K_d⁻ᵀ f[dep] when f lies in the row space, else (K_r K_rᵀ)⁻¹ K_r f;
    then λ = C (CᵀC)⁻¹ ν. Returns False if K_d is singular."""
    R, n = K.shape
    r = rows.shape[0]
    LU = np.empty((r, r))
    for i in range(r):
        for j in range(r):
            LU[i, j] = K[rows[i], dep[j]]
    perm = np.empty(r, np.int64)
    if _lu(LU, perm) == 0.0:
        return False
    b = np.empty(r)
    nu = np.empty(r)
    for j in range(r):
        b[j] = f[dep[j]]
    _lu_solve_t(LU, perm, b, nu)
    fmax = 0.0
    e = 0.0
    for j in range(n):                       # is f = K_rᵀ ν?
        s = f[j]
        fmax = max(fmax, abs(f[j]))
        for i in range(r):
            s -= K[rows[i], j] * nu[i]
        e = max(e, abs(s))
    if e > 1e-10 * (1.0 + fmax):
        M = np.zeros((r, r))
        y = np.zeros(r)
        for a in range(r):
            for c in range(r):
                s = 0.0
                for j in range(n):
                    s += K[rows[a], j] * K[rows[c], j]
                M[a, c] = s
            for j in range(n):
                y[a] += K[rows[a], j] * f[j]
        L, ratio = _chol(M)
        if ratio == 0.0:
            return False
        nu = _chol_solve(L, y)
    for i in range(R):
        lam[i] = 0.0
    if R == r:
        for i in range(r):
            lam[rows[i]] = nu[i]
        return True
    C = np.empty((R, r))
    for i in range(R):
        for j in range(r):
            b[j] = K[i, dep[j]]
        _lu_solve_t(LU, perm, b, C[i])
    M = np.ascontiguousarray(C.T) @ C
    L, ratio = _chol(M)
    if ratio == 0.0:
        return False
    w = _chol_solve(L, nu)
    for i in range(R):
        s = 0.0
        for j in range(r):
            s += C[i, j] * w[j]
        lam[i] = s
    return True


@njit(cache=True)
def _choose_given(K, dep, rtol, rows):
    """Rows for given dependent columns: complete pivoting of K[:, dep], rows matched to dep in order.
    Returns False if the dependent columns are rank-deficient (``choose_independent``)."""
    R = K.shape[0]
    nd = dep.shape[0]
    A = np.empty((R, nd))
    for i in range(R):
        for j in range(nd):
            A[i, j] = K[i, dep[j]]
    pr = np.empty(min(R, nd), np.int64)
    pc = np.empty(min(R, nd), np.int64)
    fr = np.empty(nd, np.int64)
    rd = _cp_lu(A, np.zeros(nd, np.bool_), rtol, pr, pc, fr)
    if rd != nd:
        return False
    for c in range(rd):
        rows[pc[c]] = pr[c]
    return True


@njit(cache=True)
def motion_path(parent, jtype, axis, X_tree, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, idx,
                dep, t, Y, YD, YDD, q0, rtol, newton_tol, maxit, close_tol, Q, QD, QDD, info):
    """Consistent (Q, QD, QDD) (N, n) for a motion of the independent coordinates idx (Y, YD, YDD (N, k)):
    at each sample, Newton on the independent rows (K_d Δq_dep = −δ_rows) from the previous sample's
    state extrapolated to second order (q₀ at the first, already assembled), which tracks the branch;
    then q̇ = G ẏ and q̈ = G ÿ + g (RBDA §8.8). The row set is chosen once and re-checked. info (2,):
    (0 ok | 1 loops not closed | 2 coordinates cannot serve, sample index)."""
    N = t.shape[0]
    n = q0.shape[0]
    R = row_loop.shape[0]
    nd = dep.shape[0]
    nf = idx.shape[0]
    Et, rt = _split_tree(X_tree)
    ws = loop_work(n, R)
    K = np.zeros((R, n))
    k = np.zeros(R)
    vJ = np.zeros(R)
    dl = np.zeros(R)
    q = q0.copy()
    qd = np.zeros(n)
    rows = np.empty(nd, np.int64)
    chosen = False
    LU = np.empty((nd, nd))
    perm = np.empty(nd, np.int64)
    b = np.empty(nd)
    x = np.empty(nd)
    G = np.zeros((n, nf))
    g = np.zeros(n)
    info[0], info[1] = 0, 0
    for i in range(N):
        if i > 0:
            h = t[i] - t[i - 1]
            for j in range(n):
                q[j] = Q[i - 1, j] + h * QD[i - 1, j] + 0.5 * h * h * QDD[i - 1, j]
        for c in range(nf):
            q[idx[c]] = Y[i, c]
        for it in range(maxit + 1):
            loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
                          row_T, ws, K, dl)
            if not chosen:
                if not _choose_given(K, dep, rtol, rows):
                    info[0], info[1] = 2, i
                    return
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
            return
        if not _explicit(K, k, rows, dep, idx, rtol, True, G, g):
            if not _choose_given(K, dep, rtol, rows):
                info[0], info[1] = 2, i
                return
            _explicit(K, k, rows, dep, idx, rtol, False, G, g)
        for j in range(n):
            s = 0.0
            for c in range(nf):
                s += G[j, c] * YD[i, c]
            qd[j] = s
        loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, k, vJ)
        for a in range(nd):                     # g[dep] = K_d⁻¹ k[rows] (G is unchanged: K depends on q only)
            for c in range(nd):
                LU[a, c] = K[rows[a], dep[c]]
            b[a] = k[rows[a]]
        _lu(LU, perm)
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
def actuation_path(parent, jtype, axis, X_tree, I, a0, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
                   row_T, nrows, act_col, Q, QD, QDD, f_ext, tau_a, pref, W, rtol, check, tol, TAU, U, RES, LAM,
                   RANK, GALL, FALL, info):
    """Closed-loop inverse dynamics and actuator forces at N states (RBDA eqs. 8.62–8.63):

        τ_ID = RNEA(q, q̇, q̈, f_ext) − τᵃ,   G from K by complete pivoting (set chosen once, re-checked),
        A = Gᵀ B,  b = Gᵀ τ_ID,  u = W^-½ (A W^-½)⁺ b (``_forces``),  residual b − A u,
        Kᵀλ = τ_ID − B u, minimum norm (``_loop_lambda``).

    The first ``nrows`` rows of (row_loop, row_T) are the constraint rows; the others are the motion axes
    S of actuated loop joints, whose rows are B's columns. act_col (p,): tree joint of each actuator, or
    −(1 + its extra row) for a loop actuator. f_ext (Nf, NB+1, 6) body-frame wrenches, Nf = 1 or N;
    tau_a (N, n) the known passive forces. GALL (N, n, n) receives G (first n − r columns); FALL[i] = 1
    where A is not clearly of full rank or λ could not be formed: the caller redoes those samples with
    the reference's SVD. info (3,): (0 ok | 1 state violates the loops | 3 the rank of K changed, sample
    index, n − r). RES is (N, n); its first n − r columns are written."""
    N, n = Q.shape
    RA = row_loop.shape[0]
    R = nrows
    p = act_col.shape[0]
    Et, rt = _split_tree(X_tree)
    ws = loop_work(n, RA)
    Ke = np.zeros((RA, n))
    ke = np.zeros(RA)
    vJ = np.zeros(RA)
    dl = np.zeros(RA)
    K = np.zeros((R, n))
    k = np.zeros(R)
    nmax = min(R, n)
    prow = np.empty(nmax, np.int64)
    pcol = np.empty(nmax, np.int64)
    pfree = np.empty(n, np.int64)
    r = -1
    rows = np.empty(0, np.int64)
    dep = np.empty(0, np.int64)
    free = np.arange(n)
    B = np.zeros((n, p))
    Wi = 1.0 / np.sqrt(W)
    f = np.zeros(n)
    lam = np.zeros(R)
    u = np.zeros(p)
    info[0], info[1] = 0, 0
    G = np.eye(n)
    g = np.zeros(n)
    _rnea(parent, jtype, axis, X_tree, I, a0, Q, QD, QDD, f_ext, TAU, 0, N)    # τ of every sample at once
    for i in range(N):
        q, qd, qdd = Q[i], QD[i], QDD[i]
        if RA:
            loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
                          row_T, ws, Ke, dl)
            loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, ke, vJ)
        for a in range(R):
            k[a] = ke[a]
            for j in range(n):
                K[a, j] = Ke[a, j]
        if check and R:
            d = 0.0
            v = 0.0
            ac = 0.0
            sc = 0.0
            sc2 = 0.0
            for a in range(R):
                d = max(d, abs(dl[a]))
                s1 = 0.0
                s2 = -k[a]
                for j in range(n):
                    s1 += K[a, j] * qd[j]
                    s2 += K[a, j] * qdd[j]
                v = max(v, abs(s1))
                ac = max(ac, abs(s2))
            for j in range(n):
                sc = max(sc, abs(qd[j]))
                sc2 = max(sc2, abs(qdd[j]))
            scale = 1.0 + sc + sc2
            if d > tol or v > tol * scale or ac > tol * scale * scale:
                info[0], info[1] = 1, i
                return
        if R:
            ok = False
            if r >= 0:
                ok = _explicit(K, k, rows, dep, free, rtol, True, G, g)
            if not ok:
                A = K.copy()
                r2 = _cp_lu(A, pref, rtol, prow, pcol, pfree)
                if r >= 0 and r2 != r:
                    info[0], info[1] = 3, i
                    return
                r = r2
                rows = prow[:r].copy()
                dep = pcol[:r].copy()
                free = pfree[:n - r].copy()
                G = np.zeros((n, n - r))
                g = np.zeros(n)
                _explicit(K, k, rows, dep, free, rtol, False, G, g)
        nf = G.shape[1]
        for j in range(n):
            for c in range(nf):
                GALL[i, j, c] = G[j, c]
        for j in range(n):
            TAU[i, j] -= tau_a[i, j]
        for c in range(p):
            if act_col[c] >= 0:
                for j in range(n):
                    B[j, c] = 1.0 if j == act_col[c] else 0.0
            else:
                e = R - 1 - act_col[c]
                for j in range(n):
                    B[j, c] = Ke[e, j]
        A = np.zeros((nf, p))
        bb = np.zeros(nf)
        for a in range(nf):
            s = 0.0
            for j in range(n):
                s += G[j, a] * TAU[i, j]
            bb[a] = s
            for c in range(p):
                s = 0.0
                for j in range(n):
                    s += G[j, a] * B[j, c]
                A[a, c] = s
        rk = _forces(A, bb, Wi, u) if (p and nf) else 0
        if rk < 0:
            FALL[i] = 1
            continue
        RANK[i] = rk
        for c in range(p):
            U[i, c] = u[c] if nf else 0.0
        for a in range(nf):
            s = bb[a]
            for c in range(p):
                s -= A[a, c] * U[i, c]
            RES[i, a] = s
        if R:
            for j in range(n):
                s = TAU[i, j]
                for c in range(p):
                    s -= B[j, c] * U[i, c]
                f[j] = s
            if not _loop_lambda(K, rows, dep, f, lam):
                FALL[i] = 1
                continue
            for a in range(R):
                LAM[i, a] = lam[a]
    info[2] = G.shape[1]
