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

from urdf_dyn.machines.soil import (SOILS, Soil, bearing_factors, failure_angle, fee_force, n_factors, soil_cutting,
                                   soil_preset)


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


def _failure_angle_60_halvings(rake, phi, delta):
    """The bisection as it was written first: N_γ's grid minimum, then 60 halvings, every term in the loop."""
    rake = np.atleast_1d(np.asarray(rake, float))
    grid = np.radians(np.arange(0.25, 89.8, 0.25))
    b0 = grid[np.argmin(n_factors(rake[:, None], phi, delta, grid[None, :])[0], axis=1)]

    def sign(b):
        D = np.cos(rake + delta) + np.sin(rake + delta) / np.tan(b + phi)
        return -D * np.sin(b + phi) ** 2 + (1.0 / np.tan(rake) + 1.0 / np.tan(b)) * np.sin(rake + delta) * np.sin(b) ** 2
    lo, hi = np.maximum(b0 - np.radians(0.25), 1e-4), np.minimum(b0 + np.radians(0.25), np.pi / 2)
    at_lo, at_hi = sign(lo) >= 0, sign(hi) <= 0
    a, b = lo.copy(), hi.copy()
    for _ in range(60):
        m = 0.5 * (a + b)
        up = sign(m) > 0
        b, a = np.where(up, m, b), np.where(up, a, m)
    return np.where(at_lo, lo, np.where(at_hi, hi, 0.5 * (a + b)))


def test_failure_angle_stops_where_more_halvings_change_nothing():
    """The bisection stops once a halving changes no bracket: the same angles, to the bit, as 60 halvings
    (every preset, a steep soil, rakes over the clipped range and at its ends)."""
    rakes = np.concatenate([np.radians(np.linspace(15.0, 90.0, 301)), np.radians([15.0, 90.0])])
    for soil in [*SOILS.values(), Soil("t", 1500.0, np.radians(45.0), np.radians(5.0))]:
        ph, de = soil.friction_angle, soil.tool_friction_angle
        assert np.array_equal(failure_angle(rakes, ph, de), _failure_angle_60_halvings(rakes, ph, de)), soil.name


def test_the_cut_computes_the_wedge_only_where_the_edge_cuts(monkeypatch):
    """soil_cutting searches the failure angles once, for the distinct rakes of the samples below the
    ground only, and its FEE force there is, to the bit, fee_force's of every sample with its own failure
    angles (the call it made before); fee_force's is 0 where the edge is above the ground."""
    import urdf_dyn.machines.soil as soil_mod
    soil = SOILS["stiff_clay"]
    t = np.linspace(0.0, 3.0, 301)
    edge = np.column_stack([4.0 + 0.6 * t, 0.2 * t, 0.05 - 0.25 * np.sin(np.pi * t / 3.0)])
    a = np.radians(20.0 + 25.0 * t)
    plate = np.column_stack([np.cos(a), np.zeros_like(t), np.sin(a)])
    searched, forces = [], []
    fa, fee = soil_mod.failure_angle, soil_mod.fee_force
    monkeypatch.setattr(soil_mod, "failure_angle", lambda r, *x: searched.append(len(r)) or fa(r, *x))
    monkeypatch.setattr(soil_mod, "fee_force", lambda *x, **k: forces.append(fee(*x, **k)[0]) or fee(*x, **k))
    cut = soil_cutting(t, edge, plate, soil, 0.0, 1.2, capacity=0.3, edge_thickness=0.02)
    monkeypatch.undo()
    assert 0 < cut.in_soil.sum() < len(t)
    assert searched == [len(np.unique(cut.rake[cut.in_soil]))] and len(forces) == 1
    P, _ = fee_force(soil, cut.depth, 1.2, cut.rake, cut.surcharge)      # every sample, its own angles
    assert np.array_equal(forces[0], P[cut.in_soil]) and np.all(P[~cut.in_soil] == 0)
    assert np.all(cut.force[~cut.in_soil] == 0)


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
    assert set(SOILS) >= {"loose_sand", "dense_sand", "soft_clay", "clay", "stiff_clay", "gravel"}
    # moist bank densities (lb/ft³ of the cited table) and the clays' c_u = q_u / 2 bands, soft < stiff
    assert SOILS["soft_clay"].density == pytest.approx(100 * 16.0185)
    assert SOILS["stiff_clay"].density == pytest.approx(120 * 16.0185)
    assert 12e3 <= SOILS["soft_clay"].cohesion <= 24e3
    assert 48e3 <= SOILS["stiff_clay"].cohesion <= 96e3
    for s in SOILS.values():
        assert s.loose_density == pytest.approx(s.density / s.swell)
    # the soft clay cuts: a finite, positive wedge force that grows with c_u, below the medium clay's
    soft = SOILS["soft_clay"]
    f0 = fee_force(soft, 0.3, 1.3, 0.7)[0]
    assert 0 < f0 < fee_force(soil_preset("soft_clay", cohesion=24e3), 0.3, 1.3, 0.7)[0]
    assert f0 < fee_force(SOILS["clay"], 0.3, 1.3, 0.7)[0] < fee_force(SOILS["stiff_clay"], 0.3, 1.3, 0.7)[0]
    for s in SOILS.values():
        assert s.source and s.density > 1000
    with pytest.raises(KeyError, match="presets: loose_sand"):
        soil_preset("peat")
    with pytest.raises(ValueError, match="cohesion must be"):
        soil_preset("clay", cohesion=-1.0)


