"""The compiled entry points the tree functions call from Python (``dynamics.py``), on the packed model.

A call from Python into numba costs, before any dynamics, the dispatcher's typing of every argument and the
unboxing of each array (measured here: an empty kernel of 6 arrays 0.79 µs through the dispatcher, 0.24 µs
through its compiled entry point). So:

- the model is packed once per Model into two flat arrays (``Model.kernel_pack``, ``_kernels.pack``: the
  tree in the kernels' frames, q indices, rigid-body inertias), so that a single state passes six arrays
  (model, state, result; the work arrays are separate arrays handed to the loops, which are compiled
  without numba's reference counting: ``_kernels`` module docstring);
- each entry is compiled for one explicit signature, lazily on first use (or loaded from numba's cache), and
  called through the compiled function ``Dispatcher.compile(signature)`` returns, which unboxes its
  arguments without typing them. That function trusts its caller: ``dynamics.py`` calls it only with
  float64 arrays of the right dimensions (the plain-array fast path or ``batch_states``). State arrays are
  typed with any layout ('A'), so one compiled variant of each algorithm serves one state (a row view of
  it), a batch and every core; results are C-contiguous.

Single-state entries (``rnea1``, ``aba1``, ``crba1``) take 1-D arrays and the result array (allocated in
Python: returning an array from numba costs 0.36 µs, np.empty 0.13 µs) and return a status for a wrong
size, a non-finite input or result (the caller's checking path then explains: the caller checks only
what unboxing trusts, the class, dtype and number of dimensions). They call the algorithms' cores
(``_kernels``' ``*_w``) on work arrays in their own stack frame (``_stack``), not through the shells, which
allocate them: the 11 arrays of RNEA, 3 of CRBA and 20 of ABA cost 0.15, 0.1 and 0.6 µs of a UR5 call
(measured: ``rnea1`` 1.04 → 0.82 µs, ``crba1`` 0.74 → 0.62, ``aba1`` 2.28 → 1.67); batch entries (``rnea``, ``crba``,
``aba``) split large batches over the cores (numba ``prange`` over chunks, each with its own work arrays).
The algorithms are in ``_kernels.py``.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from urdf_dyn.numba_cache import install as _portable_cache
from numba import types as nt

from urdf_dyn.algorithms._kernels import (_IQ, _JT, NI, _aba_p, _aba_p_w, _c_strides, _crba_p_w, _rnea_p_w, crba_packed,
                                          rnea_packed)
from urdf_dyn.algorithms._kernels import pack as _pack
from urdf_dyn.algorithms.joints import nq_of

__all__ = ["pack", "STACK_BODIES", "rnea1", "aba1", "crba1", "rnea", "crba", "aba", "PARALLEL_MIN_BATCH", "entry_point"]


def pack(parent, jtype, axis, X_tree, I, a0, armature):
    """(ib, fb) of ``_kernels.pack`` from a Model's arrays (called once per Model by ``Model.kernel_pack``)."""
    return _pack(np.ascontiguousarray(parent, np.int64), np.ascontiguousarray(jtype, np.int64),
                 np.ascontiguousarray(axis, float), np.ascontiguousarray(X_tree, float),
                 np.ascontiguousarray(I, float), np.ascontiguousarray(a0, float),
                 np.ascontiguousarray(armature, float))


_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

@njit(cache=True)
def _finite(x):
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return False
    return True


#: single-state entries keep their work arrays on the stack up to this many bodies (``_stack``: at most
#: (86 n + 132) float64 = 89 kB for ABA's, well within a thread's default stack: 8 MB on Linux, 512 kB for
#: macOS's secondary threads, 1 MB on Windows); larger models use the kernels' shells, which allocate them
STACK_BODIES = 128


