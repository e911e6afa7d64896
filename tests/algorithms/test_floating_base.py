"""Floating (free-flyer) and planar joints against Pinocchio, and the physics of free flight.

Oracles:
- Pinocchio's free-flyer models: ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())`` for the legged
  robots of example-robot-data (loaded here with ``floating_base=True``) and ``pin.buildModelFromUrdf(path)``
  for the URDF+ files of ../shared/data/generalized_rbda whose root joint is ``type="floating"`` (Pinocchio
  maps it to a free-flyer). RNEA, CRBA, ABA, forward kinematics of every link, a LOCAL frame Jacobian,
  kinetic and potential energy, ``integrate`` and ``difference``: equal to 1e-9 (relative, norm-based) at
  random states. Pinocchio's layout is ours for the free-flyer (q = (p, quat xyzw), v = (v, ω) LOCAL), so
  only the 1-dof joints are matched by name (continuous joints: (cos, sin) in Pinocchio).
- Pinocchio's ``JointModelPlanar`` (URDF ``planar``, axis z): (x, y, θ) here, (x, y, cos θ, sin θ) there.
- Free flight with gravity off: the spatial momentum about the centre of mass, evaluated by Pinocchio's
  ``computeCentroidalMomentum`` on our simulated states, stays constant; the energy too. With gravity on:
  the linear momentum changes by m g t and the energy is conserved (passive fall, no damping).
- A floating model whose base velocity and acceleration are zero reproduces the fixed-base model's ID.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import urdf_dyn  # noqa: E402
from urdf_dyn.algorithms import joints  # noqa: E402
from urdf_dyn.algorithms.configuration import difference, integrate, qdot  # noqa: E402
from test_tree_pinocchio import ERD, ERD_PACKAGE_DIRS  # noqa: E402
from test_couplings import RBDA  # noqa: E402
from urdf_dyn.io.mjcf_export import to_mjspec

TOL = 1e-9

#: legged robots of example-robot-data, loaded with a free-flyer root
ERD_ROBOTS = ["anymal_c_simple_description/urdf/anymal.urdf", "talos_data/robots/talos_full_v2.urdf",
              "go2_description/urdf/go2.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf",
              "solo_description/robots/solo12.urdf", "a1_description/urdf/a1.urdf"]
#: URDF+ files whose root joint is type="floating"
RBDA_ROBOTS = ["jvrc1_humanoid_approximate.urdf", "mini_cheetah.urdf", "mit_humanoid.urdf", "tello_humanoid.urdf",
               "jvrc1_humanoid.urdf"]


def _load(path, floating_base):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urdf_dyn.ModelWarning)
        model = urdf_dyn.load(path, package_dirs=ERD_PACKAGE_DIRS, floating_base=floating_base)
        pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base
              else pin.buildModelFromUrdf(str(path)))
    return model, pm


class Bridge:
    """urdf_dyn's (q, v) <-> Pinocchio's, matched by joint name."""

    def __init__(self, model, pm):
        self.model, self.pm = model, pm
        self.qmap, self.vmap, self.cont = [], [], []  # (ours, theirs, n)
        for i in range(1, model.NB + 1):
            t = int(model.jtype[i])
            if joints.is_sub(t):
                continue
            name = model.joint_names[i - 1]
            if t in (joints.FREE, joints.PLANAR, joints.BALL):
                name = name.rsplit(".", 1)[0]
            jid = pm.getJointId(name)
            assert jid < pm.njoints, f"Pinocchio has no joint {name!r}"
            jm = pm.joints[jid]
            if t == joints.FREE:
                assert jm.shortname() == "JointModelFreeFlyer"
                self.qmap.append((int(model.iq[i]), jm.idx_q, 7))
                self.vmap.append((i - 1, jm.idx_v, 6))
            elif t == joints.BALL:
                assert jm.shortname() == "JointModelSpherical"
                self.qmap.append((int(model.iq[i]), jm.idx_q, "ball"))
                self.vmap.append((i - 1, jm.idx_v, 3))
            elif t == joints.PLANAR:
                assert jm.shortname() == "JointModelPlanar"
                self.qmap.append((int(model.iq[i]), jm.idx_q, "planar"))
                self.vmap.append((i - 1, jm.idx_v, 3))
            else:
                self.qmap.append((int(model.iq[i]), jm.idx_q, jm.nq))
                self.vmap.append((i - 1, jm.idx_v, 1))
        assert sum(n for *_, n in self.vmap) == model.nv == pm.nv

    def q(self, q):
        out = np.zeros(self.pm.nq)
        for a, b, n in self.qmap:
            if n == "planar":
                out[b:b + 2] = q[a:a + 2]
                out[b + 2], out[b + 3] = math.cos(q[a + 2]), math.sin(q[a + 2])
            elif n == "ball":
                out[b:b + 4] = q[a:a + 4]
            elif n == 2:  # continuous
                out[b], out[b + 1] = math.cos(q[a]), math.sin(q[a])
            else:
                out[b:b + n] = q[a:a + n]
        return out

    def q_from_pin(self, qp):
        out = np.zeros(self.model.nq)
        for a, b, n in self.qmap:
            if n == "planar":
                out[a:a + 2] = qp[b:b + 2]
                out[a + 2] = math.atan2(qp[b + 3], qp[b + 2])
            elif n == "ball":
                out[a:a + 4] = qp[b:b + 4]
            elif n == 2:
                out[a] = math.atan2(qp[b + 1], qp[b])
            else:
                out[a:a + n] = qp[b:b + n]
        return out

    def perm(self):
        """p with v_pin[p] = v_ours."""
        p = np.zeros(self.model.nv, int)
        for a, b, n in self.vmap:
            p[a:a + n] = np.arange(b, b + n)
        return p

    def v(self, v):
        out = np.zeros(self.pm.nv)
        out[self.perm()] = v
        return out

    def from_pin(self, vp):
        return np.asarray(vp)[self.perm()]


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(b)))


def _random_state(model, rng):
    lo = np.where(np.isfinite(model.lower), model.lower, -math.pi)
    up = np.maximum(np.where(np.isfinite(model.upper), model.upper, math.pi), lo)
    v_pos = rng.uniform(lo, up)
    q = model.neutral()
    for i in range(1, model.NB + 1):
        t, k = int(model.jtype[i]), int(model.iq[i])
        if t == joints.FREE:
            quat = rng.standard_normal(4)
            q[k:k + 3], q[k + 3:k + 7] = rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat)
        elif t == joints.BALL:
            quat = rng.standard_normal(4)
            q[k:k + 4] = quat / np.linalg.norm(quat)
        elif t == joints.PLANAR:
            q[k:k + 3] = rng.uniform(-1, 1, 3) * (1, 1, math.pi)
        elif k >= 0:
            q[k] = v_pos[i - 1]
    return q, rng.standard_normal(model.nv), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def _compare(model, pm, seed=0, n=2):
    br = Bridge(model, pm)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    err = {}
    for _ in range(n):
        q, v, a, tau = _random_state(model, rng)
        qp, vp, ap, taup = br.q(q), br.v(v), br.v(a), br.v(tau)
        checks = {
            "rnea": (urdf_dyn.inverse_dynamics(model, q, v, a), br.from_pin(pin.rnea(pm, pd, qp, vp, ap))),
            "aba": (urdf_dyn.forward_dynamics(model, q, v, tau), br.from_pin(pin.aba(pm, pd, qp, vp, taup))),
        }
        Hp = pin.crba(pm, pd, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        P = br.perm()
        checks["crba"] = (urdf_dyn.mass_matrix(model, q), Hp[np.ix_(P, P)])
        checks["kinetic"] = (urdf_dyn.kinetic_energy(model, q, v), pin.computeKineticEnergy(pm, pd, qp, vp))
        # Pinocchio's potential is −Σ m gᵀ c; ours has the same zero (the world origin)
        checks["potential"] = (urdf_dyn.potential_energy(model, q), pin.computePotentialEnergy(pm, pd, qp))
        pin.forwardKinematics(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        fk = urdf_dyn.forward_kinematics(model, q)
        got, want = [], []
        for link, T in fk.items():
            fid = pm.getFrameId(link, pin.BODY)
            if fid < len(pm.frames):
                got.append(T)
                want.append(pd.oMf[fid].homogeneous)
        checks["fk"] = (np.array(got), np.array(want))
        leaf = model.body_names[-1]
        fid = pm.getFrameId(leaf, pin.BODY)
        Jp = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)
        J = urdf_dyn.link_jacobian(model, q, leaf, "local")
        checks["jacobian"] = (J[[3, 4, 5, 0, 1, 2]], Jp[:, P])
        q1 = integrate(model, q, v, 0.7)
        q1p = pin.integrate(pm, qp, 0.7 * vp)
        checks["integrate"] = (br.q(q1), _same_quat_sign(br.q(q1), q1p, br))
        checks["difference"] = (difference(model, q, q1), br.from_pin(pin.difference(pm, qp, q1p)))
        for k, (g, w) in checks.items():
            err[k] = max(err.get(k, 0.0), _rel(g, w))
    return err


def _same_quat_sign(ours, theirs, br):
    theirs = np.array(theirs)
    for a, b, n in br.qmap:
        if n == 7 and np.dot(ours[b + 3:b + 7], theirs[b + 3:b + 7]) < 0:
            theirs[b + 3:b + 7] *= -1
        if n == "ball" and np.dot(ours[b:b + 4], theirs[b:b + 4]) < 0:
            theirs[b:b + 4] *= -1
    return theirs


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("rel", ERD_ROBOTS)
def test_free_flyer_root_equals_pinocchio(rel):
    model, pm = _load(ERD / rel, floating_base=True)
    assert model.nq == model.nv + 1 == pm.nq and model.joint_names[0] == "root_joint.x"
    err = _compare(model, pm)
    assert max(err.values()) < TOL, err


@pytest.mark.skipif(not RBDA.is_dir(), reason="../shared/data/generalized_rbda is absent")
@pytest.mark.parametrize("name", RBDA_ROBOTS)
def test_urdf_floating_joint_equals_pinocchio(name):
    model, pm = _load(RBDA / name, floating_base=False)
    assert not model.is_fixed_base and model.nq == model.nv + 1
    err = _compare(model, pm, seed=1)
    assert max(err.values()) < TOL, err


PLANAR_URDF = """<robot name="planar_base">
  <link name="world"/>
  <link name="base"><inertial><origin xyz="0.1 -0.05 0.2" rpy="0.1 0.2 0.3"/><mass value="20"/>
    <inertia ixx="1.1" iyy="0.9" izz="1.3" ixy="0.05" ixz="-0.02" iyz="0.01"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.3"/><mass value="3"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hand"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="base_joint" type="planar"><parent link="world"/><child link="base"/>
    <origin xyz="0.3 0.2 0.1" rpy="0 0 0.4"/><axis xyz="0 0 1"/></joint>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="arm"/><origin xyz="0.2 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="1" effort="100" velocity="1"/></joint>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="hand"/><origin xyz="0 0 0.6" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""


