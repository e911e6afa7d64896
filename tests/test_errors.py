"""Bad input: each malformed description gives its documented exception with file, line and element, and
the CLI answers with one line and exit status 2 — never a traceback."""
import subprocess
import sys

import pytest

import urdf_dyn as ud
from urdf_dyn.cli.main import main

OK_LINK = '<link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>'
OK_JOINT = '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>'
# a spherical loop tying link b's point (0.5, 0, 0) to the base: closed at q = 0 by construction
LOOP = ('<loop name="lp" type="spherical"><predecessor link="b"><origin xyz="0.5 0 0"/></predecessor>'
        '<successor link="a"/></loop>')


def robot(body):
    return f'<robot name="r">\n{body}\n</robot>'


CASES = {
    # id: (xml, exception type, text the message must contain)
    "syntax": ('<robot name="r"><link name="a"></robot>', ud.XMLError, "XML syntax error"),
    "not_robot": ('<model name="r"/>', ud.ModelError, "expected <robot>"),
    "robot_no_name": ("<robot><link name='a'/></robot>", ud.ModelError, "no name"),
    "no_links": (robot(""), ud.ModelError, "no <link>"),
    "dup_link": (robot('<link name="a"/><link name="a"/>'), ud.ModelError, "duplicate link name 'a'"),
    "dup_joint": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT +
                        OK_JOINT.replace('"b"', '"c"')), ud.ModelError, "duplicate joint name 'j'"),
    "unknown_type": (robot(OK_LINK + OK_JOINT.replace("revolute", "hinge")), ud.ModelError, "unknown joint type 'hinge'"),
    "unknown_child": (robot(OK_LINK + OK_JOINT.replace('child link="b"', 'child link="zz"')), ud.ModelError, "unknown child link 'zz'"),
    "unknown_parent": (robot(OK_LINK + OK_JOINT.replace('parent link="a"', 'parent link="zz"')), ud.ModelError, "unknown parent link 'zz'"),
    "no_child": (robot(OK_LINK + '<joint name="j" type="fixed"><parent link="a"/></joint>'), ud.ModelError, "no <child"),
    "zero_axis": (robot(OK_LINK + OK_JOINT.replace("0 0 1", "0 0 0")), ud.ModelError, "axis is zero"),
    "nan_axis": (robot(OK_LINK + OK_JOINT.replace("0 0 1", "0 nan 1")), ud.ModelError, "non-finite"),
    "axis_two_numbers": (robot(OK_LINK + OK_JOINT.replace("0 0 1", "0 1")), ud.ModelError, "expected 3 numbers"),
    "origin_text": (robot(OK_LINK + OK_JOINT.replace("<axis", '<origin xyz="1 a 0"/><axis')), ud.ModelError, "not a number"),
    "limits_reversed": (robot(OK_LINK + OK_JOINT.replace("<axis", '<limit lower="1" upper="-1" effort="1" velocity="1"/><axis')), ud.ModelError, "lower=1.0 > upper=-1.0"),
    "negative_effort": (robot(OK_LINK + OK_JOINT.replace("<axis", '<limit effort="-5" velocity="1"/><axis')), ud.ModelError, "effort=-5.0 is negative"),
    "negative_mass": (robot(OK_LINK.replace('mass value="1"', 'mass value="-1"') + OK_JOINT), ud.ModelError, "negative mass"),
    "inertia_not_psd": (robot(OK_LINK.replace('ixx="1"', 'ixx="-3"') + OK_JOINT), ud.ModelError, "not positive semi-definite"),
    "inf_mass": (robot(OK_LINK.replace('mass value="1"', 'mass value="inf"') + OK_JOINT), ud.ModelError, "non-finite"),
    "two_parents": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT + OK_JOINT.replace('name="j"', 'name="k"').replace('"a"', '"c"')), ud.ModelError, "<loop>"),
    "two_roots": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT), ud.ModelError, "more than one root link"),
    "self_joint": (robot(OK_LINK + OK_JOINT.replace('child link="b"', 'child link="a"')), ud.ModelError, "to itself"),
    "doctype_bomb": ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><robot name="&b;"/>', ud.XMLError, "DOCTYPE"),
    "xxe": ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot name="&x;"/>', ud.XMLError, "DOCTYPE"),
    # more joint and link problems
    "limit_not_number": (robot(OK_LINK + OK_JOINT.replace("<axis", '<limit lower="a" upper="1" effort="1" velocity="1"/><axis')), ud.ModelError, "not a number"),
    "negative_velocity": (robot(OK_LINK + OK_JOINT.replace("<axis", '<limit effort="1" velocity="-1"/><axis')), ud.ModelError, "velocity=-1.0 is negative"),
    "negative_damping": (robot(OK_LINK + OK_JOINT.replace("<axis", '<dynamics damping="-0.1"/><axis')), ud.ModelError, "damping=-0.1 is negative"),
    "joint_no_name": (robot(OK_LINK + OK_JOINT.replace(' name="j"', "")), ud.ModelError, "<joint> without a name"),
    "joint_no_type": (robot(OK_LINK + OK_JOINT.replace(' type="revolute"', "")), ud.ModelError, "no type attribute"),
    "link_no_name": (robot('<link/>' + OK_LINK), ud.ModelError, "<link> without a name"),
    "mass_missing": (robot(OK_LINK.replace('<mass value="1"/>', "") + OK_JOINT), ud.ModelError, "without <mass"),
    "inertia_missing": (robot(OK_LINK.replace('<inertia ixx="1" iyy="1" izz="1"/>', "") + OK_JOINT), ud.ModelError, "without <inertia>"),
    "inertia_text": (robot(OK_LINK.replace('ixx="1"', 'ixx="heavy"') + OK_JOINT), ud.ModelError, "not a number"),
    "inertial_origin_nan": (robot(OK_LINK.replace("<mass", '<origin xyz="0 nan 0"/><mass') + OK_JOINT), ud.ModelError, "non-finite"),
    "rpy_four_numbers": (robot(OK_LINK + OK_JOINT.replace("<axis", '<origin rpy="0 0 0 0"/><axis')), ud.ModelError, "expected 3 numbers"),
    "mimic_self": (robot(OK_LINK + OK_JOINT.replace("<axis", '<mimic joint="j"/><axis')), ud.ModelError, "mimics itself"),
    "mimic_cycle": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT.replace("<axis", '<mimic joint="k"/><axis')
                          + OK_JOINT.replace('name="j"', 'name="k"').replace('parent link="a"', 'parent link="b"').replace('"b"/><axis', '"c"/><axis').replace("<axis", '<mimic joint="j"/><axis')),
                    ud.ModelError, "cycle"),
    "mimic_multiplier_text": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT + OK_JOINT.replace('name="j"', 'name="k"').replace('parent link="a"', 'parent link="b"').replace('child link="b"', 'child link="c"').replace("<axis", '<mimic joint="j" multiplier="two"/><axis')), ud.ModelError, "not a number"),
    "gazebo_spring_unknown_joint": (robot(OK_LINK + OK_JOINT + '<gazebo reference="ghost"><springStiffness>5</springStiffness></gazebo>'), ud.ModelError, "not a movable joint"),
    "gazebo_spring_text": (robot(OK_LINK + OK_JOINT + '<gazebo reference="j"><springStiffness>stiff</springStiffness></gazebo>'), ud.ModelError, "not a number"),
    "initial_conf_unknown_joint": (robot(OK_LINK + OK_JOINT + '<initial_configuration name="c"><joint_position joint="ghost" value="1"/></initial_configuration>'), ud.ModelError, "not a movable joint"),
    "initial_conf_value_nan": (robot(OK_LINK + OK_JOINT + '<initial_configuration name="c"><joint_position joint="j" value="nan"/></initial_configuration>'), ud.ModelError, "non-finite"),
    "empty_file": ("", ud.XMLError, "XML syntax error"),
    "binary_garbage": ("\x00\x01\x02PK\x03\x04", ud.XMLError, "XML syntax error"),
    "not_xml_text": ("this is not xml", ud.XMLError, "XML syntax error"),
    "unclosed_attribute": ('<robot name="r><link name="a"/></robot>', ud.XMLError, "XML syntax error"),
    "external_dtd": ('<!DOCTYPE robot SYSTEM "http://example.com/robot.dtd"><robot name="r"/>', ud.XMLError, "DOCTYPE"),
    # loops
    "loop_unknown_link": (robot(OK_LINK + OK_JOINT + LOOP.replace('successor link="a"', 'successor link="ghost"')), ud.ModelError, "unknown link 'ghost'"),
    "loop_same_link": (robot(OK_LINK + OK_JOINT + LOOP.replace('successor link="a"', 'successor link="b"')), ud.ModelError, "same link"),
    "loop_unknown_type": (robot(OK_LINK + OK_JOINT + LOOP.replace('type="spherical"', 'type="hinge"')), ud.ModelError, "unknown loop type 'hinge'"),
    "loop_zero_axis": (robot(OK_LINK + OK_JOINT + LOOP.replace("</loop>", '<axis xyz="0 0 0"/></loop>')), ud.ModelError, "loop axis is zero"),
    "loop_no_name": (robot(OK_LINK + OK_JOINT + LOOP.replace(' name="lp"', "")), ud.ModelError, "<loop> without a name"),
    "loop_no_predecessor": (robot(OK_LINK + OK_JOINT + '<loop name="lp" type="spherical"><successor link="a"/></loop>'), ud.ModelError, "no <predecessor"),
    "loop_duplicate_name": (robot(OK_LINK + OK_JOINT + LOOP + LOOP), ud.ModelError, "duplicate loop name"),
    "loop_origin_text": (robot(OK_LINK + OK_JOINT + LOOP.replace('xyz="0.5 0 0"', 'xyz="half 0 0"')), ud.ModelError, "not a number"),
    "loop_actuated_maybe": (robot(OK_LINK + OK_JOINT + LOOP.replace('type="spherical"', 'type="spherical" actuated="maybe"')), ud.ModelError, "actuated='maybe'"),
    "loop_welded_same_body": (robot(OK_LINK + '<link name="c"/>' + OK_JOINT + '<joint name="w" type="fixed"><parent link="b"/><child link="c"/></joint>' + LOOP.replace('predecessor link="b"', 'predecessor link="c"').replace('successor link="a"', 'successor link="b"')), ud.ModelError, "welded to the same body"),
    "loop_universal_axes_not_perpendicular": (robot(OK_LINK + OK_JOINT + LOOP.replace('type="spherical"', 'type="universal"').replace("</loop>", '<axis xyz="1 0 0"/><axis2 xyz="1 1 0"/></loop>')), ud.ModelError, "perpendicular"),
    "loop_cannot_assemble": (robot(OK_LINK + OK_JOINT + LOOP.replace('<successor link="a"/>', '<successor link="a"><origin xyz="5 0 0"/></successor>')), ud.ModelError, "cannot be assembled"),
    "drake_ball_incomplete": ('<robot name="r" xmlns:drake="http://drake.mit.edu">' + OK_LINK + OK_JOINT + '<drake:ball_constraint><drake:ball_constraint_body_A name="b"/></drake:ball_constraint></robot>', ud.ModelError, "drake:ball_constraint without"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_description(case, tmp_path):
    xml, exc, text = CASES[case]
    f = tmp_path / f"{case}.urdf"
    f.write_bytes(xml.encode("latin-1") if case == "binary_garbage" else xml.encode())
    with pytest.raises(exc) as ei:
        ud.load(f)
    msg = str(ei.value)
    assert text in msg
    assert msg.startswith(str(f)), msg  # names the file ...
    if case not in ("syntax", "empty_file"):
        assert ":" in msg.split(str(f), 1)[1][:8]  # ... and a line number
    assert main(["info", str(f)]) == 2


#: urdfdom and Pinocchio accept these: urdf_dyn loads them with a located ModelWarning, and refuses them
#: with strict=True (tests/test_tolerant_loading.py has the rest).
STRICT_CASES = {
    "mimic_unknown": (robot(OK_LINK + OK_JOINT.replace("<axis", '<mimic joint="nope"/><axis')), ud.ModelError, "unknown joint"),
    "transmission_reduction_text": (robot(OK_LINK + OK_JOINT + '<transmission name="t"><joint name="j"/><actuator name="m"><mechanicalReduction>fast</mechanicalReduction></actuator></transmission>'), ud.ModelError, "not a number"),
    "undeclared_namespace": ('<robot name="r"><link name="a"/><drake:collision_filter_group name="g"/></robot>', ud.XMLError, "XML syntax error"),
}


@pytest.mark.parametrize("case", list(STRICT_CASES))
def test_refused_when_strict_warned_otherwise(case, tmp_path):
    xml, exc, text = STRICT_CASES[case]
    f = tmp_path / f"{case}.urdf"
    f.write_text(xml)
    with pytest.raises(exc) as ei:
        ud.load(f, strict=True)
    assert text in str(ei.value) and str(ei.value).startswith(str(f))
    with pytest.warns(ud.ModelWarning, match=str(f)):
        ud.load(f)


def test_line_number_points_at_the_element(tmp_path):
    f = tmp_path / "r.urdf"
    f.write_text(robot(OK_LINK + "\n\n" + OK_JOINT.replace("revolute", "hinge")))
    with pytest.raises(ud.ModelError) as ei:
        ud.load(f)
    assert ei.value.line == 4 and ei.value.element == '<joint name="j">'


def test_missing_file_and_missing_package(tmp_path):
    with pytest.raises(ud.ModelError, match="file not found"):
        ud.load(tmp_path / "nope.urdf")
    x = tmp_path / "r.xacro"
    x.write_text('<robot name="r" xmlns:xacro="http://wiki.ros.org/xacro">'
                 '<xacro:include filename="$(find no_such_pkg)/x.xacro"/></robot>')
    with pytest.raises(ud.PackageNotFoundError, match="no_such_pkg.*searched"):
        ud.load(x)


def test_xacro_error_is_reported(tmp_path):
    x = tmp_path / "r.xacro"
    x.write_text('<robot name="r" xmlns:xacro="http://wiki.ros.org/xacro"><link name="${undefined_thing}"/></robot>')
    with pytest.raises(ud.XacroError, match="xacro failed"):
        ud.load(x)


def test_cli_error_is_one_line_without_traceback(tmp_path):
    f = tmp_path / "bad.urdf"
    f.write_text(CASES["zero_axis"][0])
    r = subprocess.run([sys.executable, "-m", "urdf_dyn.cli", "info", str(f)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "axis is zero" in r.stderr and str(f) in r.stderr


WARN_CASES = {
    "triangle": (robot(OK_LINK.replace('izz="1"', 'izz="5"') + OK_JOINT), "triangle inequality"),
    "transmission_unknown_joint": (robot(OK_LINK + OK_JOINT + '<transmission name="t"><joint name="ghost"/>'
                                         '</transmission>'), "unknown joint 'ghost'"),
}


@pytest.mark.parametrize("case", sorted(WARN_CASES))
def test_questionable_description_warns_and_loads(case, tmp_path):
    """URDF tools (urdfdom, Pinocchio) accept these; urdf_dyn loads them with a located warning."""
    xml, text = WARN_CASES[case]
    f = tmp_path / f"{case}.urdf"
    f.write_text(xml)
    with pytest.warns(ud.ModelWarning, match=text) as rec:
        model = ud.load(f)
    assert str(f) in str(rec[0].message) and model.nv == 1


def test_zero_inertia_with_rounding_noise_is_accepted():
    xml = robot(OK_LINK.replace('ixx="1" iyy="1" izz="1"', 'ixx="0" iyy="0" izz="0" ixz="1.35e-20"') + OK_JOINT)
    assert ud.load(xml).nv == 1


def test_xacro_namespace_in_a_comment_does_not_trigger_xacro():
    xml = ('<robot name="r" xmlns:xacro="http://wiki.ros.org/xacro"><!-- <xacro:macro name="x"/> -->'
           + OK_LINK + OK_JOINT + '</robot>')
    model = ud.load(xml)
    assert "(xacro output)" not in model.source and model.nv == 1
