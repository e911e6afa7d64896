"""Joint armature (``Model.armature``: a rotor's inertia reflected through its gearbox, H + diag(armature))
in every tree algorithm, against independent implementations of the same model:

- Pinocchio (``model.armature``; found by experiment to enter its ``crba``, ``rnea`` and ``aba``);
- MuJoCo (``dof_armature``; its URDF compiler reads the same file, whose armature it sets to 0, so the
  armature is set on the MjModel by joint name): ``mj_fullM`` of ``qM``, ``mj_inverse``'s
  ``qfrc_inverse`` and ``mj_forward``'s ``qacc`` with constraints disabled.

The URDF here sets the armature with urdf_dyn's extension ``<dynamics armature>``; a Drake transmission's
``drake:rotor_inertia`` and ``drake:gear_ratio`` give G² J_m (Drake's reflected inertia), checked by hand."""
from __future__ import annotations

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.algorithms.joints import PRISMATIC, REVOLUTE
from urdf_dyn.model import frozen
from test_closed_loop import mujoco_mass_matrix

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

def _link(name, m, xyz, a, b, c):
    e = 0.1 * min(a, b, c)          # small products of inertia: a valid rigid body
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="0.1 -0.2 0.3"/><mass value="{m}"/>'
            f'<inertia ixx="{a}" iyy="{b}" izz="{c}" ixy="{e}" ixz="{-0.5 * e}" iyz="{0.3 * e}"/></inertial></link>')


#: a branched tree: an oblique hinge, a prismatic joint, a branch, a fixed link; armature on all but one
ARMATURE = {"j1": 0.05, "slide": 2.0, "j3": 0.0, "j4": 0.3, "j5": 0.012}
BRANCHED = f"""<robot name="branched">
  <link name="base"/>
  {_link("l1", 3.0, "0.05 0.02 0.2", 0.05, 0.06, 0.04)}
  {_link("l2", 1.5, "0.2 0 0.01", 0.01, 0.03, 0.03)}
  {_link("l3", 0.8, "0 0.1 0", 0.008, 0.004, 0.009)}
  {_link("l4", 0.6, "0 0 -0.12", 0.006, 0.006, 0.002)}
  {_link("tool", 0.3, "0.02 0 0", 0.001, 0.001, 0.001)}
  {_link("l5", 0.4, "0.03 0.03 0", 0.002, 0.003, 0.002)}
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.3" rpy="0.2 0 0"/>
    <axis xyz="0.3 0.5 0.8124"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
    <dynamics damping="0" armature="{ARMATURE['j1']}"/></joint>
  <joint name="slide" type="prismatic"><parent link="l1"/><child link="l2"/><origin xyz="0.1 0 0.4" rpy="0 0.3 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="500" velocity="1"/>
    <dynamics damping="0" armature="{ARMATURE['slide']}"/></joint>
  <joint name="j3" type="revolute"><parent link="l1"/><child link="l3"/><origin xyz="0 0.2 0.3" rpy="0 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="5"/></joint>
  <joint name="j4" type="revolute"><parent link="l2"/><child link="l4"/><origin xyz="0.3 0 0" rpy="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
    <dynamics damping="0.1" friction="0" armature="{ARMATURE['j4']}"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0 0 -0.25"/></joint>
  <joint name="j5" type="revolute"><parent link="l3"/><child link="l5"/><origin xyz="0 0.15 0" rpy="0 0.2 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
    <dynamics friction="0" armature="{ARMATURE['j5']}"/></joint>
</robot>"""


def _states(model, n=5, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.9, 0.9, (n, model.nv)), rng.uniform(-2, 2, (n, model.nv)), rng.uniform(-3, 3, (n, model.nv))


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(b)))


@pytest.fixture(scope="module")
def model():
    return ud.load(BRANCHED)


def test_armature_is_read_from_dynamics(model):
    assert model.armature.shape == (model.nv,) and not model.armature.flags.writeable
    assert dict(zip(model.joint_names, model.armature)) == ARMATURE
    assert not ud.load(BRANCHED.replace("armature=", "data-armature=")).armature.any()   # default zeros


