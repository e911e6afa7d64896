"""Gauss's principle in descriptor coordinates (urdf_dyn.gauss) against independent oracles: the paper's
printed M, Q, J, γ; the Lagrange-multiplier (KKT) system; the minimum property itself; seed 001's eq. (16)
coded here literally; the tree + <loop> crank-slider of urdf_dyn.simulate; Chaplygin's sleigh against its
reduced equations (Bloch §1.7); energy bookkeeping."""
import numpy as np
import pytest

pytest.importorskip("sympy")

import urdf_dyn as ud  # noqa: E402
from _robots import ROOT  # noqa: E402
from urdf_dyn import gauss  # noqa: E402
from urdf_dyn.simulation.controllers import Constant  # noqa: E402
from urdf_dyn.errors import ModelError  # noqa: E402
from urdf_dyn.simulation.simulate import simulate as tree_simulate  # noqa: E402

P = dict(m1=0.37, m2=0.77, m3=0.1, l1=0.15, l2=0.56, tau=-0.5, k=5.0, c=1.0, g=9.81)
Q0 = np.array([0.075, 0, 0, 0.43, 0, 0, 0.71])


def crank_slider_state(th1, w1, l1=P["l1"], l2=P["l2"]):
    """A consistent (q, q̇) of the crank-slider from its closed-form kinematics (slider on y = 0)."""
    th2 = -np.arcsin(l1 * np.sin(th1) / l2)
    w2 = -l1 * np.cos(th1) * w1 / (l2 * np.cos(th2))
    q = np.array([l1 / 2 * np.cos(th1), l1 / 2 * np.sin(th1), th1,
                  l1 * np.cos(th1) + l2 / 2 * np.cos(th2), l1 * np.sin(th1) + l2 / 2 * np.sin(th2), th2,
                  l1 * np.cos(th1) + l2 * np.cos(th2)])
    qd = np.array([-l1 / 2 * np.sin(th1) * w1, l1 / 2 * np.cos(th1) * w1, w1,
                   -l1 * np.sin(th1) * w1 - l2 / 2 * np.sin(th2) * w2,
                   l1 * np.cos(th1) * w1 + l2 / 2 * np.cos(th2) * w2, w2,
                   -l1 * np.sin(th1) * w1 - l2 * np.sin(th2) * w2])
    return q, qd


def random_states(n, seed):
    rng = np.random.default_rng(seed)
    return [crank_slider_state(rng.uniform(-np.pi, np.pi), rng.normal(scale=5.0)) for _ in range(n)]


def null_space(J, tol=1e-10):
    U, s, Vt = np.linalg.svd(J)
    r = int(np.sum(s > tol * s[0]))
    return Vt[r:].T


def four_bar(seed):
    """A four-bar with random masses and lengths, three free bodies and four pins (n = 9, m = 8)."""
    rng = np.random.default_rng(seed)
    a, b, c, d = 0.3, 0.7, 0.6, 0.8   # crank, coupler, rocker, ground: a Grashof crank-rocker
    s = gauss.PlanarSystem(gravity=(0.0, -9.81), name="four_bar")
    bodies = [s.add_body(n, rng.uniform(0.2, 2.0), rng.uniform(0.002, 0.1)) for n in ("crank", "coupler", "rocker")]
    s.revolute(bodies[0], (-a / 2, 0), None, (0, 0))
    s.revolute(bodies[0], (a / 2, 0), bodies[1], (-b / 2, 0))
    s.revolute(bodies[1], (b / 2, 0), bodies[2], (c / 2, 0))
    s.revolute(bodies[2], (-c / 2, 0), None, (d, 0))
    s.torque(bodies[0], rng.normal())
    s.spring_damper(bodies[1], (0, 0), None, (0.4, 1.0), k=20.0, length0=0.5, c=0.7)
    return s, (a, b, c, d)