@intrinsic
def _stack(typingctx, shape):
    """An uninitialised C-contiguous float64 array of ``shape`` (an int or a tuple of ints) in the stack frame
    of the function that calls it (LLVM ``alloca``): nothing allocated on the heap, no reference count (its
    meminfo is null), and gone when that function returns. So it is called only in an entry itself, never
    in a helper that returns it, for work arrays that are never returned; the entries keep its size bounded
    (``STACK_BODIES``)."""
    if isinstance(shape, nt.Integer):
        dims_t = (shape,)
    elif isinstance(shape, nt.UniTuple) and isinstance(shape.dtype, nt.Integer):
        dims_t = (shape.dtype,) * shape.count
    else:
        return None
    aryty = nt.Array(nt.float64, len(dims_t), "C")

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(nt.intp)
        vals = [args[0]] if isinstance(shape, nt.Integer) else cgutils.unpack_tuple(builder, args[0])
        dims = [context.cast(builder, v, t, nt.intp) for v, t in zip(vals, dims_t)]
        size = intp(1)
        for d in dims:
            size = builder.mul(size, d)
        data = builder.alloca(context.get_data_type(nt.float64), size=size)
        ary = make_array(aryty)(context, builder)
        populate_array(ary, data=data, shape=dims, strides=_c_strides(builder, dims, intp(8)), itemsize=intp(8),
                       meminfo=None)
        return ary._getvalue()
    return aryty(shape), codegen


@njit(cache=True, inline="always")
def _sizes_ok(ib, nq_, nv1, nv2):
    """True when nq_ is the model's nq and nv1, nv2 its nv = NB (the packed model's last body with a position
    coordinate ends q; ``joints.q_indices``)."""
    n_ = ib.shape[0] // NI
    if nv1 != n_ - 1 or nv2 != n_ - 1:
        return False
    nq = 0
    for i in range(n_ - 1, 0, -1):
        if ib[_IQ * n_ + i] >= 0:
            nq = ib[_IQ * n_ + i] + nq_of(ib[_JT * n_ + i])
            break
    return nq_ == nq


@njit(cache=True)
def _rnea1(ib, fb, q, qd, qdd, tau):
    """τ (nv,) of one state, no external force, into tau; status 0, or 1 for a non-finite input, 2 for a
    non-finite result, 3 for arrays of the wrong size (the caller's checking path explains). q (nq,); qd,
    qdd (nv,); tau (nv,). The work arrays are on the stack (``_stack``) for models of ≤ STACK_BODIES bodies."""
    if not _sizes_ok(ib, q.shape[0], qd.shape[0], qdd.shape[0]):
        return 3
    if not (_finite(q) and _finite(qd) and _finite(qdd)):
        return 1
    n_ = ib.shape[0] // NI
    if n_ <= STACK_BODIES:
        _rnea_p_w(ib, fb, q[None, :], qd[None, :], qdd[None, :], _stack((0, n_, 6)), tau[None], np.int64(0),
                  np.int64(1), _stack((n_, 3, 3)), _stack((n_, 3)), _stack((n_, 6)), _stack((n_, 6)),
                  _stack((n_, 6)), _stack((n_, 6)), _stack(6), _stack(6), _stack(6))
    else:
        rnea_packed(ib, fb, q[None, :], qd[None, :], qdd[None, :], np.zeros((0, n_, 6)), tau[None],
                    np.int64(0), np.int64(1))
    return 0 if _finite(tau) else 2


@njit(cache=True)
def _aba1(ib, fb, q, qd, tau, qdd):
    """q̈ (nv,) of one state, no external force, into qdd; status as ``_rnea1``."""
    if not _sizes_ok(ib, q.shape[0], qd.shape[0], tau.shape[0]):
        return 3
    if not (_finite(q) and _finite(qd) and _finite(tau)):
        return 1
    n_ = ib.shape[0] // NI
    if n_ <= STACK_BODIES:
        _aba_p_w(ib, fb, q[None, :], qd[None, :], tau[None, :], _stack((0, n_, 6)), qdd[None], np.int64(0),
                 np.int64(1), _stack((n_, 3, 3)), _stack((n_, 3)), _stack((n_, 6)), _stack((n_, 6)),
                 _stack((n_, 6, 6)), _stack((n_, 6)), _stack((n_, 6)), _stack(n_), _stack(n_), _stack((n_, 6)),
                 _stack((n_, 6)), _stack((6, 6)), _stack(6), _stack(6), _stack(6), _stack(6), _stack((6, 6)),
                 _stack((6, 6)))
    else:
        _aba_p(ib, fb, q[None, :], qd[None, :], tau[None, :], np.zeros((0, n_, 6)), qdd[None], np.int64(0),
               np.int64(1))
    return 0 if _finite(qdd) else 2


