"""Argument checks shared by the public algorithms: shapes and finiteness of state arrays."""
from __future__ import annotations

import numpy as np

from urdf_dyn.errors import StateError


from urdf_dyn._deprecated import renamed_keywords  # noqa: E402 - the one place of deprecations

__all__ = ["as_batch", "batch_states", "one_state", "renamed_keywords"]


def as_batch(x, name: str, n: int, N=None):
    """Return (array (N, n) float64 C-contiguous, was_single). Accepts (n,) or (N, n).

    Raises StateError naming ``name`` for a wrong shape or a NaN/inf entry."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{name} must be an array of numbers, got {type(x).__name__}") from None
    single = a.ndim == 1
    if single:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != n:
        raise StateError(f"{name} must have shape ({n},) or (N, {n}); got {np.shape(x)}")
    if N is not None and a.shape[0] != N:
        raise StateError(f"{name} has {a.shape[0]} rows but the other arguments have {N}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise StateError(f"{name} holds a non-finite value at index {tuple(int(i) for i in bad)}")
    return np.ascontiguousarray(a), single


def batch_states(model, **arrays):
    """Check several joint-space arrays of one call together: equal batch sizes (or a broadcast single).
    The array named ``q`` has nq columns (positions), every other nv (velocities, accelerations, forces)."""
    out, single, N = {}, True, 1
    for k, v in arrays.items():
        a, s = as_batch(v, k, model.nq if k == "q" else model.nv)
        out[k] = a
        single &= s
        N = max(N, a.shape[0])
    if "q" in out and not model.is_fixed_base:
        _check_quaternions(model, out["q"])
    for k, a in out.items():
        if a.shape[0] != N:
            if a.shape[0] != 1:
                raise StateError(f"{k} has {a.shape[0]} rows but another argument has {N}")
            out[k] = np.ascontiguousarray(np.broadcast_to(a, (N, a.shape[1])))
    return out, single, N


def _check_quaternions(model, Q):
    """StateError naming the joint when a floating or ball joint's quaternion in Q (N, nq) is (nearly) zero."""
    for k, kind, name in model.quaternions:
        norms = np.linalg.norm(Q[:, k:k + 4], axis=1)
        if np.any(norms < 1e-12):
            raise StateError(f"q[{k}:{k + 4}], the quaternion (qx, qy, qz, qw) of {kind} joint {name!r}, is "
                             f"zero at row {int(np.argmax(norms < 1e-12))}: give a unit quaternion (model.neutral() "
                             "has (0, 0, 0, 1))")


def one_state(func: str, **arrays):
    """Refuse a batch where a function evaluates one state: StateError naming ``func`` and the argument
    when any of ``arrays`` has more than one dimension (a silently used first row would be wrong).

    ``None`` entries are skipped. Call at the top of the closed-loop functions that take one state."""
    for name, x in arrays.items():
        if x is None:
            continue
        nd = np.ndim(x)
        if nd > 1:
            raise StateError(f"{func}: {name} must be one state of shape (nv,), got shape {np.shape(x)}; "
                             f"a batch is not evaluated here: call {func} once per row")