def four_bar_state(s, dims, th1, w1):
    """Assemble a four-bar configuration (circle intersection) and a consistent velocity (null space)."""
    a, b, c, d = dims
    A = np.array([a * np.cos(th1), a * np.sin(th1)])
    D = np.array([d, 0.0])
    L = np.linalg.norm(D - A)
    ang = np.arctan2(*(D - A)[::-1]) + np.arccos((b ** 2 + L ** 2 - c ** 2) / (2 * b * L))
    B = A + b * np.array([np.cos(ang), np.sin(ang)])
    th2, th3 = ang, np.arctan2(*(B - D)[::-1])
    q = np.array([*(A / 2), th1, *((A + B) / 2), th2, *((B + D) / 2), th3])
    assert np.linalg.norm(s.phi(q)) < 1e-12
    J, _ = s.constraint_jacobian(q, np.zeros(9))
    N = null_space(J)
    assert N.shape[1] == 1
    return q, N[:, 0] * w1 / N[2, 0]


# -----------------------------------------------------------------------------------------------------
# the model against the paper's printed equations
# -----------------------------------------------------------------------------------------------------
def test_mass_matrix_forces_and_automatic_jacobian_match_the_paper():
    """M = eq. (17), Q = eq. (19) (spring-damper modelled as a two-point element), and the J, γ derived
    by sympy from the paper's φ (eq. (21)) equal eqs. (22)-(23) as printed — except the paper's two
    misprints: J row 6 has l2/2 sin θ2 for l2/2 cos θ2, and γ lists 5 of the 6 rows (row 5 is missing)."""
    l1, l2, m1, m2, m3 = P["l1"], P["l2"], P["m1"], P["m2"], P["m3"]
    s = gauss.crank_slider(**P, constraints="paper")
    I1, I2 = m1 * l1 ** 2 / 12, m2 * l2 ** 2 / 12
    assert np.array_equal(s.mass_matrix(), np.diag([m1, m1, I1, m2, m2, I2, m3]))
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd = rng.normal(size=7), rng.normal(size=7)          # any state: these are plain functions
        q[6] = rng.uniform(0.3, 0.8)
        x3, xd3 = q[6], qd[6]
        Q19 = [0, -m1 * P["g"], P["tau"], 0, -m2 * P["g"], 0, P["k"] * (l1 + l2 - x3) - P["c"] * xd3]
        assert np.allclose(s.applied_forces(q, qd), Q19, rtol=0, atol=1e-12)
        t1, t2 = q[2], q[5]
        w1, w2 = qd[2], qd[5]
        J22 = np.array([[1, 0, l1 / 2 * np.sin(t1), 0, 0, 0, 0],
                        [0, 1, -l1 / 2 * np.cos(t1), 0, 0, 0, 0],
                        [0, 0, -l1 * np.sin(t1), -1, 0, -l2 / 2 * np.sin(t2), 0],
                        [0, 0, l1 * np.cos(t1), 0, -1, l2 / 2 * np.cos(t2), 0],
                        [0, 0, 0, 1, 0, -l2 / 2 * np.sin(t2), -1],
                        [0, 0, 0, 0, 1, l2 / 2 * np.cos(t2), 0]])   # printed: l2/2 sin θ2 (misprint)
        g23 = np.array([-l1 / 2 * np.cos(t1) * w1 ** 2, -l1 / 2 * np.sin(t1) * w1 ** 2,
                        l1 * np.cos(t1) * w1 ** 2 + l2 / 2 * np.cos(t2) * w2 ** 2,
                        l1 * np.sin(t1) * w1 ** 2 + l2 / 2 * np.sin(t2) * w2 ** 2,
                        l2 / 2 * np.cos(t2) * w2 ** 2,                # missing in print
                        l2 / 2 * np.sin(t2) * w2 ** 2])
        J, g = s.constraint_jacobian(q, qd)
        assert np.allclose(J, J22, rtol=0, atol=1e-14)
        assert np.allclose(g, g23, rtol=0, atol=1e-13)
        assert abs(J[5, 5] - l2 / 2 * np.sin(t2)) > 1e-6 or abs(np.cos(t2) - np.sin(t2)) < 1e-6


