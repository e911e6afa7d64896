"""Closed loops against independent oracles: agreement of five methods, MuJoCo (H, gravity), Pinocchio's
constraintDynamics, a sympy reduced-coordinate derivation, energy conservation, a user-supplied γ."""
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT, SHARED, needs_shared
from urdf_dyn.constraints.assembly import assemble, project_velocity
from urdf_dyn.constraints.explicit import UserLoopClosure, explicit_constraint
from urdf_dyn.constraints.forward import METHODS, constrained_forward_dynamics
from urdf_dyn.simulation.controllers import Constant
from urdf_dyn.constraints.loops import loop_constraints, loop_residuals, mobility
from urdf_dyn.simulation.simulate import simulate

EXC_URDF = SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_loops.urdf"
EXC_MJCF = SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_dynamics_only.xml"
URDFPLUS = ROOT / "robots" / "generalized_rbda"
ROBOTS = {
    "crank_slider": ROOT / "robots" / "crank_slider.urdf",
    "four_bar": ROOT / "robots" / "four_bar.urdf",
    "four_bar_spherical": ROOT / "robots" / "four_bar_spherical.urdf",
    "rbda_fig8_3": ROOT / "robots" / "rbda_fig8_3.urdf",
    "shared_excavator": EXC_URDF,
    "urdfplus_four_bar": URDFPLUS / "four_bar.urdf",
}
if (ROOT / "robots" / "excavator.urdf").exists():
    ROBOTS["excavator"] = ROOT / "robots" / "excavator.urdf"
NAMES = [pytest.param(n, marks=needs_shared) if str(p).startswith(str(SHARED)) else n for n, p in sorted(ROBOTS.items())]


def random_consistent_states(model, n, seed, spread=0.15):
    """Assembled q near the initial configuration, q̇ projected onto K q̇ = 0, random τ."""
    rng = np.random.default_rng(seed)
    scale = np.where(np.array(model.joint_types) == "prismatic", 0.02, spread)
    out = []
    q_init = model.q_initial()
    if not np.any(q_init) and model.name == "four_bar":
        q_init = np.array([0.6, 0.3, 0.2])  # the URDF+ four-bar's q = 0 is folded flat (singular)
    for _ in range(n):
        q = assemble(model, q_init + scale * rng.normal(size=model.nv))
        qd = project_velocity(model, q, rng.normal(size=model.nv))
        tau_scale = 10.0 ** np.ceil(np.log10(max(1.0, model.total_mass)))
        out.append((q, qd, tau_scale * rng.normal(size=model.nv)))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_five_methods_agree(name):
    model = ud.load(ROBOTS[name])
    worst = 0.0
    for q, qd, tau in random_consistent_states(model, 4, seed=len(name)):
        K, k = loop_constraints(model, q, qd)
        res = {m: constrained_forward_dynamics(model, q, qd, tau, loop_solver=m, passive=False) for m in METHODS}
        ref = res["nullspace"].qdd
        for m, r in res.items():
            worst = max(worst, np.linalg.norm(r.qdd - ref) / np.linalg.norm(ref))
            # K q̈ = k, up to the inconsistency that file rounding (~1e-9) leaves in redundant rows
            scale = np.linalg.norm(K, 2) * np.linalg.norm(r.qdd) + np.linalg.norm(k)
            assert np.linalg.norm(K @ r.qdd - k) <= 1e-7 * scale, m
            # the constraint forces explain the accelerations: H q̈ + C = τ + Kᵀλ
            H, C = ud.mass_matrix(model, q), ud.bias_force(model, q, qd)
            assert np.linalg.norm(H @ r.qdd + C - tau - K.T @ r.lam) <= 1e-8 * np.linalg.norm(tau), m
    print(f"{name}: largest relative disagreement between methods {worst:.2e}")
    assert worst <= 1e-8


