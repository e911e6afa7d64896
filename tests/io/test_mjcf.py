"""MJCF export and import, against MuJoCo itself: the exported model's mass matrix (mj_fullM) and bias
forces (qfrc_bias) equal ours at assembled states; with stiff equalities MuJoCo's constrained accelerations
approach our closed-loop forward dynamics; the shared MuJoCo excavator imports as the same machine as its
hand-made URDF with loops."""
from pathlib import Path

import numpy as np
import pytest

import _robots
import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.io.mjcf_export import export_mjcf, to_mjspec

mujoco = pytest.importorskip("mujoco", reason="MuJoCo (the [test]/[mujoco] extra) is the oracle")
SHARED = _robots.SHARED
ROBOTS = ["puma560.urdf", "crank_slider.urdf", "four_bar.urdf", "four_bar_spherical.urdf", "excavator.urdf", "rbda_fig8_3.urdf",
          "stewart.sdf"]


def oracle_q(model, q_guess=None):
    """The assembled q at which the MuJoCo comparisons run, clear of every joint limit. MuJoCo switches a
    joint limit on when q − lower < 0; the Stewart platform's home pose puts its six pistons exactly at their
    lower stroke (q = 0), where the sign of assembly's round-off (±1e-16, CPU-dependent through OpenBLAS)
    decided whether a limit acted. So every prismatic joint of a closed-loop robot whose guess
    lies within 5 % of its stroke of an end is held at mid-stroke, and the rest assembled around it."""
    q = model.q_initial() if q_guess is None else np.array(q_guess, float)
    hold = []
    for i, (j, t) in enumerate(zip(model.joint_names, model.joint_types)):
        lo, up = model.lower[i], model.upper[i]
        if t == "prismatic" and np.isfinite(lo) and np.isfinite(up) and min(q[i] - lo, up - q[i]) < 0.05 * (up - lo):
            q[i] = 0.5 * (lo + up)
            hold.append(j)
    return ud.assemble(model, q, hold=hold)


def limit_clearance(model, q):
    """The smallest distance of q to a finite joint limit, relative to that joint's range (inf if none)."""
    lo, up = np.asarray(model.lower, float), np.asarray(model.upper, float)
    span = np.where(np.isfinite(up - lo) & (up > lo), up - lo, 1.0)
    d = np.minimum(np.where(np.isfinite(lo), q - lo, np.inf), np.where(np.isfinite(up), up - q, np.inf)) / span
    return float(d.min(initial=np.inf))


def mj_qacc_errors(model, q, qd, tau):
    """MuJoCo's constrained qacc against our exact closed-loop q̈ at (q, q̇, τ), for solimp d = 0.9, 0.99,
    0.9999 (solref (0.0002 s, 1), timestep 1e-4 s): (relative errors, largest MuJoCo limit count ``nl``)."""
    exact = ud.constrained_forward_dynamics(model, q, qd, tau, passive=False).qdd
    errs, nl = [], 0
    for dimp in (0.9, 0.99, 0.9999):
        m, d = _mj_state(model, q, qd, solref=(0.0002, 1.0), solimp=(dimp, dimp, 0.001), timestep=1e-4)
        d.qfrc_applied[:] = tau
        mujoco.mj_forward(m, d)
        nl = max(nl, int(d.nl))
        errs.append(np.abs(d.qacc - exact).max() / np.abs(exact).max())
    return errs, nl


def mj_verdict(errs):
    """The comparison's verdict: the error falls with (1 − d) / d and ends below 2e-4."""
    return bool(errs[0] > 5 * errs[1] and errs[1] > 50 * errs[2] and errs[2] < 2e-4)


def mj_closed_loop_state(model):
    """(q, q̇, τ) of the closed-loop comparison: ``oracle_q``, q̇ projected onto K q̇ = 0, random τ."""
    q = oracle_q(model)
    qd = ud.project_velocity(model, q, np.random.default_rng(2).normal(size=model.nv))
    return q, qd, np.random.default_rng(3).normal(size=model.nv)


