"""Nothing runs that the user did not ask for, nothing hangs, nothing is silently wrong.

xacro's restricted evaluator and --trust-xacro, the YAML alias budget, bounded trajectory files, the
one-state guard of the closed-loop functions, `urdf-dyn fd`/`id` through the loops (against the sympy
reduced-coordinate derivation of the crank-slider), controllers acting through the actuators (the machine
held at rest by closed-loop forward dynamics), and the viewer's fallbacks (inertia box against a box's
textbook inertia)."""
import json
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT, SHARED, needs_shared
from urdf_dyn.cli.main import main
from urdf_dyn.io.xacro_safe import XacroLimitError, XacroSafetyError, safe_eval

XNS = 'xmlns:xacro="http://wiki.ros.org/xacro"'
CRANK = ROOT / "robots" / "crank_slider.urdf"
EXC = ROOT / "robots" / "excavator.urdf"


# -- xacro ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr, value", [
    ("1 + 2 * 3", 7), ("pi / 2", np.pi / 2), ("radians(90)", np.pi / 2), ("math.sin(0.5)", np.sin(0.5)),
    ("-l / 2 if l > 0 else 0", -0.35), ("'%s_link' % prefix", "arm_link"), ("prefix + '_joint'", "arm_joint"),
    ("max(l, 1) ** 2", 1.0), ("d['a'][1]", 2), ("prefix.upper()", "ARM"), ("len([1, 2, 3]) == 3 and not False", True),
    ("python.abs(-2) < 3 <= 3", True), ("int('4') + float(l)", 4.7)])
def test_restricted_evaluator_allows_arithmetic_and_properties(expr, value):
    import xacro
    names = dict(xacro._global_symbols)  # what xacro's symbol table holds: math, python, xacro namespaces
    names.update({"l": 0.7, "prefix": "arm", "d": {"a": [1, 2]}})
    got = safe_eval(expr, names, frozenset(id(v) for v in names.values()
                                           if callable(v) and getattr(v, "__name__", "") in ("wrapper",)))
    assert got == (pytest.approx(value) if isinstance(value, float) else value)


@pytest.mark.parametrize("expr", [
    "__import__('os')", "().__class__", "''.join.__self__", "open('/etc/passwd')", "exec('1')", "eval('1')",
    "getattr(1, 'real')", "(lambda: 1)()", "[x for x in (1, 2)]", "'\\x5f\\x5fclass\\x5f\\x5f'", "globals()",
    "type(1)", "'{0}'.format(1)", "compile('1', 'x', 'eval')", "vars()"])
def test_restricted_evaluator_refuses_code(expr):
    with pytest.raises(XacroSafetyError, match="not allowed"):
        safe_eval(expr, {})


@pytest.mark.parametrize("expr", ["9 ** 9 ** 9", "'ab' * 10 ** 9", "2 << 10 ** 9", "[0] * 10 ** 8"])
def test_restricted_evaluator_bounds_values(expr):
    with pytest.raises(XacroLimitError):
        safe_eval(expr, {})


def test_trust_xacro_runs_python_and_the_default_does_not(tmp_path):
    """The same file: refused by default; with trust_xacro=True xacro's own eval runs the comprehension."""
    f = tmp_path / "r.xacro"
    f.write_text(f'<robot name="r" {XNS}><link name="base"/><link name="l${{python.sum([i for i in (1, 2)])}}"/>'
                 '<joint name="j" type="fixed"><parent link="base"/><child link="l3"/></joint></robot>')
    with pytest.raises(ud.XacroError, match=r"r.xacro:1: refused: .*ListComp"):
        ud.load(f)
    assert "l3" in ud.load(f, trust_xacro=True).links
    assert main(["info", str(f)]) == 2
    assert main(["info", str(f), "--trust-xacro"]) == 0


def test_xacro_args_must_be_a_mapping(tmp_path):
    f = tmp_path / "r.xacro"
    f.write_text(f'<robot name="r" {XNS}><link name="base"/></robot>')
    with pytest.raises(ud.XacroError, match="xacro_args must be a mapping"):
        ud.load(f, xacro_args=["a", "b"])