def test_planar_joint_equals_pinocchio():
    model = urdf_dyn.load(PLANAR_URDF)
    pm = pin.buildModelFromXML(PLANAR_URDF)
    assert (model.nq, model.nv) == (5, 5) and model.q_names[:3] == ("base_joint.x", "base_joint.y", "base_joint.rz")
    err = _compare(model, pm, seed=3, n=3)
    assert max(err.values()) < TOL, err


def test_planar_axis_is_the_plane_normal():
    """URDF: motion in the plane normal to <axis> (Pinocchio ignores the axis). With axis x, the link moves in
    the y-z plane of the joint frame and turns about x; checked by forward kinematics."""
    m = urdf_dyn.load(PLANAR_URDF.replace('<axis xyz="0 0 1"/></joint>\n  <joint name="lift"',
                                          '<axis xyz="1 0 0"/></joint>\n  <joint name="lift"'))
    T0 = urdf_dyn.link_pose(m, m.neutral(), "base")
    q = m.neutral()
    q[:3] = (0.2, -0.3, 0.5)
    T = urdf_dyn.link_pose(m, q, "base")
    rel = np.linalg.inv(T0) @ T                  # motion in the joint frame at q = 0 (= the link frame there)
    assert abs(rel[0, 3]) < 1e-12 and np.hypot(rel[1, 3], rel[2, 3]) == pytest.approx(math.hypot(0.2, 0.3))
    assert rel[:3, 0] == pytest.approx([1, 0, 0])  # rotation about the normal x
    assert math.atan2(rel[2, 1], rel[1, 1]) == pytest.approx(0.5)


