"""Cylinder buckling (urdf_dyn.machines.buckling) against independent results: Euler's load for a uniform
column (the stepped column with equal sections), a finite-difference eigenvalue solution of E I(x) y'' + P y = 0
for a stepped column (a second, independent method), and Johnson's parabola by hand."""
import numpy as np
import pytest
from scipy.linalg import eigh_tridiagonal

from urdf_dyn.machines.buckling import CylinderColumn, buckling, euler_johnson, stepped_column_load


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
        buckling("x", col, relief=35e6, threshold=1.0)


def test_documented_worked_example_euler_column():
    """A documented worked example of Euler's column (HP 48gII Advanced User's Reference, Equation Library,
    "Columns: Elastic Buckling (1, 1)", manualslib.com/manual/277138 p. 430): L = 7.3152 m, K = 0.7,
    r = 4.1148 cm, A = 53.0967 cm², E = 199 947 961.502 kPa give P_cr = 676.6019 kN. Here as the stepped
    column with equal sections over the effective length K L (E I = E A r²), the step anywhere."""
    E, A, r, KL = 199947961.502e3, 53.0967e-4, 0.041148, 0.7 * 7.3152
    for f in (0.0, 0.3, 0.8):
        assert stepped_column_load(E * A * r * r, f * KL, E * A * r * r, (1 - f) * KL) / 1e3 == pytest.approx(
            676.6019, abs=5e-5)