def _mj_state(model, q, qd, **kw):
    spec = to_mjspec(model, q_ref=q, **kw)
    m = spec.compile()
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    assert names == list(model.joint_names)
    d.qpos[:], d.qvel[:] = q, qd
    mujoco.mj_forward(m, d)
    return m, d


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_and_bias_equal_mujoco(name):
    model = ud.load(ROOT / "robots" / name)
    q = oracle_q(model) if model.loops else np.random.default_rng(0).normal(size=model.nv)
    qd = np.random.default_rng(1).normal(size=model.nv)
    m, d = _mj_state(model, q, qd)
    H = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(m, d, H)
    Hu, C = ud.mass_matrix(model, q), ud.bias_force(model, q, qd)
    # stewart: massless links get MuJoCo's boundmass 1e-9 kg / boundinertia 1e-12 kg m^2
    tol = 1e-8 if name == "stewart.sdf" else 1e-12
    assert np.abs(H - Hu).max() <= tol * np.abs(Hu).max()
    assert np.abs(d.qfrc_bias - C).max() <= tol * max(1.0, np.abs(C).max())
    if model.loops:
        eq = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        assert np.abs(d.efc_pos[:d.nefc][eq]).max() < 1e-9  # the equalities hold at the assembled q


@pytest.mark.parametrize("name", ["four_bar.urdf", "excavator.urdf", "stewart.sdf"])
def test_constrained_accelerations_approach_ours(name):
    """solref = (0.0002 s, 1), timestep 1e-4 s (MuJoCo clamps timeconst to ≥ 2 timesteps) and solimp
    d = 0.9 → 0.99 → 0.9999 (MuJoCo's largest; 0.999999 is clamped to it): the error of MuJoCo's qacc
    against the exact closed-loop q̈ falls with (1 − d), the softness MuJoCo keeps in its constraints."""
    model = ud.load(ROOT / "robots" / name)
    q, qd, tau = mj_closed_loop_state(model)
    assert limit_clearance(model, q) > 0.01, "the state sits at a joint limit"
    errs, nl = mj_qacc_errors(model, q, qd, tau)
    assert nl == 0, "a joint limit is active in MuJoCo"
    print(name, "relative qacc error for d = 0.9, 0.99, 0.9999:", errs)
    assert mj_verdict(errs)  # ∝ (1 − d) / d


def test_static_sag_of_the_excavator_in_mujoco():
    """Our static actuator forces applied by MuJoCo's motors hold the exported excavator; the residual sag
    of its soft loops after 1 s is the README's figure."""
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q = ud.assemble(model, model.q_initial())
    z = np.zeros(model.nv)
    af = ud.actuator_forces(model, q, z, z)
    m = to_mjspec(model, q_ref=q, timestep=5e-4).compile()
    d = mujoco.MjData(m)
    d.qpos[:] = q
    act = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in range(m.nu)]
    d.ctrl[:] = [af.u[list(af.names).index(a)] for a in act]
    for _ in range(2000):
        mujoco.mj_step(m, d)
    sag = np.abs(d.efc_pos[:d.nefc]).max()
    drift = np.abs(d.qpos - q).max()
    print(f"excavator held by our forces in MuJoCo for 1 s: loop sag {sag:.2e} m, joint drift {drift:.2e}")
    assert sag < 1e-4 and drift < 1e-3


def test_export_file_and_mimic_weld(tmp_path):
    urdf = """<robot name="mw">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
  <joint name="jb" type="revolute"><parent link="base"/><child link="b"/><origin xyz="0 0.5 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="1"/><mimic joint="ja" multiplier="-2" offset="0.1"/></joint>
</robot>"""
    model = ud.load(urdf)
    mj = export_mjcf(model, tmp_path / "mw.xml")
    assert mj.neq == 1 and mj.nu == 1      # one motor: the mimic follower jb is driven through ja, not by its own
    back = mujoco.MjModel.from_xml_path(str(tmp_path / "mw.xml"))
    d = mujoco.MjData(back)
    d.qpos[:] = [0.3, -2 * 0.3 + 0.1]
    mujoco.mj_forward(back, d)
    assert abs(d.efc_pos[0]) < 1e-12  # the joint equality holds where the mimic does
    reread = ud.load(tmp_path / "mw.xml")  # and it comes back as a mimic
    assert reread.mimic[0].leader == "ja" and reread.mimic[0].multiplier == -2.0


def test_prismatic_loop_is_refused_clearly():
    """MuJoCo has no prismatic equality: a loop cut at a prismatic pair cannot be exported."""
    urdf = """<robot name="pl">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ja" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="jb" type="continuous"><parent link="base"/><child link="b"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/></joint>
  <loop name="slot" type="prismatic"><predecessor link="a"><origin xyz="0.5 0 0"/></predecessor><successor link="b"/>
    <axis xyz="1 0 0"/></loop>
</robot>"""
    model = ud.load(urdf)
    with pytest.raises(ud.UnsupportedError, match="'slot' of type 'prismatic' has no MuJoCo equality"):
        to_mjspec(model)


