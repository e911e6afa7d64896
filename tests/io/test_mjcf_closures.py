"""MJCF closures, transmissions and messages on small files of our own, against MuJoCo's own numbers: a
weld's anchor and relpose (MuJoCo's residual at random poses), connects and welds between sites, two unnamed
connects closing a revolute, a fixed-tendon actuator (MuJoCo's actuator moment), the actuated set of a file
without actuators, and errors/warnings located in the user's file."""
import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import urdf_dyn as ud
from urdf_dyn.io.mjcf_export import to_mjspec
from urdf_dyn.io.mjcf import parse_mjcf

mujoco = pytest.importorskip("mujoco", reason="MuJoCo (the [test]/[mujoco] extra) is the oracle")

BODIES = """<mujoco model="closures">
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="ja" axis="0 1 0"/><geom size=".05" pos="0.3 0 0" mass="1"/>
      <site name="sa" pos="0.3 0.1 0" quat="0.9 0.1 0.3 0"/>
      <body name="b" pos="0.5 0 0">
        <joint name="jb" axis="0 1 0"/><geom size=".05" pos="0.3 0 0" mass="1"/>
        <site name="sb" pos="0.2 0 0.1" quat="1 0 0.4 0"/>
      </body>
    </body>
    <body name="c" pos="1 0 1">
      <joint name="jc" axis="0 1 0"/><joint name="jc2" axis="1 0 0"/><geom size=".05" pos="0.3 0 0" mass="1"/>
      <site name="sc" pos="0.1 0.2 0"/>
    </body>
  </worldbody>
  <equality>
    %s
  </equality>
</mujoco>"""


def quiet_load(xml):
    """parse_mjcf of MJCF text (no assembly: the site equalities here are open in the file), without its
    warnings (frictionloss, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        return parse_mjcf(xml)


def mujoco_residual(xml, q):
    """MuJoCo's equality rows (efc_pos) at q (q = qpos − qpos0: every joint here has qpos0 = 0)."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    return d.efc_pos[:d.nefc].copy()


def our_frames(model, q, lp):
    """World poses of the loop's frames Fp and Fs."""
    return (ud.link_pose(model, q, lp.predecessor) @ lp.T_P, ud.link_pose(model, q, lp.successor) @ lp.T_S)


def weld_rows(Fp, Fs):
    """MuJoCo's weld rows from two frames: position Fp − Fs and the vector part of the quaternion of
    R_Fsᵀ R_Fp (w ≥ 0), mj_instantiateEquality's orientation error with torquescale 1."""
    x, y, z, w = Rotation.from_matrix(Fs[:3, :3].T @ Fp[:3, :3]).as_quat()
    return np.r_[Fp[:3, 3] - Fs[:3, 3], np.sign(w or 1.0) * np.array([x, y, z])]


@pytest.mark.parametrize("eq", [
    '<weld body1="b" body2="c" anchor="0.1 0.2 0.3"/>',
    '<weld body1="b" body2="c" anchor="0.1 0.2 0.3" relpose="0.3 0.1 0 1 0 0.2 0"/>',
    '<weld site1="sb" site2="sc"/>',
    '<connect site1="sb" site2="sc"/>',
    '<connect body1="b" body2="c" anchor="0.2 0.1 0"/>'])
def test_closure_frames_give_mujocos_residual(eq):
    """Our loop frames reproduce MuJoCo's own equality rows at the file's pose and at random poses: a weld's
    anchor and relpose, and the site frames of site equalities, as MuJoCo's compiler and engine read them."""
    xml = BODIES % eq
    model = quiet_load(xml)
    lp, = model.loops
    rng = np.random.default_rng(7)
    for k in range(4):
        q = np.zeros(4) if k == 0 else rng.uniform(-1, 1, 4)
        mj = mujoco_residual(xml, q)
        Fp, Fs = our_frames(model, q, lp)
        ours = weld_rows(Fp, Fs) if lp.type == "fixed" else Fp[:3, 3] - Fs[:3, 3]
        assert np.allclose(ours, mj, atol=1e-12), (k, ours, mj)
    if "relpose" not in eq and "site" not in eq:  # MuJoCo closes these at qpos0: so do we
        assert max(np.abs(r).max() for r in ud.loop_residuals(model, np.zeros(4)).values()) < 1e-12


