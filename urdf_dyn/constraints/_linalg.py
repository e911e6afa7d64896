"""Compiled (numba) small dense linear algebra of the closed-loop path (``constraints._path``), each the
compiled copy of a readable reference that tests hold it to:

| compiled | reference |
|---|---|
| ``_cp_lu`` | ``constraints.explicit.complete_pivot_lu`` (RBDA §8.8) |
| ``_lu``, ``_lu_solve`` | ``constraints.explicit.lu_partial``, ``lu_solve`` |
| ``_explicit`` | ``constraints.explicit.explicit_from_set`` (G, g for an independent set, and its re-check) |
| ``_choose_given`` | ``constraints.explicit.choose_independent`` with given independent coordinates |
| ``_forces``, ``_loop_lambda`` | ``constraints.inverse._reference`` (eq. 8.63 and the loop forces) |

No LAPACK call is compiled in: the factorisations are written out for the small blocks (r ≤ 6 per loop),
which keeps the first compilation short. Cholesky is ``constraints._kernels._chol``. The functions called
once per sample (``_explicit``, ``_forces``, ``_loop_lambda``) allocate nothing: the caller passes their
scratch arrays, made once per independent set (i.e. once per trajectory). Those only other kernels call have
no Python entry (``no_cpython_wrapper``, ``no_cfunc_wrapper``: ``algorithms._kernels``' docstring).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.constraints._kernels import _chol, _chol_solve

__all__ = []


_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _lu_solve_cols(LU, X, m):
    """In place, the first m columns of X (r × ≥m), each already permuted (X[i] = B[perm[i]]): X ← A⁻¹ B
    by ``_lu``'s factors, all right-hand sides in one sweep."""
    r = LU.shape[0]
    for i in range(r):
        for c in range(i):
            f = LU[i, c]
            for j in range(m):
                X[i, j] -= f * X[c, j]
    for i in range(r - 1, -1, -1):
        for c in range(i + 1, r):
            f = LU[i, c]
            for j in range(m):
                X[i, j] -= f * X[c, j]
        d = 1.0 / LU[i, i]
        for j in range(m):
            X[i, j] *= d


@njit(cache=True)
def _explicit(K, k, rows, dep, free, red, rtol, G, g, LU, perm, X, kmax):
    """G (n × nf), g (n,) of RBDA §8.8 for the set (rows, dep, free); returns False when the check (made for
    rtol ≥ 0; rtol < 0 skips it) finds the set no longer serves (as ``explicit_from_set``: a pivot of K_d at
    or below rtol·max|K|, or max|K G| > rtol·max|K|·max(1, max|G|)). A float switch, not a bool: numba
    compiles a function once per literal bool it is called with. LU (r×r), perm (r,) receive K_d's factors; X ((r+1) × (nf+1))
    is scratch: G's dependent rows and g's are found in one sweep, −K_d⁻¹ [K_i, −k_rows]. kmax: max|K| if
    the caller has it (its consistency check passes over K), else −1 (found here).

    The check of K G runs over the rows ``red`` outside the set: on the set's rows K G is the residual
    of the LU solve, at most ~r·ε·(growth ≤ 2^(r−1))·max|K|·max|G|, which stays orders of magnitude under
    the tolerance once K_d's pivots pass the first test, so the reference's test over every row and this
    one decide alike."""
    R, n = K.shape
    r = rows.shape[0]
    nf = free.shape[0]
    check = rtol >= 0.0
    if kmax < 0.0:
        kmax = 0.0
        for i in range(R):
            for j in range(n):
                kmax = max(kmax, abs(K[i, j]))
    for c in range(nf):
        g[free[c]] = 0.0
        for c2 in range(nf):
            G[free[c], c2] = 0.0
        G[free[c], c] = 1.0
    if r:
        for i in range(r):
            for j in range(r):
                LU[i, j] = K[rows[i], dep[j]]
        dmin = _lu(LU, perm)
        if check and not dmin > rtol * kmax:
            return False
        for i in range(r):
            ri = rows[perm[i]]
            for c in range(nf):
                X[i, c] = -K[ri, free[c]]
            X[i, nf] = k[ri]
        _lu_solve_cols(LU, X, nf + 1)
        for i in range(r):
            for c in range(nf):
                G[dep[i], c] = X[i, c]
            g[dep[i]] = X[i, nf]
    if check:
        gmax = 1.0
        for i in range(r):
            for c in range(nf):
                gmax = max(gmax, abs(X[i, c]))
        tol = rtol * kmax * gmax
        acc = X[r]
        for m in range(red.shape[0]):   # (K G)[i, c] = K[i, free[c]] + Σ_j K[i, dep[j]] G[dep[j], c]
            i = red[m]
            for c in range(nf):
                acc[c] = K[i, free[c]]
            for j in range(r):
                kij = K[i, dep[j]]
                for c in range(nf):
                    acc[c] += kij * X[j, c]
            for c in range(nf):
                if abs(acc[c]) > tol:
                    return False
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _lu_solve_t(LU, perm, b, x):
    """x = A⁻ᵀ b from ``_lu``'s factors of A (P A = L U ⇒ Aᵀ = Uᵀ Lᵀ P); b and x may not alias."""
    r = LU.shape[0]
    for i in range(r):                      # Uᵀ y = b (y in x's storage, permuted at the end)
        s = b[i]
        for c in range(i):
            s -= LU[c, i] * b[c]
        b[i] = s / LU[i, i]
    for i in range(r - 1, -1, -1):          # Lᵀ z = y
        s = b[i]
        for c in range(i + 1, r):
            s -= LU[c, i] * b[c]
        b[i] = s
    for i in range(r):                      # x = Pᵀ z
        x[perm[i]] = b[i]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _chol_ratio(A, L):
    """Lower Cholesky factor L of a small SPD matrix A (``constraints._kernels._chol``); returns the ratio
    min/max of its diagonal (0 if A is not positive definite)."""
    m = A.shape[0]
    if not _chol(A, L):
        return 0.0
    dmin, dmax = np.inf, 0.0
    for j in range(m):
        dmin = min(dmin, L[j, j])
        dmax = max(dmax, L[j, j])
    return dmin / dmax if m else 1.0