def _free_flight(path, gravity, duration=0.6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urdf_dyn.ModelWarning)
        model = urdf_dyn.load(path, package_dirs=ERD_PACKAGE_DIRS, floating_base=True, gravity=gravity)
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pm.gravity.linear = np.asarray(gravity, float)
    rng = np.random.default_rng(5)
    q0, v0, _, _ = _random_state(model, rng)
    v0 = 0.5 * v0
    traj = urdf_dyn.simulate(model, q0, v0, duration=duration, options=urdf_dyn.SimulateOptions(dt_out=0.05, passive=False, rtol=1e-11, atol=1e-12))
    br = Bridge(model, pm)
    pd = pm.createData()
    h = []
    for q, v in zip(traj.q, traj.qd):
        hg = pin.computeCentroidalMomentum(pm, pd, br.q(q), br.v(v))
        h.append(np.r_[hg.linear, hg.angular])
    return model, traj, np.array(h), pin.computeTotalMass(pm)


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
def test_free_flight_conserves_momentum_and_energy():
    model, traj, h, _ = _free_flight(ERD / "solo_description/robots/solo12.urdf", (0, 0, 0))
    scale = np.abs(h[0]).max()
    assert np.abs(h - h[0]).max() < 1e-7 * scale, np.abs(h - h[0]).max(axis=0)
    assert np.ptp(traj.energy) < 1e-7 * abs(traj.energy[0])
    assert traj.meta["quaternion_drift"] < 1e-8


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
def test_passive_fall_linear_momentum_grows_with_mg_and_energy_is_conserved():
    g = np.array([0.0, 0.0, -9.81])
    model, traj, h, mass = _free_flight(ERD / "solo_description/robots/solo12.urdf", g)
    dp = h[:, :3] - h[0, :3]
    np.testing.assert_allclose(dp, np.outer(traj.t, mass * g), atol=1e-7 * mass * 9.81)
    assert np.ptp(traj.energy) < 1e-7 * max(1.0, np.abs(traj.energy).max())


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
def test_floating_model_with_a_still_base_reproduces_the_fixed_model():
    path = ERD / "anymal_c_simple_description/urdf/anymal.urdf"
    fixed, _ = _load(path, floating_base=False)
    free, _ = _load(path, floating_base=True)
    rng = np.random.default_rng(2)
    q, v, a, _ = _random_state(fixed, rng)
    qf = np.r_[free.neutral()[:7], q]
    tau = urdf_dyn.inverse_dynamics(free, qf, np.r_[np.zeros(6), v], np.r_[np.zeros(6), a])
    assert _rel(tau[6:], urdf_dyn.inverse_dynamics(fixed, q, v, a)) < 1e-12