def test_site_equality_names_the_sites_bodies(tmp_path):
    """A site equality joins the sites' bodies; one that cannot close is refused at its line in the file."""
    model = quiet_load(BODIES % '<connect site1="sb" site2="sc"/>')
    lp, = model.loops
    assert (lp.predecessor, lp.successor, lp.name) == ("b", "c", "connect_sb__sc")
    f = tmp_path / "open.xml"
    f.write_text(BODIES % '<connect site1="sb" site2="sc"/>')
    line = f.read_text().splitlines().index('    <connect site1="sb" site2="sc"/>') + 1
    with pytest.raises(ud.ModelError, match=rf'^{f}:{line}: <equality name="connect_sb__sc">: loop connect_sb__sc '
                                            r"\(b -> c\) cannot be assembled .* check the positions of the "
                                            "equality's sites"):
        ud.load(f)


FOUR_BAR = """<mujoco model="four_bar">
  <worldbody>
    <body name="crank" pos="0 0 0">
      <joint name="j_crank" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="1"/>
      <body name="coupler" pos="0.2 0 0">
        <joint name="j_coupler" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0.3" size="0.01" mass="1"/>
      </body>
    </body>
    <body name="rocker" pos="0.6 0 0">
      <joint name="j_rocker" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.1 0 0.3" size="0.01" mass="1"/>
    </body>
  </worldbody>
  <equality>
    <connect body1="coupler" body2="rocker" anchor="0.5 0.05 0.3"/>
    <connect body1="coupler" body2="rocker" anchor="0.5 -0.05 0.3"/>
  </equality>
</mujoco>"""


def test_two_unnamed_connects_close_a_revolute():
    """The usual MJCF revolute closure: two unnamed connects on the hinge axis. Both load, under two stable
    names; the four-bar has one degree of freedom, and its accelerations under gravity approach MuJoCo's
    as MuJoCo's equalities stiffen."""
    model = quiet_load(FOUR_BAR)
    assert [lp.name for lp in model.loops] == ["connect_coupler__rocker", "connect_coupler__rocker_2"]
    assert [lp.name for lp in quiet_load(FOUR_BAR).loops] == [lp.name for lp in model.loops]
    q = np.zeros(3)
    assert ud.mobility(model, q).dof == 1
    qd = ud.project_velocity(model, q, np.array([1.0, 0.3, -0.2]))
    ours = ud.constrained_forward_dynamics(model, q, qd, np.zeros(3)).qdd
    errs = []
    for dimp in (0.99, 0.9999):
        m = mujoco.MjModel.from_xml_string(FOUR_BAR)
        m.eq_solimp[:, :3] = (dimp, dimp, 0.001)
        m.opt.tolerance, m.opt.iterations = 1e-15, 1000
        d = mujoco.MjData(m)
        d.qvel[:] = qd
        mujoco.mj_forward(m, d)
        errs.append(np.abs(d.qacc - ours).max() / np.abs(ours).max())
    assert errs[1] < 1e-4 and errs[1] < errs[0] / 50   # ∝ (1 − d)/d: MuJoCo's softness


def test_located_error_names_the_users_file_line_and_element(tmp_path):
    """A refusal names the MJCF file, the equality's line and element, never the URDF translation."""
    f = tmp_path / "lock.xml"
    f.write_text(FOUR_BAR.replace("  </equality>", '    <joint joint1="j_rocker" polycoef="0.1 0 0 0 0"/>\n'
                                                    '  </equality>'))
    with pytest.raises(ud.UnsupportedError) as e:
        ud.load(f)
    msg = str(e.value)
    line = f.read_text().splitlines().index('    <joint joint1="j_rocker" polycoef="0.1 0 0 0 0"/>') + 1
    assert msg.startswith(f"{f}:{line}: <joint> (joint_2): ") and "without joint2" in msg and "translation" not in msg


POLY = """<mujoco model="poly">
  <worldbody>
    <body name="a"><joint name="ja" axis="0 0 1" ref="0.3"/><geom size=".05" pos="0.3 0 0" mass="1"/></body>
    <body name="b" pos="0 1 0">
      <joint name="jb" axis="0 1 0"/><geom size=".05" pos="0.3 0 0" mass="1"/>
      <body name="c" pos="0.6 0 0"><joint name="jc" axis="1 0 0"/><geom size=".05" pos="0 0.2 0" mass="0.5"/></body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="jb" joint2="ja" polycoef="0.1 -0.8 0.5 0.3 -0.2"/>
  </equality>
</mujoco>"""