@pytest.mark.parametrize("name", [n for n in sorted(ROBOTS) if n != "shared_excavator"])
def test_every_method_matches_pinocchio_constraint_dynamics(name):
    """Accelerations of every method and the pin forces against an independent reference: Pinocchio's
    constraintDynamics with a point contact per loop, its loop frames read from the URDF (tests/reference.py),
    so that an error in urdf_dyn's K, k or λ cannot pass because the five methods share it. Pinocchio's
    proximal solver stops at an absolute residual, hence the looser bound on the excavator's 10⁵ N pin forces.
    (The MuJoCo-derived shared excavator is left out: there q̈ agrees to 8e-7 but the split of its pin forces
    does not — an open question; its tree is checked against MuJoCo below.)"""
    pytest.importorskip("pinocchio")
    from reference import PinLoops
    model = ud.load(ROBOTS[name])
    ref = PinLoops(ROBOTS[name], model.joint_names)
    worst_a, worst_f = 0.0, 0.0
    for q, qd, tau in random_consistent_states(model, 4, seed=7 + len(name)):
        qdd_ref, f_ref = ref.accelerations(q, qd, tau)
        scale = np.linalg.norm(qdd_ref) + 1e-3
        for m in METHODS:
            r = constrained_forward_dynamics(model, q, qd, tau, loop_solver=m, passive=False)
            worst_a = max(worst_a, np.linalg.norm(r.qdd - qdd_ref) / scale)
            if m == "nullspace":
                for lp, f in f_ref.items():
                    ours = np.asarray(r.loop_forces[lp])[-3:]
                    err = min(np.linalg.norm(ours - f), np.linalg.norm(ours + f))  # sign: on Fs or on Fp
                    worst_f = max(worst_f, err / (np.linalg.norm(f) + 1e-9 * np.abs(tau).max() + 1e-12))
    print(f"{name}: vs pin.constraintDynamics, q̈ {worst_a:.2e}, pin forces {worst_f:.2e} (relative)")
    assert worst_a <= 1e-10
    assert worst_f <= 1e-5


@pytest.mark.parametrize("name, expect", [
    ("crank_slider", (3, 5, 2, 1)), ("four_bar", (3, 5, 2, 1)), ("four_bar_spherical", (3, 3, 2, 1)),
    ("rbda_fig8_3", (4, 5, 2, 2)), pytest.param("shared_excavator", (12, 20, 8, 4), marks=needs_shared)])
def test_mobility_of_the_robots(name, expect):
    model = ud.load(ROBOTS[name])
    mb = mobility(model, model.q_initial())
    assert (mb.n, mb.nc, mb.rank, mb.dof) == expect, name


def mujoco_mass_matrix(mujoco, mm, md):
    """MuJoCo's joint-space inertia (nv, nv) at md's last mj_forward or mj_inverse (mj_fullM)."""
    M = np.zeros((mm.nv, mm.nv))
    try:
        mujoco.mj_fullM(mm, md, M)       # MuJoCo >= 4
    except TypeError:
        mujoco.mj_fullM(mm, M, md.qM)    # MuJoCo 3
    return M


@needs_shared
def test_shared_excavator_matches_mujoco():
    """H and gravity torques of the spanning tree equal MuJoCo's on the equivalent MJCF (mj_fullM,
    qfrc_bias at zero velocity); URDF q = MJCF qpos − qpos0 (the slide refs)."""
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_path(str(EXC_MJCF))
    md = mujoco.MjData(mm)
    model = ud.load(EXC_URDF)
    assert mobility(model, np.zeros(model.nv)).dof == 4
    names = [mm.joint(i).name for i in range(mm.njnt)]
    perm = [model.joint_index(n) for n in names]  # MuJoCo dof i <-> our coordinate perm[i]
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.normal(size=model.nv) * 0.3
        md.qpos[:] = mm.qpos0 + q[perm]
        md.qvel[:] = 0
        mujoco.mj_forward(mm, md)
        M = mujoco_mass_matrix(mujoco, mm, md)
        H = ud.mass_matrix(model, q)[np.ix_(perm, perm)]
        g = ud.gravity_torques(model, q)[perm]
        assert np.linalg.norm(H - M) <= 1e-6 * np.linalg.norm(M)
        assert np.linalg.norm(g - md.qfrc_bias) <= 1e-6 * np.linalg.norm(md.qfrc_bias)


def test_four_bar_spherical_cut_matches_pinocchio_constraint_dynamics():
    pin = pytest.importorskip("pinocchio")
    path = ROBOTS["four_bar_spherical"]
    model = ud.load(path)
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    jid = {pm.names[i]: i for i in range(1, pm.njoints)}
    perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid["coupler_joint"],
                                  pin.SE3(np.eye(3), np.array([0.5, 0, 0])), jid["rocker_joint"],
                                  pin.SE3(np.eye(3), np.array([0.4, 0, 0])), pin.ReferenceFrame.LOCAL)
    models = pin.StdVec_RigidConstraintModel()
    models.append(cm)
    datas = pin.StdVec_RigidConstraintData()
    datas.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, models, datas)
    prox = pin.ProximalSettings(1e-14, 1e-10, 200)  # μ > 0: the out-of-plane row is redundant
    worst = 0.0
    def pin_q(q):  # continuous joints have nq = 2 (cos, sin) in Pinocchio
        out = np.zeros(pm.nq)
        for i in range(1, pm.njoints):
            j, x = pm.joints[i], q[model.joint_index(pm.names[i])]
            out[j.idx_q:j.idx_q + j.nq] = [np.cos(x), np.sin(x)] if j.nq == 2 else [x]
        return out

    for q, qd, tau in random_consistent_states(model, 6, seed=11, spread=0.4):
        qp, vp, tp = pin_q(q), qd[perm], tau[perm]
        ref = pin.constraintDynamics(pm, pd, qp, vp, tp, models, datas, prox)
        ours = constrained_forward_dynamics(model, q, qd, tau, loop_solver="nullspace", passive=False).qdd[perm]
        worst = max(worst, np.linalg.norm(ours - ref) / np.linalg.norm(ref))
    print(f"four-bar spherical cut vs pin.constraintDynamics: {worst:.2e}")
    assert worst <= 1e-8