def test_shared_mujoco_excavator_imports_as_its_urdf():
    """The shared MJCF excavator (GPL data, read only): connect equalities → spherical loops; the same tree
    dynamics and closed-loop accelerations as _derived/excavator_loops.urdf (revolute loops, written by hand)."""
    d = SHARED / "excavator_simulator_mujoco" / "_derived"
    if not (d / "excavator_dynamics_only.xml").is_file():
        pytest.skip("../shared/data/excavator_simulator_mujoco is not here (a user's clone)")
    a = ud.load(d / "excavator_dynamics_only.xml")
    b = ud.load(d / "excavator_loops.urdf")
    assert a.joint_names == b.joint_names and len(a.loops) == 4
    assert [lp.type for lp in a.loops] == ["spherical"] * 4
    assert {t.joints[0] for t in a.transmissions} == {"chassis", "chassis_piston_rod", "boom_piston_rod",
                                                        "arm_piston_rod"}
    rng = np.random.default_rng(4)
    q, qd = rng.normal(size=a.nv) * 0.3, rng.normal(size=a.nv)
    Ha, Hb = ud.mass_matrix(a, q), ud.mass_matrix(b, q)
    assert np.abs(Ha - Hb).max() <= 1e-9 * np.abs(Hb).max()  # the URDF's numbers are rounded
    assert np.abs(ud.bias_force(a, q, qd) - ud.bias_force(b, q, qd)).max() <= 1e-9 * np.abs(Hb).max()
    q0 = a.q_initial()
    assert ud.mobility(a, q0).dof == ud.mobility(b, q0).dof == 4
    qd0 = ud.project_velocity(a, q0, rng.normal(size=a.nv))
    fa = ud.constrained_forward_dynamics(a, q0, qd0, np.zeros(a.nv)).qdd
    fb = ud.constrained_forward_dynamics(b, q0, qd0, np.zeros(b.nv)).qdd
    assert np.abs(fa - fb).max() <= 1e-6 * np.abs(fb).max()


BALL_MJCF = """<mujoco><option gravity="0 0 -9.81"/><worldbody>
  <body name="upper" pos="0 0 1" euler="10 -20 30"><joint name="hip" type="hinge" axis="0.6 0.8 0" damping="0.3"/>
    <inertial pos="0 0 -0.2" mass="2" diaginertia="0.03 0.028 0.006"/>
    <body name="lower" pos="0.05 0 -0.4" euler="-15 5 40">
      <joint name="knee" type="ball" pos="0 0.02 0.03" damping="0.2" armature="0.01" range="0 40"/>
      <inertial pos="0.01 0.02 -0.18" quat="0.9 0.1 0.3 0.2" mass="1.5" diaginertia="0.02 0.021 0.004"/>
      <body name="foot" pos="0 0 -0.35"><joint name="ankle" type="hinge" axis="1 0 0"/>
        <inertial pos="0.05 0 -0.02" mass="0.5" diaginertia="0.001 0.002 0.002"/></body>
    </body></body></worldbody></mujoco>"""


def test_mjcf_ball_joint_moves_as_in_mujoco(tmp_path):
    """A ball joint mid-chain, away from its body's origin, with damping and armature: q = MuJoCo's qpos with
    the quaternion (w, x, y, z) read as (x, y, z, w), v = qvel (ω in the body frame); tree forward dynamics
    with the passive forces equals mj_forward's qacc; the cone range is warned about, not silently dropped."""
    path = tmp_path / "ball.xml"
    path.write_text(BALL_MJCF)
    with pytest.warns(ud.ModelWarning, match="cone range of ball joint 'knee'"):
        model = ud.load(path)
    assert model.q_names == ("hip", "knee.qx", "knee.qy", "knee.qz", "knee.qw", "ankle")
    assert model.joint_names == ("hip", "knee.rx", "knee.ry", "knee.rz", "ankle")
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    q = np.r_[0.4, quat, -0.7]
    v, tau = rng.normal(size=5), rng.normal(size=5)
    d.qpos[:] = np.r_[q[0], q[4], q[1:4], q[5]]
    d.qvel[:], d.qfrc_applied[:] = v, tau
    mujoco.mj_forward(m, d)
    ours = ud.forward_dynamics(model, q, v, tau + ud.passive_forces(model, q, v))
    assert np.abs(ours - d.qacc).max() <= 1e-10 * np.abs(d.qacc).max()
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    assert np.abs(ud.mass_matrix(model, q) - M).max() <= 1e-12 * np.abs(M).max()