def assert_row_is_mujocos(model, m, label, rng):
    """Our constraint row ``label``'s residual is MuJoCo's one equality row at three random poses."""
    for _ in range(3):
        q = rng.uniform(-1, 1, model.nv)
        d = mujoco.MjData(m)
        d.qpos[:] = m.qpos0 + q
        mujoco.mj_forward(m, d)
        assert np.allclose(ud.loop_residuals(model, q)[label], d.efc_pos[:1], atol=1e-14)


def mujoco_rigid(m, qpos, qvel, qfrc):
    """MuJoCo's qacc extrapolated to rigid equalities from d = 0.9999 and 0.9998 (linear in ε = (1 − d)/d),
    and its qacc at 0.9999."""
    acc, eps = [], []
    for dimp in (0.9999, 0.9998):
        m.eq_solimp[:, :3], m.eq_solref[:] = (dimp, dimp, 0.001), (1.0, 1.0)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        m.opt.tolerance, m.opt.iterations = 1e-15, 1000
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        mujoco.mj_forward(m, d)
        acc.append(d.qacc.copy())
        eps.append((1 - dimp) / dimp)
    return (eps[1] * acc[0] - eps[0] * acc[1]) / (eps[1] - eps[0]), acc[0]


def test_polynomial_joint_equality_is_a_nonlinear_row():
    """MuJoCo's polycoef q1 − q1₀ = c0 + c1 x + c2 x² + c3 x³ + c4 x⁴ (x = q2 − q2₀) is one nonlinear row:
    - its residual is MuJoCo's equality row at random poses;
    - at rest the closed-loop accelerations equal MuJoCo's extrapolated to rigid, also from the export, which
      writes the polynomial about MuJoCo's own qpos0;
    - moving, the row's k = p''(x) ẋ² makes q(t) = q + q̇ t + q̈ t²/2 keep the row to second order (a finite
      difference of the residual). MuJoCo's joint equality has no such term: its stiff limit has J q̈ = 0."""
    model = quiet_load(POLY)
    mi, = model.mimic
    assert (mi.joint, mi.leader, mi.poly) == ("jb", "ja", (0.5, 0.3, -0.2))
    m = mujoco.MjModel.from_xml_string(POLY)
    assert_row_is_mujocos(model, m, "mimic:jb", np.random.default_rng(5))
    q = ud.assemble(model, np.array([0.7, 0.0, 0.4]))
    tau = np.array([0.3, -0.2, 0.1])
    z = np.zeros(3)
    ours = ud.constrained_forward_dynamics(model, q, z, tau).qdd
    rigid, stiff = mujoco_rigid(m, m.qpos0 + q, z, tau)
    assert np.abs(rigid - ours).max() <= 1e-6 * np.abs(ours).max() < np.abs(stiff - ours).max()
    rigid_b, _ = mujoco_rigid(to_mjspec(model, q_ref=q).compile(), q, z, tau)
    assert np.abs(rigid_b - ours).max() <= 1e-6 * np.abs(ours).max()
    qd = ud.project_velocity(model, q, np.array([2.0, 0.0, -1.0]))
    qdd = ud.constrained_forward_dynamics(model, q, qd, tau).qdd
    phi = lambda t: ud.loop_residuals(model, q + qd * t + 0.5 * qdd * t * t)["mimic:jb"][0]  # noqa: E731
    h = 1e-4
    assert abs(phi(h) - 2 * phi(0.0) + phi(-h)) / h ** 2 < 1e-6 * np.abs(qdd).max()
    K, k = ud.loop_constraints(model, q, qd)
    assert abs(k[0]) > 1.0  # the term is not small here: MuJoCo's stiff limit misses it
    mj_moving, _ = mujoco_rigid(m, m.qpos0 + q, qd, tau)
    assert abs(K[0] @ mj_moving) < 1e-4 * abs(k[0])


TENDON = """<mujoco model="tendon">
  <worldbody>
    <body name="l">
      <joint name="jl" axis="0 0 1"/><geom size=".05" pos="0.3 0 0" mass="1"/>
    </body>
    <body name="r" pos="0 0.5 0">
      <joint name="jr" axis="0 0 1" frictionloss="0.2"/><geom size=".05" pos="0.3 0 0" mass="1"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="split"><joint joint="jl" coef="0.4"/><joint joint="jr" coef="-0.6"/></fixed>
  </tendon>
  <actuator>
    <motor name="squeeze" tendon="split" gear="3"/>
  </actuator>
</mujoco>"""


