"""End stops in simulate: impulse and static stop force against hand computations, the excavator
held on a stroke end against closed-loop inverse dynamics, limits=False against an independent integration,
energy across impacts, and the floating-base / step-count guards."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import urdf_dyn as ud
from conftest import ROOT
from urdf_dyn.simulation.controllers import Constant
from urdf_dyn.simulation.simulate import Trajectory, simulate

M, L, I_C, G = 2.0, 0.7, 0.01, 9.81
LOWER = 0.5


def _pendulum(lower=LOWER, upper=2.0):
    """A bob of mass M at L below a hinge about y (θ = 0 hanging), stops at [lower, upper] rad."""
    return ud.load(f"""<robot name="pendulum">
  <link name="base"/>
  <link name="bob"><inertial><origin xyz="0 0 {-L}"/><mass value="{M}"/>
    <inertia ixx="{I_C}" iyy="{I_C}" izz="{I_C}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/><origin xyz="0 0 1.0"/>
    <axis xyz="0 1 0"/><limit lower="{lower}" upper="{upper}" effort="0" velocity="10"/></joint>
</robot>""")


@pytest.fixture(scope="module")
def fall():
    return simulate(_pendulum(), [1.2], [0.0], 1.5, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12))


def test_pendulum_stops_on_its_limit_with_the_momentum_impulse(fall):
    tr = fall
    # hand: energy from θ0 = 1.2 down to the stop gives ω⁻; the angular momentum about the hinge I ω⁻ is
    # removed by the stop's angular impulse (impulse × lever = I |ω⁻|), after which ω = 0
    I = M * L ** 2 + I_C
    w_minus = np.sqrt(2 * M * G * L * (np.cos(LOWER) - np.cos(1.2)) / I)
    (imp,) = tr.meta["impacts"]
    assert imp["impulses"]["hinge"] == pytest.approx(I * w_minus, rel=1e-8)    # +: pushes towards +θ
    assert imp["kinetic_before"] == pytest.approx(0.5 * I * w_minus ** 2, rel=1e-8)
    assert imp["kinetic_after"] == 0.0
    after = tr.t > imp["t"]
    assert np.all(np.abs(tr.q[after, 0] - LOWER) < 1e-9) and np.all(np.abs(tr.qd[after, 0]) < 1e-9)
    assert np.all(np.abs(tr.qdd[after, 0]) < 1e-8)
    # at rest the stop carries the gravity moment about the hinge, M g L sin θ (hand statics)
    assert tr.stop_force[after, 0] == pytest.approx(np.full(after.sum(), M * G * L * np.sin(LOWER)), rel=1e-9)
    assert np.all(tr.stop_active[after, 0] == -1) and np.all(tr.stop_active[~after, 0] == 0)
    assert np.all(tr.stop_force[~after, 0] == 0.0)


def test_motion_before_the_stop_is_the_free_motion_and_the_impact_time_its_crossing(fall):
    free = simulate(_pendulum(), [1.2], [0.0], 1.5, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12, limits=False))
    t_hit = fall.meta["impacts"][0]["t"]
    before = fall.t < t_hit
    assert np.array_equal(fall.q[before], free.q[before])
    # the free run's crossing of θ = LOWER, from a cubic Hermite fit on its samples around it
    i = np.flatnonzero(free.q[:, 0] < LOWER)[0]
    from scipy.interpolate import CubicHermiteSpline
    from scipy.optimize import brentq
    s = CubicHermiteSpline(free.t[i - 1:i + 1], free.q[i - 1:i + 1, 0], free.qd[i - 1:i + 1, 0])
    assert t_hit == pytest.approx(brentq(lambda t: s(t) - LOWER, free.t[i - 1], free.t[i]), abs=1e-7)


def test_limits_false_is_the_plain_integration_through_the_stop():
    """limits=False is the behaviour before end stops: the pendulum swings through its limit, and every
    sample equals scipy's solve_ivp (same method, tolerances) of the tree's forward dynamics."""
    model = _pendulum()
    tr = simulate(model, [1.2], [0.0], 1.0, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12, limits=False))
    ref = solve_ivp(lambda t, x: np.r_[x[1], ud.forward_dynamics(model, x[:1], x[1:], np.zeros(1))],
                    (0.0, 1.0), [1.2, 0.0], method="DOP853", rtol=1e-10, atol=1e-12, t_eval=tr.t, dense_output=True)
    assert np.array_equal(tr.q[:, 0], ref.y[0]) and np.array_equal(tr.qd[:, 0], ref.y[1])
    assert tr.q[:, 0].min() < LOWER - 0.5    # through the stop
    assert tr.stop_active is None and tr.stop_force is None and "impacts" not in tr.meta


def _double_pendulum():
    link = ('<inertial><origin xyz="0 0 -0.5"/><mass value="{m}"/><inertia ixx="0.02" iyy="0.02" izz="0.02" '
            'ixy="0" ixz="0" iyz="0"/></inertial>')
    return ud.load(f"""<robot name="double">
  <link name="base"/><link name="a">{link.format(m=1.5)}</link><link name="b">{link.format(m=1.0)}</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="-0.6" upper="0.9" effort="10" velocity="10"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 -1"/><axis xyz="0 1 0"/>
    <limit lower="-0.4" upper="0.5" effort="10" velocity="10"/></joint>
