"""Cylinder buckling (urdf_dyn.machines.buckling) against independent results: Euler's load for a uniform
column (the stepped column with equal sections), a finite-difference eigenvalue solution of E I(x) y'' + P y = 0
for a stepped column (a second, independent method), and Johnson's parabola by hand."""
import numpy as np
import pytest
from scipy.linalg import eigh_tridiagonal

from urdf_dyn.machines.beam_column import beam_column, yield_limit_load
from urdf_dyn.machines.buckling import ColumnLoads, CylinderColumn, buckling, euler_johnson, stepped_column_load


def fd_critical_load(EI1, L1, EI2, L2, n=4000):
    """Smallest P of −y'' = P y / EI(x), y(0) = y(L) = 0, central differences (step between two nodes)."""
    L = L1 + L2
    h = L / (n + 1)
    x = h * np.arange(1, n + 1)
    EI = np.where(x < L1, EI1, EI2)
    s = np.sqrt(EI)                       # M = diag(1/EI): symmetric form S A S with S = diag(sqrt(EI))
    d = 2 / h ** 2 * EI
    e = -1 / h ** 2 * s[:-1] * s[1:]
    return eigh_tridiagonal(d, e, select="i", select_range=(0, 0), eigvals_only=True)[0]


def test_uniform_column_is_euler():
    EI, L = 210e9 * np.pi * 0.085 ** 4 / 64, 3.1
    PE = np.pi ** 2 * EI / L ** 2
    for L1 in (0.0, 0.7, 1.55, 3.1):
        assert stepped_column_load(EI, L1, EI, L - L1) == pytest.approx(PE, rel=1e-10)


@pytest.mark.parametrize("ratio, frac", [(5.0, 0.55), (0.2, 0.3), (12.0, 0.7)])
def test_stepped_column_against_finite_differences(ratio, frac):
    EI2, L = 1.0e6, 3.0
    EI1 = ratio * EI2
    P = stepped_column_load(EI1, frac * L, EI2, (1 - frac) * L)
    P_fd = fd_critical_load(EI1, frac * L, EI2, (1 - frac) * L)
    assert P == pytest.approx(P_fd, rel=2e-3)
    assert np.pi ** 2 * min(EI1, EI2) / L ** 2 < P < np.pi ** 2 * max(EI1, EI2) / L ** 2


def test_johnson_parabola_by_hand():
    A, Sy = 5e-3, 400e6
    assert euler_johnson(0.3 * A * Sy, A, Sy) == pytest.approx(0.3 * A * Sy)          # elastic: Euler
    # σ_E = 2 S_y: P/A = S_y − S_y² / (4 · 2 S_y) = 7/8 S_y
    assert euler_johnson(2 * A * Sy, A, Sy) == pytest.approx(7 / 8 * A * Sy, rel=1e-12)
    # continuous at σ_E = S_y/2 (both give S_y/2)
    assert euler_johnson(0.5 * A * Sy, A, Sy) == pytest.approx(0.5 * A * Sy)


def test_cylinder_over_stroke_worst_at_full_extension():
    col = CylinderColumn(bore=0.14, rod=0.1, tube_outer=0.175, rod_length=1.804, min_length=2.15,
                         max_length=3.654)
    b = buckling("stick_cyl", col, relief=35e6, threshold=3.5)
    assert b.worst_length == pytest.approx(3.654)
    assert np.all(np.diff(b.safety) < 0)                      # longer column, lower factor
    assert b.load == pytest.approx(35e6 * np.pi * 0.14 ** 2 / 4)
    # full extension: below the rod's Euler load alone over L and above it over L (tube stiffer)
    EIr = 210e9 * np.pi * 0.1 ** 4 / 64
    assert b.critical[-1] > np.pi ** 2 * EIr / 3.654 ** 2 * 0.999
    assert b.safety_factor == pytest.approx(b.critical[-1] / b.load)
    weak = buckling("x", CylinderColumn(0.14, 0.05, 0.175, 1.804, 2.15, 3.654), relief=35e6, threshold=3.5)
    assert weak.warning() is not None and "below 3.5" in weak.warning()
    with pytest.raises(ValueError, match="threshold"):
        buckling("x", col, relief=35e6, threshold=0.9)


def test_documented_worked_example_euler_column():
    """A documented worked example of Euler's column (HP 48gII Advanced User's Reference, Equation Library,
    "Columns: Elastic Buckling (1, 1)", manualslib.com/manual/277138 p. 430): L = 7.3152 m, K = 0.7,
    r = 4.1148 cm, A = 53.0967 cm², E = 199 947 961.502 kPa give P_cr = 676.6019 kN. Here as the stepped
    column with equal sections over the effective length K L (E I = E A r²), the step anywhere."""
    E, A, r, KL = 199947961.502e3, 53.0967e-4, 0.041148, 0.7 * 7.3152
    for f in (0.0, 0.3, 0.8):
        assert stepped_column_load(E * A * r * r, f * KL, E * A * r * r, (1 - f) * KL) / 1e3 == pytest.approx(
            676.6019, abs=5e-5)