def test_fixed_tendon_actuator_acts_through_its_coefficients():
    """B's column of a fixed-tendon actuator is MuJoCo's actuator moment divided by the gear (u is the
    force on the tendon; MuJoCo's moment multiplies its control by the gear)."""
    with pytest.warns(ud.ModelWarning, match=r"<string>:7: <joint name=\"jr\">: frictionloss of 1 joint"):
        model = parse_mjcf(TENDON)
    acts = ud.actuators_of(model)
    assert [(a.name, a.kind) for a in acts] == [("squeeze", "tendon")] and model.actuated_joints == ()
    m = mujoco.MjModel.from_xml_string(TENDON)
    d = mujoco.MjData(m)
    d.qpos[:] = [0.3, -0.2]
    mujoco.mj_forward(m, d)
    moment = np.zeros((m.nu, m.nv))
    mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    from urdf_dyn.constraints.inverse import actuation_matrix
    B = actuation_matrix(model, np.array([0.3, -0.2]), acts)
    assert np.allclose(B[:, 0], moment[0] / m.actuator_gear[0, 0], atol=1e-15)
    assert model.transmissions[0].mechanical_reduction == 3.0
    back = to_mjspec(model).compile()  # and the export writes the tendon and its motor back
    assert back.ntendon == 1 and int(back.actuator_trntype[0]) == int(mujoco.mjtTrn.mjTRN_TENDON)
    assert np.allclose(back.wrap_prm[:2], [0.4, -0.6])


def test_no_actuators_means_none_actuated(tmp_path, capsys):
    """An MJCF file lists its actuators: with none, nothing is actuated (not URDF's "every joint")."""
    from urdf_dyn.cli import main
    model = quiet_load(FOUR_BAR)
    assert model.actuated_joints == () and ud.actuators_of(model) == ()
    (tmp_path / "fb.xml").write_text(FOUR_BAR)
    (tmp_path / "t.xml").write_text(TENDON)
    assert main(["info", str(tmp_path / "fb.xml")]) == 0
    assert "actuated: none" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "t.xml")]) == 0
    assert "actuated: squeeze (fixed tendon)" in capsys.readouterr().out


def test_spatial_tendon_and_muscle_are_warned_about():
    xml = TENDON.replace('<fixed name="split"><joint joint="jl" coef="0.4"/><joint joint="jr" coef="-0.6"/></fixed>',
                         '<spatial name="cable" limited="true" range="0 1"><site site="s1"/>'
                         '<site site="s2"/></spatial>')
    xml = xml.replace('<geom size=".05" pos="0.3 0 0" mass="1"/>\n    </body>\n    <body name="r"',
                      '<geom size=".05" pos="0.3 0 0" mass="1"/><site name="s1"/>\n    </body>\n    <body name="r"')
    xml = xml.replace('frictionloss="0.2"/>', 'frictionloss="0.2"/><site name="s2" pos="0.2 0 0"/>')
    xml = xml.replace('<motor name="squeeze" tendon="split" gear="3"/>', '<muscle name="m" tendon="cable"/>')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = parse_mjcf(xml)
    msgs = [str(x.message) for x in w if issubclass(x.category, ud.ModelWarning)]
    assert any(m.startswith('<string>:11: <spatial name="cable">: spatial tendon') for m in msgs), msgs
    assert any('<muscle name="m">: muscle' in m for m in msgs)
    assert any("acts through a spatial tendon" in m for m in msgs)
    assert model.transmissions == () and ud.actuators_of(model) == ()


TENDON_EQ = """<mujoco model="tendon_eq">
  <worldbody>
    <body name="l">
      <joint name="jl" axis="0 0 1" ref="0.2"/><geom size=".05" pos="0.3 0 0" mass="1"/>
      <body name="l2" pos="0.6 0 0"><joint name="jl2" axis="0 1 0"/><geom size=".05" pos="0.2 0 0" mass="0.5"/></body>
    </body>
    <body name="r" pos="0 0.5 0">
      <joint name="jr" axis="0 0 1"/><geom size=".05" pos="0.3 0 0" mass="1"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t1"><joint joint="jl" coef="0.4"/><joint joint="jl2" coef="1"/></fixed>
    <fixed name="t2"><joint joint="jr" coef="-0.6"/></fixed>
  </tendon>
  <equality>
    <tendon tendon1="t1" tendon2="t2" polycoef="0.05 1.5 0 0 0"/>
  </equality>
</mujoco>"""


