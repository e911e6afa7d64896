"""SDF reader: a four-bar written as an SDF cycle (one joint written from child to parent, poses in the
model frame) is the same machine as robots/four_bar.urdf (tree + <loop>, written independently): same
mass matrix, bias forces and closed-loop accelerations; errors name the file and line."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.io.sdf import cut_joints

URDF = ROOT / "robots" / "four_bar.urdf"
Q0 = {"crank_joint": 1.0471975511965976, "coupler_joint": -0.6059286678946731, "rocker_joint": 1.3126765347553853}


def four_bar_sdf(version="1.6"):
    """The four-bar of robots/four_bar.urdf at its assembled pose (crank 60°), as an SDF joint graph with a
    cycle. Link frames are rotated about y by minus each bar's absolute angle; the rocker's joint is written
    with the base as its child (axis +y, pose in the base frame); the pin C closes the cycle."""
    a_c, a_k, a_r = Q0["crank_joint"], Q0["crank_joint"] + Q0["coupler_joint"], Q0["rocker_joint"]
    B = (float(0.2 * np.cos(a_c)), float(0.2 * np.sin(a_c)))
    return f"""<?xml version="1.0"?>
<sdf version="{version}">
  <model name="four_bar_sdf">
    <link name="base"/>
    <link name="crank"><pose>0 0 0 0 {-a_c!r} 0</pose>
      <inertial><pose>0.1 0 0 0 0 0</pose><mass>1.0</mass>
        <inertia><ixx>0.0002</ixx><iyy>0.00333333</iyy><izz>0.00333333</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      <visual name="v"><pose>0.1 0 0 0 0 0</pose><geometry><box><size>0.2 0.02 0.02</size></box></geometry></visual>
    </link>
    <link name="coupler"><pose>{B[0]!r} 0 {B[1]!r} 0 {-a_k!r} 0</pose>
      <inertial><pose>0.25 0 0 0 0 0</pose><mass>1.5</mass>
        <inertia><ixx>0.0003</ixx><iyy>0.03125</iyy><izz>0.03125</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
    </link>
    <link name="rocker"><pose>0.45 0 0 0 {-a_r!r} 0</pose>
      <inertial><pose>0.2 0 0 0 0 0</pose><mass>1.2</mass>
        <inertia><ixx>0.00024</ixx><iyy>0.016</iyy><izz>0.016</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
    </link>
    <joint name="to_world" type="fixed"><parent>world</parent><child>base</child></joint>
    <joint name="crank_joint" type="revolute"><parent>base</parent><child>crank</child>
      <axis><xyz>0 -1 0</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis></joint>
    <joint name="coupler_joint" type="continuous"><parent>crank</parent><child>coupler</child>
      <axis><xyz>0 -1 0</xyz></axis></joint>
    <joint name="rocker_joint" type="continuous"><parent>rocker</parent><child>base</child>
      <pose>0.45 0 0 0 0 0</pose><axis><xyz>0 1 0</xyz></axis></joint>
    <joint name="pin_C" type="revolute"><parent>coupler</parent><child>rocker</child>
      <pose>0.4 0 0 0 0 0</pose><axis><xyz>0 -1 0</xyz><limit><lower>-3</lower><upper>3</upper></limit></axis></joint>
  </model>
