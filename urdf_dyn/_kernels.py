"""Compiled (numba) kernels of the tree algorithms, written to be read beside RBDA's tables.

Every kernel loops over a batch of N states (arrays (N, nv)); a single state is a batch of one, so one
code path serves both (DESIGN §5). Public, checked wrappers are in ``dynamics.py``; these kernels assume
valid, C-contiguous float64 inputs. Body arrays have NB+1 entries, index 0 = fixed base.

Speed: a Plücker transform ^iX_λ(i) is kept as (E, r) — rotation and translation — and applied with 3-D
operations (RBDA §2.8, Table 2.1's efficient forms) instead of 6×6 products:

    X v   = [E ω;  E (v − r × ω)]                 (motion)
    Xᵀ f  = [Eᵀ n + r × Eᵀ f;  Eᵀ f]               (force, from child to parent)

and a spatial inertia as (m, h = m c, Ī) with Ī the rotational inertia about the body origin:
I v = [Ī ω + h × v;  m v − h × ω]. Nothing is allocated inside the loops over bodies and states.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .joints import jcalc, joint_pose
from .spatial import crm, inv_plux

REVOLUTE = 0


# ---------------------------------------------------------------------------------------------------------
# small 3-D helpers (all write into `out`, which must not alias the inputs)
# ---------------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True, inline="always")
def _mv(E, x, out):  # out = E x
    for i in range(3):
        out[i] = E[i, 0] * x[0] + E[i, 1] * x[1] + E[i, 2] * x[2]


@njit(cache=True, inline="always")
def _mtv(E, x, out):  # out = Eᵀ x
    for i in range(3):
        out[i] = E[0, i] * x[0] + E[1, i] * x[1] + E[2, i] * x[2]


@njit(cache=True)
def _xup(jtype, axis, q, Et, rt, E, r):
    """^iX_λ(i) = X_J(q) X_tree as (E, r), by the composition rule plux(E1, r1)·plux(E2, r2) =
    plux(E1 E2, r2 + E2ᵀ r1) (RBDA §2.8)."""
    if jtype == REVOLUTE:
        c, s = np.cos(q), np.sin(q)
        x, y, z = axis[0], axis[1], axis[2]
        t = 1.0 - c
        # E_J = R(axis, q)ᵀ (Rodrigues), then E = E_J E_tree
        EJ00, EJ01, EJ02 = t * x * x + c, t * x * y + s * z, t * x * z - s * y
        EJ10, EJ11, EJ12 = t * x * y - s * z, t * y * y + c, t * y * z + s * x
        EJ20, EJ21, EJ22 = t * x * z + s * y, t * y * z - s * x, t * z * z + c
        for j in range(3):
            a0, a1, a2 = Et[0, j], Et[1, j], Et[2, j]
            E[0, j] = EJ00 * a0 + EJ01 * a1 + EJ02 * a2
            E[1, j] = EJ10 * a0 + EJ11 * a1 + EJ12 * a2
            E[2, j] = EJ20 * a0 + EJ21 * a1 + EJ22 * a2
        for j in range(3):
            r[j] = rt[j]
    else:  # prismatic: X_J = xlt(axis q): E = E_tree, r = r_tree + E_treeᵀ axis q
        for i in range(3):
            for j in range(3):
                E[i, j] = Et[i, j]
        for j in range(3):
            r[j] = rt[j] + (Et[0, j] * axis[0] + Et[1, j] * axis[1] + Et[2, j] * axis[2]) * q


@njit(cache=True, inline="always")
def _xmv(E, r, v, out, tmp):
    """out = X v for X = (E, r); tmp (3,) scratch."""
    _cross(r, v[:3], tmp)
    for i in range(3):
        tmp[i] = v[3 + i] - tmp[i]
    _mv(E, v[:3], out[:3])
    _mv(E, tmp, out[3:])


@njit(cache=True, inline="always")
def _xtf_add(E, r, f, out, t1, t2):
    """out += Xᵀ f for X = (E, r); t1, t2 (3,) scratch."""
    _mtv(E, f[3:], t1)      # Eᵀ f
    _mtv(E, f[:3], t2)      # Eᵀ n
    for i in range(3):
        out[3 + i] += t1[i]
    c0 = r[1] * t1[2] - r[2] * t1[1]
    c1 = r[2] * t1[0] - r[0] * t1[2]
    c2 = r[0] * t1[1] - r[1] * t1[0]
    out[0] += t2[0] + c0
    out[1] += t2[1] + c1
    out[2] += t2[2] + c2


@njit(cache=True, inline="always")
def _crm_mul(v, w, out):
    """out = v × w (spatial motion cross product, RBDA eq. 2.31)."""
    out[0] = v[1] * w[2] - v[2] * w[1]
    out[1] = v[2] * w[0] - v[0] * w[2]
    out[2] = v[0] * w[1] - v[1] * w[0]
    out[3] = v[1] * w[5] - v[2] * w[4] + v[4] * w[2] - v[5] * w[1]
    out[4] = v[2] * w[3] - v[0] * w[5] + v[5] * w[0] - v[3] * w[2]
    out[5] = v[0] * w[4] - v[1] * w[3] + v[3] * w[1] - v[4] * w[0]


@njit(cache=True, inline="always")
def _crf_mul(v, f, out):
    """out = v ×* f (spatial force cross product, RBDA eq. 2.32)."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit(cache=True, inline="always")