def test_pin_joints_and_the_papers_rows_give_the_same_motion():
    """Two constraint sets for one manifold (pins O, A, B; the paper's rows) and one with both (rank
    deficient, m = 12 rows of rank 6): the same accelerations."""
    sj, sp = gauss.crank_slider(**P), gauss.crank_slider(**P, constraints="paper")
    both = gauss.crank_slider(**P)
    for name, e in sp.holonomic:
        both.constraint(e.subs(dict(zip(sp.q, both.q))), name)
    worst = 0.0
    for q, qd in random_states(6, seed=1):
        ref = gauss.accelerations(sj, q, qd).qdd
        for s in (sp, both):
            for m in ("gauss", "kkt"):
                r = gauss.accelerations(s, q, qd, solver=m)
                worst = max(worst, np.linalg.norm(r.qdd - ref) / np.linalg.norm(ref))
        assert gauss.accelerations(both, q, qd).rank == 6
    print(f"pins vs paper rows vs both: {worst:.1e}")
    assert worst <= 1e-10


def test_a_free_slider_in_a_slot_moves_like_the_papers_one_coordinate_slider():
    """Slider as a full (x, y, θ) body held by ``slot`` and θ = 0 instead of the paper's x3 alone."""
    import sympy
    l1, l2 = P["l1"], P["l2"]
    s = gauss.PlanarSystem(gravity=(0.0, -P["g"]))
    crank = s.add_body("crank", P["m1"], P["m1"] * l1 ** 2 / 12)
    rod = s.add_body("rod", P["m2"], P["m2"] * l2 ** 2 / 12)
    slider = s.add_body("slider", P["m3"], 1e-3)
    s.revolute(crank, (-l1 / 2, 0), None, (0, 0))
    s.revolute(crank, (l1 / 2, 0), rod, (-l2 / 2, 0))
    s.revolute(rod, (l2 / 2, 0), slider, (0, 0))
    s.slot(slider, (0, 0), (0, 0), (1, 0))
    s.constraint(slider.theta)
    s.torque(crank, P["tau"])
    s.potential(P["k"] / 2 * (slider.x - (l1 + l2)) ** 2)
    s.generalized_force({"slider.x": -P["c"] * slider.xd})
    assert isinstance(slider.theta, sympy.Symbol) and s.n == 9
    ref = gauss.crank_slider(**P)
    for q, qd in random_states(4, seed=9):
        q9, qd9 = np.concatenate([q, [0, 0]]), np.concatenate([qd, [0, 0]])
        a9 = gauss.accelerations(s, q9, qd9).qdd
        assert np.allclose(a9[:7], gauss.accelerations(ref, q, qd).qdd, rtol=1e-10, atol=1e-9)
        assert np.allclose(a9[7:], 0, atol=1e-9)
        assert s.energy(q9, qd9) == pytest.approx(ref.energy(q, qd), rel=1e-12, abs=1e-12)


# -----------------------------------------------------------------------------------------------------
# the minimiser
# -----------------------------------------------------------------------------------------------------
def _systems():
    out = []
    cs = gauss.crank_slider(**P)
    out += [(cs, q, qd, t) for (q, qd), t in zip(random_states(8, seed=2), np.linspace(0, 3, 8))]
    fb, dims = four_bar(7)
    rng = np.random.default_rng(8)
    out += [(fb, *four_bar_state(fb, dims, rng.uniform(-np.pi, np.pi), rng.normal(scale=3)), 0.0) for _ in range(6)]
    sl = gauss.chaplygin_sleigh(m=1.3, inertia=0.07, a=0.25)
    for _ in range(6):
        q, w, v = rng.normal(size=3), rng.normal(), rng.normal()
        th = q[2]   # contact velocity v along the blade; centroid velocity v e + a ω e⊥
        qd = np.array([v * np.cos(th) - 0.25 * w * np.sin(th), v * np.sin(th) + 0.25 * w * np.cos(th), w])
        out.append((sl, q, qd, 0.0))
    return out