</sdf>
"""


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    f = tmp_path_factory.mktemp("sdf") / "four_bar.sdf"
    f.write_text(four_bar_sdf())
    return ud.load(f), ud.load(URDF)


def test_cycle_is_cut_at_the_pin(pair):
    sdf, _ = pair
    assert cut_joints(sdf) == ("pin_C",)
    assert sdf.loops[0].type == "revolute" and sdf.loops[0].lower == -3
    assert set(sdf.joint_names) == set(Q0)
    assert ud.mobility(sdf, sdf.q_initial()).dof == 1


def test_same_dynamics_as_the_urdf(pair):
    """q_sdf = q_urdf − q_assembled (SDF poses are written at the assembled pose); the reversed rocker joint
    keeps the SDF sign convention, which here equals the URDF's."""
    sdf, urdf = pair
    order = [urdf.joint_index(n) for n in sdf.joint_names]
    q0 = np.array([Q0[n] for n in sdf.joint_names])
    rng = np.random.default_rng(0)
    for _ in range(3):
        dq, qd = rng.normal(size=3) * 0.5, rng.normal(size=3)
        qu, qdu = np.zeros(3), np.zeros(3)
        qu[order], qdu[order] = q0 + dq, qd
        Hs, Hu = ud.mass_matrix(sdf, dq), ud.mass_matrix(urdf, qu)[np.ix_(order, order)]
        np.testing.assert_allclose(Hs, Hu, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ud.bias_force(sdf, dq, qd), ud.bias_force(urdf, qu, qdu)[order], rtol=0, atol=1e-12)
    # closed loop: the assembled state, a consistent velocity, a torque
    qd = ud.project_velocity(sdf, np.zeros(3), np.array([1.0, 0.0, 0.0]))
    qdu = np.zeros(3)
    qdu[order] = qd
    tau = np.array([0.7, -0.2, 0.1])
    tau_u = np.zeros(3)
    tau_u[order] = tau
    a = ud.constrained_forward_dynamics(sdf, np.zeros(3), qd, tau).qdd
    b = ud.constrained_forward_dynamics(urdf, urdf.q_initial(), qdu, tau_u).qdd[order]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    fk_s = ud.forward_kinematics(sdf, np.zeros(3))
    fk_u = ud.forward_kinematics(urdf, urdf.q_initial())
    for link in ("crank", "coupler", "rocker"):  # SDF link frames stay the links' frames
        np.testing.assert_allclose(fk_s[link], fk_u[link], atol=1e-12)


def _pendulum_sdf(version, axis_xyz, extra=""):
    return f"""<sdf version="{version}"><model name="p">
  <link name="base"/>
  <link name="bob"><pose>0 0 1 0 0 0.7</pose>
    <inertial><pose>0 0.3 -0.2 0 0 0</pose><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.02</iyy><izz>0.03</izz></inertia></inertial></link>
  <joint name="j" type="revolute"><parent>base</parent><child>bob</child>
    <axis><xyz{extra}>{axis_xyz}</xyz></axis></joint>
</model></sdf>"""


@pytest.mark.parametrize("version, axis, extra", [
    ("1.4", f"{float(np.cos(0.7))!r} {float(np.sin(0.7))!r} 0", ""),                       # 1.4: model frame
    ("1.9", f"{float(np.cos(0.7))!r} {float(np.sin(0.7))!r} 0", ' expressed_in="__model__"'),
])
def test_axis_frames(version, axis, extra):
    """A link turned 0.7 rad about z: its x axis written in the model frame (SDF 1.4, expressed_in) is the
    joint-frame axis 1 0 0 of SDF 1.6; gravity torques agree with the hand value m g (c × a)·(−z)."""
    ref = ud.load(_pendulum_sdf("1.6", "1 0 0"))
    m = ud.load(_pendulum_sdf(version, axis, extra))  # SDF text: load() dispatches by the root element
    for q in (0.0, 0.4, -1.1):
        np.testing.assert_allclose(ud.gravity_torques(m, [q]), ud.gravity_torques(ref, [q]), atol=1e-13)
    # hand: COM in the link frame (0, 0.3, -0.2), axis x of the link: torque of gravity about x at q = 0
    assert ud.gravity_torques(ref, [0.0])[0] == pytest.approx(2 * 9.81 * 0.3, rel=1e-12)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("<child>coupler</child>", "<child>nope</child>"), r"four_bar\.sdf:\d+: .*unknown child link 'nope'"),
    (lambda s: s.replace('type="continuous"><parent>crank', 'type="revolute2"><parent>crank'),
     r"four_bar\.sdf:\d+: <joint name=\"coupler_joint\">: joint type 'revolute2' is not supported"),
    (lambda s: s.replace("<mass>1.5</mass>", "<mass>heavy</mass>"), r"four_bar\.sdf:\d+: .*not a number"),
    (lambda s: s.replace("</model>", "<link name=\"loose\"/></model>"), r"link 'loose' is not connected"),
    (lambda s: s.replace("<link name=\"base\"/>", "<link name=\"base\">"), r"four_bar\.sdf:\d+: XML syntax error"),
])
def test_errors_name_file_line_and_element(tmp_path, edit, message):
    f = tmp_path / "four_bar.sdf"
    f.write_text(edit(four_bar_sdf()))
    with pytest.raises(ud.ModelError, match=message):
        ud.load(f)