#: full rank is declared without an SVD only when the factor's pivots stay within this ratio (much wider
#: than the rank tolerance rtol of the reference's SVD); closer calls go to the reference for that sample
_WELL = 1e-3


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _forces(A, bb, Wi, u, Aw, M, L, y, iperm):
    """Weighted minimum-norm / least-squares u of A u = b for A (m × p) of full rank (RBDA eq. 8.63):
    p = m: u = A⁻¹ b; p > m: u = W⁻¹Aᵀ(A W⁻¹ Aᵀ)⁻¹ b; p < m: u = (AᵀA)⁻¹Aᵀ b. Returns the rank, or −1 when
    A is not clearly of full rank (the caller then uses the SVD of the reference). Scratch: Aw (m × p),
    M, L (s × s) with s = min(m, p), y (max(m, p),), iperm (m,); b is not changed."""
    m, p = A.shape
    for a in range(m):
        for c in range(p):
            Aw[a, c] = A[a, c] * Wi[c]
    if p == m:
        amax = 0.0
        for a in range(m):
            for c in range(p):
                amax = max(amax, abs(Aw[a, c]))
        if not _lu(Aw, iperm) > _WELL * amax:
            return -1
        _lu_solve(Aw, iperm, bb, y)
        for c in range(p):
            u[c] = Wi[c] * y[c]
        return p
    if p > m:
        for a in range(m):                  # M = A_w A_wᵀ
            for c in range(a + 1):
                s = 0.0
                for j in range(p):
                    s += Aw[a, j] * Aw[c, j]
                M[a, c] = s
                M[c, a] = s
        if not _chol_ratio(M, L) > _WELL:
            return -1
        for a in range(m):
            y[a] = bb[a]
        _chol_solve(L, y[:m])
        for c in range(p):
            s = 0.0
            for a in range(m):
                s += Aw[a, c] * y[a]
            u[c] = Wi[c] * s
        return m
    for c in range(p):                      # M = A_wᵀ A_w, y = A_wᵀ b
        for d in range(c + 1):
            s = 0.0
            for a in range(m):
                s += Aw[a, c] * Aw[a, d]
            M[c, d] = s
            M[d, c] = s
        s = 0.0
        for a in range(m):
            s += Aw[a, c] * bb[a]
        y[c] = s
    if not _chol_ratio(M, L) > _WELL:
        return -1
    _chol_solve(L, y[:p])
    for c in range(p):
        u[c] = Wi[c] * y[c]
    return p


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _loop_lambda(K, rows, dep, red, f, lam, LU, perm, C, Ct, M, L, nu, w, nz):
    """Minimum-norm λ with Kᵀλ = f (least squares if f is outside the row space of K), through the
    independent rows K_r = K[rows] (RBDA §8.8): every row is K_i = c_i K_r with c_i = K_i[dep] K_d⁻¹, so
    Kᵀλ = K_rᵀ ν with ν = Cᵀλ; ν = K_d⁻ᵀ f[dep] when f lies in the row space, else (K_r K_rᵀ)⁻¹ K_r f;
    then λ = C (CᵀC)⁻¹ ν, where the rows of the set have c_i = e_i, so CᵀC = 1 + Σ_{i ∉ set} c_iᵀ c_i.
    LU, perm: K_d's factors from ``_explicit``; red (R − r,): the rows outside the set. Scratch: C
    ((R−r) × r), Ct (r × (R−r)), M, L (r × r), nu (r,), w (max(r, n),), nz (R−r,) int. The c_i of all
    redundant rows are found in one sweep of K_dᵀ's triangular factors; a row with K_i[dep] exactly zero
    (the out-of-plane rows of a planar loop) has c_i = 0 exactly and λ_i = 0, and is left out of the
    sweep. Returns False if a factor fails."""
    R, n = K.shape
    r = rows.shape[0]
    for j in range(r):
        w[j] = f[dep[j]]
    _lu_solve_t(LU, perm, w, nu)
    fmax = 0.0
    for j in range(n):                       # is f = K_rᵀ ν?
        w[j] = f[j]
        fmax = max(fmax, abs(f[j]))
    for i in range(r):
        ri, ni = rows[i], nu[i]
        for j in range(n):
            w[j] -= K[ri, j] * ni
    e = 0.0
    for j in range(n):
        e = max(e, abs(w[j]))
    if e > 1e-10 * (1.0 + fmax):
        for a in range(r):
            for c in range(a + 1):
                s = 0.0
                for j in range(n):
                    s += K[rows[a], j] * K[rows[c], j]
                M[a, c] = s
                M[c, a] = s
            s = 0.0
            for j in range(n):
                s += K[rows[a], j] * f[j]
            nu[a] = s
        if _chol_ratio(M, L) == 0.0:
            return False
        _chol_solve(L, nu)
    nr = 0
    for m in range(red.shape[0]):            # the redundant rows with c_i ≠ 0
        i = red[m]
        lam[i] = 0.0
        for j in range(r):
            if K[i, dep[j]] != 0.0:
                nz[nr] = i
                nr += 1
                break
    if nr == 0:
        for i in range(r):
            lam[rows[i]] = nu[i]
        return True
    for j in range(r):                       # Ct = K_d⁻ᵀ K[nz, dep]ᵀ: Uᵀ Y = B, Lᵀ Z = Y, rows by P
        dj = dep[j]
        for m in range(nr):
            Ct[j, m] = K[nz[m], dj]
    for i in range(r):
        for c in range(i):
            fc = LU[c, i]
            for m in range(nr):
                Ct[i, m] -= fc * Ct[c, m]
        d = 1.0 / LU[i, i]
        for m in range(nr):
            Ct[i, m] *= d
    for i in range(r - 1, -1, -1):
        for c in range(i + 1, r):
            fc = LU[c, i]
            for m in range(nr):
                Ct[i, m] -= fc * Ct[c, m]
    for i in range(r):
        pi = perm[i]
        for m in range(nr):
            C[m, pi] = Ct[i, m]
    for a in range(r):
        for c in range(r):
            M[a, c] = 0.0
        M[a, a] = 1.0
    for m in range(nr):
        for a in range(r):
            ca = C[m, a]
            for c in range(a + 1):
                M[a, c] += ca * C[m, c]
    for a in range(r):
        for c in range(a):
            M[c, a] = M[a, c]
    if _chol_ratio(M, L) == 0.0:
        return False
    for j in range(r):
        w[j] = nu[j]
    _chol_solve(L, w[:r])
    for m in range(nr):
        s = 0.0
        for j in range(r):
            s += C[m, j] * w[j]
        lam[nz[m]] = s
    for j in range(r):
        lam[rows[j]] = w[j]
    return True


@njit(cache=True)
def _complement(rows, R):
    """The rows 0..R−1 not in ``rows``, ascending."""
    inset = np.zeros(R, np.bool_)
    for c in range(rows.shape[0]):
        inset[rows[c]] = True
    out = np.empty(R - rows.shape[0], np.int64)
    m = 0
    for i in range(R):
        if not inset[i]:
            out[m] = i
            m += 1
    return out


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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
