"""Soil-cutting resistance (urdf_dyn.machines.soil).

No published worked example of the FEE with all inputs and outputs could be found (McKyes 1985, Luengo et al.
1998, Wilkinson & DeGennaro 2007, Patel's codes: only abstracts or code without numbers; see
/work/research/excavator.md §2.4). The closed-form N-factors are therefore checked against two independent
evaluations instead:
- the failure wedge's force equilibrium written as vectors and solved numerically (numpy), with the failure
  angle found by scipy's minimiser, for many (α, φ, δ);
- Rankine's passive earth pressure, the limiting case of a vertical smooth wall (α = 90°, δ = 0):
  β = 45° − φ/2, N_γ = K_p/2, N_c = 2√K_p, K_p = tan²(45° + φ/2) (any soil-mechanics text, e.g. Craig's
  Soil Mechanics §11.2).
"""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from urdf_dyn.machines.soil import SOILS, Soil, failure_angle, fee_force, n_factors, soil_cutting, soil_preset


def wedge_blade_force(alpha, phi, delta, beta, gamma_g=0.0, c=0.0, q=0.0, ca=0.0, d=1.0):
    """Blade force P [N per m width] from the equilibrium of the soil wedge (2-D, x = travel, z = up):
    blade from the tip (0, 0) up-back to (−d cot α, d); failure plane from the tip to (d cot β, d)."""
    e = np.array([-np.cos(alpha), np.sin(alpha)])          # up along the blade
    nb = np.array([np.sin(alpha), np.cos(alpha)])           # blade normal into the soil
    f = np.array([np.cos(beta), np.sin(beta)])              # up along the failure plane
    nf = np.array([-np.sin(beta), np.cos(beta)])            # failure-plane normal into the wedge
    Ls = d / np.tan(alpha) + d / np.tan(beta)
    W = np.array([0.0, -gamma_g * 0.5 * d * Ls])            # wedge weight
    Qs = np.array([0.0, -q * Ls])                           # surcharge on the free surface
    C = -c * d / np.sin(beta) * f                           # cohesion along the failure plane (resists sliding up)
    Ca = -ca * d / np.sin(alpha) * e                        # adhesion along the blade (soil slides up the blade)
    dirP = np.cos(delta) * nb - np.sin(delta) * e           # blade force on the soil, δ from the normal
    dirR = np.cos(phi) * nf - np.sin(phi) * f               # soil below on the wedge, φ from the normal
    A = np.column_stack([dirP, dirR])
    P, R = np.linalg.solve(A, -(W + Qs + C + Ca))
    return P


CASES = [(45, 30, 20), (60, 10, 6), (25, 30, 20), (45, 35, 22), (80, 40, 25), (35, 20, 10)]


@pytest.mark.parametrize("a,p,d", CASES)
def test_n_factors_match_the_wedge_equilibrium(a, p, d):
    al, ph, de = np.radians([a, p, d])
    # failure angle: minimise the weight term of the numerical equilibrium (McKyes' choice)
    # (a wedge exists only where the equilibrium gives P > 0: bracket on a 0.5° grid, then refine)
    obj = lambda b: (lambda P: P if P > 0 else np.inf)(wedge_blade_force(al, ph, de, b, gamma_g=1.0))  # noqa
    grid = np.radians(np.arange(1.0, 89.0, 0.5))
    b0 = grid[int(np.argmin([obj(b) for b in grid]))]
    r = minimize_scalar(obj, bounds=(b0 - np.radians(0.5), b0 + np.radians(0.5)), method="bounded",
                        options={"xatol": 1e-11})
    beta = failure_angle(al, ph, de)[0]
    assert beta == pytest.approx(r.x, abs=1e-6)
    Ng, Nc, Nq, Na = (float(x) for x in n_factors(al, ph, de, beta))
    assert Ng == pytest.approx(wedge_blade_force(al, ph, de, beta, gamma_g=1.0), rel=1e-10)
    assert Nc == pytest.approx(wedge_blade_force(al, ph, de, beta, c=1.0), rel=1e-10)
    assert Nq == pytest.approx(wedge_blade_force(al, ph, de, beta, q=1.0), rel=1e-10)
    assert Na == pytest.approx(wedge_blade_force(al, ph, de, beta, ca=1.0), rel=1e-10, abs=1e-12)
    # the FEE sums the terms: one equilibrium with everything at once
    soil = Soil("t", 1500.0, ph, de, 12e3, 4e3)
    F, _ = fee_force(soil, 0.4, 1.3, al, surcharge=2e3)
    P = wedge_blade_force(al, ph, de, beta, gamma_g=1500 * 9.81, c=12e3, q=2e3, ca=4e3, d=0.4)
    assert float(F) == pytest.approx(1.3 * P, rel=1e-10)


