"""Balancers (gas and coil springs between two pins) against independent computations: the analytic torque
of one revolute joint, virtual work (τ = −∂V/∂q by central differences of each law's potential energy
written here in closed form, with the pins placed by forward kinematics of the link frames), and, through
the closed-loop actuator forces, the power balance of a four-bar: the actuator's extra power equals the rate
of change of the springs' potential energy."""
import math
import re

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms.force_elements import balancer_generalized_forces, balancer_lengths
from urdf_dyn.algorithms.kinematics import forward_kinematics
from urdf_dyn.constraints.forward import constrained_forward_dynamics
from urdf_dyn.constraints.inverse import actuation_matrix, actuator_forces, actuators_of, constrained_inverse_dynamics
from urdf_dyn.constraints.motion import consistent_motion
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.errors import ModelError, StateError
from urdf_dyn.simulation.trajectories import spline_motion

ONE_JOINT = """<robot name="one">
  <link name="base"/>
  <link name="arm"><inertial><mass value="2"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.01" iyy="0.2" izz="0.2" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="100" velocity="1"/></joint>
  {balancer}
</robot>"""

ARM3 = """<robot name="arm3">
  <link name="base"/>
  <link name="l1"><inertial><mass value="5"/><origin xyz="0 0 0.2"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="4"/><origin xyz="0.3 0 0"/>
    <inertia ixx="0.02" iyy="0.15" izz="0.15" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l3"><inertial><mass value="3"/><origin xyz="0.25 0 0"/>
    <inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.5" rpy="0.1 0 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.1 0.05 0.4" rpy="0 0.2 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="1"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0.6 0 0"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-0.2" upper="0.2" effort="100" velocity="1"/></joint>
  <joint name="tipj" type="fixed"><parent link="l3"/><child link="tip"/><origin xyz="0.2 0.1 0" rpy="0 0 1.0"/></joint>
  <balancer name="gas" type="gas_spring" action="pull" link_a="l1" xyz_a="-0.1 0.1 0.55" link_b="l2"
            xyz_b="0.5 0.02 0.1" precharge="2.0e6" area="1.2e-3" volume="6.0e-4" reference_length="0.35"
            exponent="1.3"/>
  <balancer name="coil" type="coil_spring" action="push" link_a="base" xyz_a="0.2 -0.1 0.1" link_b="tip"
            xyz_b="0.05 0 0.03" rate="3.0e4" free_length="1.4" preload="800"/>
</robot>"""


def gas_energy(p0, A, V0, n, x):
    """∫₀ˣ p0 A (V0/(V0 − A s))ⁿ ds in closed form (n ≠ 1)."""
    return p0 * V0 ** n / (n - 1) * ((V0 - A * x) ** (1 - n) - V0 ** (1 - n))


def pin(model, q, link, xyz):
    T = forward_kinematics(model, q)[link]
    return T[:3, :3] @ np.asarray(xyz) + T[:3, 3]


def potential(model, q):
    """The two springs' stored energy at q, from link poses (not body poses) and the laws written here."""
    La = np.linalg.norm(pin(model, q, "l2", [0.5, 0.02, 0.1]) - pin(model, q, "l1", [-0.1, 0.1, 0.55]))
    Lc = np.linalg.norm(pin(model, q, "tip", [0.05, 0, 0.03]) - pin(model, q, "base", [0.2, -0.1, 0.1]))
    xg = La - 0.35                      # pull: drawn out compresses the gas
    xc = 1.4 - Lc                       # push: shortened compresses the coil
    return gas_energy(2.0e6, 1.2e-3, 6.0e-4, 1.3, xg) + 800 * xc + 0.5 * 3.0e4 * xc ** 2


