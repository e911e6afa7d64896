"""Compiled (numba) closed-loop dynamics at one state on a workspace that outlives the call: inverse dynamics
with actuator and loop forces (RBDA eqs. 8.62–8.63), the per-sample step of ``constraints._path.actuation_path``
(a trajectory) and of ``actuation_one`` (one state of ``actuator_forces`` on a ``Data``), written once for
both; and forward dynamics by RBDA §8.5 method 3 (``forward_one``, one state of
``constrained_forward_dynamics`` on a ``Data``).

``actuation_work`` makes the workspace at its largest sizes (r ≤ min(R, n) independent rows): the
independent set (rows, dependent and free coordinates, the redundant rows), G, g, K_d's factors and the
scratch of ``_linalg._explicit``, ``_forces`` and ``_loop_lambda``. ``actuate`` and ``forward_one`` carve views
of the sizes in use from it; the set is chosen by complete pivoting (RBDA §8.8) at the first state and
re-checked at every later one (``explicit_kept``, which both share), as the readable reference
``constraints.inverse.actuator_forces(compiled=False)`` does along a trajectory. ``forward_one`` answers only
where the set's rank is certain (``_certified``); elsewhere its caller's readable path decides.

The single-state entries take the model side packed by ``one_pack`` into one read-only int64 and one
read-only float64 array (their views have the types the batch path's arrays have, so each callee compiles
once), the workspace, one result buffer and the state: nine to twelve arguments to unbox from Python
instead of thirty. Kernels only other kernels call have no Python entry (``no_cpython_wrapper``,
``no_cfunc_wrapper``: ``algorithms._kernels``' docstring).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms._kernels import crba_packed, rnea_packed
from urdf_dyn.algorithms.layout import ONE
from urdf_dyn.constraints._kernels import _chol, _chol_solve, loop_geometry, loop_velocity, loop_work
from urdf_dyn.constraints._linalg import _cp_lu, _explicit, _forces, _loop_lambda, _lu_solve

__all__ = ["actuation_work", "explicit_kept", "actuate", "set_size", "iw_rank", "explicit_G", "one_layout",
           "forward_layout", "one_pack", "actuation_one", "forward_one"]

_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

# the float buffer's parts (offsets in iw[0:_NF + 1]) and the int buffer's (offsets in iw[_NF + 1:_HEAD])
# the parts' numbers are numpy ints, not Python ints: numba types a global Python int as a literal, and the
# views below (_f1, _f2, _i1) would compile once per part (32 variants, seconds of a first run)
(_KE, _KK, _VJ, _DL, _G, _GG, _LU, _X, _A, _BB, _AW, _M, _L, _Y, _C, _CT, _MR, _LR, _NU, _W, _F,
 _AC) = np.arange(22, dtype=np.int64)
_NF = 22
_ROWS, _DEP, _FREE, _RED, _PERM, _IPERM, _NZ, _PROW, _PCOL, _PFREE = np.arange(10, dtype=np.int64)
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _f1(fw, iw, part, m):
    o = iw[part]
    return fw[o:o + m]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _f2(fw, iw, part, a, b):
    o = iw[part]
    return fw[o:o + a * b].reshape((a, b))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _i1(iw, part, m):
    o = iw[_NF + 1 + part]
    return iw[o:o + m]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _state_in(q, qd, w, x, n):
    """Copy one state into the rows of x (3, n): q, q̇ and w (q̈ or τ); False, with x partly written, when an
    array's length is not n or a value is not finite (the caller answers −2: the readable path's checks
    name what is wrong)."""
    if q.shape[0] != n or qd.shape[0] != n or w.shape[0] != n:
        return False
    for j in range(n):
        a, b, c = q[j], qd[j], w[j]
        if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
            return False
        x[0, j] = a
        x[1, j] = b
        x[2, j] = c
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def set_size(iw):
    """r, the size of the independent set ``actuate`` holds (−1: none chosen yet)."""
    return iw[_R]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def iw_rank(iw):
    """The rank of A = Gᵀ B at the last state ``actuate`` solved."""
    return iw[_R + 2]


@njit(cache=True)
def explicit_G(fw, iw, n):
    """G (n × (n − r)) of the last state ``actuate`` saw (a view into the workspace)."""
    return _f2(fw, iw, _G, n, iw[_R + 1])


@njit(cache=True, inline="always")
def explicit_kept(K, k, pref, rtol, kmax, fw, iw):
    """G (n × (n − r)) and g (n,) of RBDA §8.8 into the workspace for K (R × n), k (R,): by the independent set
    kept in iw, re-checked (``_linalg._explicit``: K_d's pivots, K G on the other rows), or, at the first state
    or where the kept set no longer serves, a set chosen anew by complete pivoting (pref (n,): coordinates
    taken last). K_d's LU factors stay in the workspace (``_LU``, ``_PERM``); iw[_R] = r, iw[_R + 1] = n − r.
    kmax: max|K| if known, else −1. Returns True when the set was chosen anew. The step ``actuate`` and
    ``forward_one`` share."""
    R, n = K.shape
    nmax = min(R, n)
    r = iw[_R]
    g = _f1(fw, iw, _GG, n)
    ok = r >= 0
    if ok and R:
        nf = n - r
        ok = _explicit(K, k, _i1(iw, _ROWS, r), _i1(iw, _DEP, r), _i1(iw, _FREE, nf), _i1(iw, _RED, R - r), rtol,
                       _f2(fw, iw, _G, n, nf), g, _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r),
                       _f2(fw, iw, _X, r + 1, nf + 1), kmax)
    if ok:
        return False
    # the first state, or the set no longer serves: complete pivoting
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
    return True


@njit(cache=True, inline="always")
def actuate(parent, jtype, axis, Et, rt, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows, act_col,
            q, qd, qdd, tau, pref, Wi, rtol, check, tol, ws, fw, iw, u, res, lam):
    """One state of closed-loop ID with actuator and loop forces (RBDA eqs. 8.62–8.63): tau (n,) holds
    τ_ID = RNEA(q, q̇, q̈) − τᵃ on entry; writes u (p,), res[:n − r] = Gᵀ(τ_ID − B u) and lam (R,) with
    Kᵀλ = τ_ID − B u (minimum norm). Returns 0 (ok), 1 (the state violates the loops beyond tol, when
    ``check``) or 3 (A = Gᵀ B not clearly of full rank, or λ not found: the caller's reference decides, with
    G from ``explicit_G``). The independent set is kept in iw between calls and re-chosen by complete
    pivoting when it no longer serves; its size is iw[_R] (the caller compares it to detect a change of
    mobility). Shapes and arguments as ``constraints._path.actuation_path``.

    Inlined by numba into its two callers (``_path._actuation_samples``, ``actuation_one``): as a kernel of its
    own, LLVM optimised it and emitted its machine code once alone and once more inside each caller (numba
    links a callee's module into its caller's and optimises the whole), which the main job's first run paid
    for without ever calling it alone (inlined: ≈ 1.5 CPU-s less compiling, the same machine code speed)."""
    n = q.shape[0]
    RA = row_loop.shape[0]
    R = nrows
    p = act_col.shape[0]
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
    explicit_kept(K, k, pref, rtol, kmax, fw, iw)
    r = iw[_R]
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _certified(K, kmax, rtol, fw, iw):
    """True when the set ``explicit_kept`` left in the workspace provably has the numerical rank of K (the
    readable path's ``loops.numerical_rank``: singular values above tol = rtol·σ_max) and no singular value of
    K lies within a factor 10³ above tol (where the readable path warns of a change of mobility, RBDA §8.10):

        σ_r(K) ≥ σ_min(K_d) ≥ 1/‖K_d⁻¹‖_F  must be ≥ 10³·rtol·‖K‖_F ≥ 10³·tol   (K_d a submatrix of K),
        σ_{r+1}(K) ≤ ‖E‖_F                 must be ≤ rtol·max|K| ≤ tol,

    with E = K G on the rows outside the set (those rows are c_i K_r + E_i, so K minus a matrix of rank r is E).
    ‖K_d⁻¹‖_F from K_d's LU factors in the workspace (r solves). kmax: max|K|."""
    R, n = K.shape
    r = iw[_R]
    nf = n - r
    if r < 0:
        return False
    dep, free, red = _i1(iw, _DEP, r), _i1(iw, _FREE, nf), _i1(iw, _RED, R - r)
    G = _f2(fw, iw, _G, n, nf)
    e2 = 0.0
    for m in range(R - r):
        i = red[m]
        for c in range(nf):
            s = K[i, free[c]]
            for j in range(r):
                s += K[i, dep[j]] * G[dep[j], c]
            e2 += s * s
    if not e2 <= (rtol * kmax) * (rtol * kmax):
        return False
    if r == 0:
        return True
    kf = 0.0
    for a in range(R):
        for j in range(n):
            kf += K[a, j] * K[a, j]
    LU, perm = _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r)
    b, z = _f1(fw, iw, _NU, r), _f1(fw, iw, _W, r)
    s2 = 0.0
    for c in range(r):
        for j in range(r):
            b[j] = 1.0 if j == c else 0.0
        _lu_solve(LU, perm, b, z)
        for j in range(r):
            s2 += z[j] * z[j]
    return 1e6 * rtol * rtol * kf * s2 <= 1.0


def one_layout(n, p, nrows, L):
    """Offsets of ``actuation_one``'s in/out buffer parts (x (3, n), τ_ID (1, n), u (p,), res (n,), λ (R,),
    loop wrenches (L, 6), over (p,), out (6,)) and its length."""
    sizes = (3 * n, n, p, n, nrows, 6 * L, p, 6)
    offs = np.concatenate([[0], np.cumsum(sizes)])
    return tuple(int(o) for o in offs)


def forward_layout(n, R, L):
    """Offsets of ``forward_one``'s in/out buffer parts (x (3, n), q̈ (n,), λ (R,), loop wrenches (L, 6),
    out (5,)) and its length."""
    sizes = (3 * n, n, R, 6 * L, 5)
    offs = np.concatenate([[0], np.cumsum(sizes)])
    return tuple(int(o) for o in offs)


# the model side of a single-state kernel, packed by ``one_pack`` into one int64 and one float64 array (each
# array a Python caller passes costs ≈ 80 ns to unbox; a view carved from these costs ≈ 20 ns) as
# ``layout.ONE`` declares it: the parts' indices in its header, by name
_PARENT, _JTYPE, _IB, _LPP, _LPS, _LPMODE, _ROWLOOP, _MISC = (
    ONE.index(k) for k in ("parent", "jtype", "ib", "lp_p", "lp_s", "lp_mode", "row_loop", "misc"))
_AXIS, _FB, _XP, _XS, _LPAXIS, _ROWT, _DAMP, _STIFF, _QREF, _FEXT, _LIM, _SCAL = (
    ONE.index(k) for k in ("axis", "fb", "XP", "XS", "lp_axis", "row_T", "damping", "stiffness", "q_ref", "f_ext",
                           "lim", "scalars"))


def one_pack(model, row_loop, row_T, nrows, act_col, Wi, lim, scalars, fw, iw):
    """(mi, mf, fw, iw) for ``actuation_one`` and ``forward_one``: mi, mf read-only (as the Model's arrays, so
    the callees see the types the batch path gives them: one compiled variant each) hold the model, its loop
    rows (row_loop (RA,), row_T (RA, 6), the first nrows the constraint rows), the passive-force arrays,
    f_ext = 0, the actuators' limits lim (p,) and ``scalars``; fw and iw are the workspace of
    ``actuation_work`` with, at their ends, the writable parts: the tree's (E, r) of ``split_tree``, W^-½ (p,)
    and the actuator columns act_col (p,)."""
    from urdf_dyn.algorithms._kernels import split_tree
    pack = model.loop_pack
    ib, fb = model.kernel_pack
    springs = model.spring_stiffness is not None
    Et, rt = split_tree(model.X_tree)
    empty = np.zeros(0)
    mi, mf = ONE.pack(dict(
        parent=model.parent, jtype=model.jtype, ib=ib, lp_p=pack["p"], lp_s=pack["s"], lp_mode=pack["mode"],
        row_loop=row_loop, misc=[nrows, fw.size, fw.size + Et.size + rt.size, iw.size], axis=model.axis, fb=fb,
        XP=pack["XP"], XS=pack["XS"], lp_axis=pack["axis"], row_T=row_T, damping=model.damping,
        stiffness=model.spring_stiffness if springs else empty, q_ref=model.spring_reference if springs else empty,
        f_ext=model.f_ext_zero, lim=lim, scalars=scalars), header=True)
    fw = np.concatenate([fw, Et.ravel(), rt.ravel(), np.asarray(Wi, np.float64)])
    iw = np.concatenate([iw, np.asarray(act_col, np.int64)])
    return mi, mf, fw, iw


@njit(cache=True)
def _ip(mi, c):
    """Int part c of ``one_pack``'s mi (a read-only view)."""
    return mi[mi[2 + c]:mi[3 + c]]


@njit(cache=True)
def _fp(mi, mf, c):
    """Float part c of ``one_pack``'s mf (a read-only view)."""
    b = 3 + mi[0]
    return mf[mi[b + c]:mi[b + c + 1]]


@njit(cache=True)
def actuation_one(mi, mf, fw, iw, pref, q, qd, qdd, ob):
    """``actuator_forces`` at one state (q, q̇, q̈ (n,), any strides) on a kept workspace: the model side and
    the settings from ``one_pack`` (mi, mf, the workspace fw, iw), pref (n,) the coordinates complete pivoting
    takes last. ob (``one_layout``) receives the state's rows x (3, n), τ_ID (1, n), u (p,), res, λ (R,), the
    loop wrenches T λ (L, 6) on the successors in Fp, over (p,) (1 where |u| exceeds lim; inf where
    unlimited) and out (6,) = (status, rank of A, n − r, number over the limit, max|res|, max|τ_ID|):
    status 0 ok; 1 inconsistent state; 2 a state of another length, a non-finite input or result; 3 the
    reference must decide
    (``actuate``). Returns −status where status ≠ 0, else (rank of A) · 2³² + (n − r) · 4 + flags (bit 0:
    an actuator over its limit; bit 1: under-actuated with max|res| > 10⁻⁹ (1 + max|τ_ID|), which the caller
    warns of), so that the usual call reads nothing else back. τᵃ = −damping q̇ − stiffness (q − q_ref) (the
    tree joints' passive forces). Nine arguments,
    one result buffer: a call from Python unboxes nine arrays, not thirty arguments. RNEA's and the loop
    terms' small work arrays are allocated per call: measured side by side, that is cheaper than carving
    them from a kept buffer (each view costs a reshape and a reference count)."""
    parent, jtype, ib = _ip(mi, _PARENT), _ip(mi, _JTYPE), _ip(mi, _IB)
    lp_p, lp_s, lp_mode, row_loop, misc = _ip(mi, _LPP), _ip(mi, _LPS), _ip(mi, _LPMODE), _ip(mi, _ROWLOOP), _ip(mi, _MISC)
    nb1 = parent.shape[0]
    n = nb1 - 1
    L = lp_p.shape[0]
    RA = row_loop.shape[0]
    lim = _fp(mi, mf, _LIM)
    p = lim.shape[0]
    nrows = misc[0]
    axis = _fp(mi, mf, _AXIS).reshape((nb1, 3))
    fb = _fp(mi, mf, _FB)
    lp_XP = _fp(mi, mf, _XP).reshape((L, 6, 6))
    lp_XS = _fp(mi, mf, _XS).reshape((L, 6, 6))
    lp_axis = _fp(mi, mf, _LPAXIS).reshape((L, 3))
    row_T = _fp(mi, mf, _ROWT).reshape((RA, 6))
    damping, stiffness, q_ref = _fp(mi, mf, _DAMP), _fp(mi, mf, _STIFF), _fp(mi, mf, _QREF)
    f_ext = _fp(mi, mf, _FEXT).reshape((1, nb1, 6))
    scal = _fp(mi, mf, _SCAL)
    Et = fw[misc[1]:misc[1] + 9 * nb1].reshape((nb1, 3, 3))
    rt = fw[misc[1] + 9 * nb1:misc[2]].reshape((nb1, 3))
    Wi = fw[misc[2]:misc[2] + p]
    act_col = iw[misc[3]:misc[3] + p]
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
    if not _state_in(q, qd, qdd, x, n):
        return -2
    rnea_packed(ib, fb, x[0:1], x[1:2], x[2:3], f_ext, tau, np.int64(0), np.int64(1))
    t = tau[0]
    for j in range(n):              # τ_ID = τ − τᵃ, τᵃ rounded as ``passive_forces`` rounds it
        ta = -damping[j] * x[1, j] if damping.shape[0] else 0.0
        if stiffness.shape[0]:
            ta = ta - stiffness[j] * (x[0, j] - q_ref[j])
        t[j] -= ta
    s = actuate(parent, jtype, axis, Et, rt, lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows,
                act_col, x[0], x[1], x[2], t, pref, Wi, scal[0], scal[1] != 0.0, scal[2], loop_work(n, RA), fw, iw,
                u, res, lam)
    out[0] = s
    if s != 0:
        return -s
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
        return -2
    for l in range(L):
        for c in range(6):
            LF[l, c] = 0.0
    for a in range(nrows):
        l = row_loop[a]
        for c in range(6):
            LF[l, c] += row_T[a, c] * lam[a]
    rk = iw[_R + 2]
    flags = (1 if no else 0) + (2 if rk < nf and rm > 1e-9 * (1.0 + tm) else 0)
    return (rk << 32) + nf * 4 + flags


@njit(cache=True)
def forward_one(mi, mf, fw, iw, pref, q, qd, tau, alpha, rtol, passive, ob):
    """Closed-loop forward dynamics at one state by RBDA §8.5 method 3 (eqs. 8.42–8.46), the compiled copy of
    ``constraints.forward.constrained_forward_dynamics(loop_solver="nullspace")``, on a kept workspace:

        K, k (+ Baumgarte k_stab = −2α Tᵀv_J − α² δ),  G, g by the kept independent set (``explicit_kept``:
        re-checked, or chosen anew by complete pivoting, RBDA §8.8),  Gᵀ H G ÿ = Gᵀ(τ − C − H g) (Cholesky),
        q̈ = G ÿ + g,  minimum-norm λ with Kᵀλ = H q̈ − (τ − C) (``_linalg._loop_lambda``).

    mi, mf, fw, iw from ``one_pack`` (no actuators), pref (n,) the coordinates complete pivoting takes last;
    q, q̇, τ (n,) any strides; α = 1/T_stab (0: none); rtol the rank tolerance; passive: τ gets the tree joints'
    passive forces −b q̇ − k (q − q_ref). ob (``forward_layout``; no entry is read: the caller may pass a new
    ``np.empty`` for each state) receives x (3, n) = q, q̇, τ, q̈ (n,), λ (R,), the loop wrenches T λ (L, 6) on
    the successors in Fp, and out (5,) = (status, r, ‖K q̈ − k‖, scale, the number of times the set was chosen
    anew). Returns −status where status ≠ 0, else r + 2²⁰ · (the number of times the set was chosen anew, kept
    in iw[_R + 2] across calls). Status 0 ok; 1 the caller's readable path
    decides (the set's rank not certified, ``_certified``: near a change of mobility, where the reference
    warns; H or Gᵀ H G not positive definite; λ not found; ‖K q̈ − k‖ above 10⁻⁶ · scale, where the
    reference warns); 2 a state of another length, a non-finite input or result."""
    parent, jtype, ib = _ip(mi, _PARENT), _ip(mi, _JTYPE), _ip(mi, _IB)
    lp_p, lp_s, lp_mode, row_loop, misc = _ip(mi, _LPP), _ip(mi, _LPS), _ip(mi, _LPMODE), _ip(mi, _ROWLOOP), _ip(mi, _MISC)
    nb1 = parent.shape[0]
    n = nb1 - 1
    L = lp_p.shape[0]
    R = row_loop.shape[0]
    axis = _fp(mi, mf, _AXIS).reshape((nb1, 3))
    fb = _fp(mi, mf, _FB)
    lp_XP = _fp(mi, mf, _XP).reshape((L, 6, 6))
    lp_XS = _fp(mi, mf, _XS).reshape((L, 6, 6))
    lp_axis = _fp(mi, mf, _LPAXIS).reshape((L, 3))
    row_T = _fp(mi, mf, _ROWT).reshape((R, 6))
    damping, stiffness, q_ref = _fp(mi, mf, _DAMP), _fp(mi, mf, _STIFF), _fp(mi, mf, _QREF)
    f_ext = _fp(mi, mf, _FEXT).reshape((1, nb1, 6))
    Et = fw[misc[1]:misc[1] + 9 * nb1].reshape((nb1, 3, 3))
    rt = fw[misc[1] + 9 * nb1:misc[2]].reshape((nb1, 3))
    o = 0
    x = ob[o:o + 3 * n].reshape((3, n))
    o += 3 * n
    qdd = ob[o:o + n]
    o += n
    lam = ob[o:o + R]
    o += R
    LF = ob[o:o + 6 * L].reshape((L, 6))
    o += 6 * L
    out = ob[o:o + 5]
    out[0] = 2.0
    if not _state_in(q, qd, tau, x, n):
        return -2
    out[0] = 1.0
    Ke = _f2(fw, iw, _KE, R, n)
    ke = _f1(fw, iw, _KK, R)
    dl = _f1(fw, iw, _DL, R)
    vJ = _f1(fw, iw, _VJ, R)
    K = Ke[:R]
    k = ke[:R]
    ws = loop_work(n, R)
    loop_geometry(parent, jtype, axis, Et, rt, x[0], lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T,
                  ws, Ke, dl)
    loop_velocity(parent, x[1], lp_p, lp_s, row_loop, ws, ke, vJ)
    kmax = 0.0
    for a in range(R):
        k[a] = k[a] - 2.0 * alpha * vJ[a] - alpha * alpha * dl[a]
        for j in range(n):
            kmax = max(kmax, abs(K[a, j]))
    fresh = explicit_kept(K, k, pref, rtol, kmax, fw, iw)
    if fresh:
        iw[_R + 2] += 1             # the times the set was chosen (the caller re-reads its names)
    if not _certified(K, kmax, rtol, fw, iw):
        if fresh:                   # chosen anew here and still not certain: the readable path decides
            return -1
        iw[_R] = -1                 # the kept set serves but is not certain here: choose anew
        explicit_kept(K, k, pref, rtol, kmax, fw, iw)
        iw[_R + 2] += 1
        if not _certified(K, kmax, rtol, fw, iw):
            return -1
    r = iw[_R]
    nf = n - r
    G = _f2(fw, iw, _G, n, nf)
    g = _f1(fw, iw, _GG, n)
    H = np.zeros((1, n, n))
    C = np.zeros((1, n))
    crba_packed(ib, fb, x[0:1], H, np.int64(0), np.int64(1))
    rnea_packed(ib, fb, x[0:1], x[1:2], np.zeros((1, n)), f_ext, C, np.int64(0), np.int64(1))
    rhs = np.empty(n)
    for j in range(n):
        rhs[j] = x[2, j] - C[0, j]
    if passive:
        for j in range(damping.shape[0]):
            rhs[j] -= damping[j] * x[1, j]
        for j in range(stiffness.shape[0]):
            rhs[j] -= stiffness[j] * (x[0, j] - q_ref[j])
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
    Lc = np.zeros((nf, nf))
    if not _chol(M, Lc):
        return -1
    _chol_solve(Lc, y)
    for i in range(n):
        s = g[i]
        for c in range(nf):
            s += G[i, c] * y[c]
        qdd[i] = s
    f = _f1(fw, iw, _F, n)
    for i in range(n):                      # f = H q̈ − (τ − C) = K ᵀ λ
        s = -rhs[i]
        for j in range(n):
            s += H[0, i, j] * qdd[j]
        f[i] = s
    for a in range(R):
        lam[a] = 0.0
    if R:
        if not _loop_lambda(K, _i1(iw, _ROWS, r), _i1(iw, _DEP, r), _i1(iw, _RED, R - r), f, lam,
                            _f2(fw, iw, _LU, r, r), _i1(iw, _PERM, r), _f2(fw, iw, _C, R - r, r),
                            _f2(fw, iw, _CT, r, R - r), _f2(fw, iw, _MR, r, r), _f2(fw, iw, _LR, r, r),
                            _f1(fw, iw, _NU, r), _f1(fw, iw, _W, max(r, n)), _i1(iw, _NZ, R - r)):
            return -1
    for l in range(L):
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
    out[4] = iw[_R + 2]
    for j in range(n):
        if not np.isfinite(qdd[j]):
            out[0] = 2.0
            return -2
    for a in range(R):
        if not np.isfinite(lam[a]):
            out[0] = 2.0
            return -2
    if out[2] > 1e-6 * out[3]:
        return -1
    out[0] = 0.0
    return r + (iw[_R + 2] << 20)