def test_mjcf_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body name="b"><joint type="hinge" axis="0 0 0"/></body></worldbody></mujoco>')
    with pytest.raises(ud.ModelError, match="bad.xml"):
        ud.load(bad)


def test_cli_export_writes_an_mjcf_mujoco_loads(tmp_path, capsys):
    from urdf_dyn.cli import main
    out = tmp_path / "excavator.xml"
    assert main(["export", str(ROOT / "robots" / "excavator.urdf"), "--mjcf", str(out)]) == 0
    assert "8 equalities, 4 actuators" in capsys.readouterr().out  # 4 revolute loops × 2 connects
    m = mujoco.MjModel.from_xml_path(str(out))
    assert m.neq == 8 and m.nu == 4 and m.njnt == 12
    assert main(["export", str(ROOT / "robots" / "excavator.urdf"), "--mjcf", str(out), "--solref", "x"]) == 2


def test_missing_mujoco_is_a_clear_error(monkeypatch):
    import sys
    model = ud.load(ROOT / "robots" / "four_bar.urdf")
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco now raises ImportError
    with pytest.raises(ud.ModelError, match=r"pip install 'urdf_dyn\[mujoco\]'"):
        to_mjspec(model)


FREE_MJCF = """<mujoco model="hopper3d">
  <worldbody>
    <body name="torso" pos="0.1 -0.2 0.8" quat="0.9238795 0 0.3826834 0">
      <freejoint name="root"/>
      <inertial pos="0.02 0 0.05" mass="4" diaginertia="0.1 0.2 0.15"/>
      <body name="thigh" pos="0 0.1 -0.1">
        <joint name="hip" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="1.5" diaginertia="0.02 0.02 0.004"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" type="hinge" axis="1 0 0" range="-2 0.1"/>
          <inertial pos="0 0.01 -0.2" mass="0.8" diaginertia="0.01 0.012 0.002"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_freejoint_imports_as_a_floating_joint_equal_to_mujoco():
    """A ``<freejoint>`` becomes a floating joint whose origin is the body's pose in the file. Oracle: MuJoCo on
    the same file, at random poses: with MuJoCo's qvel = T v (its free-joint linear velocity is in the world
    frame, ours in the body frame: T = diag(R_body, 1, 1)), the mass matrix is Tᵀ M T and the gravity forces
    Tᵀ qfrc_bias (at zero velocity); body poses equal MuJoCo's xpos/xmat."""
    model = ud.load(FREE_MJCF)
    assert (model.nq, model.nv) == (9, 8) and model.joint_types[0] == "floating"
    m = mujoco.MjModel.from_xml_string(FREE_MJCF)
    d = mujoco.MjData(m)
    T0 = np.eye(4)
    T0[:3, 3] = m.body_pos[1]
    R0 = np.zeros(9)
    mujoco.mju_quat2Mat(R0, m.body_quat[1])
    T0[:3, :3] = R0.reshape(3, 3)
    rng = np.random.default_rng(4)
    for _ in range(3):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)                        # MuJoCo order (w, x, y, z)
        d.qpos[:] = np.r_[rng.uniform(-1, 1, 3), quat, rng.uniform(-1, 0.1, 2)]
        d.qvel[:] = 0
        mujoco.mj_forward(m, d)
        Rw = d.xmat[1].reshape(3, 3)
        Mw = np.eye(4)
        Mw[:3, :3], Mw[:3, 3] = Rw, d.xpos[1]
        Mq = np.linalg.inv(T0) @ Mw                        # the floating joint's pose, relative to its origin
        from scipy.spatial.transform import Rotation
        q = np.r_[Mq[:3, 3], Rotation.from_matrix(Mq[:3, :3]).as_quat(), d.qpos[7:] - m.qpos0[7:]]
        for b, link in ((1, "torso"), (2, "thigh"), (3, "shin")):
            T = ud.link_pose(model, q, link)
            assert np.allclose(T[:3, 3], d.xpos[b], atol=1e-12) and np.allclose(T[:3, :3], d.xmat[b].reshape(3, 3), atol=1e-12)
        Tm = np.eye(model.nv)
        Tm[:3, :3] = Rw
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        assert np.allclose(ud.mass_matrix(model, q), Tm.T @ M @ Tm, rtol=1e-10, atol=1e-12)
        assert np.allclose(ud.gravity_torques(model, q), Tm.T @ d.qfrc_bias, rtol=1e-10, atol=1e-10)
    with pytest.raises(ud.UnsupportedError, match="already has a floating joint"):
        ud.load(FREE_MJCF, floating_base=True)