def test_least_squares_minimiser_equals_kkt_at_random_consistent_states():
    worst = {}
    for s, q, qd, t in _systems():
        assert np.linalg.norm(s.velocity_residual(q, qd, t)) < 1e-10
        g = gauss.accelerations(s, q, qd, t, solver="gauss")
        k = gauss.accelerations(s, q, qd, t, solver="kkt")
        err = np.linalg.norm(g.qdd - k.qdd) / np.linalg.norm(k.qdd)
        lam = np.linalg.norm(g.lam - k.lam) / max(np.linalg.norm(k.lam), 1e-300)
        worst[s.name] = max(worst.get(s.name, 0.0), err, lam)
        # both satisfy the constraints, and the constraint force is ideal: Q_c = Jᵀλ, no work on any
        # admissible velocity (null space of J)
        for r in (g, k):
            assert np.linalg.norm(r.J @ r.qdd - r.gamma) <= 1e-10 * (1 + np.linalg.norm(r.gamma))
            assert np.linalg.norm(null_space(r.J).T @ r.Qc) <= 1e-10 * (1 + np.linalg.norm(r.Qc))
            assert r.diagnostics["tangential_force"] <= 1e-10 * (1 + np.linalg.norm(r.Qc))
    print("least squares vs KKT (q̈ and λ), worst relative difference: "
          + ", ".join(f"{n} {v:.1e}" for n, v in worst.items()))
    assert max(worst.values()) <= 1e-10


def test_the_minimiser_minimises_gauss_function():
    """G(q̈ + N z) > G(q̈) for feasible perturbations N z (J N = 0): checked directly, no KKT involved."""
    rng = np.random.default_rng(3)
    for s, q, qd, t in _systems():
        r = gauss.accelerations(s, q, qd, t)
        G0 = gauss.gauss_function(s, q, qd, r.qdd, t)
        assert abs(G0 - r.G) <= 1e-9 * (1 + G0)
        N = null_space(r.J)
        for _ in range(5):
            z = rng.normal(size=N.shape[1]) * 1e-3 * (1 + np.linalg.norm(r.qdd))
            assert gauss.gauss_function(s, q, qd, r.qdd + N @ z, t) > G0


# -----------------------------------------------------------------------------------------------------
# the paper's eq. (16)
# -----------------------------------------------------------------------------------------------------
def paper_eq16(M, J, g, Q, f=None, rcond=1e-10):
    """Seed 001 eq. (16), literally: q̈ = J⁻g − (I − J⁻J)(I − J⁻J)⁻{J⁻g + M⁻¹(f − Q)}, ⁻ = pseudo-inverse.
    The projector I − J⁻J is singular by construction: its zero singular values come out of rounding as
    ~1e-16, which numpy's default cut-off (rcond = 1e-15) can keep and invert, so a cut-off is needed."""
    n = M.shape[0]
    f = np.zeros(n) if f is None else f
    Jm = np.linalg.pinv(J, rcond=rcond)
    I = np.eye(n)
    return Jm @ g - (I - Jm @ J) @ np.linalg.pinv(I - Jm @ J, rcond=rcond) @ (Jm @ g + np.linalg.inv(M) @ (f - Q))


