"""Inertials estimated from meshes (``urdf_dyn.io.mesh_inertials``) against closed forms: a solid box's mass
share, centre of mass and m(b² + c²)/12 inertias, placed by its collision origin; an open mesh replaced by
its convex hull and said so. (STL stores float32 vertices: agreement to 1e-6 relative.)"""
import numpy as np
import pytest

from urdf_dyn.errors import ModelError
from urdf_dyn.io.mesh_inertials import add_estimated_inertials, estimate_inertials

trimesh = pytest.importorskip("trimesh")


def _robot(tmp_path):
    trimesh.creation.box(extents=(0.4, 0.2, 0.1)).export(tmp_path / "box.stl")
    open_box = trimesh.creation.box(extents=(0.2, 0.2, 0.2))
    open_box.update_faces(np.arange(len(open_box.faces)) > 1)        # two triangles gone: not watertight
    open_box.export(tmp_path / "open.stl")
    return ('<robot name="r"><link name="a"><collision><origin xyz="1 2 3" rpy="0 0 1.5707963267948966"/>'
            '<geometry><mesh filename="box.stl"/></geometry></collision></link>'
            '<link name="b"><collision><geometry><mesh filename="open.stl"/></geometry></collision></link>'
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>')


def test_box_against_closed_forms(tmp_path):
    text = _robot(tmp_path)
    est, rho = estimate_inertials(text, 100.0, base_dir=tmp_path)
    va, vb = 0.4 * 0.2 * 0.1, 0.2 ** 3                                 # the hull of the open cube is the cube
    assert rho == pytest.approx(100.0 / (va + vb), rel=1e-6)
    a = est["a"]
    m = rho * va
    assert a.mass == pytest.approx(m, rel=1e-6) and a.watertight
    assert np.allclose(a.com, [1, 2, 3], atol=1e-7)
    # turned 90° about z: the 0.4 m side lies along y
    Ixx, Iyy, Izz = m * (0.4 ** 2 + 0.1 ** 2) / 12, m * (0.2 ** 2 + 0.1 ** 2) / 12, m * (0.4 ** 2 + 0.2 ** 2) / 12
    assert np.allclose(a.inertia, np.diag([Ixx, Iyy, Izz]), rtol=1e-6, atol=1e-9 * Izz)
    assert not est["b"].watertight and est["b"].mass == pytest.approx(rho * vb, rel=1e-6)
    out = add_estimated_inertials(text, est)
    assert out.count("<inertial>") == 2 and "not watertight: its convex hull" in out
    with pytest.raises(ModelError, match="expected a positive number of kg"):
        estimate_inertials(text, -1.0, base_dir=tmp_path)