def uniform(d=0.085, L=3.0):
    """A column that is all rod at full extension: the tube section is 1 nm long (rod_length just under
    max_length), so the rod's E I spans the column."""
    return CylinderColumn(bore=0.12, rod=d, tube_outer=0.145, rod_length=L - 1e-9, min_length=L / 2, max_length=L)


def test_beam_column_uniform_load_is_timoshenko():
    """A uniform pinned column under axial P and its own weight q: M_max = (q/k²)(sec(kL/2) − 1), k² = P/EI
    (Timoshenko & Gere, Theory of Elastic Stability, §1.11); the rod spans the whole column."""
    col = uniform()
    loads = ColumnLoads()
    L, EI = 3.0, col.E * col.I_rod
    q = 7850 * np.pi * col.rod ** 2 / 4 * 9.81
    for frac in (0.2, 0.6, 0.9):
        P = frac * np.pi ** 2 * EI / L ** 2
        x, M, y = beam_column(col, L, P, loads, n=4001)
        k = np.sqrt(P / EI)
        assert M.max() == pytest.approx(q / k ** 2 * (1 / np.cos(k * L / 2) - 1), rel=1e-5)
        assert abs(x[np.argmax(M)] - L / 2) < 1e-3 and y.max() > 0          # sags the way the weight pulls


def test_beam_column_end_moments_is_timoshenko():
    """Equal end moments M0 (the pins' friction, μ P d/2 at both ends, weight off): M_max = M0 sec(kL/2)
    (Timoshenko & Gere §1.13)."""
    col = uniform()
    loads = ColumnLoads(pin_friction=0.15, pin_diameter=(0.09, 0.09), g=0.0)
    L, EI = 3.0, col.E * col.I_rod
    P = 0.7 * np.pi ** 2 * EI / L ** 2
    x, M, _ = beam_column(col, L, P, loads, n=4001)
    M0 = 0.15 * P * 0.045
    assert M[0] == pytest.approx(M0, rel=1e-12) and M[-1] == pytest.approx(M0, rel=1e-12)
    assert M.max() == pytest.approx(M0 / np.cos(np.sqrt(P / EI) * L / 2), rel=1e-5)


def test_yield_limit_load_by_hand():
    """No imperfection: the rod stays straight, F_max is the smaller of its squash load S_y A and (just below)
    the elastic load; with the end moments only, F_max solves S_y = P/A + μ P d/2 · sec(kL/2) / W by hand."""
    short = CylinderColumn(0.12, 0.085, 0.145, 0.3 - 1e-9, 0.2, 0.3)          # stocky: squashes
    A = np.pi * 0.085 ** 2 / 4
    Pe = stepped_column_load(short.E * short.I_tube, 1e-9, short.E * short.I_rod, 0.3 - 1e-9)
    assert yield_limit_load(short, 0.3, ColumnLoads(g=0.0), Pe)[0] == pytest.approx(short.yield_strength * A, rel=1e-6)
    col = uniform()
    EI, L, W = col.E * col.I_rod, 3.0, np.pi * 0.085 ** 3 / 32
    Pe = np.pi ** 2 * EI / L ** 2
    loads = ColumnLoads(pin_friction=0.15, pin_diameter=(0.09, 0.09), g=0.0)
    F = yield_limit_load(col, L, loads, Pe, n=4001)[0]
    from scipy.optimize import brentq
    hand = brentq(lambda P: P / A + 0.15 * P * 0.045 / np.cos(np.sqrt(P / EI) * L / 2) / W - col.yield_strength,
                  1.0, 0.999 * Pe)
    assert F == pytest.approx(hand, rel=1e-4) and F < Pe


def test_iso13725_terms_lower_the_limit_and_are_named():
    """Each term of the standard (weight, pin friction, clearance tilt) lowers F_max and the factor; the
    factor is F_max over the head-end relief force; a threshold below 1 or a clearance without a guide
    length is refused."""
    col = CylinderColumn(0.12, 0.085, 0.145, 1.56, 1.88, 3.14)
    base = buckling("boom_cyl", col, 41e6, loads=ColumnLoads(g=0.0))
    w = buckling("boom_cyl", col, 41e6)
    f = buckling("boom_cyl", col, 41e6, loads=ColumnLoads(pin_friction=0.15, pin_diameter=(0.09, 0.09)))
    c = buckling("boom_cyl", col, 41e6, loads=ColumnLoads(pin_friction=0.15, pin_diameter=(0.09, 0.09),
                                                          clearance=4e-4, guide_length=0.3))
    assert base.safety_factor > w.safety_factor > f.safety_factor > c.safety_factor > 1.0
    assert c.load == pytest.approx(41e6 * np.pi * 0.12 ** 2 / 4) and c.relief == 41e6
    assert np.all(c.critical < c.elastic) and c.warning() is None
    assert buckling("boom_cyl", col, 41e6, threshold=1.5, loads=c.loads).warning() is not None
    with pytest.raises(ValueError, match="guide length"):
        ColumnLoads(clearance=4e-4)
