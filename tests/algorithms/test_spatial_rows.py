"""The row-wise cross products of the machine checks (``urdf_dyn.algorithms.spatial_rows``)."""
from __future__ import annotations

import numpy as np

from urdf_dyn.algorithms.spatial import crf, crm
from urdf_dyn.algorithms.spatial_rows import cross3, cross_force, cross_motion


def test_the_cross_products_are_numpys():
    """The motion and force cross products (RBDA eqs. 2.31, 2.32) take numpy.cross's numbers to the bit."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 50, 13, 6)) * 10.0 ** rng.integers(-3, 4, (2, 50, 13, 6))
    assert np.array_equal(cross3(a[..., :3], b[..., :3]), np.cross(a[..., :3], b[..., :3]))
    want_m = np.concatenate([np.cross(a[..., :3], b[..., :3]),
                             np.cross(a[..., :3], b[..., 3:]) + np.cross(a[..., 3:], b[..., :3])], axis=-1)
    want_f = np.concatenate([np.cross(a[..., :3], b[..., :3]) + np.cross(a[..., 3:], b[..., 3:]),
                             np.cross(a[..., :3], b[..., 3:])], axis=-1)
    assert np.array_equal(cross_motion(a, b), want_m) and np.array_equal(cross_force(a, b), want_f)


def test_they_are_rbdas_operators_row_by_row():
    """v × m = crm(v) m and v ×* f = crf(v) f (RBDA eqs. 2.31, 2.32: the 6×6 operators, an independent form)."""
    rng = np.random.default_rng(3)
    v, m = rng.standard_normal((2, 20, 6))
    assert np.allclose(cross_motion(v, m), [crm(x) @ y for x, y in zip(v, m)], rtol=0, atol=1e-12)
    assert np.allclose(cross_force(v, m), [crf(x) @ y for x, y in zip(v, m)], rtol=0, atol=1e-12)
    assert np.allclose(cross3(v[:, :3], m[:, :3]), cross_motion(v, m)[:, :3], rtol=0, atol=0)