def _Imul(I, v, out):
    """out = I v for a 6×6 spatial inertia (36 multiply-adds; no allocation)."""
    for i in range(6):
        acc = 0.0
        for j in range(6):
            acc += I[i, j] * v[j]
        out[i] = acc


@njit(cache=True)
def _split_tree(X_tree):
    """(E, r) of every X_tree (NB+1, 6, 6)."""
    n = X_tree.shape[0]
    E = np.zeros((n, 3, 3))
    r = np.zeros((n, 3))
    for i in range(n):
        for a in range(3):
            for b in range(3):
                E[i, a, b] = X_tree[i, a, b]
        # X[3:, :3] = −E r×  ⇒  r× = −Eᵀ X[3:, :3]
        M = np.zeros((3, 3))
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for k in range(3):
                    acc -= X_tree[i, k, a] * X_tree[i, 3 + k, b]
                M[a, b] = acc
        r[i, 0], r[i, 1], r[i, 2] = M[2, 1], M[0, 2], M[1, 0]
    return E, r


@njit(cache=True, inline="always")
def _S(jtype, axis, S):
    for k in range(6):
        S[k] = 0.0
    if jtype == REVOLUTE:
        S[0], S[1], S[2] = axis[0], axis[1], axis[2]
    else:
        S[3], S[4], S[5] = axis[0], axis[1], axis[2]


# ---------------------------------------------------------------------------------------------------------
# the algorithms
# ---------------------------------------------------------------------------------------------------------
@njit(cache=True)
def _rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, n0, n1):
    """Recursive Newton-Euler inverse dynamics, RBDA Table 5.1, for states n0 ≤ n < n1.

    a0 (6,) is the base acceleration −a_grav; f_ext (Nf, NB+1, 6) external forces in body coordinates
    (Nf = 1 or N). Writes tau (N, NB)."""
    NB = parent.shape[0] - 1
    Et, rt = _split_tree(X_tree)
    E = np.zeros((NB + 1, 3, 3))
    r = np.zeros((NB + 1, 3))
    S = np.zeros((NB + 1, 6))
    v = np.zeros((NB + 1, 6))
    a = np.zeros((NB + 1, 6))
    f = np.zeros((NB + 1, 6))
    w1 = np.zeros(6)
    w2 = np.zeros(6)
    t1 = np.zeros(3)
    t2 = np.zeros(3)
    for i in range(1, NB + 1):
        _S(jtype[i], axis[i], S[i])
    for n in range(n0, n1):
        nf = n if f_ext.shape[0] > 1 else 0
        a[0] = a0
        for i in range(1, NB + 1):
            p = parent[i]
            _xup(jtype[i], axis[i], q[n, i - 1], Et[i], rt[i], E[i], r[i])
            _xmv(E[i], r[i], v[p], v[i], t1)                       # v_i = X v_λ + S q̇
            _xmv(E[i], r[i], a[p], a[i], t1)                       # a_i = X a_λ + S q̈ + v_i × S q̇
            qdi, qddi = qd[n, i - 1], qdd[n, i - 1]
            for k in range(6):
                v[i, k] += S[i, k] * qdi
                w1[k] = S[i, k] * qdi
            _crm_mul(v[i], w1, w2)
            for k in range(6):
                a[i, k] += S[i, k] * qddi + w2[k]
            _Imul(I[i], a[i], f[i])                                 # f_i = I a + v ×* I v − f_ext
            _Imul(I[i], v[i], w1)
            _crf_mul(v[i], w1, w2)
            for k in range(6):
                f[i, k] += w2[k] - f_ext[nf, i, k]
        for i in range(NB, 0, -1):
            acc = 0.0
            for k in range(6):
                acc += S[i, k] * f[i, k]
            tau[n, i - 1] = acc                                     # τ_i = Sᵀ f_i
            if parent[i] != 0:
                _xtf_add(E[i], r[i], f[i], f[parent[i]], t1, t2)    # f_λ += Xᵀ f_i


