"""MuJoCo Menagerie's closed-loop models (``../shared/data/mujoco_menagerie``), loaded as shipped and moved
as MuJoCo moves them: at an assembled state of each, MuJoCo's constrained accelerations (mj_forward, the
file's own model: armature, damping, springs; only what urdf_dyn does not model switched off — contacts,
joint and tendon limits, frictionloss, actuator dynamics) at its stiffest equality settings, extrapolated to
rigid constraints, equal our closed-loop forward dynamics.

MuJoCo keeps equalities soft: with solimp d its accelerations differ from the rigid ones by a series in
ε = (1 − d)/d (its constraint regulariser R = ε · A_ii). With armature the series converges slowly (at the
xArm7 hand the error over ε still changes by 0.4 % from ε = 2e-4 to 1e-4: heavy rotors behind light links make
A = J M⁻¹ Jᵀ ill-conditioned), so five solves, d = 0.9999 (MuJoCo's stiffest), 0.9998, ..., 0.9995, are
extrapolated to ε = 0 by the quartic through them (Richardson); what is left is O(ε⁵). On ToddlerBot the
extrapolation through 2, 3, 4, 5 points leaves 2.7e-4, 1.3e-5, 7.9e-7, 6.1e-8.
"""
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from conftest import needs_shared

mujoco = pytest.importorskip("mujoco", reason="MuJoCo (the [test]/[mujoco] extra) is the oracle")

from _menagerie import MODELS, scratch_copy  # noqa: E402

pytestmark = needs_shared

#: the largest relative difference allowed between the extrapolated MuJoCo q̈ and ours
TOL = 1e-6


def load_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        return ud.load(path)


def mj_model(path, dimp):
    """MuJoCo's model of the file, with rigid-limit equalities of impedance ``dimp`` and what urdf_dyn does
    not model switched off."""
    m = mujoco.MjModel.from_xml_path(str(path))
    D = mujoco.mjtDisableBit
    m.opt.disableflags |= int(D.mjDSBL_CONTACT) | int(D.mjDSBL_LIMIT) | int(D.mjDSBL_FRICTIONLOSS) \
        | int(D.mjDSBL_ACTUATION)
    m.eq_solref[:] = (1.0, 1.0)  # a slow reference: MuJoCo's spring on a loop gap (ToddlerBot's 1e-8 m) is nil
    m.eq_solimp[:, :3] = (dimp, dimp, 0.001)
    m.opt.solver = int(mujoco.mjtSolver.mjSOL_NEWTON)
    m.opt.tolerance, m.opt.iterations, m.opt.ls_tolerance = 1e-15, 1000, 1e-15
    return m


