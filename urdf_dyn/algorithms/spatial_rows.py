"""Cross products of batches of vectors, row by row, in plain numpy (RBDA eqs. 2.31 and 2.32 for spatial
vectors): what the machine checks' batched passes over poses use (pins, base reaction, point accelerations,
tip Jacobians). Each product is written out term by term in ``np.cross``'s order (a₁b₂ − a₂b₁,
a₂b₀ − a₀b₂, a₀b₁ − a₁b₀: the same numbers) without its argument handling and axis moves (≈ 10 µs a call).
The single-vector operators (6×6 ``crm``, ``crf``) are ``spatial``'s."""
from __future__ import annotations

import numpy as np

__all__ = ["cross3", "cross_motion", "cross_force"]


def cross3(a, b):
    """a × b (…, 3) of float arrays of one shape."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def cross_motion(v, m):
    """v × m (…, 6) for spatial motion vectors [ω; v] (RBDA eq. 2.31): [ω × m_ω; ω × m_v + v × m_ω]."""
    out = np.empty(np.broadcast_shapes(v.shape, m.shape))
    out[..., :3] = cross3(v[..., :3], m[..., :3])
    out[..., 3:] = cross3(v[..., :3], m[..., 3:]) + cross3(v[..., 3:], m[..., :3])
    return out


def cross_force(v, f):
    """v ×* f (…, 6) for a motion v and a force f [n; f] (RBDA eq. 2.32): [ω × n + v × f; ω × f]."""
    out = np.empty(np.broadcast_shapes(v.shape, f.shape))
    out[..., :3] = cross3(v[..., :3], f[..., :3]) + cross3(v[..., 3:], f[..., 3:])
    out[..., 3:] = cross3(v[..., :3], f[..., 3:])
    return out