def test_qdot_is_the_derivative_of_integrate():
    model = urdf_dyn.load(PLANAR_URDF)
    rng = np.random.default_rng(0)
    q, v, _, _ = _random_state(model, rng)
    h = 1e-6
    fd = (integrate(model, q, v, h) - integrate(model, q, v, -h)) / (2 * h)
    assert np.abs(fd - qdot(model, q, v)).max() < 1e-8


RBDA_FLOAT_TEXT = """<robot name="f"><link name="BASE"/><link name="body"><inertial><mass value="1"/>
  <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="free" type="floating"><parent link="BASE"/><child link="body"/></joint></robot>"""


def test_bad_floating_state_is_refused():
    model = urdf_dyn.load(PLANAR_URDF, floating_base=True)
    assert (model.nq, model.nv) == (12, 11)
    with pytest.raises(urdf_dyn.StateError, match=r"\(12,\)"):
        urdf_dyn.inverse_dynamics(model, np.zeros(11), np.zeros(11), np.zeros(11))
    with pytest.raises(urdf_dyn.UnsupportedError, match="already has a floating joint"):
        urdf_dyn.load(RBDA_FLOAT_TEXT.replace("BASE", "base"), floating_base=True)
    with pytest.raises(urdf_dyn.UnsupportedError, match="MJCF export of floating"):
        to_mjspec(model)
    zero_quat, z = np.zeros(12), np.zeros(11)                  # q = 0 is not a configuration: quat = 0
    for call in (lambda: urdf_dyn.inverse_dynamics(model, zero_quat, z, z),      # (H does not depend on the
                 lambda: urdf_dyn.forward_dynamics(model, zero_quat, z, z),      # base's pose: not checked)
                 lambda: urdf_dyn.mass_matrix(model, zero_quat[None])):
        with pytest.raises(urdf_dyn.StateError, match="quaternion .* of floating joint 'root_joint', is zero"):
            call()
    # floating the massless root of a planar base: the free joint's x, y and yaw move nothing the planar joint
    # does not already move, so H is singular and forward dynamics says so
    with pytest.raises(np.linalg.LinAlgError, match="zero articulated inertia"):
        urdf_dyn.forward_dynamics(model, model.neutral(), z, z)
    motion = urdf_dyn.spline_motion(["lift"], [[0.0], [0.1]], [0.1], dt=0.05)
    with pytest.raises(urdf_dyn.UnsupportedError, match="fixed-base machines"):
        urdf_dyn.consistent_motion(model, motion, progress=False)