def test_one_joint_analytic():
    """Revolute joint about z; a push spring from (d, 0, 0) on the base to (r, 0, 0) on the arm:
    L² = r² + d² − 2 r d cos q, so τ = F r d sin q / L, and F = P0 + k (L0 − L)."""
    r, d, k, L0, P0 = 0.8, 0.3, 5.0e3, 0.9, 200.0
    bal = (f'<balancer name="s" type="coil_spring" action="push" link_a="base" xyz_a="{d} 0 0" link_b="arm" '
           f'xyz_b="{r} 0 0" rate="{k}" free_length="{L0}" preload="{P0}"/>')
    model = ud.load(ONE_JOINT.format(balancer=bal))
    for q in (0.4, 1.3, -1.0, -2.0):
        L = math.sqrt(r * r + d * d - 2 * r * d * math.cos(q))
        F = P0 + k * (L0 - L)
        tau = balancer_generalized_forces(model, np.array([q]))
        assert tau[0] == pytest.approx(F * r * d * math.sin(q) / L, rel=1e-12)
        # direction: a compressed push spring (L < L0, F > 0) drives q towards longer L, i.e. larger |q|;
        # drawn beyond its free length (q = −2: L = 0.965 m) it pulls back
        assert np.sign(tau[0]) == (np.sign(q) if L < L0 else -np.sign(q))
        assert balancer_lengths(model, np.array([q]))["s"] == pytest.approx(L, rel=1e-12)


def test_virtual_work_gas_and_coil_springs():
    model = ud.load(ARM3)
    rng = np.random.default_rng(3)
    for _ in range(6):
        q = rng.uniform([-1.5, -0.8, -0.15], [1.5, 0.8, 0.15])
        tau = balancer_generalized_forces(model, q)
        h = 1e-6
        dV = np.array([(potential(model, q + h * e) - potential(model, q - h * e)) / (2 * h) for e in np.eye(3)])
        assert np.allclose(tau, -dV, rtol=1e-6, atol=1e-6 * np.abs(dV).max())
        assert np.abs(tau).max() > 10.0     # the check has something to see
    # a batch gives the same rows as single states
    Q = rng.uniform([-1.5, -0.8, -0.15], [1.5, 0.8, 0.15], size=(5, 3))
    TB = balancer_generalized_forces(model, Q)
    assert np.allclose(TB, [balancer_generalized_forces(model, x) for x in Q], rtol=1e-14, atol=1e-9)


def test_balancers_enter_inverse_dynamics_of_a_tree():
    """constrained_inverse_dynamics (tree, no loop) subtracts the balancers: τ = RNEA − τ_bal."""
    model = ud.load(ARM3)
    q, qd, qdd = np.array([0.3, 0.2, 0.05]), np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -0.4])
    tau, _ = constrained_inverse_dynamics(model, q, qd, qdd)
    assert np.allclose(tau, ud.inverse_dynamics(model, q, qd, qdd) - balancer_generalized_forces(model, q),
                       rtol=1e-12, atol=1e-9)
    assert np.allclose(passive_forces(model, q, qd), balancer_generalized_forces(model, q), rtol=1e-14, atol=0)


FOUR_BAR_SPRING = ('<balancer name="lift" type="coil_spring" action="push" link_a="base" xyz_a="0.1 0 0.35" '
                   'link_b="rocker" xyz_b="0.3 0 0" rate="400" free_length="0.45" preload="20"/>\n'
                   '<balancer name="gas" type="gas_spring" action="push" link_a="base" xyz_a="-0.1 0 -0.1" '
                   'link_b="coupler" xyz_b="0.25 0 0" precharge="1.0e6" area="2.0e-4" volume="1.0e-4" '
                   'reference_length="0.55" exponent="1.4"/>\n</robot>')


def four_bar_pair():
    text = (ROOT / "robots" / "four_bar.urdf").read_text()
    plain = ud.load(text)
    sprung = ud.load(re.sub(r"</robot>\s*$", FOUR_BAR_SPRING, text))
    return plain, sprung


def spring_energy(model, q):
    L = balancer_lengths(model, q)
    xc = 0.45 - L["lift"]
    xg = 0.55 - L["gas"]
    return 20 * xc + 0.5 * 400 * xc ** 2 + gas_energy(1.0e6, 2.0e-4, 1.0e-4, 1.4, xg)


