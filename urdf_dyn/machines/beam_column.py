"""Second-order (beam-column) bending of a hydraulic cylinder between its two pins, and the largest axial
force before its rod yields: the yield-based limit of ISO/TS 13725:2021.

**The standard's frame** (ISO/TS 13725:2021, clause 1, as published in its abstract): the method "a) takes
into account a geometric model of the hydraulic cylinder, meaning it does not treat the hydraulic cylinder
as an equivalent column, … c) includes a factor of safety, k, to be set by the person performing the
calculations …, d) takes into account possible off-axis loading, e) takes into account the weight of the
hydraulic cylinder, … g) considers the cylinder fully extended"; it "determines the maximum allowable force,
F max, that avoids reaching yield stress of the rod material, σ e, as well as buckling" (BSI's summary of
PD ISO/TS 13725). The clauses with its formulas were not retrievable; the method here is the classical
beam-column of Timoshenko & Gere (*Theory of Elastic Stability*, 2nd ed., 1961, §1.9–1.13) on the same
geometric model, with each term the standard names:

- **geometry**: the stepped column of ``buckling.CylinderColumn`` — tube (E I₁) from the base pin over
  L₁ = L_max − ℓ_rod, bare rod (E I₂) to the eye pin, pinned at both pin centres;
- **self-weight**: a transverse load per length q(x) = m'(x) g cos β (β the cylinder's angle from the
  horizontal; 0, the worst, by default): tube steel and the oil in the bore over the tube, rod steel over the
  rod;
- **off-axis load from the pins' friction**: a plain pin turning under the axial force P resists with the
  moment μ P d/2 (μ the bushing's friction coefficient, d the pin diameter); both ends are taken to bend the
  column the same way (single curvature, the worse case);
- **clearances**: the gland's and the piston's diametral clearances (c, their sum) let the rod tilt in the
  tube by α = c / (2 ℓ_g) (ℓ_g the guide length, gland to piston, at this extension): an initial kink at
  the gland, offset e₀ = α L₁ L₂ / L there, linear to the pins — in the sense of the weight's sag;
- **second order**: with y the added deflection, E I(x) y'' + P y = −(M₁(x) + P y₀(x)), y(0) = y(L) = 0,
  M₁ the first-order moment (weight and end moments), y₀ the initial offset; the moment is
  M = M₁ + P (y + y₀). Solved by central differences on ``n`` nodes (the step in E I between two nodes).
- **yield-based limit**: the largest stress in the bare rod σ = P/A + |M|/W (A = π d²/4, W = π d³/32)
  reaches σ_e; F_max is that P (bisection on P), below the elastic critical load of the stepped column.

The factor of safety k = F_max / F (F the force at the relief in the case) is compared with a threshold the
caller states (``buckling``'s module docstring gives the default and its source).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_banded

__all__ = ["ColumnLoads", "beam_column", "yield_limit_load"]


@dataclass(frozen=True)
class ColumnLoads:
    """The transverse loads and imperfections of the ISO/TS 13725 model (module docstring).

    pin_friction: μ of the pin bushings (0: none); pin_diameter: (base, eye) [m]; clearance: gland plus
    piston diametral clearance [m]; guide_length: gland to piston at full extension [m] (the overlap; with
    a shorter stroke it grows by the retraction); inclination β [rad] of the cylinder from the horizontal;
    steel_density, oil_density [kg/m³]; g [m/s²]."""
    pin_friction: float = 0.0
    pin_diameter: tuple = (0.0, 0.0)
    clearance: float = 0.0
    guide_length: float = 0.0
    inclination: float = 0.0
    steel_density: float = 7850.0
    oil_density: float = 870.0
    g: float = 9.81

    def __post_init__(self):
        vals = (self.pin_friction, *self.pin_diameter, self.clearance, self.guide_length, self.steel_density,
                self.oil_density, self.g)
        if not all(np.isfinite(v) and v >= 0 for v in vals) or len(self.pin_diameter) != 2:
            raise ValueError(f"column loads must be finite and >= 0 (pin_diameter a pair), got {self}")
        if self.clearance > 0 and self.guide_length <= 0:
            raise ValueError("a clearance needs the guide length (gland to piston) > 0")


def _sections(col, L):
    """(L1, L2) [m]: tube and bare rod at pin-to-pin length L."""
    L1 = min(col.tube_length, L)
    return L1, L - L1


def beam_column(col, L, P, loads: ColumnLoads, n=801):
    """Second-order bending of column ``col`` (``buckling.CylinderColumn``) at pin-to-pin length L [m] under
    the axial compression P [N] and ``loads`` (module docstring). Returns (x (n,) [m] from the base pin,
    M (n,) bending moment [N m], y (n,) total offset y + y₀ [m]); P must be below the elastic critical load
    (else the deflection has the wrong sign: checked by the caller)."""
    L1, L2 = _sections(col, L)
    x = np.linspace(0.0, L, n)
    h = x[1] - x[0]
    tube = x < L1
    EI = np.where(tube, col.E * col.I_tube, col.E * col.I_rod)
    rho, rho_o = loads.steel_density, loads.oil_density
    m_tube = rho * np.pi * (col.tube_outer ** 2 - col.bore ** 2) / 4 + rho_o * np.pi * col.bore ** 2 / 4
    m_rod = rho * np.pi * col.rod ** 2 / 4
    q = np.where(tube, m_tube, m_rod) * loads.g * np.cos(loads.inclination)          # [N/m]
    # first-order moment of the simply supported span: M_q = R0 x − ∫0^x q(s)(x − s) ds
    Q = np.concatenate([[0.0], np.cumsum(0.5 * (q[1:] + q[:-1]) * h)])              # ∫0^x q
    S = np.concatenate([[0.0], np.cumsum(0.5 * (Q[1:] + Q[:-1]) * h)])              # ∫0^x ∫0^s q = ∫ q (x − s)
    R0 = S[-1] / L
    Mq = R0 * x - S
    r0, r1 = (loads.pin_friction * P * d / 2 for d in loads.pin_diameter)
    Me = r0 * (1 - x / L) + r1 * x / L
    y0 = np.zeros(n)
    if loads.clearance > 0 and L1 > 0 and L2 > 0:
        lg = loads.guide_length + (col.max_length - L)            # the overlap grows as the rod retracts
        e0 = loads.clearance / (2 * lg) * L1 * L2 / L
        y0 = np.where(tube, e0 * x / L1, e0 * (L - x) / L2)
    rhs = -(Mq + Me + P * y0)[1:-1]
    ab = np.zeros((3, n - 2))
    ab[0, 1:] = EI[1:-2] / h ** 2
    ab[1, :] = -2 * EI[1:-1] / h ** 2 + P
    ab[2, :-1] = EI[2:-1] / h ** 2
    y = np.zeros(n)
    y[1:-1] = solve_banded((1, 1), ab, rhs)
    return x, Mq + Me + P * (y + y0), y + y0


def yield_limit_load(col, L, loads: ColumnLoads, P_e, n=801):
    """F_max [N]: the largest axial force at which the bare rod's largest stress P/A + |M|/W reaches the
    yield strength (module docstring), below the elastic critical load ``P_e`` [N] of the stepped column
    (``buckling.stepped_column_load``). Returns (F_max, x_max [m] where the rod's stress peaks)."""
    A = np.pi * col.rod ** 2 / 4
    W = np.pi * col.rod ** 3 / 32
    L1, _ = _sections(col, L)

    def peak(P):
        x, M, _ = beam_column(col, L, P, loads, n)
        s = np.where(x >= L1 - 1e-12, P / A + np.abs(M) / W, -np.inf)
        k = int(np.argmax(s))
        return s[k], x[k]
    hi = 0.999 * P_e
    if peak(hi)[0] < col.yield_strength:        # the rod does not yield below 0.999 P_e: P_e governs
        return float(hi), float(L)
    if peak(0.0)[0] >= col.yield_strength:      # the weight alone yields it
        return 0.0, float(peak(0.0)[1])
    from scipy.optimize import brentq      # on use: 0.3 s of the import of every module that imports this one
    F = brentq(lambda P: peak(P)[0] - col.yield_strength, 0.0, hi, xtol=1e-6 * hi, rtol=1e-10)
    return float(F), float(peak(F)[1])
