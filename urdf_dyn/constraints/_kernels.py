"""Compiled (numba) kernels of the loop-closure constraints: K, k, Tᵀv_J and δ of every loop row at one
state (RBDA eqs. 8.9–8.24), and the closed-loop forward dynamics of the simulator's inner loop (§8.5
method 2). The readable Python references are ``constraints.loops.LoopState`` and
``constraints.forward.qdd_from_terms``; tests hold the two together. Same conventions as
``algorithms._kernels`` (transforms as (E, r), no allocation inside the loops over bodies).

``loop_geometry`` and ``loop_velocity`` allocate nothing (their scratch is in ``loop_work``'s tuple) and are
compiled without numba's reference-counting runtime (``_nrt=False``, as numba's own string kernels are):
with it, every row view such as ``E[i]`` costs an atomic increment and decrement, measured at ≈ 45 ns per
body and 1.6 µs of the excavator's 3.1 µs per state for the two functions. Kernels only other kernels call
have no Python entry (``no_cpython_wrapper``, ``no_cfunc_wrapper``: ``algorithms._kernels``' docstring).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms.joints import write_subspace
from urdf_dyn.algorithms._kernels import crba_packed, crm_mul, group_base, plux_er, rnea_packed, split_tree, xup
from urdf_dyn.algorithms.joints import SUB_R, is_sub, nq_of


_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@njit(cache=True, inline="always")
def _compose(Ea, ra, Eb, rb, E, r):
    """(E, r) of X_a X_b: E = E_a E_b, r = r_b + E_bᵀ r_a."""
    for a_ in range(3):
        for b_ in range(3):
            E[a_, b_] = Ea[a_, 0] * Eb[0, b_] + Ea[a_, 1] * Eb[1, b_] + Ea[a_, 2] * Eb[2, b_]
        r[a_] = rb[a_] + Eb[0, a_] * ra[0] + Eb[1, a_] * ra[1] + Eb[2, a_] * ra[2]


@njit(cache=True, inline="always")
def _inv_motion(E, r, m, out):
    """out = X⁻¹ m for X = (E, r): [Eᵀ w; r × Eᵀ w + Eᵀ v] (motion vector to base coordinates)."""
    for a_ in range(3):
        out[a_] = E[0, a_] * m[0] + E[1, a_] * m[1] + E[2, a_] * m[2]
    w0, w1, w2 = out[0], out[1], out[2]
    out[3] = r[1] * w2 - r[2] * w1 + E[0, 0] * m[3] + E[1, 0] * m[4] + E[2, 0] * m[5]
    out[4] = r[2] * w0 - r[0] * w2 + E[0, 1] * m[3] + E[1, 1] * m[4] + E[2, 1] * m[5]
    out[5] = r[0] * w1 - r[1] * w0 + E[0, 2] * m[3] + E[1, 2] * m[4] + E[2, 2] * m[5]


@njit(cache=True)
def loop_work(NB, R):
    """Workspace of ``loop_geometry``/``loop_velocity`` for NB bodies and R rows: (E, r, E0, r0, S, S0, T0,
    v0, a0, sub, iq, vb, m3, v3, v6), allocated once per trajectory; sub (NB+1,) marks the sub-bodies of
    multi-dof joints, iq (NB+1,) holds the q indices (``joints.q_indices``), vb (NB+1, 6) the joints' X v_λ;
    m3 (5, 3, 3), v3 (5, 3) and v6 (6, 6) are the per-loop scratch (no allocation per state)."""
    E0 = np.zeros((NB + 1, 3, 3))
    for a_ in range(3):
        E0[0, a_, a_] = 1.0
    return (np.zeros((NB + 1, 3, 3)), np.zeros((NB + 1, 3)), E0, np.zeros((NB + 1, 3)), np.zeros((NB + 1, 6)),
            np.zeros((NB + 1, 6)), np.zeros((R, 6)), np.zeros((NB + 1, 6)), np.zeros((NB + 1, 6)),
            np.zeros(NB + 1, np.bool_), np.full(NB + 1, -1, np.int64), np.zeros((NB + 1, 6)),
            np.zeros((5, 3, 3)), np.zeros((5, 3)), np.zeros((6, 6)))


@njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, ws,
                  K, delta):
    """The configuration part of the loop terms at q: K (R×n) and δ (R,) (RBDA eqs. 8.14, 8.23–8.24), and
    in ``ws`` the base-frame joint axes S0 and row directions T0 = ^{Fp}X_0ᵀ T that ``loop_velocity``
    needs. Transforms are (E, r) pairs; nothing is multiplied as a 6×6 matrix."""
    E, r_, E0, r0, S, S0, T0 = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6]
    NB = parent.shape[0] - 1
    n = NB
    sub, iq = ws[9], ws[10]
    k_ = 0
    for i in range(1, NB + 1):                                 # q indices (joints.q_indices), in place
        t_ = jtype[i]
        sub[i] = is_sub(t_)
        if not sub[i]:
            iq[i] = k_
            k_ += nq_of(t_)
    for i in range(1, NB + 1):
        p_ = parent[i]
        write_subspace(jtype[i], axis[i], S[i])
        xup(jtype[i], axis[i], q, iq[i], Et[i], rt[i], E[i], r_[i])
        _compose(E[i], r_[i], E0[p_], r0[p_], E0[i], r0[i])   # ^iX_0 = ^iX_λ ^λX_0
        _inv_motion(E0[i], r0[i], S[i], S0[i])                  # column i of J in base coordinates
    R = K.shape[0]
    last = -1
    m3, v3 = ws[12], ws[13]
    EP, ES, EFp, EFs, Rm = m3[0], m3[1], m3[2], m3[3], m3[4]
    rP, rS, rFp, rFs, rv = v3[0], v3[1], v3[2], v3[3], v3[4]
    d = ws[14][0]
    for r in range(R):
        l = row_loop[r]
        p, s = lp_p[l], lp_s[l]
        if l != last:
            last = l
            plux_er(lp_XP[l], EP, rP)
            plux_er(lp_XS[l], ES, rS)
            _compose(EP, rP, E0[p], r0[p], EFp, rFp)     # ^{Fp}X_0
            _compose(ES, rS, E0[s], r0[s], EFs, rFs)     # ^{Fs}X_0
            # pose of Fs in Fp: R = E_Fp E_Fsᵀ, position E_Fp (r_Fs − r_Fp)
            for a_ in range(3):
                for b_ in range(3):
                    Rm[a_, b_] = EFp[a_, 0] * EFs[b_, 0] + EFp[a_, 1] * EFs[b_, 1] + EFp[a_, 2] * EFs[b_, 2]
            for a_ in range(3):
                d[3 + a_] = (EFp[a_, 0] * (rFs[0] - rFp[0]) + EFp[a_, 1] * (rFs[1] - rFp[1])
                             + EFp[a_, 2] * (rFs[2] - rFp[2]))
            if lp_mode[l] == 0:
                a = lp_axis[l]
                Ra0 = Rm[0, 0] * a[0] + Rm[0, 1] * a[1] + Rm[0, 2] * a[2]
                Ra1 = Rm[1, 0] * a[0] + Rm[1, 1] * a[1] + Rm[1, 2] * a[2]
                Ra2 = Rm[2, 0] * a[0] + Rm[2, 1] * a[1] + Rm[2, 2] * a[2]
                rv[0] = a[1] * Ra2 - a[2] * Ra1
                rv[1] = a[2] * Ra0 - a[0] * Ra2
                rv[2] = a[0] * Ra1 - a[1] * Ra0
            else:
                _log3(Rm, rv)
            d[0], d[1], d[2] = rv[0], rv[1], rv[2]
        # constraint direction in base coordinates: t0 = ^{Fp}X_0ᵀ T = [Eᵀ t_a + r × Eᵀ t_l; Eᵀ t_l]
        T = row_T[r]
        t0 = T0[r]
        for a_ in range(3):
            t0[3 + a_] = EFp[0, a_] * T[3] + EFp[1, a_] * T[4] + EFp[2, a_] * T[5]
            t0[a_] = EFp[0, a_] * T[0] + EFp[1, a_] * T[1] + EFp[2, a_] * T[2]
        t0[0] += rFp[1] * t0[5] - rFp[2] * t0[4]
        t0[1] += rFp[2] * t0[3] - rFp[0] * t0[5]
        t0[2] += rFp[0] * t0[4] - rFp[1] * t0[3]
        for j in range(n):
            K[r, j] = 0.0
        b = s
        while b > 0:
            acc = 0.0
            for c in range(6):
                acc += t0[c] * S0[b, c]
            K[r, b - 1] += acc
            b = parent[b]
        b = p
        while b > 0:
            acc = 0.0
            for c in range(6):
                acc += t0[c] * S0[b, c]
            K[r, b - 1] -= acc
            b = parent[b]
        acc_d = 0.0
        for c in range(6):
            acc_d += T[c] * d[c]
        delta[r] = acc_d


@njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, k, vJ):
    """The velocity part at q̇, after ``loop_geometry`` at q: k (R,) and Tᵀ v_J (R,) (RBDA eqs. 8.15–8.17).
    In base coordinates v_i = v_λ + s_i q̇_i and a^vp_i = a^vp_λ + v_λ × s_i q̇_i (s_i moves with body i; the
    sub-bodies of a multi-dof joint use the joint's v_λ, ``joints`` module docstring);
    k = −t0ᵀ[(a^vp_s − a^vp_p) − v_p × (v_s − v_p)], Tᵀv_J = t0ᵀ(v_s − v_p)."""
    S0, T0, v0, a0, sub, vb = ws[5], ws[6], ws[7], ws[8], ws[9], ws[11]
    NB = parent.shape[0] - 1
    v6 = ws[14]
    w1, w2, dv, da, cr = v6[1], v6[2], v6[3], v6[4], v6[5]
    for i in range(1, NB + 1):
        p_ = parent[i]
        group_base(SUB_R if sub[i] else 0, v0[p_], vb[p_], vb[i])
        for c in range(6):
            w1[c] = S0[i, c] * qd[i - 1]
            v0[i, c] = v0[p_, c] + w1[c]
        crm_mul(vb[i], w1, w2)
        for c in range(6):
            a0[i, c] = a0[p_, c] + w2[c]
    last = -1
    for r in range(row_loop.shape[0]):
        l = row_loop[r]
        if l != last:
            last = l
            p, s = lp_p[l], lp_s[l]
            for c in range(6):
                dv[c] = v0[s, c] - v0[p, c]
            crm_mul(v0[p], dv, cr)
            for c in range(6):
                da[c] = a0[s, c] - a0[p, c] - cr[c]
        acc_k = 0.0
        acc_v = 0.0
        for c in range(6):
            acc_k += T0[r, c] * da[c]
            acc_v += T0[r, c] * dv[c]
        k[r] = -acc_k
        vJ[r] = acc_v


@njit(cache=True)
def loop_terms(parent, jtype, axis, X_tree, q, qd, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
               K, k, vJ, delta):
    """K (R×n), k (R,), Tᵀv_J (R,) and δ (R,) of all loop rows at one state (RBDA eqs. 8.9–8.24; the
    Python reference is ``loops.LoopState``): ``loop_geometry`` then ``loop_velocity``. Row r belongs to
    loop row_loop[r] with constraint direction row_T[r] (6,) in Fp. lp_mode: 0 = rotational error
    a × (R a) (joints turning about a), 1 = rotation vector of R. Universal loops (configuration-dependent
    T) are not handled here."""
    Et, rt = split_tree(X_tree)
    ws = loop_work(parent.shape[0] - 1, K.shape[0])
    loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, ws,
                  K, delta)
    loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, k, vJ)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _chol_solve(L, b):
    """Solve L Lᵀ x = b in place (b is overwritten with x)."""
    _fwd(L, b)
    _bwd(L, b)


@njit(cache=True, inline="always")
def _fwd(L, b):
    """b ← L⁻¹ b in place (L lower triangular)."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]


@njit(cache=True, inline="always")
def _bwd(L, b):
    """b ← L⁻ᵀ b in place (L lower triangular)."""
    n = L.shape[0]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@njit(cache=True)
def cl_qdd(parent, jtype, axis, X_tree, ib, fb, q, qd, tau, damping, stiffness, q_ref, lp_p, lp_s, lp_XP, lp_XS,
           lp_axis, lp_mode, row_loop, row_T, rows, alpha, rtol, qdd):
    """Closed-loop q̈ by RBDA §8.5 method 2 restricted to the independent constraint rows ``rows`` (K_r),
    with Baumgarte terms (α = 1/T_stab, 0 for none), all compiled. parent … X_tree: the Model's arrays (the loop
    terms are in link frames); ib, fb: ``Model.kernel_pack`` (H and C). q, qd, tau, qdd (n,). The tree joints'
    passive forces −b q̇ − k (q − q_ref) (``constraints.passive.passive_forces``) are added to τ: damping
    (n,) or (0,) for none, stiffness and q_ref (n,) or (0,). With H = L Lᵀ (Cholesky) and
    Y = L⁻¹ K_rᵀ, z = L⁻¹ (τ − C):

        A = K_r H⁻¹ K_rᵀ = Yᵀ Y,   A λ = k_r − Yᵀ z,   q̈ = L⁻ᵀ (z + Y λ)

    (one forward solve per row and one backward solve in all, where H⁻¹ K_rᵀ would take two per row).
    Returns 0 on success, 1 if the row subset no longer spans the constraints here (the caller then uses
    the pseudo-inverse)."""
    n = q.shape[0]
    R = row_loop.shape[0]
    m = rows.shape[0]
    nb = parent.shape[0]
    # every workspace carved from one zeroed buffer (one allocation instead of sixteen)
    buf = np.zeros(n * (7 + 2 * n + m) + R * (n + 3) + m * (2 * m + 1))
    o = 0
    q2 = buf[o:o + n].reshape((1, n))
    o += n
    qd2 = buf[o:o + n].reshape((1, n))
    o += n
    zero_n = buf[o:o + n].reshape((1, n))
    o += n
    zero_f = buf[o:o].reshape((0, nb, 6))       # no external force
    K = buf[o:o + R * n].reshape((R, n))
    o += R * n
    k = buf[o:o + R]
    o += R
    vJ = buf[o:o + R]
    o += R
    dl = buf[o:o + R]
    o += R
    H = buf[o:o + n * n].reshape((1, n, n))
    o += n * n
    L = buf[o:o + n * n].reshape((n, n))
    o += n * n
    C = buf[o:o + n].reshape((1, n))
    o += n
    W = buf[o:o + n * (m + 1)].reshape((n, m + 1))      # [τ − C, K_rᵀ], then L⁻¹ of it: [z, Y]
    o += n * (m + 1)
    A = buf[o:o + m * m].reshape((m, m))
    o += m * m
    LA = buf[o:o + m * m].reshape((m, m))
    o += m * m
    lam = buf[o:o + m]
    z = buf[o + m:o + m + n]
    for i in range(n):
        q2[0, i] = q[i]
        qd2[0, i] = qd[i]
    loop_terms(parent, jtype, axis, X_tree, q, qd, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop,
               row_T, K, k, vJ, dl)
    for r in range(R):
        k[r] = k[r] - 2.0 * alpha * vJ[r] - alpha * alpha * dl[r]
    crba_packed(ib, fb, q2, H, np.int64(0), np.int64(1))
    rnea_packed(ib, fb, q2, qd2, zero_n, zero_f, C, np.int64(0), np.int64(1))
    if not _chol(H[0], L):
        return 1
    for i in range(n):
        W[i, 0] = tau[i] - C[0, i]
        for j in range(m):
            W[i, 1 + j] = K[rows[j], i]
    for i in range(damping.shape[0]):
        W[i, 0] -= damping[i] * qd[i]
    for i in range(stiffness.shape[0]):
        W[i, 0] -= stiffness[i] * (q[i] - q_ref[i])
    for i in range(n):                                  # W ← L⁻¹ W, every right-hand side in one sweep
        for c in range(i):
            f = L[i, c]
            for j in range(m + 1):
                W[i, j] -= f * W[c, j]
        d = 1.0 / L[i, i]
        for j in range(m + 1):
            W[i, j] *= d
    for a in range(m):
        lam[a] = k[rows[a]]
    for i in range(n):                                  # A = Yᵀ Y (lower half), k_r − Yᵀ z
        zi = W[i, 0]
        for a in range(m):
            wa = W[i, 1 + a]
            lam[a] -= wa * zi
            for b in range(a + 1):
                A[a, b] += wa * W[i, 1 + b]
    for a in range(m):
        for b in range(a):
            A[b, a] = A[a, b]
    if m and not _chol(A, LA):
        return 1
    dmax, dmin = 0.0, np.inf
    for i in range(m):
        dmax = max(dmax, LA[i, i])
        dmin = min(dmin, LA[i, i])
    if m and dmin <= np.sqrt(rtol) * dmax:
        return 1
    _chol_solve(LA, lam)
    for i in range(n):
        s = W[i, 0]
        for j in range(m):
            s += W[i, 1 + j] * lam[j]
        z[i] = s
    _bwd(L, z)
    for i in range(n):
        qdd[i] = z[i]
    # every row, the dropped ones included, must hold: ‖K q̈ − k‖ small against ‖k‖ + ‖K‖‖q̈‖
    res = 0.0
    nk = 0.0
    nK = 0.0
    nq = 0.0
    for r in range(R):
        s = -k[r]
        for c in range(n):
            s += K[r, c] * z[c]
            nK += K[r, c] * K[r, c]
        res += s * s
        nk += k[r] * k[r]
    for c in range(n):
        nq += z[c] * z[c]
    if np.sqrt(res) > 1e-7 * (np.sqrt(nk) + np.sqrt(nK) * np.sqrt(nq)):
        return 1
    return 0