class Coordinates:
    """Our (q, v, τ, q̈) ↔ MuJoCo's (qpos, qvel, qfrc, qacc): hinge/slide joints by name (q = qpos − qpos0);
    a free joint's pose relative to the body's pose in the file, its linear velocity in the body frame (ours)
    or the world frame (MuJoCo's)."""

    def __init__(self, model, m):
        self.model, self.m = model, m
        J = mujoco.mjtJoint
        self.joints = []
        for j in range(m.njnt):
            n = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint_{j}"
            free = int(m.jnt_type[j]) == int(J.mjJNT_FREE)
            k = model.joint_index(f"{n}.x" if free else n)
            self.joints.append((j, free, k, model.q_index(n) if not free else int(model.iq[k + 1])))
            if free:
                b = int(m.jnt_bodyid[j])
                self.T0 = np.eye(4)
                self.T0[:3, 3] = m.body_pos[b]
                R = np.zeros(9)
                mujoco.mju_quat2Mat(R, m.body_quat[b])
                self.T0[:3, :3] = R.reshape(3, 3)

    def to_mujoco(self, q, v, tau):
        from scipy.spatial.transform import Rotation
        m = self.m
        qpos, qvel, qfrc = m.qpos0.copy(), np.zeros(m.nv), np.zeros(m.nv)
        for j, free, k, iq in self.joints:
            qa, da = m.jnt_qposadr[j], m.jnt_dofadr[j]
            if free:
                Mq = np.eye(4)
                Mq[:3, 3] = q[iq:iq + 3]
                Mq[:3, :3] = Rotation.from_quat(q[iq + 3:iq + 7]).as_matrix()
                Mw = self.T0 @ Mq
                x, y, z, w = Rotation.from_matrix(Mw[:3, :3]).as_quat()
                qpos[qa:qa + 7] = np.r_[Mw[:3, 3], w, x, y, z]
                qvel[da:da + 3], qvel[da + 3:da + 6] = Mw[:3, :3] @ v[k:k + 3], v[k + 3:k + 6]
                assert not np.any(tau[k:k + 6])
            else:
                qpos[qa] += q[iq]
                qvel[da], qfrc[da] = v[k], tau[k]
        return qpos, qvel, qfrc

    def acceleration(self, q, v, vdot):
        """Our v̇ as MuJoCo's qacc (its free-joint linear part is d/dt of the world-frame velocity)."""
        from scipy.spatial.transform import Rotation
        out = np.zeros(self.m.nv)
        for j, free, k, iq in self.joints:
            da = self.m.jnt_dofadr[j]
            if free:
                R = self.T0[:3, :3] @ Rotation.from_quat(q[iq + 3:iq + 7]).as_matrix()
                out[da:da + 3] = R @ (vdot[k:k + 3] + np.cross(v[k + 3:k + 6], v[k:k + 3]))
                out[da + 3:da + 6] = vdot[k + 3:k + 6]
            else:
                out[da] = vdot[k]
        return out