# -- YAML, trajectories, sample counts -----------------------------------------------------------------------
def test_yaml_anchors_within_the_budget_still_work(tmp_path):
    from urdf_dyn.launch import read_scenario
    f = tmp_path / "a.scenario.yaml"
    f.write_text("defaults: &d {rtol: 1.0e-6}\nrobot: {file: x.urdf}\nsolver: {<<: *d, atol: 1.0e-9}\n")
    assert read_scenario(f).data["solver"] == {"rtol": 1e-6, "atol": 1e-9}


@pytest.mark.parametrize("robot, suffix", [("puma560", ".csv"), ("puma560", ".npz"), ("four_bar", ".csv"),
                                           ("four_bar", ".npz")])
def test_trajectory_files_round_trip(tmp_path, robot, suffix):
    m = ud.load(ROOT / "robots" / f"{robot}.urdf")
    tr = ud.simulate(m, m.q_initial(), None, 0.1, options=ud.SimulateOptions(dt_out=0.02))
    back = ud.Trajectory.load(tr.save(tmp_path / f"t{suffix}"))
    for k in ("t", "q", "qd", "qdd", "tau", "energy"):
        assert np.array_equal(getattr(back, k), getattr(tr, k)), k
    assert back.joint_names == tr.joint_names and back.loop_names == tr.loop_names
    if tr.residuals is not None:
        assert np.array_equal(back.residuals, tr.residuals)


def test_view_reads_the_csv_that_simulate_writes(tmp_path, capsys):
    out = tmp_path / "run.csv"
    assert main(["simulate", str(ROOT / "robots" / "puma560.urdf"), "--duration", "0.1", "--out", str(out)]) == 0
    from urdf_dyn_viewer.cli import _read_trajectory
    import types
    tr = _read_trajectory(types.SimpleNamespace(traj=str(out), q=None))
    assert len(tr) == 11 and tr.q.shape == (11, 6)


def test_too_many_samples_is_an_error_naming_dt_out():
    m = ud.load(ROOT / "robots" / "puma560.urdf")
    with pytest.raises(ValueError, match="dt_out"):
        ud.simulate(m, np.zeros(6), None, 10.0, options=ud.SimulateOptions(dt_out=1e-9))


# -- one state, not a batch ----------------------------------------------------------------------------------
def test_closed_loop_functions_refuse_a_batch():
    m = ud.load(CRANK)
    q = ud.assemble(m, m.q_initial())
    Q = np.stack([q, q])
    z = np.zeros((2, 3))
    for f in (lambda: ud.constrained_forward_dynamics(m, Q, z, z), lambda: ud.assemble(m, Q),
              lambda: ud.constrained_inverse_dynamics(m, Q, z, z), lambda: ud.loop_constraints(m, Q, z),
              lambda: ud.project_velocity(m, Q, z), lambda: ud.loop_residuals(m, Q)):
        with pytest.raises(ud.StateError, match="one state"):
            f()
    # actuator_forces takes a batch and evaluates every row: row i equals the single-state answer
    af = ud.actuator_forces(m, Q, z, z)
    assert np.allclose(af.u[1], ud.actuator_forces(m, q, z[0], z[0]).u)