def test_paper_eq16_satisfies_the_constraints_but_is_not_the_minimiser():
    s = gauss.crank_slider(**P)
    M = s.mass_matrix()

    def both(q, qd, t=0.0):
        J, g = s.constraint_jacobian(q, qd, t)
        q16 = paper_eq16(M, J, g, s.applied_forces(q, qd, t))
        ref = gauss.accelerations(s, q, qd, t, solver="kkt")
        assert np.linalg.norm(J @ q16 - g) <= 1e-10 * (1 + np.linalg.norm(g))   # it is feasible ...
        assert np.allclose(gauss.accelerations(s, q, qd, t, solver="paper16").qdd, q16, rtol=1e-10, atol=1e-10)
        return q16, ref

    # at the paper's q0 (at rest): the crank acceleration is 4.26 times the true one
    q16_0, ref0 = both(Q0, np.zeros(7))
    ratio0 = q16_0[2] / ref0.qdd[2]
    rel0 = np.linalg.norm(q16_0 - ref0.qdd) / np.linalg.norm(ref0.qdd)
    # ... and larger than the minimum: G(q̈₁₆) ≫ G(q̈)
    G16, G = gauss.gauss_function(s, Q0, np.zeros(7), q16_0), ref0.G
    # at random consistent states
    rels, ratios = [], []
    for q, qd in random_states(40, seed=4):
        q16, r = both(q, qd)
        rels.append(np.linalg.norm(q16 - r.qdd) / np.linalg.norm(r.qdd))
        ratios.append(q16[2] / r.qdd[2])
        assert gauss.gauss_function(s, q, qd, q16) > r.G * (1 + 1e-9)
    rels, ratios = np.array(rels), np.abs(ratios)
    print(f"eq. (16) at q0: θ̈1 = {q16_0[2]:.4g} vs {ref0.qdd[2]:.4g} rad/s² "
          f"({ratio0:.3f}×), ‖Δq̈‖/‖q̈‖ = {rel0:.3f}, G = {G16:.4g} vs {G:.4g}; 40 random states: ‖Δq̈‖/‖q̈‖ "
          f"min {rels.min():.3f} median {np.median(rels):.3f} max {rels.max():.3f}; |θ̈1 ratio| median "
          f"{np.median(ratios):.2f}, max {ratios.max():.3g}")
    assert 4.2 < ratio0 < 4.3 and 3.2 < rel0 < 3.3
    assert G16 > 9 * G
    assert rels.min() > 0.1 and np.median(rels) > 1.0


def test_the_papers_route_with_the_true_pseudo_inverse_gives_the_minimiser():
    """Eqs. (8)-(14) are sound: with A = M^½ P, P = I − J⁺J, b = −(M^½ J⁺γ − M^-½ Q) (eq. (11) prints
    M^-½ J⁺γ) and the Moore-Penrose A⁺ in place of eq. (15)'s P⁺ M^-½, q̈ = J⁺γ + P A⁺ b is the minimiser."""
    s = gauss.crank_slider(**P)
    M = s.mass_matrix()
    Mh, Mih = np.sqrt(M), np.diag(1 / np.sqrt(np.diag(M)))
    for q, qd in [(Q0, np.zeros(7))] + random_states(5, seed=10):
        J, g = s.constraint_jacobian(q, qd)
        Q = s.applied_forces(q, qd)
        Jp = np.linalg.pinv(J, rcond=1e-10)
        Pr = np.eye(7) - Jp @ J
        A = Mh @ Pr
        b = -(Mh @ Jp @ g - Mih @ Q)
        qdd = Jp @ g + Pr @ np.linalg.pinv(A, rcond=1e-10) @ b
        ref = gauss.accelerations(s, q, qd, solver="kkt").qdd
        assert np.linalg.norm(qdd - ref) <= 1e-10 * np.linalg.norm(ref)
        # eq. (15)'s X = P⁺ M^-½ is a generalised inverse of A (Penrose 1, 2 and 4 hold) but not a
        # least-squares one: A X = M^½ P M^-½ is not symmetric (Penrose 3), so X b does not minimise ‖A h − b‖
        X = np.linalg.pinv(Pr, rcond=1e-10) @ Mih
        nA = np.linalg.norm(A)
        assert np.linalg.norm(A @ X @ A - A) <= 1e-12 * nA
        assert np.linalg.norm(X @ A @ X - X) <= 1e-12 * np.linalg.norm(X)
        assert np.linalg.norm(X @ A - (X @ A).T) <= 1e-12
        assert np.linalg.norm(A @ X - (A @ X).T) > 1.0
        h16, hls = X @ b, np.linalg.lstsq(A, b, rcond=1e-10)[0]
        assert np.linalg.norm(A @ h16 - b) > (1 + 1e-6) * np.linalg.norm(A @ hls - b)


