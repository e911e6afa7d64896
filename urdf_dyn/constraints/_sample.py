"""Compiled (numba) closed-loop inverse dynamics and actuator forces at one state (RBDA eqs. 8.62–8.63), on a
workspace that outlives the call: the per-sample step of ``constraints._path.actuation_path`` (a trajectory)
and of ``actuation_one`` (one state of ``actuator_forces`` on a ``Data``), written once for both.

``actuation_work`` makes the workspace at its largest sizes (r ≤ min(R, n) independent rows): the
independent set (rows, dependent and free coordinates, the redundant rows), G, g, K_d's factors and the
scratch of ``_linalg._explicit``, ``_forces`` and ``_loop_lambda``. ``actuate`` carves views of the sizes
in use from it, so a state allocates nothing; the set is chosen by complete pivoting (RBDA §8.8) at the first
state and re-checked at every later one (``_explicit``), as the readable reference
``constraints.inverse.actuator_forces(compiled=False)`` does along a trajectory.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms._kernels import rnea_packed
from urdf_dyn.constraints._kernels import loop_geometry, loop_velocity, loop_work
from urdf_dyn.constraints._linalg import _cp_lu, _explicit, _forces, _loop_lambda

__all__ = ["actuation_work", "actuate", "set_size", "iw_rank", "explicit_G", "one_layout", "actuation_one"]

_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

# the float buffer's parts (offsets in iw[0:_NF + 1]) and the int buffer's (offsets in iw[_NF + 1:_HEAD])
_KE, _KK, _VJ, _DL, _G, _GG, _LU, _X, _A, _BB, _AW, _M, _L, _Y, _C, _CT, _MR, _LR, _NU, _W, _F, _AC = range(22)
_NF = 22
_ROWS, _DEP, _FREE, _RED, _PERM, _IPERM, _NZ, _PROW, _PCOL, _PFREE = range(10)
_NI = 10
_R = _NF + 1 + _NI + 1          # iw[_R]: r (−1 before the first state), iw[_R + 1]: n − r, iw[_R + 2]: rank of A
_HEAD = _R + 3


@njit(cache=True)
def actuation_work(n, R, RA, p):
    """(fw, iw): the float64 and int64 workspace of ``actuate`` for n coordinates, R constraint rows (RA with
    the actuated loop joints' rows) and p actuators, every part at its largest size; iw's head holds the
    parts' offsets and the independent set's size r (−1: not chosen yet)."""
    nmax = min(R, n)
    s = min(n, p)
    fsz = (RA * n, RA, RA, RA, n * n, n, nmax * nmax, (nmax + 1) * (n + 1), n * p, n, n * p, s * s, s * s,
           max(n, p), R * nmax, R * nmax, nmax * nmax, nmax * nmax, nmax, max(nmax, n), n, R * n)
    isz = (nmax, nmax, n, R, nmax, n, R, nmax, nmax, n)
    iw = np.zeros(_HEAD + sum(isz), np.int64)
    o = 0
    for c in range(_NF):
        iw[c] = o
        o += fsz[c]
    iw[_NF] = o
    fw = np.zeros(o)
    o = _HEAD
    for c in range(_NI):
        iw[_NF + 1 + c] = o
        o += isz[c]
    iw[_NF + 1 + _NI] = o
    iw[_R] = -1
    return fw, iw


@njit(cache=True)
def _f1(fw, iw, part, m):
    o = iw[part]
    return fw[o:o + m]


@njit(cache=True)
def _f2(fw, iw, part, a, b):
    o = iw[part]
    return fw[o:o + a * b].reshape((a, b))


@njit(cache=True)
def _i1(iw, part, m):
    o = iw[_NF + 1 + part]
    return iw[o:o + m]


@njit(cache=True)
def set_size(iw):
    """r, the size of the independent set ``actuate`` holds (−1: none chosen yet)."""
    return iw[_R]


@njit(cache=True)
def iw_rank(iw):
    """The rank of A = Gᵀ B at the last state ``actuate`` solved."""
    return iw[_R + 2]


@njit(cache=True)
def explicit_G(fw, iw, n):
    """G (n × (n − r)) of the last state ``actuate`` saw (a view into the workspace)."""
    return _f2(fw, iw, _G, n, iw[_R + 1])


@njit(cache=True)
def actuate(parent, jtype, axis, Et, rt, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows, act_col,
            q, qd, qdd, tau, pref, Wi, rtol, check, tol, ws, fw, iw, u, res, lam):
    """One state of closed-loop ID with actuator and loop forces (RBDA eqs. 8.62–8.63): tau (n,) holds
    τ_ID = RNEA(q, q̇, q̈) − τᵃ on entry; writes u (p,), res[:n − r] = Gᵀ(τ_ID − B u) and lam (R,) with
    Kᵀλ = τ_ID − B u (minimum norm). Returns 0 (ok), 1 (the state violates the loops beyond tol, when
    ``check``) or 3 (A = Gᵀ B not clearly of full rank, or λ not found: the caller's reference decides, with
    G from ``explicit_G``). The independent set is kept in iw between calls and re-chosen by complete
    pivoting when it no longer serves; its size is iw[_R] (the caller compares it to detect a change of
    mobility). Shapes and arguments as ``constraints._path.actuation_path``."""
    n = q.shape[0]
    RA = row_loop.shape[0]
    R = nrows
    p = act_col.shape[0]
    nmax = min(R, n)
    Ke = _f2(fw, iw, _KE, RA, n)
    ke = _f1(fw, iw, _KK, RA)
    dl = _f1(fw, iw, _DL, RA)
    K = Ke[:R]                      # views: the constraint rows, then the loop actuators' rows
    k = ke[:R]
    if RA:
        loop_geometry(parent, jtype, axis, Et, rt, q, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                      ws, Ke, dl)
        if check:
            loop_velocity(parent, qd, lp_p, lp_s, row_loop, ws, ke, _f1(fw, iw, _VJ, RA))
    kmax = -1.0
    if check and R:
        d = 0.0
        v = 0.0
        ac = 0.0
        sc = 0.0
        sc2 = 0.0
        kmax = 0.0
        for a in range(R):
            d = max(d, abs(dl[a]))
            s1 = 0.0
            s2 = -k[a]
            for j in range(n):
                kaj = K[a, j]
                s1 += kaj * qd[j]
                s2 += kaj * qdd[j]
                kmax = max(kmax, abs(kaj))
            v = max(v, abs(s1))
            ac = max(ac, abs(s2))
        for j in range(n):
            sc = max(sc, abs(qd[j]))
            sc2 = max(sc2, abs(qdd[j]))
        scale = 1.0 + sc + sc2
        if d > tol or v > tol * scale or ac > tol * scale * scale:
            return 1
    r = iw[_R]
    g = _f1(fw, iw, _GG, n)
    ok = r >= 0
    if ok and R:
        nf = n - r
        ok = _explicit(K, k, _i1(iw, _ROWS, r), _i1(iw, _DEP, r), _i1(iw, _FREE, nf), _i1(iw, _RED, R - r), rtol,
                       _f2(fw, iw, _G, n, nf), g, _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r),
                       _f2(fw, iw, _X, r + 1, nf + 1), kmax)
    if not ok:                      # the first state, or the set no longer serves: complete pivoting
        prow, pcol, pfree = _i1(iw, _PROW, nmax), _i1(iw, _PCOL, nmax), _i1(iw, _PFREE, n)
        r = 0
        if R:
            Ac = _f2(fw, iw, _AC, R, n)
            for a in range(R):
                for j in range(n):
                    Ac[a, j] = K[a, j]
            r = _cp_lu(Ac, pref, rtol, prow, pcol, pfree)
        nf = n - r
        rows, dep, free, red = _i1(iw, _ROWS, r), _i1(iw, _DEP, r), _i1(iw, _FREE, nf), _i1(iw, _RED, R - r)
        for c in range(r):
            rows[c] = prow[c]
            dep[c] = pcol[c]
        for c in range(nf):
            free[c] = pfree[c] if R else c
        m = 0
        for a in range(R):          # the rows outside the set, ascending
            inset = False
            for c in range(r):
                inset = inset or rows[c] == a
            if not inset:
                red[m] = a
                m += 1
        G = _f2(fw, iw, _G, n, nf)
        if R:
            _explicit(K, k, rows, dep, free, red, -1.0, G, g, _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r),
                      _f2(fw, iw, _X, r + 1, nf + 1), -1.0)
        else:
            for j in range(n):
                g[j] = 0.0
                for c in range(n):
                    G[j, c] = 1.0 if j == c else 0.0
        iw[_R] = r
        iw[_R + 1] = nf
    nf = n - r
    G = _f2(fw, iw, _G, n, nf)
    A = _f2(fw, iw, _A, nf, p)
    bb = _f1(fw, iw, _BB, nf)
    for a in range(nf):
        s = 0.0
        for j in range(n):
            s += G[j, a] * tau[j]
        bb[a] = s
    for c in range(p):
        jc = act_col[c]
        if jc >= 0:
            for a in range(nf):
                A[a, c] = G[jc, a]
        else:
            e = R - 1 - jc
            for a in range(nf):
                s = 0.0
                for j in range(n):
                    s += G[j, a] * Ke[e, j]
                A[a, c] = s
    sm = min(nf, p)
    rk = 0
    if p and nf:
        rk = _forces(A, bb, Wi, u, _f2(fw, iw, _AW, nf, p), _f2(fw, iw, _M, sm, sm), _f2(fw, iw, _L, sm, sm),
                     _f1(fw, iw, _Y, max(nf, p)), _i1(iw, _IPERM, nf))
    else:
        for c in range(p):
            u[c] = 0.0
    if rk < 0:
        return 3
    iw[_R + 2] = rk
    for a in range(nf):
        s = bb[a]
        for c in range(p):
            s -= A[a, c] * u[c]
        res[a] = s
    if R:
        f = _f1(fw, iw, _F, n)
        for j in range(n):
            f[j] = tau[j]
        for c in range(p):              # f = τ_ID − B u
            jc = act_col[c]
            if jc >= 0:
                f[jc] -= u[c]
            else:
                e = R - 1 - jc
                for j in range(n):
                    f[j] -= Ke[e, j] * u[c]
        if not _loop_lambda(K, _i1(iw, _ROWS, r), _i1(iw, _DEP, r), _i1(iw, _RED, R - r), f, lam,
                            _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r), _f2(fw, iw, _C, R - r, r),
                            _f2(fw, iw, _CT, r, R - r), _f2(fw, iw, _MR, r, r), _f2(fw, iw, _LR, r, r),
                            _f1(fw, iw, _NU, r), _f1(fw, iw, _W, max(r, n)), _i1(iw, _NZ, R - r)):
            return 3
    return 0


def one_layout(n, p, nrows, L):
    """Offsets of ``actuation_one``'s in/out buffer parts (x (3, n), τ_ID (1, n), u (p,), res (n,), λ (R,),
    loop wrenches (L, 6), over (p,), out (6,)) and its length."""
    sizes = (3 * n, n, p, n, nrows, 6 * L, p, 6)
    offs = np.concatenate([[0], np.cumsum(sizes)])
    return tuple(int(o) for o in offs)


@njit(cache=True)
def actuation_one(parent, jtype, axis, Et, rt, ib, fb, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                  nrows, act_col, f_ext, damping, stiffness, q_ref, pref, Wi, lim, rtol, check, tol, fw, iw, ob):
    """``actuator_forces`` at one state on a kept workspace (fw, iw from ``actuation_work``; Et, rt from
    ``split_tree``; f_ext (1, NB+1, 6) zero). ob (``one_layout``) holds the state's rows x (3, n) = q, q̇, q̈
    on entry and receives τ_ID (1, n), u (p,), res, λ (R,), the loop wrenches T λ (L, 6) on the successors
    in Fp, over (p,) (1 where |u| exceeds lim; inf where unlimited) and out (6,) = (status, rank of A,
    n − r, number over the limit, max|res|, max|τ_ID|): status 0 ok; 1 inconsistent state; 2 a non-finite
    input or result; 3 the reference must decide (``actuate``). τᵃ = −damping q̇ − stiffness (q − q_ref)
    (the tree joints' passive forces; (0,) arrays for none). One buffer for all of them: a call from
    Python unboxes one array, not eight. RNEA's and the loop terms' small work arrays are allocated per call:
    measured side by side, that is cheaper than carving them from a kept buffer (each view costs a reshape and
    a reference count)."""
    n = parent.shape[0] - 1
    p = act_col.shape[0]
    L = lp_p.shape[0]
    o = 0
    x = ob[o:o + 3 * n].reshape((3, n))
    o += 3 * n
    tau = ob[o:o + n].reshape((1, n))
    o += n
    u = ob[o:o + p]
    o += p
    res = ob[o:o + n]
    o += n
    lam = ob[o:o + nrows]
    o += nrows
    LF = ob[o:o + 6 * L].reshape((L, 6))
    o += 6 * L
    over = ob[o:o + p]
    o += p
    out = ob[o:o + 6]
    out[0] = 2.0
    for c in range(3):
        for j in range(n):
            if not np.isfinite(x[c, j]):
                return
    rnea_packed(ib, fb, x[0:1], x[1:2], x[2:3], f_ext, tau, np.int64(0), np.int64(1))
    t = tau[0]
    for j in range(n):              # τ_ID = τ − τᵃ, τᵃ rounded as ``passive_forces`` rounds it
        ta = -damping[j] * x[1, j] if damping.shape[0] else 0.0
        if stiffness.shape[0]:
            ta = ta - stiffness[j] * (x[0, j] - q_ref[j])
        t[j] -= ta
    s = actuate(parent, jtype, axis, Et, rt, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows,
                act_col, x[0], x[1], x[2], t, pref, Wi, rtol, check, tol, loop_work(n, row_loop.shape[0]), fw, iw,
                u, res, lam)
    out[0] = s
    if s != 0:
        return
    nf = iw[_R + 1]
    out[1] = iw[_R + 2]
    out[2] = nf
    rm = 0.0
    tm = 0.0
    for a in range(nf):
        rm = max(rm, abs(res[a]))
    for j in range(n):
        tm = max(tm, abs(t[j]))
    no = 0
    fin = np.isfinite(tm + rm)
    for c in range(p):
        h = abs(u[c]) > lim[c]
        over[c] = 1.0 if h else 0.0
        no += 1 if h else 0
        fin = fin and np.isfinite(u[c])
    out[3] = no
    out[4] = rm
    out[5] = tm
    if not fin:
        out[0] = 2.0
        return
    for l in range(L):
        for c in range(6):
            LF[l, c] = 0.0
    for a in range(nrows):
        l = row_loop[a]
        for c in range(6):
            LF[l, c] += row_T[a, c] * lam[a]