@njit(cache=True)
def _xt_I_x(E, r, IA, out, X, M):
    """out += Xᵀ IA X for X = (E, r) = [[E, 0], [−E r×, E]] (RBDA eq. 2.66's transform of an inertia);
    X and M are (6, 6) scratch arrays, so nothing is allocated."""
    for i in range(3):
        for j in range(3):
            X[i, j] = E[i, j]
            X[3 + i, 3 + j] = E[i, j]
            X[i, 3 + j] = 0.0
    for i in range(3):  # −E r× : column j of r× is r × e_j
        X[3 + i, 0] = -(E[i, 1] * r[2] - E[i, 2] * r[1])
        X[3 + i, 1] = -(E[i, 2] * r[0] - E[i, 0] * r[2])
        X[3 + i, 2] = -(E[i, 0] * r[1] - E[i, 1] * r[0])
    for i in range(6):
        for j in range(6):
            acc = 0.0
            for k in range(6):
                acc += IA[i, k] * X[k, j]
            M[i, j] = acc
    for i in range(6):
        for j in range(6):
            acc = 0.0
            for k in range(6):
                acc += X[k, i] * M[k, j]
            out[i, j] += acc


@njit(cache=True)
def _crba(parent, jtype, axis, X_tree, I, q, H, n0, n1):
    """Composite-rigid-body algorithm, RBDA Table 6.2, for states n0 ≤ n < n1. Writes the joint-space
    inertia H (N, NB, NB)."""
    NB = parent.shape[0] - 1
    Et, rt = _split_tree(X_tree)
    E = np.zeros((NB + 1, 3, 3))
    r = np.zeros((NB + 1, 3))
    S = np.zeros((NB + 1, 6))
    IC = np.zeros((NB + 1, 6, 6))
    F = np.zeros(6)
    G = np.zeros(6)
    Xs = np.zeros((6, 6))
    Ms = np.zeros((6, 6))
    t1 = np.zeros(3)
    t2 = np.zeros(3)
    for i in range(1, NB + 1):
        _S(jtype[i], axis[i], S[i])
    for n in range(n0, n1):
        for i in range(1, NB + 1):
            _xup(jtype[i], axis[i], q[n, i - 1], Et[i], rt[i], E[i], r[i])
            IC[i] = I[i]
        for i in range(NB, 0, -1):
            if parent[i] != 0:
                _xt_I_x(E[i], r[i], IC[i], IC[parent[i]], Xs, Ms)        # I^c_λ += Xᵀ I^c_i X
        for i in range(1, NB + 1):
            _Imul(IC[i], S[i], F)                                          # F = I^c_i S_i
            acc = 0.0
            for k in range(6):
                acc += S[i, k] * F[k]
            H[n, i - 1, i - 1] = acc
            j = i
            while parent[j] > 0:
                for k in range(6):
                    G[k] = 0.0
                _xtf_add(E[j], r[j], F, G, t1, t2)                         # F = Xᵀ_j F
                for k in range(6):
                    F[k] = G[k]
                j = parent[j]
                acc = 0.0
                for k in range(6):
                    acc += F[k] * S[j, k]
                H[n, i - 1, j - 1] = acc
                H[n, j - 1, i - 1] = acc