def test_four_bar_actuator_power_balance():
    """Along a consistent motion, the crank's extra torque times its speed is the rate at which the springs
    store energy: Δu q̇_crank = dV/dt (central differences of V along the motion, dt = 1 ms), for the
    compiled batch path, the readable reference and one state at a time."""
    plain, sprung = four_bar_pair()
    assert len(sprung.balancers) == 2
    mo = spline_motion(["crank_joint"], [[0.6], [1.8], [2.6]], [0.5, 0.5], dt=1e-3, kind="spline")
    Q, QD, QDD = consistent_motion(sprung, mo, progress=False)
    a = ["crank_joint"]
    du = actuator_forces(sprung, Q, QD, QDD, actuated=a).u[:, 0] - actuator_forces(plain, Q, QD, QDD, actuated=a).u[:, 0]
    V = spring_energy(sprung, Q)
    dVdt = np.gradient(V, mo.t, edge_order=2)
    ic = sprung.joint_index("crank_joint")
    sl = slice(5, -5)
    power = du * QD[:, ic]
    assert np.abs(dVdt[sl]).max() > 1.0
    assert np.allclose(power[sl], dVdt[sl], atol=2e-4 * np.abs(dVdt).max())
    ref = actuator_forces(sprung, Q[::50], QD[::50], QDD[::50], actuated=a, compiled=False).u
    assert np.allclose(ref, actuator_forces(sprung, Q[::50], QD[::50], QDD[::50], actuated=a).u, rtol=1e-9, atol=1e-9)
    for i in range(0, len(Q), 200):
        one = actuator_forces(sprung, Q[i], QD[i], QDD[i], actuated=a).u
        assert np.allclose(one, ref[i // 50], rtol=1e-9, atol=1e-9)


def test_four_bar_forward_dynamics_round_trip():
    """Forward dynamics with the springs (passive=True) of the actuator torque that ID gives returns q̈."""
    _, sprung = four_bar_pair()
    mo = spline_motion(["crank_joint"], [[0.6], [1.8]], [0.5], dt=0.05, kind="spline")
    Q, QD, QDD = consistent_motion(sprung, mo, progress=False)
    acts = actuators_of(sprung, ["crank_joint"])
    for i in (2, 5, 8):
        u = actuator_forces(sprung, Q[i], QD[i], QDD[i], actuated=["crank_joint"]).u
        B = actuation_matrix(sprung, Q[i], acts)
        res = constrained_forward_dynamics(sprung, Q[i], QD[i], B @ u)
        assert np.allclose(res.qdd, QDD[i], atol=1e-7 * (1 + np.abs(QDD[i]).max()))
        assert not np.allclose(res.qdd, constrained_forward_dynamics(sprung, Q[i], QD[i], B @ u,
                                                                      passive=False).qdd, atol=1e-3)


@pytest.mark.parametrize("attrs, words", [
    ('type="gas_spring" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0" precharge="1e6" area="1e-3" '
     'volume="1e-3" exponent="1.3"', "missing: reference_length"),
    ('type="coil_spring" link_a="base" xyz_a="0 0 0" link_b="nowhere" xyz_b="1 0 0" rate="1" free_length="1" '
     'preload="0"', "unknown link 'nowhere'"),
    ('type="hydraulic" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0"', "types are gas_spring, coil_spring"),
    ('type="coil_spring" link_a="base" xyz_a="0 0" link_b="arm" xyz_b="1 0 0" rate="1" free_length="1" '
     'preload="0"', "expected 3 numbers"),
    ('type="coil_spring" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0" rate="1" free_length="1" '
     'preload="0" precharge="3"', "unknown attribute(s) precharge"),
    ('type="coil_spring" action="shove" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0" rate="1" '
     'free_length="1" preload="0"', "action 'shove'"),
    ('type="gas_spring" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0" precharge="1e6" area="1e-3" '
     'volume="1e-3" reference_length="1" exponent="3"', "polytropic exponent"),
    ('type="coil_spring" link_a="base" xyz_a="0 0 0" link_b="arm" xyz_b="1 0 0" rate="-5" free_length="1" '
     'preload="0"', "rate = -5.0"),
])
def test_bad_balancer_is_located(attrs, words):
    with pytest.raises(ModelError) as e:
        ud.load(ONE_JOINT.format(balancer=f'<balancer name="b" {attrs}/>'))
    assert words in str(e.value) and ":7:" in str(e.value)


def test_gas_spring_bottoming_out_is_an_error():
    bal = ('<balancer name="g" type="gas_spring" action="push" link_a="base" xyz_a="-0.2 0 0" link_b="arm" '
           'xyz_b="0.8 0 0" precharge="1e6" area="1e-2" volume="1e-3" reference_length="1.0" exponent="1.3"/>')
    model = ud.load(ONE_JOINT.format(balancer=bal))
    balancer_generalized_forces(model, np.array([0.05]))    # L ≈ 1.0: fine
    with pytest.raises(StateError, match="'g'.*compressed to zero volume"):
        balancer_generalized_forces(model, np.array([2.5]))  # L ≈ 0.68: 0.32 m × 1e-2 m² > 1e-3 m³


def _scenario(tmp_path, balancers):
    import yaml
    robot = tmp_path / "one.urdf"
    robot.write_text(ONE_JOINT.format(balancer=""))
    p = tmp_path / "s.scenario.yaml"
    p.write_text(yaml.safe_dump({"robot": {"file": "one.urdf", "balancers": balancers}, "job": "simulate"}))
    return p


def test_scenario_balancers_are_added_and_located(tmp_path):
    from urdf_dyn.errors import ScenarioError
    from urdf_dyn.launch.document import build_model, read_scenario
    spec = {"name": "s", "type": "coil_spring", "action": "push", "link_a": "base", "xyz_a": [0.3, 0, 0],
            "link_b": "arm", "xyz_b": [0.8, 0, 0], "rate": 5.0e3, "free_length": 0.9, "preload": 200.0}
    model = build_model(read_scenario(_scenario(tmp_path, [spec])))
    urdf = ud.load(ONE_JOINT.format(balancer='<balancer name="s" type="coil_spring" action="push" link_a="base" '
                                    'xyz_a="0.3 0 0" link_b="arm" xyz_b="0.8 0 0" rate="5e3" free_length="0.9" '
                                    'preload="200"/>'))
    q = np.array([0.7])
    assert np.allclose(balancer_generalized_forces(model, q), balancer_generalized_forces(urdf, q), rtol=1e-15)
    for change, words in (({"rate": None}, "robot.balancers[0]: balancer 's': a coil_spring needs rate"),
                          ({"precharge": 1e6}, "robot.balancers[0]: precharge: not a key of a coil_spring balancer"),
                          ({"link_a": None}, "robot.balancers[0]: missing link_a"),
                          ({"type": "hydraulic"}, "robot.balancers[0]: balancer 's': unknown balancer type"),
                          ({"link_b": "hand"}, "robot.balancers[0]: balancer 's': unknown link 'hand'")):
        bad = {k: v for k, v in {**spec, **change}.items() if v is not None}
        with pytest.raises(ScenarioError) as e:
            build_model(read_scenario(_scenario(tmp_path, [bad])))
        assert words in str(e.value)
    with pytest.raises(ScenarioError, match="robot.balancers: balancer name.* used twice: s"):
        build_model(read_scenario(_scenario(tmp_path, [spec, spec])))


def test_simulated_four_bar_keeps_its_energy_with_the_springs():
    """Free motion of the sprung four-bar (no damping, no actuator): kinetic + gravitational + spring energy is
    conserved by ``simulate`` (closed-loop FD with the balancers as passive forces), while leaving the springs'
    energy out of the sum shows a swing of joules."""
    _, sprung = four_bar_pair()
    q0 = sprung.q_initial()
    traj = ud.simulate(sprung, q0, np.zeros(sprung.nv), 1.0, options=ud.SimulateOptions(dt_out=0.01, rtol=1e-10, atol=1e-12, progress=False))
    E0 = ud.kinetic_energy(sprung, traj.q, traj.qd) + ud.potential_energy(sprung, traj.q)
    E = E0 + spring_energy(sprung, traj.q)
    assert np.ptp(spring_energy(sprung, traj.q)) > 1.0
    assert np.ptp(E) < 1e-4 * np.ptp(E0)


def test_mjcf_export_says_the_balancers_are_left_out():
    pytest.importorskip("mujoco")
    from urdf_dyn.errors import ModelWarning
    from urdf_dyn.io.mjcf_export import to_mjspec
    _, sprung = four_bar_pair()
    with pytest.warns(ModelWarning, match="balancer\\(s\\) lift, gas not exported"):
        to_mjspec(sprung)