def test_malformed_declaration_is_blanked(tmp_path):
    f = tmp_path / "decl.sdf"
    f.write_text('<? xml version="1.0" ?>\n' + four_bar_sdf().split("\n", 1)[1])
    assert cut_joints(ud.load(f)) == ("pin_C",)


def test_cli_info_reads_sdf(capsys):
    from urdf_dyn.cli import main
    assert main(["info", str(ROOT / "robots" / "stewart.sdf")]) == 0
    out = capsys.readouterr().out
    assert "top_ball2_joint" in out


GEARBOX_SDF = """<?xml version="1.0"?>
<sdf version="1.6"><model name="geared">
  <link name="base"><inertial><mass>5</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
  <link name="motor"><pose>0 0 0.1 0 0 0</pose><inertial><mass>0.3</mass>
    <inertia><ixx>1e-3</ixx><iyy>1e-3</iyy><izz>2e-3</izz></inertia></inertial></link>
  <link name="output"><pose>0.2 0 0 0 0 0</pose><inertial><pose>0.3 0 0 0 0 0</pose><mass>2</mass>
    <inertia><ixx>0.01</ixx><iyy>0.05</iyy><izz>0.05</izz></inertia></inertial></link>
  <joint name="world_fix" type="fixed"><parent>world</parent><child>base</child></joint>
  <joint name="ip" type="revolute"><parent>base</parent><child>motor</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis></joint>
  <joint name="op" type="revolute"><parent>base</parent><child>output</child>
    <axis><xyz>0 0 -1</xyz><limit><lower>-2</lower><upper>2</upper></limit></axis></joint>
  <joint name="gear" type="gearbox"><parent>motor</parent><child>output</child>
    <gearbox_reference_body>base</gearbox_reference_body><gearbox_ratio>0.25</gearbox_ratio>
    <axis><xyz>0 0 1</xyz></axis><axis2><xyz>0 0 1</xyz></axis2></joint>
</model></sdf>"""


def _angle_about_z(T_ref, T):
    R = np.linalg.inv(T_ref)[:3, :3] @ T[:3, :3]
    return float(np.arctan2(R[1, 0], R[0, 0]))


def test_gearbox_joint_is_a_coupling_with_the_sdformat_sign():
    """SDFormat: θ_2 = −gearbox_ratio · θ_1, θ_1 (θ_2) the angle of the parent (child) link from the reference
    body about axis (axis2). Checked by forward kinematics on configurations the coupling admits: the output
    joint's axis is −z here, so the coupling must read q_op = +0.25 q_ip."""
    m = ud.load(GEARBOX_SDF)
    (c,) = m.couplings
    assert c.name == "gear"
    q = np.zeros(m.nq)
    for theta_1 in (0.4, -1.3):
        ec = ud.explicit_constraint(m, q, np.zeros(m.nv))
        y = np.zeros(ec.G.shape[1])
        y[0] = theta_1 / ec.G[m.joint_index("ip"), 0]
        qc = ec.G @ y                                   # a motion the coupling admits, from q = 0
        fk = ud.forward_kinematics(m, qc)
        th1 = _angle_about_z(fk["base"], fk["motor"])
        th2 = _angle_about_z(fk["base"], fk["output"])
        assert th1 == pytest.approx(theta_1, abs=1e-12)
        assert th2 == pytest.approx(-0.25 * th1, abs=1e-12)
    # the reflected inertia: the motor's 2e-3 kg m² seen at the output through the 1:4 gear adds 16 × 2e-3
    H = ud.mass_matrix(m, np.zeros(m.nq))
    G = ud.explicit_constraint(m, np.zeros(m.nq), np.zeros(m.nv)).G
    Gi = G / G[m.joint_index("op"), 0]                  # per unit output rotation
    out_alone = H[m.joint_index("op"), m.joint_index("op")]
    assert float(Gi[:, 0] @ H @ Gi[:, 0]) == pytest.approx(out_alone + 16 * 2e-3, rel=1e-12)


def test_gearbox_needs_joints_on_the_reference_body():
    bad = GEARBOX_SDF.replace("<gearbox_reference_body>base</gearbox_reference_body>",
                              "<gearbox_reference_body>motor</gearbox_reference_body>")
    with pytest.raises(ud.UnsupportedError, match=r"<string>:\d+: .*gear.*must hang on the reference body"):
        ud.load(bad)
