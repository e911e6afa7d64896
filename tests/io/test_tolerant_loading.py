"""Tolerant loading, as urdfdom and Pinocchio: what they accept loads here with a located ModelWarning,
``strict=True`` refuses it, and the safe-XML guarantees hold.

Oracle for "Pinocchio loads the file": ``pin.buildModelFromXML`` on the very same text (urdfdom/TinyXML2);
for the repaired inertia: the eigen-decomposition written here (nearest PSD tensor in the Frobenius norm =
negative eigenvalues set to zero) and Pinocchio's H of the raw file, which differs by the clipped amount only.
Transmissions: ROS 2 ``<ros2_control>`` of TIAGo Pro (example-robot-data) and hand-written snippets.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import urdf_dyn as ud

LINK = """<link name="{n}"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
  <inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="{iyy}" iyz="0" izz="0.02"/></inertial></link>"""
ROBOT = """<robot name="r">
<link name="base"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
  <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
{l1}
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
  <limit lower="-2" upper="2" effort="10" velocity="1"/>{mimic}</joint>
{l2}
{extra}
</robot>"""


def robot(ixy=0.0, mimic="", extra="", ixx=0.01, iyy=0.01):
    return ROBOT.format(l1=LINK.format(n="l1", ixx=ixx, iyy=iyy, ixy=ixy),
                        l2=LINK.format(n="l2", ixx=0.01, iyy=0.01, ixy=0.0), mimic=mimic, extra=extra)


def pin_loads(xml):
    pin = pytest.importorskip("pinocchio")
    return pin.buildModelFromXML(xml)


def load_warned(xml, match):
    """Load with strict=False: exactly the expected located ModelWarning(s); return model and messages."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = ud.load(xml)
    msgs = [str(x.message) for x in w if issubclass(x.category, ud.ModelWarning)]
    assert any(re.search(match, m) for m in msgs), msgs
    for m in msgs:
        assert re.match(r"<string>:\d+: ", m), f"warning without a location: {m}"
    return model, msgs


QUIRKS = {
    "xml version 0.0": ('<?xml version="0.0"?>\n' + robot(), "unsupported XML version"),
    "declaration after blank lines": ("\n\n<?xml version=\"1.0\"?>\n" + robot(), "declaration not at the start"),
    "undeclared drake prefix": (robot(extra='<drake:collision_filter_group name="g"><drake:member link="l1"/>'
                                            '</drake:collision_filter_group>'), "undeclared namespace prefix 'drake'"),
    "mimic of a missing joint": (robot(mimic='<mimic joint="nope" multiplier="1"/>'), "names an unknown joint"),
    "mimic of a fixed joint": (robot(mimic='<mimic joint="fx"/>', extra='<joint name="fx" type="fixed"><parent '
                                      'link="l2"/><child link="tip"/></joint><link name="tip"/>'), "fixed joint"),
    "reduction placeholder": (robot(extra='<transmission name="t"><type>SimpleTransmission</type>'
                                          '<joint name="j1"/><actuator name="m"><mechanicalReduction>reduction'
                                          '</mechanicalReduction></actuator></transmission>'), "not a number"),
    "near-PSD inertia": (robot(ixy=0.01 + 3.5e-8), "not positive semi-definite"),
}


@pytest.mark.parametrize("case", list(QUIRKS))
def test_quirk_loads_with_located_warning_and_strict_refuses(case):
    xml, match = QUIRKS[case]
    pin_loads(xml)  # the oracle: urdfdom (through Pinocchio) accepts the file
    model, _ = load_warned(xml, match)
    assert model.nv == 2
    with pytest.raises(ud.ModelError, match=r"^<string>:\d+: ") as ei:
        ud.load(xml, strict=True)
    assert "XML syntax error" in str(ei.value) or "strict=True" in str(ei.value)


def test_declaration_after_a_comment():
    """urdfdom with TinyXML (ROS 1) accepts it; Pinocchio 4.1's TinyXML2 refuses it (checked below). The
    declaration carries nothing a URDF needs, so urdf_dyn accepts it with a warning, and refuses it when strict."""
    xml = "<!-- generated -->\n<?xml version=\"1.0\"?>\n" + robot()
    pin = pytest.importorskip("pinocchio")
    with pytest.raises(ValueError):
        pin.buildModelFromXML(xml)
    assert load_warned(xml, r"^<string>:2: .*declaration not at the start")[0].nv == 2
    with pytest.raises(ud.XMLError, match="^<string>:2: XML syntax error"):
        ud.load(xml, strict=True)


def test_quirk_effects():
    m = load_warned(QUIRKS["mimic of a missing joint"][0], "unknown joint")[0]
    assert m.mimic == ()
    m = load_warned(QUIRKS["mimic of a fixed joint"][0], "fixed joint")[0]
    assert m.mimic == () and ud.loop_constraints(m, np.zeros(2), np.zeros(2))[0].shape == (0, 2)
    m = load_warned(QUIRKS["reduction placeholder"][0], "not a number")[0]
    assert [t.mechanical_reduction for t in m.transmissions] == [1.0]
    m, msgs = load_warned(QUIRKS["near-PSD inertia"][0], "eigenvalues")
    assert any("-3.5" in s for s in msgs)  # the offending eigenvalue is in the message