@njit(cache=True)
def _aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, n0, n1):
    """Articulated-body forward dynamics, RBDA Table 7.1, for states n0 ≤ n < n1. Writes qdd (N, NB)."""
    NB = parent.shape[0] - 1
    Et, rt = _split_tree(X_tree)
    E = np.zeros((NB + 1, 3, 3))
    r = np.zeros((NB + 1, 3))
    S = np.zeros((NB + 1, 6))
    v = np.zeros((NB + 1, 6))
    c = np.zeros((NB + 1, 6))
    IA = np.zeros((NB + 1, 6, 6))
    pA = np.zeros((NB + 1, 6))
    U = np.zeros((NB + 1, 6))
    d = np.zeros(NB + 1)
    u = np.zeros(NB + 1)
    a = np.zeros((NB + 1, 6))
    Ia = np.zeros((6, 6))
    pa = np.zeros(6)
    w1 = np.zeros(6)
    w2 = np.zeros(6)
    t1 = np.zeros(3)
    t2 = np.zeros(3)
    Xs = np.zeros((6, 6))
    Ms = np.zeros((6, 6))
    for i in range(1, NB + 1):
        _S(jtype[i], axis[i], S[i])
    for n in range(n0, n1):
        nf = n if f_ext.shape[0] > 1 else 0
        for i in range(1, NB + 1):
            p = parent[i]
            _xup(jtype[i], axis[i], q[n, i - 1], Et[i], rt[i], E[i], r[i])
            _xmv(E[i], r[i], v[p], v[i], t1)
            for k in range(6):
                w1[k] = S[i, k] * qd[n, i - 1]
                v[i, k] += w1[k]
            _crm_mul(v[i], w1, c[i])                              # c_i = v_i × S q̇
            IA[i] = I[i]
            _Imul(I[i], v[i], w1)
            _crf_mul(v[i], w1, pA[i])                             # p^A_i = v ×* I v − f_ext
            for k in range(6):
                pA[i, k] -= f_ext[nf, i, k]
        for i in range(NB, 0, -1):
            _Imul(IA[i], S[i], U[i])                              # U = I^A S
            acc = 0.0
            for k in range(6):
                acc += S[i, k] * U[i, k]
            d[i] = acc
            acc = 0.0
            for k in range(6):
                acc += S[i, k] * pA[i, k]
            u[i] = tau[n, i - 1] - acc
            p = parent[i]
            if p != 0:
                for k in range(6):
                    for l in range(6):
                        Ia[k, l] = IA[i, k, l] - U[i, k] * U[i, l] / d[i]
                _Imul(Ia, c[i], w1)
                for k in range(6):
                    pa[k] = pA[i, k] + w1[k] + U[i, k] * (u[i] / d[i])
                _xt_I_x(E[i], r[i], Ia, IA[p], Xs, Ms)            # I^A_λ += Xᵀ I^a X
                _xtf_add(E[i], r[i], pa, pA[p], t1, t2)           # p^A_λ += Xᵀ p^a
        a[0] = a0
        for i in range(1, NB + 1):
            _xmv(E[i], r[i], a[parent[i]], w1, t1)
            acc = 0.0
            for k in range(6):
                w1[k] += c[i, k]
                acc += U[i, k] * w1[k]
            qdd[n, i - 1] = (u[i] - acc) / d[i]
            for k in range(6):
                a[i, k] = w1[k] + S[i, k] * qdd[n, i - 1]


@njit(cache=True)
def _finite_rows(q, qd, x):
    """True if the first rows of q, qd, x (1, n) hold only finite numbers."""
    for j in range(q.shape[1]):
        if not (np.isfinite(q[0, j]) and np.isfinite(qd[0, j]) and np.isfinite(x[0, j])):
            return False
    return True