</robot>""")


def test_energy_never_increases_across_an_impact():
    model = _double_pendulum()
    tr = simulate(model, [0.3, -0.1], [4.0, -6.0], 3.0, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12, passive=False))
    imps = tr.meta["impacts"]
    assert len(imps) >= 3 and {j for i in imps for j in i["impulses"]} == {"j1", "j2"}
    for imp in imps:
        assert imp["kinetic_after"] <= imp["kinetic_before"] * (1 + 1e-12)
    # between impacts the run conserves energy (no damping); across them it can only lose it
    assert np.all(np.diff(tr.energy) <= 1e-7 * np.abs(tr.energy).max())
    assert tr.energy[-1] < tr.energy[0] - 0.1
    # the recorded kinetic energy before each impact matches the energy budget: E(0) minus what earlier
    # impacts removed, minus the potential energy there
    lost = 0.0
    for imp in imps:
        qk = np.interp(imp["t"], tr.t, tr.q[:, 0]), np.interp(imp["t"], tr.t, tr.q[:, 1])
        assert np.all(np.array(qk) >= model.lower - 1e-3) and np.all(np.array(qk) <= model.upper + 1e-3)
        lost += imp["kinetic_before"] - imp["kinetic_after"]
    assert tr.energy[0] - tr.energy[-1] == pytest.approx(lost, rel=1e-5, abs=1e-6)
    # the joints stay inside their limits (to the Baumgarte-stabilised drift)
    assert np.all(tr.q >= model.lower - 1e-8) and np.all(tr.q <= model.upper + 1e-8)


def _excavator_on_boom_end():
    """The excavator with the boom cylinder fully retracted (its lower stroke end, where gravity pushes it),
    the stick and bucket cylinders at mid-stroke; returns (model, q, τ holding stick and bucket, F_boom)."""
    from urdf_dyn.constraints.assembly import assemble
    m = ud.load(ROOT / "robots" / "excavator.urdf")
    cyl = ("boom_cyl", "stick_cyl", "bucket_cyl")
    ic = [m.joint_index(c) for c in cyl]
    q = m.q_initial()
    q[ic[0]] = m.lower[ic[0]]
    for j in ic[1:]:
        q[j] = 0.5 * (m.lower[j] + m.upper[j])
    q = assemble(m, q, hold=cyl)
    af = ud.actuator_forces(m, q, np.zeros(m.nv), np.zeros(m.nv))
    u = dict(zip(af.names, af.u))
    tau = np.zeros(m.nv)
    for c in cyl[1:]:
        tau[m.joint_index(c)] = u[c]
    return m, q, tau, u["boom_cyl"]


def test_excavator_held_on_a_stroke_end_carries_the_load_in_the_stop():
    m, q, tau, F_boom = _excavator_on_boom_end()
    b = m.joint_index("boom_cyl")
    assert F_boom > 1e5       # gravity pushes the boom cylinder into its lower end (the ID force pushes out)
    tr = simulate(m, q, None, 0.5, controller=Constant(m, tau), options=ud.SimulateOptions(dt_out=0.05))
    assert "impacts" not in tr.meta and np.all(tr.tau[:, b] == 0.0)     # the cylinder itself pushes nothing
    assert np.abs(tr.q - tr.q[0]).max() < 1e-7                           # and the machine stays put
    # the stop carries what the cylinder would have to (closed-loop ID through the four loops), same direction
    assert tr.stop_force[:, b] == pytest.approx(np.full(len(tr), F_boom), rel=1e-7)
    assert np.all(tr.stop_active[:, b] == -1)
    # one stop carries the load: the boom pin's own range is wider than the stroke, the other cylinders are free
    others = np.delete(np.arange(m.nv), b)
    assert np.all(tr.stop_force[:, others] == 0.0) and np.all(tr.stop_active[:, others] == 0)
    # without the stop the boom falls through the stroke end
    free = simulate(m, q, None, 0.5, controller=Constant(m, tau), options=ud.SimulateOptions(dt_out=0.05, limits=False))
    assert free.q[-1, b] < m.lower[b] - 0.01


def test_files_without_stop_fields_still_load(tmp_path, fall):
    for suffix in ("npz", "csv"):
        fall.save(tmp_path / f"stops.{suffix}")
        back = Trajectory.load(tmp_path / f"stops.{suffix}")
        assert np.array_equal(back.stop_active, fall.stop_active) and back.stop_active.dtype == np.int8
        assert np.allclose(back.stop_force, fall.stop_force, rtol=1e-15)
    old = simulate(_pendulum(), [1.2], [0.0], 0.05, options=ud.SimulateOptions(limits=False))
    for suffix in ("npz", "csv"):
        old.save(tmp_path / f"old.{suffix}")
        back = Trajectory.load(tmp_path / f"old.{suffix}")
        assert back.stop_active is None and back.stop_force is None and np.array_equal(back.q, old.q)


def test_start_beyond_a_limit_is_refused():
    with pytest.raises(ud.StateError, match=r"q0\['hinge'\] = 0.4 is beyond its lower limit 0.5"):
        simulate(_pendulum(), [0.4], [0.0], 0.1)


def test_floating_base_with_massless_base_links_is_refused_up_front():
    """``--floating-base`` on an arm whose base links are massless stepped at 1e-7 s for minutes;
    the singular H is now found before integrating, and the massless links are named."""
    inert = ('<inertial><origin xyz="0.3 0 0"/><mass value="2"/><inertia ixx="0.01" iyy="0.02" izz="0.03" '
             'ixy="0" ixz="0" iyz="0"/></inertial>')
    lim = '<limit lower="-3" upper="3" effort="10" velocity="1"/>'
    urdf = f"""<robot name="arm">
  <link name="base_link"/><link name="shoulder"/><link name="upper">{inert}</link><link name="fore">{inert}</link>
  <joint name="pan" type="revolute"><parent link="base_link"/><child link="shoulder"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/>{lim}</joint>
  <joint name="lift" type="revolute"><parent link="shoulder"/><child link="upper"/><origin xyz="0 0.1 0.1"/>
    <axis xyz="0 1 0"/>{lim}</joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0.6 0 0"/>
    <axis xyz="0 1 0"/>{lim}</joint>