def assembled_state(model, seed=0):
    """An assembled q near the file's pose (tree joints moved by N(0, 0.05), a turned free base), a q̇
    consistent with the constraints, random τ on the tree joints (none on a free joint)."""
    rng = np.random.default_rng(seed)
    q = model.q_initial()
    free = [k for k, t in enumerate(model.joint_types) if t == "floating"]
    for i, t in enumerate(model.joint_types):
        if t != "floating":
            q[model.q_index(model.joint_names[i])] += 0.05 * rng.normal()
    if free:
        iq = int(model.iq[free[0] + 1])
        quat = np.r_[0.1 * rng.normal(size=3), 1.0]
        q[iq:iq + 3], q[iq + 3:iq + 7] = rng.normal(size=3) * 0.1, quat / np.linalg.norm(quat)
    q = ud.assemble(model, q)
    v = ud.project_velocity(model, q, rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    for k in free:
        tau[k:k + 6] = 0.0
    return q, v, tau


#: the impedances of the extrapolation: MuJoCo's stiffest (0.9999) and four softer ones beside it
IMPEDANCES = (0.9999, 0.9998, 0.9997, 0.9996, 0.9995)


def mujoco_rigid_qacc(path, coords, q, v, tau):
    """MuJoCo's qacc extrapolated to rigid (module docstring), its qacc at d = 0.9999, and the largest
    equality residual (the norm of an equality's rows) MuJoCo sees at the state."""
    acc, eps, resid = [], [], 0.0
    for dimp in IMPEDANCES:
        m = mj_model(path, dimp)
        d = mujoco.MjData(m)
        coords.m = m
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = coords.to_mujoco(q, v, tau)
        mujoco.mj_forward(m, d)
        eq = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        ids, pos = d.efc_id[:d.nefc][eq], d.efc_pos[:d.nefc][eq]
        resid = max([resid] + [float(np.linalg.norm(pos[ids == i])) for i in set(ids)])
        acc.append(d.qacc.copy())
        eps.append((1 - dimp) / dimp)
    # the quartic through the five (ε, qacc) at ε = 0: Lagrange weights Π_{j≠i} ε_j / (ε_j − ε_i)
    w = [np.prod([e_j / (e_j - e_i) for j, e_j in enumerate(eps) if j != i]) for i, e_i in enumerate(eps)]
    return sum(wi * a for wi, a in zip(w, acc)), acc[0], resid


@pytest.mark.parametrize("folder", list(MODELS))
def test_menagerie_model_moves_as_in_mujoco(folder, tmp_path):
    path = scratch_copy(folder, tmp_path)
    try:
        model = load_quietly(path)
    except ud.UnsupportedError as e:
        if "ball joint" in str(e):
            pytest.skip(f"ball joints in trees are not in urdf_dyn yet: {e}")
        raise
    m = mj_model(path, 0.9999)
    if np.any(m.dof_armature) and not hasattr(model, "armature"):
        pytest.skip("the file sets joint armature and urdf_dyn's Model has none yet (the core branch adds it)")
    coords = Coordinates(model, m)
    q, v, tau = assembled_state(model)
    ours = coords.acceleration(q, v, ud.constrained_forward_dynamics(model, q, v, tau).qdd)
    rigid, stiff, resid = mujoco_rigid_qacc(path, coords, q, v, tau)
    # MuJoCo's equality residual at our assembled state is ours (ToddlerBot's two connects per rod are not
    # exactly coaxial in the file: 1e-8 m is left at every pose, by both)
    ours_resid = max(np.linalg.norm(r) for r in ud.loop_residuals(model, q).values())
    assert resid < 1e-7 and abs(resid - ours_resid) < 1e-12
    scale = np.abs(ours).max()
    err, err_stiff = np.abs(rigid - ours).max() / scale, np.abs(stiff - ours).max() / scale
    print(f"{folder}: relative q̈ difference to MuJoCo: d = 0.9999 {err_stiff:.2e}, extrapolated to rigid "
          f"{err:.2e} (nv {model.nv}, {len(model.loops)} loops, {len(model.mimic)} mimic)")
    assert err <= TOL
    assert err < err_stiff  # the extrapolation approaches ours: the difference was MuJoCo's softness


@pytest.mark.parametrize("folder", [f for f in MODELS if f != "agility_cassie"])
def test_armature_reaches_the_translation(folder, tmp_path):
    """Every joint's armature is in the URDF translation as ``<dynamics armature>``, MuJoCo's value exactly
    (the contract with the URDF reader, which adds it to H's diagonal)."""
    from lxml import etree
    from urdf_dyn.io.mjcf import mjcf_to_urdf
    path = scratch_copy(folder, tmp_path)
    m = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        text, _ = mjcf_to_urdf(path)
    arm = {el.get("name"): float(el.find("dynamics").get("armature", 0.0)) if el.find("dynamics") is not None else 0.0
           for el in etree.fromstring(text.encode()).findall("joint")}
    for j in range(m.njnt):
        if int(m.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            assert arm[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)] == m.dof_armature[m.jnt_dofadr[j]]


@pytest.mark.parametrize("folder", ["robotiq_2f85", "robotiq_2f85_v4", "ufactory_xarm7"])
def test_gripper_tendon_actuator_is_one_column_of_B(folder, tmp_path):
    """The grippers' actuator drives the fixed tendon ``split``: one actuator whose column of B is MuJoCo's
    actuator moment over the gear, at the assembled state."""
    from urdf_dyn.constraints.inverse import actuation_matrix
    path = scratch_copy(folder, tmp_path)
    model = load_quietly(path)
    acts = ud.actuators_of(model)
    assert [(a.name, a.kind) for a in acts] == [("fingers_actuator", "tendon")]
    m = mj_model(path, 0.9999)
    coords = Coordinates(model, m)
    q, v, tau = assembled_state(model)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], _ = coords.to_mujoco(q, v, tau)
    mujoco.mj_forward(m, d)
    moment = np.zeros((m.nu, m.nv))
    mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    B = actuation_matrix(model, q, acts)
    assert np.allclose(coords.acceleration(q, np.zeros_like(v), B[:, 0]), moment[0] / m.actuator_gear[0, 0],
                       atol=1e-15)


def test_softfoot_has_no_actuators(tmp_path, capsys):
    """SoftFoot has no <actuator>: nothing is actuated (not "all 92 joints")."""
    from urdf_dyn.cli import main
    path = scratch_copy("iit_softfoot", tmp_path)
    assert load_quietly(path).actuated_joints == ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        assert main(["info", str(path)]) == 0
    assert "actuated: none" in capsys.readouterr().out
