"""Undeclared namespace prefixes: a description using ``drake:`` without declaring it (as a
published UR5e description does; Pinocchio and urdfdom load it) loads from URDF, SDF and xacro (its includes
too) with one located warning, and the same dynamics as the file without the prefixed element. Oracle: the
file with the ``drake:`` element removed."""
import warnings

import numpy as np
import pytest

import urdf_dyn as ud

LINK = ('<link name="a"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>'
        '<inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>')
JOINT = ('<joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
         '<limit lower="-1" upper="1" effort="1" velocity="1"/>\n{extra}</joint>')
DRAKE = '<drake:rotor_inertia value="0.1"/>'


def _load(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = ud.load(path)
    return m, [str(w.message) for w in caught if "namespace prefix 'drake'" in str(w.message)]


def _same_dynamics(a, b):
    q, qd = np.array([0.3]), np.array([0.7])
    assert np.allclose(ud.mass_matrix(a, q), ud.mass_matrix(b, q), rtol=1e-14)
    assert np.allclose(ud.bias_force(a, q, qd), ud.bias_force(b, q, qd), rtol=1e-14)


def test_urdf_with_undeclared_drake_prefix(tmp_path):
    f, g = tmp_path / "d.urdf", tmp_path / "plain.urdf"
    f.write_text(f'<robot name="d">\n<link name="base"/>{LINK}\n{JOINT.format(extra=DRAKE)}\n</robot>')
    g.write_text(f'<robot name="d">\n<link name="base"/>{LINK}\n{JOINT.format(extra="")}\n</robot>')
    m, msgs = _load(f)
    assert len(msgs) == 1 and f"{f}:4" in msgs[0], msgs
    _same_dynamics(m, ud.load(g))


def test_xacro_include_with_undeclared_drake_prefix(tmp_path):
    part = tmp_path / "part.xacro"
    part.write_text(f'<robot xmlns:xacro="http://www.ros.org/wiki/xacro">\n{LINK}\n{JOINT.format(extra=DRAKE)}\n</robot>')
    main = tmp_path / "main.urdf.xacro"
    main.write_text('<robot name="d" xmlns:xacro="http://www.ros.org/wiki/xacro">\n<link name="base"/>\n'
                    '<xacro:include filename="part.xacro"/>\n</robot>')
    g = tmp_path / "plain.urdf"
    g.write_text(f'<robot name="d">\n<link name="base"/>{LINK}\n{JOINT.format(extra="")}\n</robot>')
    m, msgs = _load(main)
    assert len(msgs) == 1 and f"{part}:4" in msgs[0], msgs
    _same_dynamics(m, ud.load(g))


def test_sdf_with_undeclared_drake_prefix(tmp_path):
    body = ('<sdf version="1.7"><model name="m">\n<link name="base"/>\n<link name="a"><pose>0 0 0 0 0 0</pose>'
            '<inertial><pose>0.2 0 0 0 0 0</pose><mass>1.5</mass><inertia><ixx>0.01</ixx><iyy>0.02</iyy>'
            '<izz>0.03</izz></inertia></inertial></link>\n<joint name="j" type="revolute"><parent>base</parent>'
            '<child>a</child><axis><xyz>0 0 1</xyz>{extra}</axis></joint>\n</model></sdf>')
    f, g = tmp_path / "d.sdf", tmp_path / "plain.sdf"
    f.write_text(body.format(extra="<drake:rotor_inertia>0.1</drake:rotor_inertia>"))
    g.write_text(body.format(extra=""))
    m, msgs = _load(f)
    assert len(msgs) == 1 and f"{f}:4" in msgs[0], msgs
    _same_dynamics(m, ud.load(g))


def test_declared_prefixes_are_left_alone():
    from urdf_dyn.io.xml_ns import declare_prefixes
    data = b'<robot xmlns:drake="http://drake.mit.edu" name="r"><!-- a:b c:d="1" --><drake:x a="1"/></robot>'
    assert declare_prefixes(data) == (data, [])


def test_mjcf_capsule_fromto_along_x_gives_no_gimbal_warning(tmp_path):
    """A capsule ``fromto`` along x puts the geom frame at pitch 90°: scipy warns "Gimbal lock" while its
    angles still give the rotation exactly; that warning is not the user's concern and is not shown."""
    pytest.importorskip("mujoco")
    from urdf_dyn.io._urdf_text import matrix_to_rpy
    from urdf_dyn.algorithms.spatial import rpy_to_matrix
    f = tmp_path / "capsule.xml"
    f.write_text('<mujoco><worldbody><body name="b"><joint name="j" type="hinge"/>'
                 '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body></worldbody></mujoco>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ud.load(f)
    R = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # pitch +90°
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rpy = matrix_to_rpy(R)
    assert np.allclose(rpy_to_matrix(rpy), R, atol=1e-15)
