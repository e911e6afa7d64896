"""Closed-loop inverse dynamics and actuator forces (RBDA §8.12) against independent oracles: forward
dynamics round trips, virtual work (statics), minimum-norm optimality, a known uncontrollable direction,
and the same cylinder modelled as a tree joint and as an actuated loop joint."""
import re

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.inverse import (ActuationWarning, actuation_matrix, actuator_forces, actuators_of,
                                constrained_inverse_dynamics)
from urdf_dyn.constraints.assembly import assemble, project_velocity
from urdf_dyn.constraints.forward import constrained_forward_dynamics
from urdf_dyn.constraints.motion import consistent_motion
from urdf_dyn.simulation.trajectories import spline_motion

EXC = ROOT / "robots" / "excavator.urdf"
EXC_Y = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]


def moving_states(model, names, waypoints, n=6, seed=0):
    """Consistent (q, q̇, q̈) samples from a spline motion of the independent coordinates."""
    mo = spline_motion(names, waypoints, [1.0] * (len(waypoints) - 1), dt=0.05, kind="spline")
    Q, QD, QDD = consistent_motion(model, mo, progress=False)
    idx = np.random.default_rng(seed).choice(len(Q), n, replace=False)
    return Q[idx], QD[idx], QDD[idx]


CASES = {
    "excavator": (EXC, EXC_Y, [[0, -0.3, -0.5, -0.2], [0.8, 0.1, -0.1, 0.3], [0.2, -0.2, -0.6, -0.3]], None),
    "crank_slider": (ROOT / "robots" / "crank_slider.urdf", ["crank"], [[0.0], [2.0], [4.0]], None),
    "rbda_fig8_3": (ROOT / "robots" / "rbda_fig8_3.urdf", ["joint1", "joint4"], [[0.6, 0.0], [1.2, 0.8], [0.9, -0.4]],
                    ["joint3", "joint4"]),  # Example 8.2: the cylinder and the elbow
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_through_forward_dynamics(name):
    path, indep, W, actuated = CASES[name]
    model = ud.load(path)
    for q, qd, qdd in zip(*moving_states(model, indep, W)):
        af = actuator_forces(model, q, qd, qdd, actuated=actuated)
        assert af.case == "properly actuated" and af.rank_Gu == af.dof
        B = actuation_matrix(model, q, actuators_of(model, actuated))
        res = constrained_forward_dynamics(model, q, qd, B @ af.u, loop_solver="nullspace", passive=True)
        assert np.allclose(res.qdd, qdd, atol=1e-7 * (1 + np.abs(qdd).max())), name


def potential_at(model, y):
    q = model.q_initial().copy()
    for j, v in zip(EXC_Y, y):
        q[model.joint_index(j)] = v
    return ud.potential_energy(model, assemble(model, q, hold=EXC_Y))


def test_excavator_statics_by_virtual_work():
    """At rest, each actuator's force is ∂V/∂s (with u the force it applies along +s; the load on it is
    −∂V/∂s): central differences of the potential energy over re-assembled poses."""
    model = ud.load(EXC)
    worst = 0.0
    for y in ([0, 0, 0, 0], [0.5, -0.4, -0.6, -0.3], [-0.3, 0.2, 0.1, 0.35], [1.0, -0.7, -0.2, 0.2]):
        q = model.q_initial().copy()
        for j, v in zip(EXC_Y, y):
            q[model.joint_index(j)] = v
        q = assemble(model, q, hold=EXC_Y)
        z = np.zeros(model.nv)
        af = actuator_forces(model, q, z, z)
        assert af.names == tuple(sorted(af.names, key=lambda n: model.joint_index(n)))
        for i, name in enumerate(af.names):
            k = EXC_Y.index(name)
            h = 1e-4
            yp, ym = list(y), list(y)
            yp[k] += h
            ym[k] -= h
            dV = (potential_at(model, yp) - potential_at(model, ym)) / (2 * h)
            if name == "swing":
                assert abs(af.u[i]) < 1e-6 and abs(dV) < 1e-3
                continue
            err = abs(af.u[i] - dV) / abs(dV)
            worst = max(worst, err)
            assert err <= 1e-5, (y, name, af.u[i], dV)
    print(f"virtual work: largest relative disagreement {worst:.2e}")


def test_redundant_actuation_minimum_norm_and_bounds():
    """Crank-slider driven at the crank AND the slider: p = 2 > rank G_u = 1."""
    model = ud.load(CASES["crank_slider"][0])
    Q, QD, QDD = moving_states(model, ["crank"], [[0.0], [2.0], [4.0]], n=4)
    acts = ["crank", "slider"]
    for q, qd, qdd in zip(Q, QD, QDD):
        af = actuator_forces(model, q, qd, qdd, actuated=acts)
        assert af.case == "redundantly actuated" and af.rank_Gu == 1
        B = actuation_matrix(model, q, actuators_of(model, acts))
        tau_id, G = constrained_inverse_dynamics(model, q, qd, qdd)
        assert np.allclose(G.T @ B @ af.u, G.T @ tau_id, atol=1e-9)   # it solves eq. 8.63
        null = np.linalg.svd(G.T @ B)[2][-1]                             # the actuators' internal force
        for a in (1e-3, -0.5, 2.0):
            assert np.linalg.norm(af.u + a * null) > np.linalg.norm(af.u)
        # the crank limited to 80 % of its unbounded value: the slider must take the rest, within bounds
        lim = 0.8 * abs(af.u[0]) + 1e-9
        bounded = actuator_forces(model, q, qd, qdd, actuated=acts, bounds=([-lim, -1e4], [lim, 1e4]))
        assert abs(bounded.u[0]) <= lim + 1e-9
        assert np.allclose(G.T @ B @ bounded.u, G.T @ tau_id, atol=1e-7)


def test_under_actuated_reports_the_uncontrollable_direction():
    """Fig. 8.3 with only the cylinder actuated: the elbow (joint 4) is decoupled from the loop, so the
    residual must be exactly the elbow torque the motion needs, and the cylinder force the tree version's."""
    model = ud.load(CASES["rbda_fig8_3"][0])
    Q, QD, QDD = moving_states(model, ["joint1", "joint4"], [[0.6, 0.0], [1.2, 0.8], [0.9, -0.4]], n=4)
    for q, qd, qdd in zip(Q, QD, QDD):
        with pytest.warns(ActuationWarning, match="under-actuated"):
            af = actuator_forces(model, q, qd, qdd, actuated=["joint3"])
        assert af.case == "under-actuated" and af.rank_Gu == 1 and af.dof == 2
        full = actuator_forces(model, q, qd, qdd, actuated=["joint3", "joint4"])
        tau_id, G = constrained_inverse_dynamics(model, q, qd, qdd)
        elbow = tau_id[model.joint_index("joint4")]
        # G's columns are [y1 = joint1, y2 = joint4]; the residual lies along y2 and equals the elbow torque
        assert af.residual[1] == pytest.approx(elbow, rel=1e-9, abs=1e-9)
        assert abs(af.residual[0]) < 1e-9 * (1 + abs(elbow))
        assert af.u[0] == pytest.approx(full.u[0], rel=1e-9)


def fig83_cut_at_the_cylinder():
    """Fig. 8.3 with the actuator cut at its prismatic pair: the piston hangs on B1 (revolute tree joint
    at the pin) and an actuated prismatic loop joint joins cylinder and piston."""
    text = (ROOT / "robots" / "rbda_fig8_3.urdf").read_text()
    text = re.sub(r'<joint name="joint3" type="prismatic">.*?</joint>',
                  '<joint name="pin" type="continuous"><parent link="B1"/><child link="B3"/>'
                  '<origin xyz="0.5 0 0"/><axis xyz="0 -1 0"/></joint>', text, flags=re.S)
    text = re.sub(r'<loop name="joint5".*?</loop>',
                  '<loop name="cylinder" type="prismatic" actuated="true"><predecessor link="B2"/>'
                  '<successor link="B3"/><axis xyz="1 0 0"/><limit effort="2000"/></loop>', text, flags=re.S)
    text = re.sub(r'<transmission name="cylinder">.*?</transmission>', "", text, flags=re.S)
    text = text.replace('<joint_position joint="joint3" value="0.3039725571940607"/>',
                        '<joint_position joint="pin" value="0.5910862124736958"/>')
    return ud.load(text)


def test_cylinder_as_loop_joint_equals_cylinder_as_tree_joint():
    tree = ud.load(CASES["rbda_fig8_3"][0])
    cut = fig83_cut_at_the_cylinder()
    assert sorted(a.kind for a in actuators_of(cut)) == ["joint", "loop"]
    from urdf_dyn.constraints.loops import mobility
    assert mobility(cut, cut.q_initial()).dof == 2
    W = [[0.6, 0.0], [1.2, 0.8], [0.9, -0.4]]
    Qt, QDt, QDDt = moving_states(tree, ["joint1", "joint4"], W, n=5, seed=4)
    mo = spline_motion(["joint1", "joint4"], W, [1.0, 1.0], dt=0.05, kind="spline")
    Qc, QDc, QDDc = consistent_motion(cut, mo, progress=False)
    Qt_all, QDt_all, QDDt_all = consistent_motion(tree, mo, progress=False)
    for i in range(0, len(mo.t), 7):
        ft = actuator_forces(tree, Qt_all[i], QDt_all[i], QDDt_all[i], actuated=["joint3", "joint4"])
        fc = actuator_forces(cut, Qc[i], QDc[i], QDDc[i], actuated=["cylinder", "joint4"])
        assert fc.case == "properly actuated"
        assert fc.u[0] == pytest.approx(ft.u[0], rel=1e-8, abs=1e-8)   # the cylinder force
        assert fc.u[1] == pytest.approx(ft.u[1], rel=1e-8, abs=1e-8)   # the elbow torque


def test_inconsistent_state_is_rejected():
    model = ud.load(CASES["crank_slider"][0])
    q = model.q_initial().copy()
    q[2] += 0.01  # slider 1 cm off the rod's tip
    with pytest.raises(ud.StateError, match="do not satisfy the loop constraints"):
        actuator_forces(model, q, np.zeros(3), np.zeros(3))


def test_sizing_launch_writes_the_report(tmp_path):
    """The main job, shortened: cylinder forces, pressures and pin loads are written and consistent."""
    import yaml
    from urdf_dyn.launch import run_scenario as run_sizing
    src = ROOT / "scenarios" / "excavator_dig.scenario.yaml"
    data = yaml.safe_load(src.read_text())
    data["robot"]["file"] = str(EXC)
    data["motion"]["dt"] = 0.25
    f = tmp_path / "dig.yaml"
    f.write_text(yaml.safe_dump(data))
    lines = []
    res, written = run_sizing(f, out_dir=tmp_path / "out", progress=False, echo=lines.append)
    assert res.case == "properly actuated" and set(res.names) == set(EXC_Y)
    for k in ("actuator_forces_csv", "pin_loads_csv", "forces_png", "stroke_png", "report"):
        assert k in written
    text = (tmp_path / "out" / "sizing_report.md").read_text()
    assert "boom_cyl" in text and "bar" in text and "h_link_bucket_pin" in text
    # pressures against tabulated cylinder areas (hydraulic cylinder tables: 120 mm bore, piston area
    # 113.10 cm²; 120/85 mm, annulus 56.35 cm²), two boom cylinders in parallel; a push loads only the cap
    # side, a pull only the rod side
    i = res.names.index("boom_cyl")
    cap, rod = res.pressures["boom_cyl"]
    push, pull = res.u[:, i] > 0, res.u[:, i] < 0
    assert push.any() and np.allclose(cap[push] * 1e5 * 2 * 113.10e-4, res.u[push, i], rtol=2e-4)
    assert np.all(rod[push] == 0) and np.all(cap[pull] == 0)
    if pull.any():
        assert np.allclose(rod[pull] * 1e5 * 2 * 56.35e-4, -res.u[pull, i], rtol=2e-4)
    # the boom cylinders' force is carried by their eye pins, one per cylinder of the pair (count: 2):
    # |force per pin| = |u| / 2 for a massless two-force member; the barrel's and the rod's weight add a
    # load of at most their weight per pin, which decides near the samples where u crosses zero
    from lxml import etree
    root = etree.parse(str(EXC)).getroot()
    mass = sum(float(root.find(f"link[@name='{n}']/inertial/mass").get("value"))
               for n in ("boom_cyl_barrel", "boom_cyl_rod"))
    assert res.pin_count["boom_cylinder_eye"] == 2
    half = np.abs(res.u[:, i]) / 2
    assert np.all(np.abs(res.pin_force["boom_cylinder_eye"] - half) <= 0.02 * half + 9.81 * mass / 2)
    big = half > 50 * 9.81 * mass      # where the weight is under 2 % of the force: the two-force member
    assert big.any() and np.allclose(res.pin_force["boom_cylinder_eye"][big], half[big], rtol=0.02)


def test_cylinder_pressures_match_a_worked_example():
    """350 bar on a 120 mm bore pushes π (0.06 m)² · 350e5 Pa = 395.8 kN; on the 120/85 mm annulus it
    pulls 197.2 kN (cylinder force tables); two cylinders in parallel share the force."""
    from urdf_dyn.machines.sizing import Cylinder
    cap, rod = Cylinder(0.12, 0.085, 2).pressures([2 * 395.84e3, -2 * 197.23e3, 0.0])
    assert np.allclose(cap, [350.0, 0.0, 0.0], rtol=1e-4) and np.allclose(rod, [0.0, 350.0, 0.0], rtol=1e-4)


def test_recorded_csv_motion_sizes_like_the_same_spline(tmp_path):
    """A motion recorded to CSV (t, coordinates) gives the same actuator forces as the motion itself,
    away from the ends where the CSV's spline cannot know the end conditions."""
    from urdf_dyn.simulation.trajectories import csv_motion
    model = ud.load(CASES["crank_slider"][0])
    mo = spline_motion(["crank"], [[0.0], [1.5], [3.0]], [1.0, 1.0], dt=0.01, kind="spline")
    f = tmp_path / "rec.csv"
    f.write_text("t,crank\n" + "\n".join(f"{float(t)!r},{float(y)!r}" for t, y in zip(mo.t, mo.y[:, 0])))
    rec = csv_motion(f, ["crank"])
    assert np.allclose(rec.y, mo.y)
    inner = slice(20, -20)
    assert np.allclose(rec.yd[inner], mo.yd[inner], atol=1e-4)
    Q, QD, QDD = consistent_motion(model, rec, progress=False)
    Q2, QD2, QDD2 = consistent_motion(model, mo, progress=False)
    u1 = actuator_forces(model, Q[inner][::10], QD[inner][::10], QDD[inner][::10]).u
    u2 = actuator_forces(model, Q2[inner][::10], QD2[inner][::10], QDD2[inner][::10]).u
    assert np.allclose(u1, u2, rtol=1e-3, atol=1e-3)
    bad = tmp_path / "bad.csv"
    bad.write_text("t,crank\n0,0\n0.1,zero\n")
    with pytest.raises(ud.ScenarioError, match="bad.csv:3"):
        csv_motion(bad)


def test_external_wrench_balanced_by_actuators_virtual_work():
    """A wrench on the bucket (f_ext) changes the actuator forces by Δu with Δuᵀ ṡ + wᵀ v_bucket = 0 for every
    admissible velocity (virtual work at rest): checked with G ẏ for random ẏ, and the bucket's local
    Jacobian (an independent computation from the kinematics)."""
    from urdf_dyn.constraints.explicit import explicit_constraint
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q = assemble(model, model.q_initial())
    z = np.zeros(model.nv)
    w = np.array([300.0, -1200.0, 500.0, -40e3, 2e3, 25e3])  # [n; f] in the bucket frame, N m and N
    base = actuator_forces(model, q, z, z, warn=False)
    loaded = actuator_forces(model, q, z, z, warn=False, f_ext={"bucket": w})
    du = loaded.u - base.u
    assert np.abs(du).max() > 1e3  # the load matters
    G = explicit_constraint(model, q, z).G
    J = ud.link_jacobian(model, q, "bucket", frame="local")
    idx = [model.joint_index(n) for n in loaded.names]
    rng = np.random.default_rng(3)
    for _ in range(5):
        qd = G @ rng.normal(size=G.shape[1])
        power = du @ qd[idx] + w @ (J @ qd)
        assert abs(power) <= 1e-7 * (np.abs(du) @ np.abs(qd[idx]) + 1.0)


# -- ActuationPlan: the single-state path a controller calls at every integrator step -----------------------
STEWART_LEGS = [f"piston{i}_prismatic_joint" for i in range(1, 7)]
PLAN_CASES = {  # name: (model factory, actuators, expected case)
    "excavator": (lambda: ud.load(EXC), None, "properly actuated"),
    "four_bar": (lambda: ud.load(ROOT / "robots" / "four_bar.urdf"), None, None),
    "crank_slider": (lambda: ud.load(CASES["crank_slider"][0]), None, "properly actuated"),
    "crank_slider_redundant": (lambda: ud.load(CASES["crank_slider"][0]), ["crank", "slider"],
                               "redundantly actuated"),
    "fig8_3_under": (lambda: ud.load(CASES["rbda_fig8_3"][0]), ["joint3"], "under-actuated"),
    "fig8_3_loop_actuator": (fig83_cut_at_the_cylinder, ["cylinder", "joint4"], "properly actuated"),
    "hexapod": (lambda: ud.load(ROOT / "robots" / "stewart.sdf"), STEWART_LEGS, "properly actuated"),
}


def falling_states(model, n=3, seed=0):
    """Consistent (q, q̇, q̈): assembled near the initial pose, a projected random velocity, and the free
    (τ = 0) closed-loop acceleration with K q̈ = k exactly (no Baumgarte term)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = assemble(model, model.q_initial() + 0.03 * rng.standard_normal(model.nv))
        qd = project_velocity(model, q, 0.5 * rng.standard_normal(model.nv))
        yield q, qd, constrained_forward_dynamics(model, q, qd, np.zeros(model.nv), passive=True).qdd
    z = np.zeros(model.nv)
    yield assemble(model, model.q_initial()), z, z                     # at rest: gravity compensation


@pytest.mark.parametrize("name", sorted(PLAN_CASES))
def test_actuation_plan_equals_the_reference_actuator_forces(name):
    """ActuationPlan.forces against the readable reference (actuator_forces(compiled=False): numpy LU/SVD, the
    LoopState Jacobians) to 1e-9 relative, and bit for bit against the compiled batch path it shares; its
    joint forces τ = B u against the reference's actuation_matrix. Properly (excavator, crank-slider, four-bar,
    Stewart), redundantly (crank-slider driven at crank and slider) and under-actuated (Fig. 8.3, cylinder
    only) machines, tree actuators and an actuated loop joint."""
    import warnings
    make, acts, case = PLAN_CASES[name]
    model = make()
    plan = ud.ActuationPlan(model, acts)
    assert plan.compiled
    du, dtau, su, stau = [], [], [], []
    for q, qd, qdd in falling_states(model):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ActuationWarning)
            ref = actuator_forces(model, q, qd, qdd, actuated=acts, compiled=False)
            comp = actuator_forces(model, q, qd, qdd, actuated=acts)
        assert case is None or ref.case == case
        u = plan.forces(q, qd, qdd)
        assert np.array_equal(u, comp.u)
        tau_ref = actuation_matrix(model, q, actuators_of(model, acts)) @ ref.u
        tau = plan.joint_forces(q, qd, qdd)
        du.append(np.abs(u - ref.u).max())
        dtau.append(np.abs(tau - tau_ref).max())
        su.append(np.abs(ref.u).max())
        stau.append(np.abs(tau_ref).max())
    # relative to the largest force of the robot's states (the crank-slider at rest needs none: u ~ 1e-15)
    worst = max(max(du) / max(su), max(dtau) / max(stau))
    print(f"{name}: ActuationPlan vs reference, largest relative difference {worst:.1e}")
    assert max(su) > 1e-3 and worst <= 1e-9


GEARS = """<robot name="gears"><link name="b"/>
  <joint name="j" type="continuous"><parent link="b"/><child link="l"/><axis xyz="0 1 0"/></joint>
  <link name="l"><inertial><origin xyz="0.4 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <joint name="jr" type="continuous"><parent link="b"/><child link="r"/><axis xyz="0 1 0"/></joint>
  <link name="r"><inertial><origin xyz="0.1 0 0.05"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>
  <coupling name="c"><predecessor link="l"/><successor link="r"/><ratio value="3"/></coupling></robot>"""


def test_coupled_gears_minimum_norm_statics_by_hand():
    """A URDF+ <coupling> (jr turns 3 × j) with both joints driven: at rest the minimum-norm actuator torques
    are u = G (GᵀG)⁻¹ Gᵀ g(q), G = [1, 3]ᵀ written by hand, g the tree's gravity torques. The compiled
    path used to drop the coupling rows and answer the tree's g itself; ActuationPlan falls back to the
    reference for such models."""
    model = ud.load(GEARS)
    G = np.array([1.0, 3.0])
    plan = ud.ActuationPlan(model)
    assert not plan.compiled
    z = np.zeros(2)
    for a in (0.3, -1.1, 2.0):
        q = np.array([a, 3 * a])
        g = ud.gravity_torques(model, q)
        u_hand = G * (G @ g) / (G @ G)
        assert abs(G @ g) > 0.1                                        # a real load
        for u in (actuator_forces(model, q, z, z).u, actuator_forces(model, q, z, z, compiled=False).u,
                  plan.forces(q, z, z), plan.joint_forces(q, z, z)):
            assert np.allclose(u, u_hand, rtol=1e-12, atol=1e-12), (u, u_hand)


def test_actuation_plan_refuses_bad_states():
    model = ud.load(CASES["crank_slider"][0])
    plan = ud.ActuationPlan(model)
    z = np.zeros(3)
    with pytest.raises(ud.StateError, match=r"q must have shape \(3,\)"):
        plan.forces(np.zeros(2), z, z)
    with pytest.raises(ud.StateError, match="qdd must have shape"):
        plan.forces(model.q_initial(), z, np.zeros((2, 3)))
    with pytest.raises(ud.StateError, match="non-finite"):
        plan.forces(model.q_initial(), np.array([np.nan, 0, 0]), z)
    q = model.q_initial().copy()
    q[2] += 0.01                                                       # the loop is open by 1 cm
    with pytest.raises(ud.StateError, match="do not satisfy the loop constraints"):
        plan.forces(q, z, z)
    assert np.isfinite(ud.ActuationPlan(model, check=False).forces(q, z, z)).all()
    with pytest.raises(ud.StateError, match="array of numbers"):
        plan.forces(np.array(["a", "b", "c"]), z, z)
