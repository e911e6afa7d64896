"""A visual that cannot be drawn (a mesh with a NaN vertex) is named as such, with the mesh file (not the robot
file, which is not at fault), and not blamed on missing EGL libraries: the command a user types, exit status
2, one line."""
import subprocess
import sys

from viewerkit import env   # noqa: F401  (makes urdf_dyn_viewer importable; requires the viewer's packages)

URDF = """<robot name="nanmesh">
  <link name="base"/>
  <link name="l1"><visual><geometry><mesh filename="bad.obj"/></geometry></visual>
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_nan_mesh_vertex_is_named_not_blamed_on_egl(tmp_path):
    (tmp_path / "bad.obj").write_text("v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n")
    (tmp_path / "r.urdf").write_text(URDF)
    r = subprocess.run([sys.executable, "-m", "urdf_dyn.cli", "view", "r.urdf", "--out", "x.png"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, env=env())
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.obj: vertex 3 is (nan, 1.0, 0.0), not finite" in lines[0], r.stderr
    assert "r.urdf" not in lines[0]
    assert "libegl" not in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "x.png").exists()
