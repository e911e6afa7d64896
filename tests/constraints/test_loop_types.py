"""Every loop joint type, on a spatial mechanism: the PUMA 560's flange tied to the world by a loop joint
(``<successor>`` without ``<origin>``: closed at the initial configuration). Checked against finite
differences, which know nothing of RBDA's formulas: K̇ q̇ = −k exactly at any state (eq. 8.15), and
δ̇ = K q̇ at closed states (eqs. 8.22–8.23); the five FD methods agree; mimic rows against Pinocchio."""
import re
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.assembly import assemble, project_velocity
from urdf_dyn.constraints.forward import METHODS, constrained_forward_dynamics
from urdf_dyn.algorithms.joints import LOOP_TYPES
from urdf_dyn.constraints.loops import LoopState, loop_constraints, mobility

Q0 = [0.3, 0.7, -1.1, 0.4, 0.8, -0.5]


def puma_with_loop(ltype):
    text = (ROOT / "robots" / "puma560.urdf").read_text()
    axis2 = ""
    if ltype == "universal":
        axis2 = '<axis2 xyz="-0.8 0 0.6"/>'  # ⟂ to the axis below... (0.6,0.3,0.8)·(-0.8,0,0.6) = 0
    loop = (f'<loop name="tie" type="{ltype}"><predecessor link="tool0"><origin xyz="0.05 0.02 0.1" rpy="0.2 0.1 0.3"/>'
            f'</predecessor><successor link="base_link"/><axis xyz="0.6 0.3 0.8"/>{axis2}</loop>'
            '<initial_configuration name="c">' + "".join(f'<joint_position joint="joint{i + 1}" value="{v}"/>'
                                                         for i, v in enumerate(Q0)) + '</initial_configuration>')
    text = re.sub(r"</robot>\s*$", loop + "</robot>", text)
    return ud.load(text)


TYPES = sorted(set(LOOP_TYPES) - {"continuous", "ball"})


@pytest.mark.parametrize("ltype", TYPES)
def test_loop_type_consistency(ltype):
    model = puma_with_loop(ltype)
    nc = LOOP_TYPES[ltype]
    q = model.q_initial()
    st = LoopState(model, q)
    assert np.abs(st.deltas()).max() < 1e-12  # closed at the initial configuration
    mb = mobility(model, q)
    assert (mb.nc, mb.rank, mb.dof) == (nc, nc, 6 - nc)
    rng = np.random.default_rng(nc)
    # an unconstrained state: K̇ q̇ = −k holds at any (q, q̇), closed or not
    qx, qdx = q + 0.2 * rng.normal(size=6), rng.normal(size=6)
    h = 1e-6
    Kp, _ = loop_constraints(model, qx + h * qdx, qdx)
    Km, _ = loop_constraints(model, qx - h * qdx, qdx)
    _, k = loop_constraints(model, qx, qdx)
    Kdot_qd = (Kp - Km) @ qdx / (2 * h)
    assert np.allclose(Kdot_qd, -k, atol=1e-7 * max(1, np.abs(k).max())), (Kdot_qd, -k)
    # at a closed state: δ stays zero along every consistent motion (K q̇ = 0 ⇒ δ̇ = 0), and where Fs's
    # origin sits on Fp's (joints without translation), δ̇ = K q̇ for any q̇
    qc = assemble(model, q + 0.05 * rng.normal(size=6)) if nc < 6 else q
    K, _ = loop_constraints(model, qc, np.zeros(6))

    def rate(v):
        return (LoopState(model, qc + h * v).deltas() - LoopState(model, qc - h * v).deltas()) / (2 * h)
    if nc < 6:
        qd_ok = project_velocity(model, qc, rng.normal(size=6))
        assert np.abs(K @ qd_ok).max() < 1e-12 and np.linalg.norm(qd_ok) > 0.1
        assert np.allclose(rate(qd_ok), 0, atol=1e-7)
    if ltype in ("fixed", "revolute", "spherical", "universal"):
        qdc = rng.normal(size=6)
        assert np.allclose(rate(qdc), K @ qdc, atol=1e-7)
    # the five methods agree at a consistent state
    if nc < 6:
        tau = 20 * rng.normal(size=6)
        res = [constrained_forward_dynamics(model, qc, qd_ok, tau, loop_solver=m, passive=False).qdd for m in METHODS]
        for r in res:
            assert np.linalg.norm(r - res[0]) <= 1e-8 * np.linalg.norm(res[0])


def test_baumgarte_pulls_an_opened_loop_closed():
    """With k_stab, δ obeys δ̈ + 2α δ̇ + α² δ = 0: a small opening decays (RBDA eq. 8.21)."""
    from urdf_dyn.simulation.simulate import simulate
    model = puma_with_loop("spherical")
    q = model.q_initial()
    q[1] += 1e-4  # open the loop by ~0.1 mm
    T = 0.05
    tr = simulate(model, q, None, 0.6, options=ud.SimulateOptions(assemble_initial=False, t_stab=T, rtol=1e-10, atol=1e-12, dt_out=0.05))
    r0 = tr.residuals[0, 0]
    assert r0 > 5e-5
    # from rest (δ̇ = 0): δ(t) = δ0 (1 + t/T) e^(−t/T) while the motion is still small
    for i in (1, 2):
        t = tr.t[i]
        assert tr.residuals[i, 0] == pytest.approx(r0 * (1 + t / T) * np.exp(-t / T), rel=0.02)
    assert tr.residuals[-1, 0] < 1e-2 * r0