@pytest.mark.skipif(not RBDA.is_dir(), reason="../shared/data/generalized_rbda is absent")
@pytest.mark.parametrize("name", ["mini_cheetah.urdf", "mit_humanoid.urdf"])
def test_floating_urdf_plus_with_couplings(name):
    """URDF+ robots with a floating root and rotor couplings (Mini Cheetah: 12 couplings; MIT humanoid: 18):
    mobility 6 + the link joints; coupled FD equals Pinocchio's free-flyer tree dynamics projected by the
    hand-written coupling matrix G (base coordinates independent), G(GᵀHG)⁻¹Gᵀ(τ − C); a passive fall in
    free space conserves energy and keeps the couplings and the unit quaternion."""
    from test_couplings import _hand_G, _hand_relations_from_text
    model, pm = _load(RBDA / name, floating_base=False)
    xml = (RBDA / name).read_text()
    rel = _hand_relations_from_text(xml) if name == "mini_cheetah.urdf" else None
    mob = urdf_dyn.mobility(model, model.q_initial())
    ncoup = len(model.couplings)
    assert mob.dof == model.nv - ncoup
    print(f"{name}: nq {model.nq}, nv {model.nv}, couplings {ncoup}, mobility {mob.dof} = 6 + {mob.dof - 6}")
    br = Bridge(model, pm)
    pd = pm.createData()
    P = br.perm()
    rng = np.random.default_rng(7)
    ec = urdf_dyn.explicit_constraint(model, model.q_initial(), np.zeros(model.nv))
    G = ec.G
    if rel is not None:  # the hand-written G spans the same motions as urdf_dyn's
        Gh = _hand_G(model, rel)[0]
        assert np.allclose(G @ np.linalg.lstsq(G, Gh, rcond=None)[0], Gh, atol=1e-12)
        G = Gh
    y = rng.uniform(-0.5, 0.5, G.shape[1])
    q = model.neutral()
    q[:3] = (0.1, -0.2, 0.4)
    quat = rng.standard_normal(4)
    q[3:7] = quat / np.linalg.norm(quat)
    dq = G @ y  # 1-dof joint positions satisfying the (linear) couplings; base part unused
    iq = np.asarray(model.iq)
    for i in range(7, model.NB + 1):
        q[iq[i]] = dq[i - 1]
    qd, tau = G @ rng.uniform(-1, 1, G.shape[1]), rng.standard_normal(model.nv)
    qp = br.q(q)
    Hp = pin.crba(pm, pd, qp)
    Hp = (np.triu(Hp) + np.triu(Hp, 1).T)[np.ix_(P, P)]
    C = br.from_pin(pin.rnea(pm, pd, qp, br.v(qd), np.zeros(model.nv)))
    want = G @ np.linalg.solve(G.T @ Hp @ G, G.T @ (tau - C))
    for solver in ("nullspace", "lambda", "direct"):
        got = urdf_dyn.constrained_forward_dynamics(model, q, qd, tau, loop_solver=solver, passive=False).qdd
        assert _rel(got, want) < 1e-9, (solver, _rel(got, want))
    traj = urdf_dyn.simulate(model, q, qd, 0.3, options=urdf_dyn.SimulateOptions(passive=False, rtol=1e-10, atol=1e-12, dt_out=0.05))
    drift = np.ptp(traj.energy)
    K = urdf_dyn.loop_constraints(model, q, np.zeros(model.nv))[0]
    from urdf_dyn.algorithms.configuration import joint_positions
    print(f"{name}: passive fall 0.3 s, energy drift {drift:.1e} J of {np.abs(traj.energy).max():.3g} J")
    assert drift < 1e-6 * np.abs(traj.energy).max()
    assert np.abs(joint_positions(model, traj.q) @ K.T).max() < 1e-6
    assert traj.meta["quaternion_drift"] < 1e-8