def test_drake_rotor_inertia_reflects_through_the_gear_ratio():
    """Drake's reading: armature = ρ² I_r, ρ from ``drake:gear_ratio`` (default 1), not from
    ``<mechanicalReduction>``; added to the joints of the transmission."""
    base = BRANCHED.replace("</robot>", "").replace('"branched">', '"branched" xmlns:drake="http://drake.mit.edu">')
    tr = """<transmission name="t{j}"><type>transmission_interface/SimpleTransmission</type>
      <joint name="{j}"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
      <actuator name="m{j}"><mechanicalReduction>7</mechanicalReduction>{body}</actuator></transmission>"""
    xml = (base.replace('armature="0.3"', 'data-armature="0.3"')
           + tr.format(j="j4", body='<drake:rotor_inertia value="2e-4"/><drake:gear_ratio value="50"/>')
           + tr.format(j="j3", body='<drake:rotor_inertia value="1.5e-3"/>') + "</robot>")
    m = ud.load(xml)
    arm = dict(zip(m.joint_names, m.armature))
    assert arm["j4"] == pytest.approx(50.0 ** 2 * 2e-4, rel=1e-15)
    assert arm["j3"] == pytest.approx(1.5e-3, rel=1e-15)
    assert arm["j1"] == ARMATURE["j1"]


@pytest.mark.parametrize("bad, match", [('armature="-0.1"', "armature=-0.1 is negative"),
                                        ('armature="x"', "not a number")])
def test_bad_armature_is_located(bad, match):
    with pytest.raises(ud.ModelError, match=match) as ei:
        ud.load(BRANCHED.replace(f'armature="{ARMATURE["j4"]}"', bad))
    assert "<string>:" in str(ei.value)


def test_a_wrong_armature_is_refused(model):
    import dataclasses
    for bad in ([0.1, 0.2], [0.1, -1.0, 0, 0, 0], [0.1, np.nan, 0, 0, 0]):
        with pytest.raises(ValueError, match="armature must be 5 finite values"):
            dataclasses.replace(model, armature=np.array(bad))
    m = dataclasses.replace(model, armature=np.array([0.1, 0.2, 0.0, 0.0, 0.3]))   # a writable array: copied
    assert not m.armature.flags.writeable
    assert dataclasses.replace(model, armature=[0, 1, 0, 0, 2]).armature.dtype == np.float64


def _pin_model(model):
    pm = pin.buildModelFromXML(model.urdf_xml)
    iv = np.array([pm.idx_vs[pm.getJointId(n)] for n in model.joint_names])
    assert all(pm.nqs[pm.getJointId(n)] == 1 for n in model.joint_names)
    arm = np.zeros(pm.nv)
    arm[iv] = model.armature
    pm.armature = arm
    return pm, iv


def test_tree_algorithms_match_pinocchio(model):
    """H (CRBA), τ (RNEA) and q̈ (ABA and CRBA + LᵀL), single states and a batch, ≤ 1e-12 relative against
    Pinocchio with the same armature; the armature changes each of them (the comparison is not vacuous)."""
    pm, iv = _pin_model(model)
    pd = pm.createData()
    Q, QD, QDD = _states(model)
    worst = 0.0
    for q, qd, qdd in zip(Q, QD, QDD):
        perm = np.empty(pm.nq)
        perm[iv] = q
        v, a = np.empty(pm.nv), np.empty(pm.nv)
        v[iv], a[iv] = qd, qdd
        H_pin = pin.crba(pm, pd, perm).copy()
        H_pin = (np.triu(H_pin) + np.triu(H_pin, 1).T)[np.ix_(iv, iv)]
        tau_full = pin.rnea(pm, pd, perm, v, a).copy()
        tau_pin = tau_full[iv]
        qdd_pin = pin.aba(pm, pd, perm, v, tau_full).copy()[iv]            # Pinocchio's ABA returns q̈
        H = ud.mass_matrix(model, q)
        tau = ud.inverse_dynamics(model, q, qd, qdd)
        worst = max(worst, rel(H, H_pin), rel(tau, tau_pin), rel(ud.forward_dynamics(model, q, qd, tau), qdd),
                    rel(qdd_pin, qdd),
                    rel(ud.forward_dynamics(model, q, qd, tau, algorithm="crba"), qdd))
        assert np.allclose(H - np.diag(model.armature), ud.mass_matrix(_no_armature(model), q), rtol=0, atol=1e-13)
        assert rel(tau, ud.inverse_dynamics(_no_armature(model), q, qd, qdd)) > 1e-3
    assert worst <= 1e-12, worst
    tau_b = ud.inverse_dynamics(model, Q, QD, QDD)
    assert rel(ud.forward_dynamics(model, Q, QD, tau_b), QDD) <= 1e-12
    assert rel(ud.mass_matrix(model, Q)[2], ud.mass_matrix(model, Q[2])) <= 1e-15