def test_fixed_tendon_equality_is_one_coupling_row():
    """A tendon equality L1 − L1₀ = c0 + c1 (L2 − L2₀) between fixed tendons becomes one linear coupling row:
    its residual is MuJoCo's equality row at random poses, and the accelerations approach MuJoCo's as its
    equality stiffens (extrapolated to rigid)."""
    model = quiet_load(TENDON_EQ)
    c, = model.couplings
    assert (c.name, c.type, c.offset) == ("tendon_0", "linear", 0.05)
    rng = np.random.default_rng(3)
    m = mujoco.MjModel.from_xml_string(TENDON_EQ)
    assert_row_is_mujocos(model, m, "coupling:tendon_0", rng)
    q = ud.assemble(model, np.array([0.3, 0.2, 0.0]))
    qd = ud.project_velocity(model, q, rng.normal(size=3))
    tau = rng.normal(size=3)
    ours = ud.constrained_forward_dynamics(model, q, qd, tau).qdd
    acc, eps = [], []
    for dimp in (0.9999, 0.9998):
        m.eq_solimp[:, :3], m.eq_solref[:] = (dimp, dimp, 0.001), (1.0, 1.0)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = m.qpos0 + q, qd, tau
        mujoco.mj_forward(m, d)
        acc.append(d.qacc.copy())
        eps.append((1 - dimp) / dimp)
    rigid = (eps[1] * acc[0] - eps[0] * acc[1]) / (eps[1] - eps[0])
    assert np.abs(rigid - ours).max() <= 1e-6 * np.abs(ours).max() < np.abs(acc[0] - ours).max()
    back = to_mjspec(model, q_ref=q).compile()  # the export: a fixed tendon and a tendon equality
    assert back.ntendon == 1 and int(back.eq_type[0]) == int(mujoco.mjtEq.mjEQ_TENDON)
    rigid_b, _ = mujoco_rigid(back, q, qd, tau)
    assert np.abs(rigid_b - ours).max() <= 1e-6 * np.abs(ours).max()


def test_gravity_and_gravcomp_of_the_file_are_warned_about():
    """The file's <option gravity> is not the one used unless passed; gravcomp is not modelled: both are said."""
    xml = FOUR_BAR.replace('<mujoco model="four_bar">', '<mujoco model="four_bar">\n  <option gravity="0 0 -3.7"/>')
    xml = xml.replace('<body name="rocker" pos="0.6 0 0">', '<body name="rocker" pos="0.6 0 0" gravcomp="1">')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        parse_mjcf(xml)
    msgs = [str(x.message) for x in w if issubclass(x.category, ud.ModelWarning)]
    assert any(m.startswith("<string>:2: <option>: the file's gravity 0.0 0.0 -3.7") for m in msgs), msgs
    assert any('<body name="rocker">: gravcomp of 1 bodies (rocker)' in m for m in msgs), msgs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ud.ModelWarning)
        with pytest.raises(ud.ModelWarning, match="gravcomp"):  # with the file's gravity, only gravcomp is left
            parse_mjcf(xml, gravity=(0, 0, -3.7))


def test_bad_polynomial_attribute_is_located():
    """urdf_dyn's ``<mimic polynomial>`` takes exactly three numbers (c2, c3, c4)."""
    link = '<link name="{}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" ' \
           'iyz="0"/></inertial></link>'
    urdf = f"""<robot name="p">
  <link name="base"/>
  {link.format("a")}
  {link.format("b")}
  <joint name="ja" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="jb" type="continuous"><parent link="base"/><child link="b"/><axis xyz="0 1 0"/>
    <mimic joint="ja" multiplier="2" polynomial="0.5 0.1"/></joint>
</robot>"""
    with pytest.raises(ud.ModelError, match=r'<string>:6: <joint name="jb">: <mimic polynomial="0.5 0.1">: expected 3'):
        ud.load(urdf)
    model = ud.load(urdf.replace('polynomial="0.5 0.1"', 'polynomial="0.5 0.1 0"'))
    assert model.mimic[0].poly == (0.5, 0.1, 0.0)