</robot>"""
    m = ud.load(urdf, floating_base=True)
    q0 = m.neutral()
    q0[[m.q_index(j) for j in ("pan", "lift", "elbow")]] = 0.3, 0.4, -0.7
    # the base's six coordinates and `pan` move the same two massive links: H (9×9) has rank 7 at every q,
    # but round-off leaves ABA a tiny non-zero articulated inertia here instead of the exact zero it reports
    assert np.linalg.eigvalsh(ud.mass_matrix(m, q0))[1] < 1e-12
    with pytest.raises(ud.StateError, match="singular.*massless links base_link, shoulder"):
        simulate(m, q0, None, 1.0)


def test_max_steps_stops_with_the_samples_computed():
    with pytest.raises(ud.SimulationError, match="max_steps = 10 steps") as ei:
        simulate(_double_pendulum(), [0.3, -0.1], [4.0, -6.0], 3.0, options=ud.SimulateOptions(rtol=1e-10, atol=1e-12, max_steps=10))
    tr = ei.value.trajectory
    assert 1 < len(tr) < 301 and np.all(np.isfinite(tr.q)) and tr.t[-1] < 3.0
    assert tr.meta["status"] == "failed" and "max_steps" in tr.meta["message"]


def test_ends_reached_names_the_joint_and_the_first_time():
    from urdf_dyn.simulation.limits import ends_reached
    model = _pendulum()
    t = np.linspace(0.0, 1.0, 101)
    names, line = ends_reached(model, t, (1.2 - 1.0 * t)[:, None])      # crosses 0.5 at t = 0.7 s
    assert names == ["hinge"] and line.endswith("hinge lower end at t = 0.70 s")
    names, line = ends_reached(model, t, (1.2 - 0.5 * t)[:, None])      # stops 0.2 rad short, at t = 1 s
    assert names == [] and "smallest stroke margin 0.2 rad: hinge to its lower end at t = 1.00 s" in line


def test_excavator_impact_on_a_stroke_end_is_consistent_with_the_loops():
    """The boom cylinder reaching its lower end with the mechanism moving: the velocity after the impact
    closes the loops (K v⁺ = 0), stops the cylinder, and satisfies impulse = momentum change in the
    mechanism's coordinates; for the one stop the impulse is −v⁻_b / (e_bᵀ N (NᵀHN)⁻¹ Nᵀ e_b), N an
    orthonormal basis of null(K) from scipy's SVD (not the code's elimination)."""
    from scipy.linalg import null_space

    from urdf_dyn.constraints.loops import loop_constraints
    from urdf_dyn.simulation.limits import end_stops, impact
    m, q, _, _ = _excavator_on_boom_end()
    b = m.joint_index("boom_cyl")
    K, _ = loop_constraints(m, q, np.zeros(m.nv))
    N = null_space(K, rcond=1e-9)                     # (12, 4): the machine's four degrees of freedom
    v = N @ np.array([0.3, -0.2, 0.1, 0.05])
    v *= -0.2 / v[b]                                  # the boom cylinder retracts at 0.2 m/s into its end
    stops = end_stops(m)
    rows = list(np.flatnonzero(stops.contact(q)))
    vp, p = impact(m, stops, rows, q, v)
    H = ud.mass_matrix(m, q)
    assert abs(vp[b]) < 1e-12 and np.linalg.norm(K @ vp) < 1e-9 * np.linalg.norm(v)
    e = np.zeros(m.nv)
    e[b] = 1.0
    Minv = np.linalg.inv(N.T @ H @ N)
    p_hand = 0.2 / (e @ N @ Minv @ N.T @ e)
    assert p[b] == pytest.approx(p_hand, rel=1e-9) and np.count_nonzero(p) == 1
    assert N.T @ H @ (vp - v) == pytest.approx(N.T @ e * p[b], rel=1e-9, abs=1e-9 * p_hand)
    assert 0.5 * vp @ H @ vp < 0.5 * v @ H @ v


def test_stewart_platform_rests_on_six_stroke_ends_at_once():
    """robots/stewart.sdf's home pose puts all six pistons on their lower stroke end (`assemble`
    leaves them at ±1e-16, the sign set by the CPU's BLAS). With end stops the platform rests on six stops at
    once, through five loops: each stop carries the piston force of closed-loop inverse dynamics with the six
    pistons as actuators, whatever the round-off's sign (the same run from the pistons moved by ±1e-10 m)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ud.load(ROOT / "robots" / "stewart.sdf")
        q0 = ud.assemble(m, m.q_initial())
        pistons = [n for n in m.joint_names if "prismatic" in n]
        ip = [m.joint_index(n) for n in pistons]
        af = ud.actuator_forces(m, q0, np.zeros(m.nv), np.zeros(m.nv), actuated=pistons)
        assert af.case == "properly actuated" and np.all(af.u > 1.0)     # gravity pushes every piston in
        for shift in (0.0, 1e-10, -1e-10):
            q = q0.copy()
            q[ip] += shift * np.array([1, -1, 1, -1, 1, -1])
            tr = simulate(m, q, None, 0.2, options=ud.SimulateOptions(dt_out=0.05))
            assert np.all(tr.stop_active[:, ip] == -1) and np.abs(tr.q - tr.q[0]).max() < 1e-8
            assert tr.stop_force[-1, ip] == pytest.approx(af.u, rel=1e-6)
            assert np.count_nonzero(tr.stop_force[-1]) == 6