CASSIE_SDF = RBDA.parent / "_history_30c0f5d" / "robot-models" / "cassie_v4.sdf"


@pytest.mark.skipif(not CASSIE_SDF.is_file(), reason="../shared/data/generalized_rbda is absent")
def test_cassie_loops_gearboxes_and_floating_base():
    """Cassie v4 (generalized_rbda history; Agility Robotics' parameters): the SDF has closed chains (achilles
    and plantar rods), 10 gearbox joints (motor rotor → joint) and a test-stand slider to the world. The file
    itself is refused at its line 605 (``-junk0.0001`` is not a number); a TEST-ONLY copy with that pose
    read as −0.0001 (the mirror of the left side's 0.0001) loads with a floating base: 6 loops, 10 couplings,
    and a passive fall from a random admissible velocity conserves energy with the loops closed."""
    with pytest.raises(urdf_dyn.ModelError, match=r"cassie_v4\.sdf:605: <pose>.*not a number"):
        urdf_dyn.load(CASSIE_SDF)
    text = CASSIE_SDF.read_text().replace("-junk0.0001", "-0.0001")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = urdf_dyn.load(text, floating_base=True)
        assert (model.nq, model.nv, len(model.loops), len(model.couplings)) == (45, 44, 6, 10)
        q = urdf_dyn.assemble(model, model.q_initial())
        mob = urdf_dyn.mobility(model, q)
        v = urdf_dyn.project_velocity(model, q, np.random.default_rng(1).uniform(-1, 1, model.nv))
        traj = urdf_dyn.simulate(model, q, v, 0.15, options=urdf_dyn.SimulateOptions(passive=False, rtol=1e-10, atol=1e-12, dt_out=0.01, limits=False))   # q_initial puts the tarsus cranks beyond their <limit>
    drift = np.ptp(traj.energy)
    print(f"cassie (repaired SDF copy): nq {model.nq}, nv {model.nv}, mobility {mob.dof} (rank {mob.rank} of "
          f"{mob.nc}), fall energy drift {drift:.1e} J of {traj.energy[0]:.4g} J, loop residual "
          f"{traj.residuals.max():.1e}")
    assert urdf_dyn.kinetic_energy(model, q, v) > 1.0 and np.ptp(traj.q[:, 7:], axis=0).max() > 0.1
    assert drift < 1e-6 * abs(traj.energy[0])
    assert traj.residuals.max() < 1e-4