# -- fd / id through the loops -------------------------------------------------------------------------------
def test_cli_fd_and_id_use_the_loops_and_match_the_reduced_derivation(capsys):
    """The crank-slider's θ̈1 from Lagrange's equations in θ1 alone (sympy, test_closed_loop) equals
    `urdf-dyn fd`; the crank torque that gives θ̈1 = 2 rad/s² at rest equals M(θ) θ̈ + V'(θ) from the same
    derivation; --tree gives the spanning tree's answer."""
    from test_closed_loop import crank_slider_reduced
    th = 0.3
    f, _ = crank_slider_reduced()
    assert main(["fd", str(CRANK), "--q", f"crank={th}", "--tau", "crank=-0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # the URDF gives the inertias to 7 digits, the derivation uses exact ones: agreement to ~2e-8
    assert out["closed_loop"] and out["qdd"][0] == pytest.approx(f(th, 0.0), rel=1e-7)
    a0 = crank_slider_reduced(tau=0.0)[0](th, 0.0)
    a1 = crank_slider_reduced(tau=1.0)[0](th, 0.0)
    M = 1.0 / (a1 - a0)
    assert main(["id", str(CRANK), "--q", f"crank={th}", "--qdd", "crank=2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["names"] == ["crank"] and out["u"][0] == pytest.approx(M * 2.0 - a0 * M, rel=1e-7)
    assert main(["fd", str(CRANK), "--q", f"crank={th}", "--tau", "crank=-0.5", "--json", "--tree"]) == 0
    tree = json.loads(capsys.readouterr().out)
    m = ud.load(CRANK)
    q = np.array([th, 0.0, 0.0])
    assert np.allclose(tree["qdd"], ud.forward_dynamics(m, q, np.zeros(3), np.array([-0.5, 0, 0])
                                                         + ud.passive_forces(m, q, np.zeros(3)) * 0))


# -- controllers through the actuators -----------------------------------------------------------------------
def test_gravity_compensation_on_the_excavator_acts_through_its_actuators():
    """τ = B u: no torque on the passive pins (the old controller put ~150 kN m on the boom pin), and the
    machine stays at rest: closed-loop forward dynamics gives q̈ = 0."""
    m = ud.load(EXC)
    q = ud.assemble(m, m.q_initial())
    tau = ud.GravityCompensation(m)(0.0, q, np.zeros(m.nv))
    driven = {a.joint for a in ud.actuators_of(m)}
    for j, v in zip(m.joint_names, tau):
        if j not in driven:
            assert v == 0.0, j
    assert abs(ud.gravity_torques(m, q)[m.joint_index("boom")]) > 1e5  # what the tree controller would apply
    r = ud.constrained_forward_dynamics(m, q, np.zeros(m.nv), tau, passive=False)
    assert np.abs(r.qdd).max() < 1e-9
    tr = ud.simulate(m, q, None, 0.5, controller=ud.GravityCompensation(m), options=ud.SimulateOptions(dt_out=0.1))
    assert np.abs(tr.q - q).max() < 1e-6


def test_computed_torque_on_a_closed_loop_machine_tracks_through_the_actuators():
    m = ud.load(CRANK)
    ref = ud.SplineTrajectory(np.array([ud.assemble(m, m.q_initial()), ud.assemble(m, m.q_initial() + [0.4, 0, 0],
                                                                               hold=["crank"])]), [1.0])
    ctrl = ud.ComputedTorque(m, ref, kp=400, kd=40)
    tr = ud.simulate(m, ref(0.0)[0], None, 1.0, controller=ctrl, options=ud.SimulateOptions(dt_out=0.05))
    assert np.all(tr.tau[:, 1:] == 0.0)  # rod and slider: passive
    assert abs(tr.q[-1, 0] - ref(1.0)[0][0]) < 1e-3


@needs_shared
def test_shared_excavator_held_by_gravity_compensation(tmp_path):
    """The MuJoCo-derived excavator (GPL, read from ../shared only): gravity compensation through its
    actuated joints holds it while the chassis turns at 0.3 rad/s."""
    from urdf_dyn.launch import run_scenario
    f = tmp_path / "shared_excavator.scenario.yaml"
    f.write_text(f"robot: {{file: {SHARED / 'excavator_simulator_mujoco' / '_derived' / 'excavator_loops.urdf'}}}\n"
                 "initial_state: {qd: {chassis: 0.3}}\ncontroller: {type: gravity_compensation}\nduration: 0.5\n"
                 "solver: {dt_out: 0.05}\n")
    traj, _ = run_scenario(f, out_dir=tmp_path / "out", progress=False, echo=lambda *a: None)
    assert traj.residuals.max() < 1e-3 and len(traj) == 11


# -- viewer fallbacks ----------------------------------------------------------------------------------------
BOX = """<robot name="boxy"><link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0 0.5"/><mass value="6"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>{geom}</link>
  <joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


def _box_inertia(m, a, b, c):  # a uniform box, edges a, b, c along x, y, z: I = m/12 (b² + c²), ...
    return dict(ixx=m / 12 * (b * b + c * c), iyy=m / 12 * (a * a + c * c), izz=m / 12 * (a * a + b * b))


def test_inertia_box_recovers_a_box_from_its_inertia():
    from urdf_dyn_viewer.scene import load_visuals
    m = ud.load(BOX.format(geom="", **_box_inertia(6.0, 0.4, 0.2, 0.1)))
    with pytest.warns(UserWarning, match="no <visual> geometry"):
        (v,) = load_visuals(m)
    assert np.allclose(sorted(v.mesh.extents), [0.1, 0.2, 0.4])
    assert np.allclose(v.origin[:3, 3], [0.1, 0, 0])


def test_missing_mesh_falls_back_to_collision_geometry(tmp_path):
    from urdf_dyn_viewer.scene import load_visuals
    geom = ('<visual><geometry><mesh filename="missing.stl"/></geometry></visual>'
            '<collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.25"/></geometry></collision>')
    f = tmp_path / "r.urdf"
    f.write_text(BOX.format(geom=geom, **_box_inertia(6.0, 0.4, 0.2, 0.1)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (v,) = load_visuals(ud.load(f))
    msgs = [str(x.message) for x in w if "could not be drawn" in str(x.message)]
    assert len(msgs) == 1 and "missing.stl" in msgs[0] and "collision geometry" in msgs[0]
    assert np.allclose(v.mesh.extents, 0.5, atol=0.02) and np.allclose(v.origin[:3, 3], [0, 0, 0.3])


def test_nothing_to_draw_is_said():
    from urdf_dyn_viewer.backend import ViewerError
    from urdf_dyn_viewer.scene import load_visuals
    m = ud.load('<robot name="empty"><link name="base"/><link name="a"/><joint name="j" type="revolute">'
                '<parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    with pytest.raises(ViewerError, match="nothing to draw"):
        load_visuals(m)


@pytest.mark.parametrize("path", [ROOT / "robots" / "generalized_rbda" / "four_bar.urdf", CRANK, EXC])
def test_demo_motion_moves_every_closed_loop_robot(path):
    from urdf_dyn_viewer.playback import demo_motion
    m = ud.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mo = demo_motion(m)
    assert len(mo) > 10 and np.ptp(mo.q, axis=0).max() > 0.05
    assert max(np.abs(v).max() for v in ud.loop_residuals(m, mo.q[len(mo) // 2]).values()) < 1e-6


def test_demo_motion_moves_a_mimic_gripper():
    """Two fingers coupled by <mimic>, both with transmissions: the demo drives one, the other follows."""
    from urdf_dyn_viewer.playback import demo_motion
    inertial = '<inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>'
    tr = ''.join(f'<transmission name="t{j}"><joint name="{j}"/></transmission>' for j in ("a", "b"))
    m = ud.load(f'<robot name="g"><link name="base"/><link name="fa">{inertial}</link><link name="fb">{inertial}</link>'
                '<joint name="a" type="prismatic"><parent link="base"/><child link="fa"/><axis xyz="1 0 0"/>'
                '<limit lower="0" upper="0.04" effort="10" velocity="1"/></joint>'
                '<joint name="b" type="prismatic"><parent link="base"/><child link="fb"/><axis xyz="1 0 0"/>'
                '<limit lower="-0.04" upper="0" effort="10" velocity="1"/><mimic joint="a" multiplier="-1"/></joint>'
                f'{tr}</robot>')
    mo = demo_motion(m)
    assert np.ptp(mo.q[:, 0]) > 0.01 and np.allclose(mo.q[:, 1], -mo.q[:, 0], atol=1e-9)