def test_cutting_along_a_straight_drag():
    """A level drag at constant depth d and speed v for time T: the bank volume is w d v T (the fill is
    capped at the capacity), the force opposes the travel and presses the edge into the soil, and a deeper cut resists
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
    assert capped.fill.max() == pytest.approx(0.2) and capped.volume.max() == pytest.approx(0.36)
    deeper = soil_cutting(t, edge - [0, 0, 0.1], face, s, 0.0, 1.2, capacity=10.0)
    assert np.all(deeper.magnitude[5:-5] > cut.magnitude[5:-5])
    above = soil_cutting(t, edge + [0, 0, 1.0], face, s, 0.0, 1.2, capacity=10.0)
    assert not above.reached and np.all(above.magnitude == 0)


# -- the interaction that follows the cut ---------------------------------------------------

def hand_tool_force(alpha, soil, d, w, q, u, up, t_edge=0.0, g=9.81):
    """The soil's force on the tool (3,) [N] from the 2-D wedge's equilibrium solved here with numpy, mapped
    to world axes: travel u (3,), the free-surface normal up (3,). β minimises the weight term (McKyes)
    by a bounded scalar search of the equilibrium itself; adhesion acts along the face; a blunt edge of
    thickness t adds Terzaghi's strip bearing (textbook N_c, N_q) against the travel."""
    ph, de = soil.friction_angle, soil.tool_friction_angle
    obj = lambda b: (lambda P: P if P > 0 else np.inf)(wedge_blade_force(alpha, ph, de, b, gamma_g=1.0))  # noqa
    grid = np.radians(np.arange(1.0, 89.0, 0.5))
    b0 = grid[int(np.argmin([obj(b) for b in grid]))]
    beta = minimize_scalar(obj, bounds=(b0 - np.radians(0.5), b0 + np.radians(0.5)), method="bounded",
                           options={"xatol": 1e-12}).x
    qb = q(beta) if callable(q) else q
    P = w * wedge_blade_force(alpha, ph, de, beta, gamma_g=soil.density * g, c=soil.cohesion, q=qb,
                              ca=soil.adhesion, d=d)
    # on the soil: P at δ from the blade normal nb, adhesion −c_a d / sin α along the blade e (down it)
    e = np.array([-np.cos(alpha), np.sin(alpha)])
    nb = np.array([np.sin(alpha), np.cos(alpha)])
    on_soil = P * (np.cos(de) * nb - np.sin(de) * e) - w * soil.adhesion * d / np.sin(alpha) * e
    f2 = -on_soil                                                    # (along u, along up) on the tool
    Nq = np.exp(np.pi * np.tan(ph)) * np.tan(np.pi / 4 + ph / 2) ** 2
    Nc = (Nq - 1) / np.tan(ph)
    f2 = f2 - np.array([w * min(d, t_edge) * (soil.cohesion * Nc + soil.density * g * d * Nq), 0.0])
    return f2[0] * np.asarray(u) + f2[1] * np.asarray(up), beta