@njit(cache=True)
def rnea1(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau):
    """One state with status: 0 ok, 1 non-finite input, 2 non-finite result (the caller explains)."""
    if not _finite_rows(q, qd, qdd):
        return 1
    _rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, 0, 1)
    return 0 if _finite_rows(tau, tau, tau) else 2


@njit(cache=True)
def aba1(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd):
    """One state with status, as rnea1."""
    if not _finite_rows(q, qd, tau):
        return 1
    _aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, 0, 1)
    return 0 if _finite_rows(qdd, qdd, qdd) else 2


#: batches at least this large are split over the CPU cores (numba prange over chunks)
PARALLEL_MIN_BATCH = 512


@njit(cache=True, parallel=True)
def _rnea_par(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, c * N // chunks, (c + 1) * N // chunks)


@njit(cache=True, parallel=True)
def _crba_par(parent, jtype, axis, X_tree, I, q, H, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _crba(parent, jtype, axis, X_tree, I, q, H, c * N // chunks, (c + 1) * N // chunks)


@njit(cache=True, parallel=True)
def _aba_par(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, c * N // chunks, (c + 1) * N // chunks)


def _chunks(N):
    import numba
    return 4 * numba.get_num_threads() if N >= PARALLEL_MIN_BATCH else 0


def rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau):
    """RNEA over a batch (Table 5.1); large batches run on every core. Writes tau (N, NB)."""
    c = _chunks(q.shape[0])
    if c:
        _rnea_par(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, c)
    else:
        _rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau, 0, q.shape[0])


def crba(parent, jtype, axis, X_tree, I, q, H):
    """CRBA over a batch (Table 6.2); large batches run on every core. Writes H (N, NB, NB)."""
    c = _chunks(q.shape[0])
    if c:
        _crba_par(parent, jtype, axis, X_tree, I, q, H, c)
    else:
        _crba(parent, jtype, axis, X_tree, I, q, H, 0, q.shape[0])


def aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd):
    """ABA over a batch (Table 7.1); large batches run on every core. Writes qdd (N, NB)."""
    c = _chunks(q.shape[0])
    if c:
        _aba_par(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, c)
    else:
        _aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd, 0, q.shape[0])


@njit(cache=True)
def ltl_solve(lam, H, b, x):
    """Solve H x = b for each of N systems by the LᵀL factorisation that exploits branch-induced sparsity
    (RBDA §6.5, Tables 6.3 and 6.4). ``lam`` (NB,) is the 0-based parent of each coordinate, −1 at a root.
    H (N, n, n) is overwritten with L. Returns False if an H is not positive definite."""
    N, nv = H.shape[0], H.shape[1]
    ok = True
    y = np.zeros(nv)
    for n in range(N):
        A = H[n]
        for k in range(nv - 1, -1, -1):  # Table 6.3: factorisation, in place
            if A[k, k] <= 0.0:
                ok = False
                A[k, k] = np.nan
            A[k, k] = np.sqrt(A[k, k])
            i = lam[k]
            while i >= 0:
                A[k, i] = A[k, i] / A[k, k]
                i = lam[i]
            i = lam[k]
            while i >= 0:
                j = i
                while j >= 0:
                    A[i, j] = A[i, j] - A[k, i] * A[k, j]
                    j = lam[j]
                i = lam[i]
        for i in range(nv):
            y[i] = b[n, i]
        for i in range(nv - 1, -1, -1):  # Table 6.4: back-substitution with Lᵀ, then L
            y[i] = y[i] / A[i, i]
            j = lam[i]
            while j >= 0:
                y[j] = y[j] - A[i, j] * y[i]
                j = lam[j]
        for i in range(nv):
            j = lam[i]
            while j >= 0:
                y[i] = y[i] - A[i, j] * y[j]
                j = lam[j]
            y[i] = y[i] / A[i, i]
        for i in range(nv):
            x[n, i] = y[i]
    return ok


@njit(cache=True)
def body_poses(parent, jtype, axis, T_tree, q, T):
    """Forward kinematics: writes T (N, NB+1, 4, 4), the pose of every body frame in the base frame."""
    N, NB = q.shape[0], parent.shape[0] - 1
    for n in range(N):
        T[n, 0] = np.eye(4)
        for i in range(1, NB + 1):
            T[n, i] = T[n, parent[i]] @ T_tree[i] @ joint_pose(jtype[i], axis[i], q[n, i - 1])


