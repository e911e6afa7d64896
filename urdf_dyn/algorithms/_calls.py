"""The compiled entry points the tree functions call from Python (``dynamics.py``), on the packed model.

A call from Python into numba type-checks every argument; the model's arrays are therefore packed once per
Model into two flat arrays (``Model.kernel_pack``: ints and floats, with the tree transforms, motion
subspaces, q indices and rigid-body inertias precomputed) and unpacked as views inside the compiled code.
Single-state entries (``rnea1``, ``aba1``, ``crba1``) take 1-D arrays and report non-finite inputs or results
by a status code; batch entries split large batches over the cores (numba ``prange`` over chunks). The
algorithms themselves are in ``_kernels.py``.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from urdf_dyn.algorithms._kernels import _aba_c, _crba_c, _rigid_body_form, _rnea_c, _split_tree, _subspaces
from urdf_dyn.algorithms.joints import q_indices

__all__ = ["pack", "rnea1", "aba1", "crba1", "rnea", "crba", "aba", "PARALLEL_MIN_BATCH"]


@njit(cache=True, inline="always")
def _unpack(ib, fb):
    """The model arrays packed by ``Model.kernel_pack`` (two flat arrays, so that a call from Python type-checks
    two arguments instead of nine): ib = [parent | jtype | iq], fb = [axis | E_tree | r_tree | S | I | a0 | m |
    h | Ī]."""
    n = ib.shape[0] // 3
    parent, jtype, iq = ib[:n], ib[n:2 * n], ib[2 * n:]
    o = 0
    axis = fb[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    Et = fb[o:o + 9 * n].reshape((n, 3, 3))
    o += 9 * n
    rt = fb[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    S = fb[o:o + 6 * n].reshape((n, 6))
    o += 6 * n
    I = fb[o:o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    a0 = fb[o:o + 6]
    o += 6
    mI = fb[o:o + n]
    o += n
    hI = fb[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    JI = fb[o:o + 9 * n].reshape((n, 3, 3))
    return parent, jtype, iq, axis, Et, rt, S, I, a0, mI, hI, JI


def pack(parent, jtype, axis, X_tree, I, a0):
    """(ib, fb) for ``_unpack`` (called once per Model by ``Model.kernel_pack``)."""
    jtype = np.ascontiguousarray(jtype, np.int64)
    Et, rt = _split_tree(np.ascontiguousarray(X_tree, float))
    ib = np.concatenate([np.asarray(parent, np.int64), jtype, q_indices(jtype)])
    axis = np.ascontiguousarray(axis, float)
    I = np.ascontiguousarray(I, float)
    mI, hI, JI = _rigid_body_form(I)
    fb = np.concatenate([axis.ravel(), Et.ravel(), rt.ravel(), _subspaces(jtype, axis).ravel(),
                         I.ravel(), np.asarray(a0, float).ravel(), mI, hI.ravel(), JI.ravel()])
    return ib, fb


@njit(cache=True)
def _rnea_p(ib, fb, q, qd, qdd, f_ext, tau, n0, n1):
    parent, jtype, iq, axis, Et, rt, S, I, a0, mI, hI, JI = _unpack(ib, fb)
    _rnea_c(parent, jtype, iq, axis, Et, rt, S, mI, hI, JI, a0, q, qd, qdd, f_ext, tau, n0, n1)


@njit(cache=True)
def _crba_p(ib, fb, q, H, n0, n1):
    parent, jtype, iq, axis, Et, rt, S, I, a0, mI, hI, JI = _unpack(ib, fb)
    _crba_c(parent, jtype, iq, axis, Et, rt, S, I, q, H, n0, n1)


@njit(cache=True)
def _aba_p(ib, fb, q, qd, tau, f_ext, qdd, n0, n1):
    parent, jtype, iq, axis, Et, rt, S, I, a0, mI, hI, JI = _unpack(ib, fb)
    _aba_c(parent, jtype, iq, axis, Et, rt, S, I, a0, q, qd, tau, f_ext, qdd, n0, n1)


@njit(cache=True)
def _finite(x):
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return False
    return True


@njit(cache=True)
def rnea1(ib, fb, q, qd, qdd, tau):
    """One state, no external force, with status: 0 ok, 1 non-finite input, 2 non-finite result (the caller
    explains). q (nq,); qd, qdd, tau (nv,), all C-contiguous."""
    if not (_finite(q) and _finite(qd) and _finite(qdd)):
        return 1
    nv = qd.shape[0]
    _rnea_p(ib, fb, q.reshape((1, q.shape[0])), qd.reshape((1, nv)), qdd.reshape((1, nv)),
            np.zeros((0, ib.shape[0] // 3, 6)), tau.reshape((1, nv)), 0, 1)
    return 0 if _finite(tau) else 2


@njit(cache=True)
def aba1(ib, fb, q, qd, tau, qdd):
    """One state with status, as rnea1."""
    if not (_finite(q) and _finite(qd) and _finite(tau)):
        return 1
    nv = qd.shape[0]
    _aba_p(ib, fb, q.reshape((1, q.shape[0])), qd.reshape((1, nv)), tau.reshape((1, nv)),
           np.zeros((0, ib.shape[0] // 3, 6)), qdd.reshape((1, nv)), 0, 1)
    return 0 if _finite(qdd) else 2


@njit(cache=True)
def crba1(ib, fb, q, H):
    """One state with status, as rnea1. H (nv, nv)."""
    if not _finite(q):
        return 1
    nv = H.shape[0]
    _crba_p(ib, fb, q.reshape((1, q.shape[0])), H.reshape((1, nv, nv)), 0, 1)
    for i in range(nv):
        for j in range(nv):
            if not np.isfinite(H[i, j]):
                return 2
    return 0


#: batches at least this large are split over the CPU cores (numba prange over chunks)
PARALLEL_MIN_BATCH = 512


@njit(cache=True, parallel=True)
def _rnea_par(ib, fb, q, qd, qdd, f_ext, tau, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _rnea_p(ib, fb, q, qd, qdd, f_ext, tau, c * N // chunks, (c + 1) * N // chunks)


@njit(cache=True, parallel=True)
def _crba_par(ib, fb, q, H, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _crba_p(ib, fb, q, H, c * N // chunks, (c + 1) * N // chunks)


@njit(cache=True, parallel=True)
def _aba_par(ib, fb, q, qd, tau, f_ext, qdd, chunks):
    N = q.shape[0]
    for c in prange(chunks):
        _aba_p(ib, fb, q, qd, tau, f_ext, qdd, c * N // chunks, (c + 1) * N // chunks)


def _chunks(N):
    import numba
    return 4 * numba.get_num_threads() if N >= PARALLEL_MIN_BATCH else 0


def rnea(ib, fb, q, qd, qdd, f_ext, tau):
    """RNEA over a batch (Table 5.1) on ``Model.kernel_pack``; large batches run on every core. Writes tau
    (N, nv)."""
    c = _chunks(q.shape[0])
    if c:
        _rnea_par(ib, fb, q, qd, qdd, f_ext, tau, c)
    else:
        _rnea_p(ib, fb, q, qd, qdd, f_ext, tau, 0, q.shape[0])


def crba(ib, fb, q, H):
    """CRBA over a batch (Table 6.2); large batches run on every core. Writes H (N, nv, nv)."""
    c = _chunks(q.shape[0])
    if c:
        _crba_par(ib, fb, q, H, c)
    else:
        _crba_p(ib, fb, q, H, 0, q.shape[0])


def aba(ib, fb, q, qd, tau, f_ext, qdd):
    """ABA over a batch (Table 7.1); large batches run on every core. Writes qdd (N, nv)."""
    c = _chunks(q.shape[0])
    if c:
        _aba_par(ib, fb, q, qd, tau, f_ext, qdd, c)
    else:
        _aba_p(ib, fb, q, qd, tau, f_ext, qdd, 0, q.shape[0])