@pytest.mark.parametrize("rake_deg", [40.0, 70.0])
def test_force_direction_and_size_match_a_hand_wedge_balance(rake_deg):
    """A level drag at depth d along a horizontal direction u (30° off the x axis), the cutting plate at
    rake α from −u: the force on the edge, all three world components, equals the hand wedge balance
    (weight, cohesion, adhesion along the face, the berm's surcharge once the bucket is full, the blunt
    edge's bearing), and it opposes the travel."""
    alpha = np.radians(rake_deg)
    soil = Soil("t", 1600.0, np.radians(28.0), np.radians(17.0), 15e3, 6e3, 1.25)
    t = np.linspace(0.0, 2.0, 401)
    speed, d, w, cap = 0.5, 0.3, 1.2, 0.25
    u = np.array([np.cos(np.radians(30)), np.sin(np.radians(30)), 0.0])
    up = np.array([0.0, 0.0, 1.0])
    edge = np.array([4.0, 1.0, -d]) + speed * t[:, None] * u
    plate = np.tile(-np.cos(alpha) * u + np.sin(alpha) * up, (len(t), 1))
    cut = soil_cutting(t, edge, plate, soil, 0.0, w, cap, edge_thickness=0.015)
    i = 300
    V = w * d * speed * t[i]                                       # bank volume cut
    berm = V - cap / soil.swell
    assert cut.volume[i] == pytest.approx(V, rel=1e-9) and cut.berm[i] == pytest.approx(berm, rel=1e-9)
    q = lambda beta: soil.density * 9.81 * berm / (w * d * (1 / np.tan(alpha) + 1 / np.tan(beta)))  # noqa: E731
    f, beta = hand_tool_force(alpha, soil, d, w, q, u, up, t_edge=0.015)
    assert cut.rake[i] == pytest.approx(alpha, abs=1e-9)
    assert cut.force[i] == pytest.approx(f, rel=1e-7, abs=1e-6 * np.linalg.norm(f))
    assert cut.force[i] @ u < 0                                     # opposes the cut
    # V = P cos(α+δ) − c_a w d: into the soil at 40°; at 70° (α + δ = 87°) the adhesion lifts the edge
    assert (cut.force[i] @ up < 0) == (rake_deg < 60)
    # before the bucket is full there is no surcharge: the balance without q
    j = 20
    assert cut.berm[j] == 0.0 and cut.surcharge[j] == 0.0
    f0, _ = hand_tool_force(alpha, soil, d, w, 0.0, u, up, t_edge=0.015)
    assert cut.force[j] == pytest.approx(f0, rel=1e-7, abs=1e-6 * np.linalg.norm(f0))