def _no_armature(model):
    import dataclasses
    return dataclasses.replace(model, armature=None)


def _mujoco(model):
    """MuJoCo's model of the same URDF (its compiler), constraints off, armature set by joint name."""
    xml = model.urdf_xml.replace("</robot>", '<mujoco><compiler fusestatic="false" discardvisual="true"/>'
                                             "</mujoco></robot>")
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    qa = np.array([mm.joint(n).qposadr[0] for n in model.joint_names])
    da = np.array([mm.joint(n).dofadr[0] for n in model.joint_names])
    mm.dof_armature[da] = model.armature
    mm.dof_damping[:] = 0.0
    return mm, mujoco.MjData(mm), qa, da


def test_tree_algorithms_match_mujoco(model):
    """MuJoCo's mass matrix (mj_fullM), mj_inverse's qfrc_inverse and mj_forward's qacc, ≤ 1e-12 relative."""
    mm, md, qa, da = _mujoco(model)
    assert mm.nv == model.nv
    Q, QD, QDD = _states(model, seed=5)
    worst = 0.0
    for q, qd, qdd in zip(Q, QD, QDD):
        md.qpos[qa], md.qvel[da], md.qacc[da] = q, qd, qdd
        mujoco.mj_inverse(mm, md)
        M = mujoco_mass_matrix(mujoco, mm, md)
        tau = ud.inverse_dynamics(model, q, qd, qdd)
        worst = max(worst, rel(ud.mass_matrix(model, q), M[np.ix_(da, da)]), rel(tau, md.qfrc_inverse[da]))
        md.qfrc_applied[:] = 0.0
        md.qfrc_applied[da] = tau
        mujoco.mj_forward(mm, md)
        worst = max(worst, rel(ud.forward_dynamics(model, q, qd, tau), md.qacc[da]))
    assert worst <= 1e-12, worst


def test_passive_tree_with_armature_conserves_energy(model):
    """simulate (ABA with armature) against the energy ½ q̇ᵀ(H + diag(armature))q̇ + V: drift ≤ 1e-6."""
    from urdf_dyn.simulation.simulate import simulate
    q0 = np.array([0.4, 0.2, -0.5, 0.8, 0.3])
    tr = simulate(model, q0, np.array([1.0, -0.5, 2.0, 0.0, 1.5]), 1.5, options=ud.SimulateOptions(rtol=1e-11, atol=1e-12, passive=False, limits=False))
    drift = np.max(np.abs(tr.energy - tr.energy[0])) / np.max(np.abs(tr.energy))
    assert drift <= 1e-6
    assert np.max(np.abs(tr.q[-1] - q0)) > 0.3


def test_floating_base_with_armature_matches_pinocchio():
    """A free-flyer root (Solo-12 of example-robot-data) with armature on its 12 joints: RNEA, CRBA and ABA
    against Pinocchio's ``JointModelFreeFlyer`` model with the same ``armature`` (0 on the base), ≤ 1e-12."""
    import dataclasses
    from test_floating_base import ERD, Bridge, _load, _random_state
    if ERD is None:
        pytest.skip("example-robot-data is not installed")
    model, pm = _load(ERD / "solo_description/robots/solo12.urdf", floating_base=True)
    rng = np.random.default_rng(7)
    arm = np.where(np.isin(model.jtype[1:], (REVOLUTE, PRISMATIC)), rng.uniform(0.01, 0.1, model.nv), 0.0)
    assert np.count_nonzero(arm) == 12
    model = dataclasses.replace(model, armature=frozen(arm))
    br = Bridge(model, pm)
    pm.armature = br.v(arm)
    pd = pm.createData()
    P = br.perm()
    worst = 0.0
    for _ in range(3):
        q, v, a, tau = _random_state(model, rng)
        qp, vp, ap, taup = br.q(q), br.v(v), br.v(a), br.v(tau)
        Hp = pin.crba(pm, pd, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        worst = max(worst, rel(ud.inverse_dynamics(model, q, v, a), br.from_pin(pin.rnea(pm, pd, qp, vp, ap))),
                    rel(ud.forward_dynamics(model, q, v, tau), br.from_pin(pin.aba(pm, pd, qp, vp, taup))),
                    rel(ud.mass_matrix(model, q), Hp[np.ix_(P, P)]))
    assert worst <= 1e-12, worst