def test_paper_eq16_is_right_when_the_mass_matrix_is_a_multiple_of_the_identity():
    """(AB)⁺ = B⁺A⁺ holds for A = M^½ = μ I: then eq. (16) is the minimiser, which pins the error down."""
    s = gauss.crank_slider(**{**P, "m1": 2.0, "m2": 2.0, "m3": 2.0}, I1=2.0, I2=2.0)
    assert np.array_equal(s.mass_matrix(), 2.0 * np.eye(7))
    for q, qd in random_states(5, seed=5):
        J, g = s.constraint_jacobian(q, qd)
        q16 = paper_eq16(s.mass_matrix(), J, g, s.applied_forces(q, qd))
        ref = gauss.accelerations(s, q, qd).qdd
        assert np.linalg.norm(q16 - ref) <= 1e-10 * np.linalg.norm(ref)


# -----------------------------------------------------------------------------------------------------
# against the tree + <loop> formulation
# -----------------------------------------------------------------------------------------------------
def _urdf_centroidal_inertia(model, link):
    """I_yy about the centroid of a link of the planar x-z model, from its spatial inertia (RBDA eq. 2.63)."""
    I = model.I[model.body_names.index(link)]
    m = I[3, 3]
    c = np.array([I[2, 4], I[0, 5], I[1, 3]]) / m   # m [c]× sits in the upper-right block
    return m, I[1, 1] - m * (c[0] ** 2 + c[2] ** 2)


def test_descriptor_crank_slider_equals_the_tree_and_loop_model():
    """robots/crank_slider.urdf (x-z plane, θ_rod relative) by urdf_dyn.simulate vs the descriptor model
    from the paper's q0, 2 s, τ = −0.5 N m. With the paper's exact inertias the gap is the URDF's 7-digit
    rounding of the rod inertia; with the URDF's own numbers it is integration error only."""
    model = ud.load(ROOT / "robots" / "crank_slider.urdf")
    tree = tree_simulate(model, model.q_initial(), None, 2.0, controller=Constant(model, [-0.5, 0, 0]),
                         options=ud.SimulateOptions(dt_out=0.01, rtol=1e-11, atol=1e-12, t_stab=0.1))
    (m_rod, I_rod), (_, I_crank) = _urdf_centroidal_inertia(model, "rod"), _urdf_centroidal_inertia(model, "crank")
    assert m_rod == pytest.approx(P["m2"]) and I_rod == pytest.approx(P["m2"] * P["l2"] ** 2 / 12, rel=1e-6)
    out = {}
    for label, extra in (("paper inertias", {}), ("URDF inertias", dict(I1=I_crank, I2=I_rod))):
        tr = gauss.simulate(gauss.crank_slider(**P, **extra), Q0, None, 2.0, rtol=1e-11, atol=1e-12)
        assert np.array_equal(tr.t, tree.t)
        d_th = np.max(np.abs(tr.coordinate("crank.theta") - tree.q[:, 0]))
        d_x3 = np.max(np.abs(tr.coordinate("slider.x") - tree.q[:, 2]))
        d_th2 = np.max(np.abs(tr.coordinate("rod.theta") - (tree.q[:, 0] + tree.q[:, 1])))
        d_w = np.max(np.abs(tr.coordinate("crank.theta", "qd") - tree.qd[:, 0]))
        out[label] = (d_th, d_x3, d_th2, d_w)
        print(f"descriptor vs tree + loop over 2 s ({label}): max |Δθ1| = {d_th:.2e} rad, |Δx3| = {d_x3:.2e} m, "
              f"|Δθ2| = {d_th2:.2e} rad, |Δθ̇1| = {d_w:.2e} rad/s")
    assert np.ptp(tree.q[:, 0]) > 10  # it really moves (the crank runs away)
    assert max(out["paper inertias"][:3]) <= 1e-6
    assert max(out["URDF inertias"][:3]) <= 1e-8 and out["URDF inertias"][3] <= 1e-7