@pytest.mark.parametrize("limits", [True, False])
def test_scenario_key_solver_limits(tmp_path, limits):
    from urdf_dyn.launch.registry import run_scenario
    from _robots import pendulum_urdf
    urdf = pendulum_urdf().replace('type="continuous"', 'type="revolute"').replace(
        "<dynamics", f'<limit lower="{LOWER}" upper="2.0" effort="0" velocity="10"/><dynamics')
    (tmp_path / "p.urdf").write_text(urdf)
    (tmp_path / "p.scenario.yaml").write_text(
        "robot: {file: p.urdf}\njob: simulate\ninitial_state: {q: {hinge: 1.2}}\nduration: 1.0\n"
        f"solver: {{rtol: 1.0e-10, atol: 1.0e-12, limits: {str(limits).lower()}}}\n"
        "outputs: {trajectory: [t.npz, t.csv]}\n")
    traj, written = run_scenario(tmp_path / "p.scenario.yaml", out_dir=tmp_path / "out", echo=lambda *a: None)
    back = Trajectory.load(tmp_path / "out" / "t.csv")
    if limits:
        assert traj.q[:, 0].min() > LOWER - 1e-9 and np.all(back.stop_active[-1] == -1)
        assert "end stops: 1 impacts; active on hinge" in (tmp_path / "out" / "torque_report.md").read_text()
    else:
        assert traj.q[:, 0].min() < LOWER - 0.5 and back.stop_active is None