def test_near_psd_inertia_repaired_to_nearest_psd():
    eps = 3.5e-8
    xml = robot(ixy=0.01 + eps)
    Ic = np.array([[0.01, 0.01 + eps, 0], [0.01 + eps, 0.01, 0], [0, 0, 0.02]])
    ev, V = np.linalg.eigh(Ic)
    assert ev[0] < 0
    Ic_fix = V @ np.diag(np.maximum(ev, 0)) @ V.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        m = ud.load(xml)
        m_ok = ud.load(robot(ixy=0.0).replace('ixy="0.0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link>\n'
                                              '<joint name="j2"', 'ixy="0.0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/>'
                                              '</inertial></link>\n<joint name="j2"'))
    # body 1's rotational inertia about the body origin = Ic_fix + m (c·c 1 − c cᵀ), c = (0.1, 0, 0)
    c = np.array([0.1, 0, 0])
    want = Ic_fix + 1.0 * (c @ c * np.eye(3) - np.outer(c, c))
    assert np.allclose(np.asarray(m.I[1])[:3, :3], want, atol=1e-15)
    assert np.linalg.eigvalsh(ud.mass_matrix(m, np.array([0.3, -0.2]))).min() > 0
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromXML(xml)  # raw tensor: differs from ours by the clipped eigenvalue only
    H = pin.crba(pm, pm.createData(), np.array([0.3, -0.2]))
    H = np.triu(H) + np.triu(H, 1).T
    assert np.abs(H - ud.mass_matrix(m, np.array([0.3, -0.2]))).max() < 2 * eps
    assert m_ok.nv == 2


def test_far_from_psd_is_refused_even_when_lenient():
    with pytest.raises(ud.ModelError, match="not positive semi-definite"):
        ud.load(robot(ixy=0.05))


def test_massless_robot_warns():
    xml = """<robot name="k"><link name="a"/><joint name="j" type="revolute"><parent link="a"/><child link="b"/>
      <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint><link name="b"/></robot>"""
    pin_loads(xml)
    with pytest.warns(ud.ModelWarning, match="no mass"):
        ud.load(xml)


@pytest.mark.parametrize("prefix", ["", "<!-- c -->\n<?xml version=\"1.0\"?>\n", '<?xml version="0.0"?>\n'])
def test_dtd_and_entities_still_refused(prefix):
    bomb = prefix + '<!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>\n' + robot().replace(
        '<robot name="r">', '<robot name="&b;">')
    for strict in (False, True):
        with pytest.raises(ud.XMLError, match="DOCTYPE"):
            ud.load(bomb, strict=strict)


def test_ros2_control_and_ros1_transmissions():
    extra = """<ros2_control name="s" type="system"><hardware><plugin>x</plugin></hardware>
      <joint name="j1"><command_interface name="effort"/><state_interface name="position"/></joint>
      <joint name="j2"><command_interface name="position"/></joint>
      <transmission name="t1"><plugin>transmission_interface/SimpleTransmission</plugin>
        <actuator name="m1" role="actuator1"/>
        <joint name="j1" role="joint1"><mechanical_reduction>101.0</mechanical_reduction></joint>
        <param name="rotor_inertia">2.5e-5</param></transmission>
    </ros2_control>"""
    m = ud.load(robot(extra=extra))
    t = {x.name: x for x in m.transmissions}
    assert t["t1"].mechanical_reduction == 101.0 and t["t1"].joints == ("j1",) and t["t1"].source == "ros2_control"
    assert t["t1"].rotor_inertia == 2.5e-5 and t["t1"].actuator == "m1"
    assert t["j2"].mechanical_reduction == 1.0  # actuated by a command interface, no transmission
    ros1 = """<transmission name="t"><type>transmission_interface/SimpleTransmission</type>
      <joint name="j2"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
      <actuator name="m2" xmlns:drake="http://drake.mit.edu"><mechanicalReduction>62.6</mechanicalReduction>
      <drake:rotor_inertia value="2.0e-4"/></actuator></transmission>"""
    m = ud.load(robot(extra=ros1))
    (t,) = m.transmissions
    assert (t.mechanical_reduction, t.rotor_inertia, t.source, m.actuated_joints) == (62.6, 2.0e-4, "ros1", ("j2",))


def test_tiago_pro_ros2_control_transmissions():
    from test_tree_pinocchio import ERD
    if ERD is None:
        pytest.skip("example-robot-data is not installed")
    path = ERD / "tiago_pro_description" / "robots" / "tiago_pro.urdf"
    xml = path.read_text()
    n_trans = len(re.findall(r"<ros2_control", xml))
    assert n_trans >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        m = ud.load(path)
    # every joint with a <command_interface> in a <ros2_control> block, counted on the text here
    blocks = re.findall(r"<ros2_control.*?</ros2_control>", xml, flags=re.S)
    commanded = set()
    for b in blocks:
        for name, body in re.findall(r'<joint name="([^"]+)"[^>]*>(.*?)</joint>', b, flags=re.S):
            if "<command_interface" in body:
                commanded.add(name)
    assert commanded and set(m.actuated_joints) == commanded
    assert all(t.source == "ros2_control" for t in m.transmissions)