@njit(cache=True)
def tree_motion(parent, jtype, axis, X_tree, q, qd, X0, v, avp, S):
    """For one state: ^iX_0 (NB+1, 6, 6) base-to-body transforms, body velocities v and velocity-product
    accelerations a^vp (RBDA eq. 8.13; q̈ = 0, no gravity), both in body coordinates, and motion subspaces
    S (NB+1, 6) in body coordinates."""
    NB = parent.shape[0] - 1
    X0[0] = np.eye(6)
    v[0] = 0.0
    avp[0] = 0.0
    for i in range(1, NB + 1):
        XJ, S[i] = jcalc(jtype[i], axis[i], q[i - 1])
        Xup = XJ @ X_tree[i]
        X0[i] = Xup @ X0[parent[i]]
        vJ = S[i] * qd[i - 1]
        v[i] = Xup @ v[parent[i]] + vJ
        avp[i] = Xup @ avp[parent[i]] + crm(v[i]) @ vJ


@njit(cache=True)
def _log3(R, out):
    """Rotation vector of a rotation matrix R (3×3) into out (3,)."""
    c = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    c = min(1.0, max(-1.0, c))
    th = np.arccos(c)
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    if th < 1e-8:
        out[0], out[1], out[2] = 0.5 * w0, 0.5 * w1, 0.5 * w2
    elif np.pi - th < 1e-6:
        k = 0
        for i in range(1, 3):
            if R[i, i] > R[k, k]:
                k = i
        nrm = 0.0
        for i in range(3):
            out[i] = (R[i, k] + (1.0 if i == k else 0.0)) / 2.0
            nrm += out[i] * out[i]
        nrm = np.sqrt(nrm)
        for i in range(3):
            out[i] = th * out[i] / nrm
    else:
        f = th / (2.0 * np.sin(th))
        out[0], out[1], out[2] = f * w0, f * w1, f * w2