def test_force_opposes_the_edge_velocity_along_a_curling_arc():
    """The edge on an arc about a pivot (a bucket curling through the ground), the cutting plate along the
    pin–tip line: the rake is 90° (the tip moves normal to the radius), and without adhesion, surcharge or
    a blunt edge the force makes exactly |90° − (α + δ)| with the backward travel −v, in the plane of the
    motion, at every sample in the soil (α + δ > 90°: the face friction tilts it away from the uncut soil);
    f · v < 0 throughout."""
    soil = soil_preset("dense_sand")
    t = np.linspace(0.0, 2.0, 801)
    th = np.radians(-60.0) + np.radians(90.0) * (t / 2.0) ** 2 * (3 - 2 * t / 2.0)   # smooth 0 → 90°
    R, c = 1.5, np.array([3.0, 0.0, 1.0])
    edge = c + R * np.column_stack([np.cos(-th - np.pi / 2), np.zeros_like(th), np.sin(-th - np.pi / 2)])
    plate = (c - edge) / R                                          # from the tip back to the pin
    cut = soil_cutting(t, edge, plate, soil, 0.0, 1.0, capacity=10.0)
    m = cut.in_soil & (np.linalg.norm(cut.velocity, axis=1) > 0.06)
    assert m.sum() > 50
    v = np.gradient(edge, t, axis=0)[m]
    f = cut.force[m]
    assert np.all(np.einsum("ij,ij->i", f, v) < 0)
    ang = np.arccos(np.einsum("ij,ij->i", f, -v) / np.linalg.norm(f, axis=1) / np.linalg.norm(v, axis=1))
    alpha = cut.rake[m]
    assert np.all(np.abs(np.degrees(cut.rake_raw[m]) - 90.0) < 1.0)  # finite differences of the arc
    assert ang == pytest.approx(np.abs(np.pi / 2 - alpha - soil.tool_friction_angle), abs=1e-9)
    # the face friction drags the tool along the plate, toward the pin (the soil slides up the face)
    assert np.all(np.einsum("ij,ij->i", f, c - edge[m]) > 0)
    assert np.allclose(f[:, 1], 0.0)                                 # stays in the plane of the motion


def test_swell_fill_payload_and_berm_by_hand():
    """Bank volume V = w d v t; the bucket holds min(s V, C) loose; payload = ρ_bank min(V, C / s)
    = ρ_loose × fill; the rest is the berm. A 1.19 m³ heaped bucket of the clay preset (1842 kg/m³ moist
    bank, 115 lb/ft³; swell 1.30) holds 1686 kg, inside the 1.5–2.1 t expected of moist clay (1.19 m³ at
    22–40 % swell of 1842 kg/m³: 1566–1797 kg)."""
    soil = soil_preset("clay")
    t = np.linspace(0, 4.0, 801)
    w, d, v, C = 1.3, 0.35, 0.6, 1.19
    edge = np.column_stack([6.0 - v * t, np.zeros_like(t), np.full_like(t, -d)])
    plate = np.tile([np.cos(1.0), 0.0, np.sin(1.0)], (len(t), 1))
    cut = soil_cutting(t, edge, plate, soil, 0.0, w, C)
    V = w * d * v * t
    assert cut.volume == pytest.approx(V, rel=1e-9, abs=1e-12)
    assert cut.fill == pytest.approx(np.minimum(1.30 * V, C), rel=1e-9, abs=1e-12)
    assert cut.payload == pytest.approx(115 * 16.0185 * np.minimum(V, C / 1.30), rel=1e-9, abs=1e-9)
    assert cut.berm == pytest.approx(np.maximum(V - C / 1.30, 0.0), rel=1e-9, abs=1e-12)
    assert cut.payload.max() == pytest.approx(soil.loose_density * C) and 1500 < cut.payload.max() < 2100


def test_penetration_factors_are_the_textbook_values():
    """Prandtl–Reissner N_c, N_q against the tabulated values (e.g. Craig's Soil Mechanics, Table 8.1:
    φ = 0: 5.14, 1.00; 20°: 14.83, 6.40; 30°: 30.14, 18.40)."""
    for phi, Nc, Nq in ((0.0, 5.14, 1.00), (20.0, 14.83, 6.40), (30.0, 30.14, 18.40)):
        c, q = bearing_factors(np.radians(phi))
        assert c == pytest.approx(Nc, abs=0.01) and q == pytest.approx(Nq, abs=0.01)


def test_bad_swell_and_density():
    with pytest.raises(ValueError, match="swell must be >= 1"):
        soil_preset("clay", swell=0.9)
    with pytest.raises(ValueError, match="density must be"):
        soil_preset("clay", density=-1.0)
    for s in SOILS.values():
        assert s.swell >= 1 and "swell" in s.source and s.loose_density == pytest.approx(s.density / s.swell)