def test_descriptor_crank_slider_equals_the_reduced_coordinate_derivation():
    """The sympy Lagrange derivation in the single coordinate θ1 of tests/test_closed_loop.py."""
    from scipy.integrate import solve_ivp
    from test_closed_loop import crank_slider_reduced
    f, x3 = crank_slider_reduced()
    ref = solve_ivp(lambda t, y: [y[1], f(y[0], y[1])], (0, 2.0), [0.0, 0.0], rtol=1e-13, atol=1e-14,
                    dense_output=True, method="DOP853")
    tr = gauss.simulate(gauss.crank_slider(**P), Q0, None, 2.0, rtol=1e-11, atol=1e-12)
    th = ref.sol(tr.t)[0]
    d_th = np.max(np.abs(tr.coordinate("crank.theta") - th))
    d_x3 = np.max(np.abs(tr.coordinate("slider.x") - x3(th)))
    print(f"descriptor vs reduced coordinates over 2 s: |Δθ1| {d_th:.1e} rad, |Δx3| {d_x3:.1e} m")
    assert d_th <= 1e-9 and d_x3 <= 1e-9


# -----------------------------------------------------------------------------------------------------
# energy; non-holonomic constraints
# -----------------------------------------------------------------------------------------------------
def test_undriven_undamped_crank_slider_conserves_energy():
    s = gauss.crank_slider(**{**P, "tau": 0.0, "c": 0.0})
    q0, qd0 = crank_slider_state(0.9, 0.0)
    tr = gauss.simulate(s, q0, qd0, 5.0, rtol=1e-11, atol=1e-12)
    swing = np.ptp([s.potential_energy(q) for q in tr.q])
    drift = np.max(np.abs(tr.energy - tr.energy[0]))
    print(f"crank-slider, τ = c = 0: energy drift {drift:.1e} J over 5 s (potential swings {swing:.3g} J), "
          f"max |φ| {np.abs(tr.phi).max():.1e}")
    assert swing > 0.3
    assert drift <= 1e-8 * swing and np.all(tr.work == 0)
    assert np.abs(tr.phi).max() <= 1e-9


def test_energy_balance_of_the_papers_run_and_its_failure_under_eq16():
    """E(t) − E(0) = work of τ and the damper along the minimiser's motion; eq. (16)'s 'constraint force'
    M(q̈ − a) has a component along the admissible motion, so it does work and the balance fails."""
    s = gauss.crank_slider(**P)
    tr = gauss.simulate(s, Q0, None, 2.0)
    p16 = gauss.simulate(s, Q0, None, 0.5, solver="paper16")
    e, e16 = np.abs(tr.energy_balance).max(), np.abs(p16.energy_balance).max()
    print(f"energy balance |E − E(0) − W|: minimiser {e:.1e} J (W = {tr.work[-1]:.3g} J), eq. (16) {e16:.3g} J")
    assert abs(tr.work[-1]) > 1.0 and e <= 1e-7
    assert e16 > 1.0
    r = gauss.accelerations(s, Q0, np.zeros(7), solver="paper16")
    assert r.diagnostics["tangential_force"] > 1.0   # N: not a constraint force


def sleigh_reduced(m, I, a, v0, w0, T):
    """Bloch §1.7: v̇ = a ω², ω̇ = −m a v ω / (I + m a²), then ẋ_P = v cos θ, ẏ_P = v sin θ, θ̇ = ω."""
    from scipy.integrate import solve_ivp

    def f(t, y):
        v, w, x, yy, th = y
        return [a * w * w, -m * a * v * w / (I + m * a * a), v * np.cos(th), v * np.sin(th), w]
    return solve_ivp(f, (0, T), [v0, w0, 0.0, 0.0, 0.0], rtol=1e-12, atol=1e-13, dense_output=True, method="DOP853")