def crank_slider_reduced(l1=0.15, l2=0.56, m1=0.37, m2=0.77, m3=0.1, k=5.0, c=1.0, tau=-0.5, g=9.81):
    """θ̈1(θ1, θ̇1) of the crank-slider by Lagrange's equations in the single coordinate θ1, derived with
    sympy here, independently of urdf_dyn (absolute rod angle φ with l1 sin θ1 + l2 sin φ = 0)."""
    sympy = pytest.importorskip("sympy")
    th, thd = sympy.symbols("theta thetad")
    phi = -sympy.asin(l1 * sympy.sin(th) / l2)
    xc1, zc1 = l1 / 2 * sympy.cos(th), l1 / 2 * sympy.sin(th)
    xc2 = l1 * sympy.cos(th) + l2 / 2 * sympy.cos(phi)
    zc2 = l1 * sympy.sin(th) + l2 / 2 * sympy.sin(phi)
    x3 = l1 * sympy.cos(th) + l2 * sympy.cos(phi)
    d = lambda e: sympy.diff(e, th)  # noqa: E731
    M = (m1 * (d(xc1) ** 2 + d(zc1) ** 2) + m1 * l1 ** 2 / 12 + m2 * (d(xc2) ** 2 + d(zc2) ** 2)
         + m2 * l2 ** 2 / 12 * d(phi) ** 2 + m3 * d(x3) ** 2)
    V = g * (m1 * zc1 + m2 * zc2) + k / 2 * (x3 - (l1 + l2)) ** 2
    Q = tau - c * d(x3) * thd * d(x3)
    thdd = (Q - sympy.diff(M, th) / 2 * thd ** 2 - d(V)) / M
    return sympy.lambdify((th, thd), thdd, "numpy"), sympy.lambdify(th, x3, "numpy")


def test_crank_slider_equals_reduced_coordinate_derivation():
    from scipy.integrate import solve_ivp
    f, x3 = crank_slider_reduced()
    ref = solve_ivp(lambda t, y: [y[1], f(y[0], y[1])], (0, 2.0), [0.0, 0.0], rtol=1e-12, atol=1e-13,
                    dense_output=True, method="DOP853")
    model = ud.load(ROBOTS["crank_slider"])
    tr = simulate(model, model.q_initial(), None, 2.0, controller=Constant(model, [-0.5, 0, 0]), options=ud.SimulateOptions(dt_out=0.01, rtol=1e-11, atol=1e-12, t_stab=0.1))
    th_ref = ref.sol(tr.t)[0]
    err = np.max(np.abs(tr.q[:, 0] - th_ref))
    print(f"crank-slider vs reduced coordinates: max |Δθ1| = {err:.2e} rad over 2 s, "
          f"max residual {tr.residuals.max():.1e}")
    assert np.ptp(th_ref) > 0.5  # it really moves
    assert err <= 1e-6
    assert np.max(np.abs(tr.q[:, 2] - x3(th_ref))) <= 1e-6


@pytest.mark.parametrize("name", ["four_bar", "rbda_fig8_3", "crank_slider"])
def test_passive_undamped_mechanism_conserves_energy(name):
    model = ud.load(ROBOTS[name])
    tr = simulate(model, model.q_initial(), None, 5.0, options=ud.SimulateOptions(passive=False, rtol=1e-11, atol=1e-12, t_stab=0.1, dt_out=0.01))
    E = tr.energy
    drift = np.max(np.abs(E - E[0])) / (np.max(E) - np.min(ud.potential_energy(model, tr.q)) + 1e-300)
    swing = np.ptp(ud.potential_energy(model, tr.q))
    print(f"{name}: energy drift {np.max(np.abs(E - E[0])):.2e} J (potential swings {swing:.3g} J), "
          f"max residual {tr.residuals.max():.1e}")
    assert swing > 0.1  # it moved
    assert np.max(np.abs(E - E[0])) <= 1e-6 * swing
    assert tr.residuals.max() <= 1e-6