@njit(cache=True)
def _crba1(ib, fb, q, H):
    """H (nv, nv) of one state into H, which must be zero on entry; status as ``_rnea1``."""
    if not _sizes_ok(ib, q.shape[0], H.shape[0], H.shape[1]):
        return 3
    if not _finite(q):
        return 1
    n_ = ib.shape[0] // NI
    if n_ <= STACK_BODIES:
        _crba_p_w(ib, fb, q[None, :], H[None], np.int64(0), np.int64(1), _stack((2 * n_, 3, 3)),
                  _stack((2 * n_, 3)), _stack(n_))
    else:
        crba_packed(ib, fb, q[None, :], H[None], np.int64(0), np.int64(1))
    for i in range(H.shape[0]):         # indexed, not by row views (each costs a reference count)
        for j in range(i + 1):
            if not np.isfinite(H[i, j]):
                return 2
    return 0


@njit(cache=True)
def _rnea_n(ib, fb, q, qd, qdd, f_ext):
    N = q.shape[0]
    tau = np.empty((N, qd.shape[1]))
    rnea_packed(ib, fb, q, qd, qdd, f_ext, tau, np.int64(0), N)
    return tau


@njit(cache=True)
def _crba_n(ib, fb, q):
    N, nv = q.shape[0], ib.shape[0] // NI - 1
    H = np.zeros((N, nv, nv))
    crba_packed(ib, fb, q, H, np.int64(0), N)
    return H


@njit(cache=True)
def _aba_n(ib, fb, q, qd, tau, f_ext):
    N = q.shape[0]
    qdd = np.empty((N, qd.shape[1]))
    _aba_p(ib, fb, q, qd, tau, f_ext, qdd, np.int64(0), N)
    return qdd