@pytest.mark.parametrize("stabilisation", ["baumgarte", "projection"])
def test_chaplygin_sleigh_conserves_energy_keeps_its_blade_and_matches_the_reduced_equations(stabilisation):
    m, I, a, v0, w0 = 1.3, 0.07, 0.25, 0.4, 3.0
    s = gauss.chaplygin_sleigh(m=m, inertia=I, a=a)
    qd0 = np.array([v0, a * w0, w0])          # θ = 0: contact point moves along x at v0
    tr = gauss.simulate(s, np.array([a, 0.0, 0.0]), qd0, 8.0, dt_out=0.02, rtol=1e-11, atol=1e-12,
                        stabilisation=stabilisation)
    ref = sleigh_reduced(m, I, a, v0, w0, 8.0)
    v, w, xp, yp, th = ref.sol(tr.t)
    x, y, theta = tr.q.T
    err = max(np.max(np.abs(theta - th)), np.max(np.abs(x - a * np.cos(theta) - xp)),
              np.max(np.abs(y - a * np.sin(theta) - yp)), np.max(np.abs(tr.qd[:, 2] - w)))
    drift = np.max(np.abs(tr.energy - tr.energy[0]))
    print(f"Chaplygin sleigh ({stabilisation}): vs reduced equations {err:.1e}; energy {tr.energy[0]:.4f} J, "
          f"drift {drift:.1e} J; max |ψ| {np.abs(tr.psi).max():.1e} m/s; ω {w0} -> {tr.qd[-1, 2]:.3g} rad/s")
    assert abs(tr.qd[-1, 2]) < 0.2 * w0          # it really does the sleigh thing: spin turns into drift
    assert err <= 1e-7
    assert drift <= 1e-9 * tr.energy[0]
    assert np.abs(tr.psi).max() <= 1e-9


def test_projection_and_baumgarte_give_the_same_crank_slider():
    s = gauss.crank_slider(**P)
    a = gauss.simulate(s, Q0, None, 1.0, rtol=1e-11, atol=1e-12)
    b = gauss.simulate(s, Q0, None, 1.0, rtol=1e-11, atol=1e-12, stabilisation="projection")
    assert np.max(np.abs(a.q - b.q)) <= 1e-8
    assert np.abs(b.phi).max() <= 1e-12


def test_pin_force_at_the_ground_balances_the_momentum():
    """Σ m ẍ = λ_O,x + spring-damper force on the slider (the slider's guide acts along y only)."""
    s = gauss.crank_slider(**P)
    for q, qd in random_states(5, seed=6):
        r = gauss.accelerations(s, q, qd)
        names = [n for n, _ in s.holonomic]
        lam_Ox = r.lam[names.index("O.x")]
        momentum_rate = P["m1"] * r.qdd[0] + P["m2"] * r.qdd[3] + P["m3"] * r.qdd[6]
        spring = P["k"] * (P["l1"] + P["l2"] - q[6]) - P["c"] * qd[6]
        assert momentum_rate == pytest.approx(lam_Ox + spring, rel=1e-10, abs=1e-10)


# -----------------------------------------------------------------------------------------------------
# errors and the launch job
# -----------------------------------------------------------------------------------------------------
def test_model_errors_are_clear():
    s = gauss.PlanarSystem()
    with pytest.raises(ModelError, match="inertia must be > 0"):
        s.add_body("wheel", 1.0, 0.0)
    b = s.add_body("b", 1.0, 0.1)
    import sympy
    with pytest.raises(ModelError, match="unknown symbols"):
        s.constraint(b.x - sympy.Symbol("z"))
    with pytest.raises(ModelError, match="unknown symbols"):
        s.constraint(b.xd)                       # a velocity in a holonomic constraint
    with pytest.raises(ValueError, match="unknown Gauss solver"):
        gauss.accelerations(gauss.crank_slider(), Q0, solver="magic")