def test_failure_angle_matches_a_scalar_minimiser():
    """The vectorised bisection of dN_γ/dβ = 0 against scipy's bounded minimiser of N_γ itself (one call
    per rake, as the code did before), for every preset and rakes over the range the path clips to."""
    rakes = np.radians(np.linspace(15.0, 90.0, 31))
    for soil in [*SOILS.values(), Soil("t", 1500.0, np.radians(45.0), np.radians(5.0))]:
        ph, de = soil.friction_angle, soil.tool_friction_angle
        beta = failure_angle(rakes, ph, de)
        grid = np.radians(np.arange(0.25, 89.8, 0.25))
        for a, b in zip(rakes, beta):
            ng = lambda x: float(n_factors(a, ph, de, x)[0])  # noqa: E731
            b0 = grid[int(np.argmin([ng(x) for x in grid]))]
            r = minimize_scalar(ng, bounds=(b0 - np.radians(0.25), b0 + np.radians(0.25)), method="bounded",
                                options={"xatol": 1e-11})
            assert b == pytest.approx(r.x, abs=1e-6), (soil.name, np.degrees(a))
            assert ng(b) <= ng(r.x) * (1 + 1e-12)


@pytest.mark.parametrize("phi", [20.0, 30.0, 40.0])
def test_vertical_smooth_wall_is_rankine_passive(phi):
    ph = np.radians(phi)
    Kp = np.tan(np.pi / 4 + ph / 2) ** 2
    beta = failure_angle(np.pi / 2, ph, 0.0)[0]
    assert np.degrees(beta) == pytest.approx(45 - phi / 2, abs=1e-5)
    Ng, Nc, Nq, _ = n_factors(np.pi / 2, ph, 0.0, beta)
    assert Ng == pytest.approx(Kp / 2, rel=1e-9)
    assert Nc == pytest.approx(2 * np.sqrt(Kp), rel=1e-9)
    assert Nq == pytest.approx(Kp, rel=1e-9)       # surcharge q gives q d K_p


def test_research_vector_case_A():
    """Regression against the test vector computed independently (a separate script on a 1e-4° grid) in
    /work/research/excavator.md §2.4 case A — not a published example."""
    soil = Soil("A", 1600.0, np.radians(30), np.radians(20))
    F, beta = fee_force(soil, 0.3, 1.0, np.radians(45))
    assert np.degrees(float(beta)) == pytest.approx(33.7933, abs=2e-4)
    assert float(F) == pytest.approx(2027.92, rel=1e-5)


def test_force_grows_with_depth_cohesion_density():
    s = SOILS["clay"]
    F = fee_force(s, np.linspace(0.05, 0.6, 12), 1.3, np.radians(40))[0]
    assert np.all(np.diff(F) > 0)
    assert fee_force(soil_preset("clay", cohesion=60e3), 0.3, 1.3, 0.7)[0] > fee_force(s, 0.3, 1.3, 0.7)[0]
    assert fee_force(soil_preset("clay", density=2000.0), 0.3, 1.3, 0.7)[0] > fee_force(s, 0.3, 1.3, 0.7)[0]


def test_presets_and_bad_parameters():
    assert set(SOILS) >= {"loose_sand", "dense_sand", "clay", "gravel"}
    for s in SOILS.values():
        assert s.source and s.density > 1000
    with pytest.raises(KeyError, match="presets: loose_sand"):
        soil_preset("peat")
    with pytest.raises(ValueError, match="cohesion must be"):
        soil_preset("clay", cohesion=-1.0)


def test_cutting_along_a_straight_drag():
    """A level drag at constant depth d and speed v for time T: the volume is w d v T (capped at the
    capacity), the force opposes the travel and presses the edge into the soil, and a deeper cut resists
    more."""
    t = np.linspace(0, 2.0, 401)
    v = 0.5
    edge = np.column_stack([6.0 - v * t, np.zeros_like(t), np.full_like(t, -0.3)])
    alpha = np.radians(40)
    face = np.tile([np.cos(alpha), 0.0, np.sin(alpha)], (len(t), 1))   # up and back from the edge (travel −x)
    s = SOILS["dense_sand"]
    cut = soil_cutting(t, edge, face, s, 0.0, 1.2, capacity=10.0)
    assert cut.depth == pytest.approx(np.full(len(t), 0.3))
    assert cut.volume[-1] == pytest.approx(1.2 * 0.3 * v * 2.0, rel=1e-3)
    assert cut.rake == pytest.approx(np.full(len(t), alpha), abs=1e-9)
    i = 200
    assert cut.force[i, 0] > 0 and cut.force[i, 2] < 0   # against the travel (−x), into the soil (−z)
    ang = np.arctan2(cut.force[i, 0], -cut.force[i, 2])
    assert ang == pytest.approx(alpha + s.tool_friction_angle, abs=1e-9)   # H/V = tan(α + δ)
    capped = soil_cutting(t, edge, face, s, 0.0, 1.2, capacity=0.2)
    assert capped.volume.max() == pytest.approx(0.2)
    deeper = soil_cutting(t, edge - [0, 0, 0.1], face, s, 0.0, 1.2, capacity=10.0)
    assert np.all(deeper.magnitude[5:-5] > cut.magnitude[5:-5])
    above = soil_cutting(t, edge + [0, 0, 1.0], face, s, 0.0, 1.2, capacity=10.0)
    assert not above.reached and np.all(above.magnitude == 0)