@njit(cache=True)
def loop_terms(parent, jtype, axis, X_tree, q, qd, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
               K, k, vJ, delta):
    """K (R×n), k (R,), Tᵀv_J (R,) and δ (R,) of all loop rows at one state (RBDA eqs. 8.9–8.24; the
    Python reference is ``loops.LoopState``). Row r belongs to loop row_loop[r] with constraint direction
    row_T[r] (6,) in Fp. lp_mode: 0 = rotational error a × (R a) (joints turning about a), 1 = rotation
    vector of R. Universal loops (configuration-dependent T) are not handled here."""
    NB = parent.shape[0] - 1
    n = NB
    Et, rt = _split_tree(X_tree)
    E = np.zeros((NB + 1, 3, 3))     # ^iX_λ(i) as (E, r)
    r_ = np.zeros((NB + 1, 3))
    E0 = np.zeros((NB + 1, 3, 3))    # ^iX_0 as (E0, r0): E0_i = E_i E0_λ, r0_i = r0_λ + E0_λᵀ r_i
    r0 = np.zeros((NB + 1, 3))
    v = np.zeros((NB + 1, 6))
    avp = np.zeros((NB + 1, 6))
    S = np.zeros((NB + 1, 6))
    w1 = np.zeros(6)
    w2 = np.zeros(6)
    t1 = np.zeros(3)
    for a_ in range(3):
        E0[0, a_, a_] = 1.0
    for i in range(1, NB + 1):
        p_ = parent[i]
        _S(jtype[i], axis[i], S[i])
        _xup(jtype[i], axis[i], q[i - 1], Et[i], rt[i], E[i], r_[i])
        for a_ in range(3):
            for b_ in range(3):
                E0[i, a_, b_] = E[i, a_, 0] * E0[p_, 0, b_] + E[i, a_, 1] * E0[p_, 1, b_] + E[i, a_, 2] * E0[p_, 2, b_]
        for b_ in range(3):
            r0[i, b_] = r0[p_, b_] + E0[p_, 0, b_] * r_[i, 0] + E0[p_, 1, b_] * r_[i, 1] + E0[p_, 2, b_] * r_[i, 2]
        _xmv(E[i], r_[i], v[p_], v[i], t1)
        _xmv(E[i], r_[i], avp[p_], avp[i], t1)
        for c in range(6):
            w1[c] = S[i, c] * qd[i - 1]
            v[i, c] += w1[c]
        _crm_mul(v[i], w1, w2)
        for c in range(6):
            avp[i, c] += w2[c]
    X0 = np.zeros((NB + 1, 6, 6))    # 6×6 forms, needed by the loop frames below
    for i in range(NB + 1):
        for a_ in range(3):
            for b_ in range(3):
                X0[i, a_, b_] = E0[i, a_, b_]
                X0[i, 3 + a_, 3 + b_] = E0[i, a_, b_]
        for a_ in range(3):  # −E0 r0×
            X0[i, 3 + a_, 0] = -(E0[i, a_, 1] * r0[i, 2] - E0[i, a_, 2] * r0[i, 1])
            X0[i, 3 + a_, 1] = -(E0[i, a_, 2] * r0[i, 0] - E0[i, a_, 0] * r0[i, 2])
            X0[i, 3 + a_, 2] = -(E0[i, a_, 0] * r0[i, 1] - E0[i, a_, 1] * r0[i, 0])
    # base coordinates: v0 = X0⁻¹ v, a^vp_0, S0 (column j of J for body j)
    v0 = np.zeros((NB + 1, 6))
    a0 = np.zeros((NB + 1, 6))
    S0 = np.zeros((NB + 1, 6))
    for i in range(1, NB + 1):
        Xi = X0[i]
        E_ = Xi[:3, :3]
        B = Xi[3:, :3]
        for vec, out in ((v[i], v0[i]), (avp[i], a0[i]), (S[i], S0[i])):
            # X⁻¹ = [[Eᵀ, 0], [Bᵀ, Eᵀ]] for X = [[E, 0], [B, E]]
            for rr in range(3):
                out[rr] = E_[0, rr] * vec[0] + E_[1, rr] * vec[1] + E_[2, rr] * vec[2]
                out[3 + rr] = (B[0, rr] * vec[0] + B[1, rr] * vec[1] + B[2, rr] * vec[2]
                               + E_[0, rr] * vec[3] + E_[1, rr] * vec[4] + E_[2, rr] * vec[5])
    R = K.shape[0]
    last = -1
    XFp = np.zeros((6, 6))
    d = np.zeros(6)
    dv = np.zeros(6)
    da = np.zeros(6)
    rv = np.zeros(3)
    for r in range(R):
        l = row_loop[r]
        p, s = lp_p[l], lp_s[l]
        if l != last:
            last = l
            XFp = lp_XP[l] @ X0[p]
            XFs = lp_XS[l] @ X0[s]
            # pose of Fs in Fp from ^{Fs}X_{Fp} = XFs XFp⁻¹
            Xrel = XFs @ inv_plux(XFp)
            Er = Xrel[:3, :3]
            Rm = Er.T.copy()
            M = -Er.T @ Xrel[3:, :3]  # = skew(p)
            pv0, pv1, pv2 = M[2, 1], M[0, 2], M[1, 0]
            if lp_mode[l] == 0:
                a = lp_axis[l]
                Ra = Rm @ a
                rv[0] = a[1] * Ra[2] - a[2] * Ra[1]
                rv[1] = a[2] * Ra[0] - a[0] * Ra[2]
                rv[2] = a[0] * Ra[1] - a[1] * Ra[0]
            else:
                _log3(Rm, rv)
            d[0], d[1], d[2], d[3], d[4], d[5] = rv[0], rv[1], rv[2], pv0, pv1, pv2
            for c in range(6):
                dv[c] = v0[s, c] - v0[p, c]
            cr = crm(v0[p]) @ dv
            for c in range(6):
                da[c] = a0[s, c] - a0[p, c] - cr[c]
        t0 = XFp.T @ row_T[r]     # constraint direction in base coordinates
        for j in range(n):
            K[r, j] = 0.0
        b = s
        while b > 0:
            K[r, b - 1] += t0 @ S0[b]
            b = parent[b]
        b = p
        while b > 0:
            K[r, b - 1] -= t0 @ S0[b]
            b = parent[b]
        k[r] = -(t0 @ da)
        vJ[r] = t0 @ dv
        acc = 0.0
        for c in range(6):
            acc += row_T[r, c] * d[c]
        delta[r] = acc


