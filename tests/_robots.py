"""Small URDFs written inline for analytic tests, and the paths of the shared real robot descriptions."""
from pathlib import Path


from conftest import ROOT, SHARED, needs_shared  # noqa: F401  (the one lookup of ../shared: conftest.py)
UR5E_XACRO = SHARED / "universal_robot" / "ur_description" / "urdf" / "ur5e.xacro"


def pendulum_urdf(m=2.0, l=0.7, I_c=0.01, axis="0 1 0", damping=0.0, xyz_c=None):
    """A point-ish pendulum: revolute joint about ``axis`` at the base, COM at distance l along -z."""
    c = xyz_c or f"0 0 {-l}"
    return f"""<robot name="pendulum">
  <link name="base"/>
  <link name="bob"><inertial><origin xyz="{c}"/><mass value="{m}"/>
    <inertia ixx="{I_c}" iyy="{I_c}" izz="{I_c}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="bob"/>
    <origin xyz="0 0 1.0"/><axis xyz="{axis}"/><dynamics damping="{damping}"/></joint>
</robot>"""


def slider_urdf(m=3.0):
    """A vertical prismatic joint carrying mass m, with a fixed-joint payload link of 1 kg on top."""
    return f"""<robot name="slider">
  <link name="base"/>
  <link name="carriage"><inertial><mass value="{m}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="payload"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
  <joint name="mount" type="fixed"><parent link="carriage"/><child link="payload"/><origin xyz="0 0 0.5" rpy="0 0 1.0"/></joint>
</robot>"""
