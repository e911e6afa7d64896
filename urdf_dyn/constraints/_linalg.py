"""Compiled (numba) small dense linear algebra of the closed-loop path (``constraints._path``), each the
compiled copy of a readable reference that tests hold it to:

| compiled | reference |
|---|---|
| ``_cp_lu`` | ``constraints.explicit.complete_pivot_lu`` (RBDA §8.8) |
| ``_lu``, ``_lu_solve`` | ``constraints.explicit.lu_partial``, ``lu_solve`` |
| ``_explicit`` | ``constraints.explicit.explicit_from_set`` (G, g for an independent set, and its re-check) |
| ``_choose_given`` | ``constraints.explicit.choose_independent`` with given independent coordinates |
| ``_forces``, ``_loop_lambda`` | ``applications.actuators._reference`` (eq. 8.63 and the loop forces) |

No LAPACK call is compiled in: the factorisations are written out for the small blocks (r ≤ 6 per loop),
which keeps the first compilation short. Cholesky is ``constraints._kernels._chol``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.constraints._kernels import _chol, _chol_solve

__all__ = []


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
def _explicit(K, k, rows, dep, free, rtol, check, G, g, LU, perm):
    """G (n × nf), g (n,) of RBDA §8.8 for the set (rows, dep, free); returns False when ``check`` finds
    the set no longer serves (as ``explicit_from_set``). LU (r×r), perm (r,) receive K_d's factors."""
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
        for i in range(r):
            for j in range(r):
                LU[i, j] = K[rows[i], dep[j]]
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
def _chol_ratio(A):
    """Lower Cholesky factor of a small SPD matrix (``constraints._kernels._chol``) and the ratio min/max of
    its diagonal (0 if A is not positive definite)."""
    m = A.shape[0]
    L = np.zeros((m, m))
    if not _chol(A, L):
        return L, 0.0
    dmin, dmax = np.inf, 0.0
    for j in range(m):
        dmin = min(dmin, L[j, j])
        dmax = max(dmax, L[j, j])
    return L, (dmin / dmax if m else 1.0)


@njit(cache=True)
def _chol_x(L, b):
    """x = (L Lᵀ)⁻¹ b (``constraints._kernels._chol_solve`` on a copy)."""
    x = b.copy()
    _chol_solve(L, x)
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
        L, ratio = _chol_ratio(M)
        if not ratio > _WELL:
            return -1
        y = _chol_x(L, bb)
        for c in range(p):
            s = 0.0
            for a in range(m):
                s += Aw[a, c] * y[a]
            u[c] = Wi[c] * s
        return m
    M = np.ascontiguousarray(Aw.T) @ Aw
    L, ratio = _chol_ratio(M)
    if not ratio > _WELL:
        return -1
    y = np.zeros(p)
    for c in range(p):
        for a in range(m):
            y[c] += Aw[a, c] * bb[a]
    z = _chol_x(L, y)
    for c in range(p):
        u[c] = Wi[c] * z[c]
    return p


@njit(cache=True)
def _loop_lambda(K, rows, dep, f, lam, LU, perm):
    """Minimum-norm λ with Kᵀλ = f (least squares if f is outside the row space of K), through the
    independent rows K_r = K[rows] (RBDA §8.8): every row is K_i = c_i K_r with c_i = K_i[dep] K_d⁻¹, so
    Kᵀλ = K_rᵀ ν with ν = Cᵀλ; ν = K_d⁻ᵀ f[dep] when f lies in the row space, else (K_r K_rᵀ)⁻¹ K_r f;
    then λ = C (CᵀC)⁻¹ ν. LU, perm: K_d's factors from ``_explicit``. Returns False if a factor fails."""
    R, n = K.shape
    r = rows.shape[0]
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
        L, ratio = _chol_ratio(M)
        if ratio == 0.0:
            return False
        nu = _chol_x(L, y)
    for i in range(R):
        lam[i] = 0.0
    if R == r:
        for i in range(r):
            lam[rows[i]] = nu[i]
        return True
    C = np.empty((R, r))
    M = np.zeros((r, r))
    for i in range(r):
        M[i, i] = 1.0                         # the independent rows' own c_i are unit vectors
    for i in range(R):
        for j in range(r):
            b[j] = K[i, dep[j]]
        _lu_solve_t(LU, perm, b, C[i])
    for i in range(R):
        red = True                            # rows of the set contribute e_j e_jᵀ (added above)
        for j in range(r):
            if rows[j] == i:
                red = False
        if red:
            for a in range(r):
                for c in range(r):
                    M[a, c] += C[i, a] * C[i, c]
    L, ratio = _chol_ratio(M)
    if ratio == 0.0:
        return False
    w = _chol_x(L, nu)
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