def test_mimic_coupling_matches_pinocchio_explicit_reduction():
    """<mimic> as an explicit constraint (RBDA eq. 3.11), on the Panda's fingers: urdf_dyn's constrained FD
    against Pinocchio's H and C of the free tree reduced by hand, q = G y + o with G from the multipliers:
    GᵀHG ÿ = Gᵀ(τ − C − H Ġẏ) with Ġ = 0 (eq. 8.45). (Pinocchio's mimic models refuse aba/crba.)"""
    pin = pytest.importorskip("pinocchio")
    from test_tree_pinocchio import ROBOTS as TREE_ROBOTS  # example-robot-data paths, found there
    spec = TREE_ROBOTS["erd_panda"]
    if not spec.path.is_file():
        pytest.skip(f"Panda URDF not found: {spec.path}")
    model = ud.load(spec.path, package_dirs=spec.package_dirs)
    assert model.mimic and model.has_constraints
    pm = pin.buildModelFromUrdf(str(spec.path))
    pd = pm.createData()
    followers = {mi.joint: mi for mi in model.mimic}
    free = [j for j in model.joint_names if j not in followers]
    G = np.zeros((model.nv, len(free)))
    for c, j in enumerate(free):
        G[model.joint_index(j), c] = 1.0
    for mi in model.mimic:
        G[model.joint_index(mi.joint), free.index(mi.leader)] = mi.multiplier
    perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]  # pin index -> ours
    rng = np.random.default_rng(2)
    for _ in range(3):
        y, yd = rng.uniform(-0.5, 0.5, len(free)), rng.normal(size=len(free))
        q = G @ y + np.array([followers[j].offset if j in followers else 0.0 for j in model.joint_names])
        qd = G @ yd
        tau = rng.normal(size=model.nv)
        qp = np.zeros(pm.nq)
        for i in range(1, pm.njoints):
            jm = pm.joints[i]
            x = q[perm[i - 1]]
            qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(x), np.sin(x)] if jm.nq == 2 else [x]
        inv = np.argsort(perm)
        H = pin.crba(pm, pd, qp)
        H = np.triu(H) + np.triu(H, 1).T
        C = pin.nonLinearEffects(pm, pd, qp, qd[perm])
        H, C = H[np.ix_(inv, inv)], C[inv]  # back to urdf_dyn's joint order
        ydd = np.linalg.solve(G.T @ H @ G, G.T @ (tau - C))
        ours = constrained_forward_dynamics(model, q, qd, tau, loop_solver="nullspace", passive=False).qdd
        assert np.allclose(ours, G @ ydd, rtol=1e-8, atol=1e-8)


def test_drake_ball_constraint_equals_spherical_loop():
    """Drake's <drake:ball_constraint> reads as a spherical loop: same K, k and accelerations as the
    <loop type="spherical"> four-bar."""
    text = (ROOT / "robots" / "four_bar_spherical.urdf").read_text()
    drake = re.sub(r"<loop .*?</loop>",
                   '<drake:ball_constraint name="ball"><drake:ball_constraint_body_A name="coupler"/>'
                   '<drake:ball_constraint_p_AP value="0.5 0 0"/><drake:ball_constraint_body_B name="rocker"/>'
                   '<drake:ball_constraint_p_BQ value="0.4 0 0"/></drake:ball_constraint>', text, flags=re.S)
    drake = drake.replace('<robot name="four_bar_spherical">',
                          '<robot name="four_bar_spherical" xmlns:drake="http://drake.mit.edu">')
    a, b = ud.load(text), ud.load(drake)
    assert [lp.type for lp in b.loops] == ["spherical"]
    q = a.q_initial()
    qd = project_velocity(a, q, np.array([1.0, -0.3, 0.4]))
    for x, y in zip(loop_constraints(a, q, qd), loop_constraints(b, q, qd)):
        assert np.allclose(x, y, atol=1e-14)
    tau = np.array([0.5, -0.2, 0.1])
    assert np.allclose(constrained_forward_dynamics(a, q, qd, tau, passive=False).qdd, constrained_forward_dynamics(b, q, qd, tau, passive=False).qdd,
                       atol=1e-12)


def test_loop_joint_damping_dissipates_at_the_rate_b_times_loop_speed_squared():
    """A damper on the crank-slider's rod-slider pin: the power it absorbs is b ω_rel², ω_rel the relative
    angular speed across the pin (the rod's absolute angular speed, the slider does not turn)."""
    from urdf_dyn.constraints.passive import passive_forces
    text = (ROOT / "robots" / "crank_slider.urdf").read_text().replace(
        '<axis xyz="0 -1 0"/>\n  </loop>', '<axis xyz="0 -1 0"/>\n    <dynamics damping="0.3"/>\n  </loop>')
    model = ud.load(text)
    assert model.loops[0].damping == 0.3
    q = assemble(model, np.array([0.7, 0, 0.6]), hold=["crank"])
    qd = project_velocity(model, q, np.array([2.0, 0.0, 0.0]), hold=["crank"])
    tau_tree_only = -np.asarray(model.damping) * qd - np.asarray(model.spring_stiffness) * (q - np.asarray(model.spring_reference))
    tau_loop = passive_forces(model, q, qd) - tau_tree_only
    omega_rod = qd[model.joint_index("crank")] + qd[model.joint_index("rod")]  # absolute rod rate
    assert tau_loop @ qd == pytest.approx(-0.3 * omega_rod ** 2, rel=1e-10)