def fig83_gamma(model, l1=0.3, l2=0.5):
    """RBDA §8.11's closed-form γ, G, g for Fig. 8.3 (y = [q1, q4]); derivatives derived by hand.
    Rows are built in the book's order [q1, q2, q3 = d, q4], then put in the model's joint order."""
    order = [model.joint_index(j) for j in ("joint1", "joint2", "joint3", "joint4")]

    def gamma(y, yd):
        q1, q4 = y
        c, s = np.cos(q1), np.sin(q1)
        d = np.sqrt(l1 ** 2 + l2 ** 2 - 2 * l1 * l2 * c)
        q2 = np.arctan2(l2 * s, l2 * c - l1)
        dd = l1 * l2 * s / d                                   # ∂d/∂q1
        dq2 = l2 * (l2 - l1 * c) / d ** 2                      # ∂q2/∂q1
        ddd = l1 * l2 * (c - s * dd / d) / d                   # ∂²d/∂q1²
        ddq2 = l2 * (l1 * s * d - 2 * (l2 - l1 * c) * dd) / d ** 3
        G = np.array([[1, 0], [dq2, 0], [dd, 0], [0, 1]], float)
        g = np.array([0, ddq2, ddd, 0]) * yd[0] ** 2
        q, Gm, gm = np.zeros(4), np.zeros((4, 2)), np.zeros(4)
        q[order], Gm[order], gm[order] = [q1, q2, d, q4], G, g
        return q, Gm, gm
    return gamma


def test_fig8_3_user_gamma_equals_automatic_G_g():
    model = ud.load(ROBOTS["rbda_fig8_3"])
    ulc = UserLoopClosure(model, ["joint1", "joint4"], fig83_gamma(model))
    rng = np.random.default_rng(8)
    for _ in range(5):
        y, yd, tau = rng.uniform(0.3, 1.5, 2), rng.normal(size=2), rng.normal(size=4) * 5
        ydd, q, qd, qdd_user = ulc.forward_dynamics(y, yd, tau)
        assert max(np.abs(v).max() for v in loop_residuals(model, q).values()) < 1e-12
        K, k = loop_constraints(model, q, qd)
        assert np.abs(K @ qd).max() < 1e-12  # γ's G maps ẏ to a consistent q̇
        ec = explicit_constraint(model, q, qd)
        assert ec.independent == ("joint1", "joint4")
        qdd_auto = constrained_forward_dynamics(model, q, qd, tau, loop_solver="nullspace", passive=False).qdd
        assert np.allclose(qdd_user, qdd_auto, rtol=1e-10, atol=1e-10)


def test_simulation_stops_when_a_loop_opens_and_keeps_the_data():
    model = ud.load(ROBOTS["four_bar"])
    with pytest.raises(ud.SimulationError, match="opened") as ei:
        simulate(model, model.q_initial(), None, 2.0, options=ud.SimulateOptions(passive=False, t_stab=None, rtol=1e-3, atol=1e-3, residual_tol=1e-7))
    tr = ei.value.trajectory
    assert tr is not None and len(tr) >= 1 and tr.residuals.shape[1] == 1


def test_assembly_reports_unreachable_held_joint():
    model = ud.load(ROBOTS["rbda_fig8_3"])
    q = model.q_initial()
    q[model.joint_index("joint3")] = 5.0  # a 5 m cylinder cannot close a triangle with sides 0.3 and 0.5
    with pytest.raises(ud.ModelError, match="cannot assemble"):
        assemble(model, q, hold=["joint3"])


@pytest.mark.parametrize("name", NAMES)
def test_fast_path_equals_the_five_methods(name):
    """The simulator's lean right-hand side (compiled K, k; no diagnostics) against the reference methods,
    with Baumgarte terms, at consistent and at slightly opened states."""
    from urdf_dyn.constraints.forward import fast_qdd
    from urdf_dyn.constraints.loops import LoopState
    model = ud.load(ROBOTS[name])
    for q, qd, tau in random_consistent_states(model, 3, seed=7):
        for dq in (0.0, 1e-4):
            qx = q + dq
            ref = constrained_forward_dynamics(model, qx, qd, tau, loop_solver="lambda", t_stab=0.1, passive=True).qdd
            fast = fast_qdd(model, qx, qd, tau, t_stab=0.1)
            assert np.linalg.norm(fast - ref) <= 1e-9 * np.linalg.norm(ref), name
            st = LoopState(model, qx, qd)
            py = np.concatenate([st.delta(lp) for lp in model.loops]) if model.loops else np.zeros(0)
            assert np.allclose(st.deltas()[:py.size], py, atol=1e-13)  # compiled δ = the Python reference