@njit(cache=True, parallel=True)
def _rnea_par(ib, fb, q, qd, qdd, f_ext, chunks):
    N = q.shape[0]
    tau = np.empty((N, qd.shape[1]))
    for c in prange(chunks):
        rnea_packed(ib, fb, q, qd, qdd, f_ext, tau, c * N // chunks,
                (c + 1) * N // chunks)
    return tau


@njit(cache=True, parallel=True)
def _crba_par(ib, fb, q, chunks):
    N, nv = q.shape[0], ib.shape[0] // NI - 1
    H = np.zeros((N, nv, nv))
    for c in prange(chunks):
        crba_packed(ib, fb, q, H, c * N // chunks, (c + 1) * N // chunks)
    return H


@njit(cache=True, parallel=True)
def _aba_par(ib, fb, q, qd, tau, f_ext, chunks):
    N = q.shape[0]
    qdd = np.empty((N, qd.shape[1]))
    for c in prange(chunks):
        _aba_p(ib, fb, q, qd, tau, f_ext, qdd, c * N // chunks,
               (c + 1) * N // chunks)
    return qdd


# ---------------------------------------------------------------------------------------------------------
# explicit signatures, compiled on first use
# ---------------------------------------------------------------------------------------------------------
_IB = nt.Array(nt.int64, 1, "C")     # the packed model is frozen; the kernels never write it
_FB = nt.Array(nt.float64, 1, "C")
_V1 = nt.Array(nt.float64, 1, "A")   # one state, any layout
_V2 = nt.Array(nt.float64, 2, "A")   # a batch of states, any layout
_F3 = nt.Array(nt.float64, 3, "C")   # external forces (Nf, NB+1, 6)
_O1 = nt.Array(nt.float64, 1, "C")   # a single state's result, allocated by the caller
_O2 = nt.Array(nt.float64, 2, "C")
_SIGNATURES = {
    "rnea1": (_rnea1, (_IB, _FB, _V1, _V1, _V1, _O1)),
    "aba1": (_aba1, (_IB, _FB, _V1, _V1, _V1, _O1)),
    "crba1": (_crba1, (_IB, _FB, _V1, _O2)),
    "_rnea_n": (_rnea_n, (_IB, _FB, _V2, _V2, _V2, _F3)),
    "_crba_n": (_crba_n, (_IB, _FB, _V2)),
    "_aba_n": (_aba_n, (_IB, _FB, _V2, _V2, _V2, _F3)),
    "_rnea_par": (_rnea_par, (_IB, _FB, _V2, _V2, _V2, _F3, nt.int64)),
    "_crba_par": (_crba_par, (_IB, _FB, _V2, nt.int64)),
    "_aba_par": (_aba_par, (_IB, _FB, _V2, _V2, _V2, _F3, nt.int64)),
}


def compiled(name):
    """The compiled function of entry ``name`` for its signature: what numba's ``Dispatcher.compile`` returns
    (the overload's entry point, which unboxes its arguments without the dispatcher's typing), or the
    dispatcher itself if that is not a callable (another numba version)."""
    disp, sig = _SIGNATURES[name]
    f = disp.compile(sig)
    return f if callable(f) else disp


_COMPILED = {}


def entry_point(dispatcher, args):
    """The compiled function of ``dispatcher`` for the types of ``args`` (compiled or loaded from the cache on
    first use): a caller that makes the same call many times (a ``Data`` workspace's single-state call)
    keeps it and skips the dispatcher's typing of every argument (≈ 0.1 µs an argument; 15 µs for the 34
    of ``actuation_path``). The caller must then pass arguments of exactly these types."""
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    f = dispatcher.overloads.get(sig)
    if f is None:
        dispatcher.compile(sig)
        f = dispatcher.overloads[sig]
    return f.entry_point


def _get(name):
    f = _COMPILED.get(name)
    if f is None:
        f = _COMPILED[name] = compiled(name)
    return f


def _lazy(name):
    """A module-level stand-in that compiles entry ``name`` on its first call and puts the compiled function
    in its place, so that later calls (``K.rnea1(...)``) go straight to it."""
    def first_call(*args):
        f = _get(name)
        globals()[name] = f
        return f(*args)
    first_call.__name__ = name
    return first_call


rnea1 = _lazy("rnea1")
aba1 = _lazy("aba1")
crba1 = _lazy("crba1")

#: batches at least this large are split over the CPU cores (numba prange over chunks)
PARALLEL_MIN_BATCH = 512


def _chunks(N):
    import numba
    return 4 * numba.get_num_threads() if N >= PARALLEL_MIN_BATCH else 0


def rnea(ib, fb, q, qd, qdd, f_ext):
    """τ (N, nv) by RNEA (Table 5.1) over a batch on ``Model.kernel_pack``: q (N, nq), qd, qdd (N, nv) float64,
    f_ext (Nf, NB+1, 6) C-contiguous (Nf = 0, 1 or N). Large batches run on every core."""
    c = _chunks(q.shape[0])
    if c:
        return _get("_rnea_par")(ib, fb, q, qd, qdd, f_ext, c)
    return _get("_rnea_n")(ib, fb, q, qd, qdd, f_ext)


def crba(ib, fb, q):
    """H (N, nv, nv) by CRBA (Table 6.2) over a batch; large batches run on every core."""
    c = _chunks(q.shape[0])
    if c:
        return _get("_crba_par")(ib, fb, q, c)
    return _get("_crba_n")(ib, fb, q)


def aba(ib, fb, q, qd, tau, f_ext):
    """q̈ (N, nv) by ABA (Table 7.1) over a batch; large batches run on every core. Raises ZeroDivisionError
    for a zero articulated inertia."""
    c = _chunks(q.shape[0])
    if c:
        return _get("_aba_par")(ib, fb, q, qd, tau, f_ext, c)
    return _get("_aba_n")(ib, fb, q, qd, tau, f_ext)