@njit(cache=True)
def _chol(A, L):
    """Dense Cholesky A = L Lᵀ (lower) into L; False if A is not positive definite."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if s <= 0.0:
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True)
def _chol_solve(L, b):
    """Solve L Lᵀ x = b in place (b is overwritten with x)."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@njit(cache=True)
def cl_qdd(parent, jtype, axis, X_tree, I, a0, q, qd, tau, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
           row_T, rows, alpha, rtol, qdd):
    """Closed-loop q̈ by RBDA §8.5 method 2 restricted to the independent constraint rows ``rows``, with
    Baumgarte terms (α = 1/T_stab, 0 for none), all compiled. q, qd, tau (1, n). Returns 0 on success,
    1 if the row subset no longer spans the constraints here (the caller then uses the pseudo-inverse)."""
    n = q.shape[1]
    R = row_loop.shape[0]
    K = np.zeros((R, n))
    k = np.zeros(R)
    vJ = np.zeros(R)
    dl = np.zeros(R)
    loop_terms(parent, jtype, axis, X_tree, q[0], qd[0], lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
               row_T, K, k, vJ, dl)
    for r in range(R):
        k[r] = k[r] - 2.0 * alpha * vJ[r] - alpha * alpha * dl[r]
    H = np.zeros((1, n, n))
    _crba(parent, jtype, axis, X_tree, I, q, H, 0, 1)
    C = np.zeros((1, n))
    _rnea(parent, jtype, axis, X_tree, I, a0, q, qd, np.zeros((1, n)), np.zeros((1, parent.shape[0], 6)), C, 0, 1)
    L = np.zeros((n, n))
    if not _chol(H[0], L):
        return 1
    a = np.zeros(n)
    for i in range(n):
        a[i] = tau[0, i] - C[0, i]
    _chol_solve(L, a)                                   # a = H⁻¹ (τ − C)
    m = rows.shape[0]
    HK = np.zeros((m, n))                               # rows of (H⁻¹ K_rᵀ)ᵀ
    for j in range(m):
        for i in range(n):
            HK[j, i] = K[rows[j], i]
        _chol_solve(L, HK[j])
    A = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            s = 0.0
            for c in range(n):
                s += K[rows[i], c] * HK[j, c]
            A[i, j] = s
    LA = np.zeros((m, m))
    if m and not _chol(A, LA):
        return 1
    dmax, dmin = 0.0, np.inf
    for i in range(m):
        dmax = max(dmax, LA[i, i])
        dmin = min(dmin, LA[i, i])
    if m and dmin <= np.sqrt(rtol) * dmax:
        return 1
    lam = np.zeros(m)
    for i in range(m):
        s = k[rows[i]]
        for c in range(n):
            s -= K[rows[i], c] * a[c]
        lam[i] = s
    _chol_solve(LA, lam)
    for i in range(n):
        s = a[i]
        for j in range(m):
            s += HK[j, i] * lam[j]
        qdd[0, i] = s
    # every row, the dropped ones included, must hold: ‖K q̈ − k‖ small against ‖k‖ + ‖K‖‖q̈‖
    res = 0.0
    nk = 0.0
    nK = 0.0
    nq = 0.0
    for r in range(R):
        s = -k[r]
        for c in range(n):
            s += K[r, c] * qdd[0, c]
            nK += K[r, c] * K[r, c]
        res += s * s
        nk += k[r] * k[r]
    for c in range(n):
        nq += qdd[0, c] * qdd[0, c]
    if np.sqrt(res) > 1e-7 * (np.sqrt(nk) + np.sqrt(nK) * np.sqrt(nq)):
        return 1
    return 0
