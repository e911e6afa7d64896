"""Buckling of a hydraulic cylinder as a stepped, pinned–pinned column (tube and rod), over its stroke: the
elastic critical load and ISO/TS 13725's yield-based limit.

Model (the geometric model of ISO/TS 13725:2021, clause 1 a): "takes into account a geometric model of the
hydraulic cylinder, meaning it does not treat the hydraulic cylinder as an equivalent column"; its method
is Hoblit's (1950) two-section elastic column, NOTE of clause 1). Here, for a cylinder pinned at both ends
(mounting "pin–pin", both ends free to rotate in the buckling plane), at pin-to-pin length L:

- section 1, the tube, from the base pin, length L₁ = L_max − ℓ_rod (the tube reaches to the gland, which
  meets the piston at full extension), flexural rigidity E I₁, I₁ = π (D_o⁴ − D⁴)/64;
- section 2, the bare rod, from the gland to the eye pin, length L₂ = L − L₁, E I₂, I₂ = π d⁴/64
  (the rod inside the tube is not counted: Hoblit's and the standard's simplification, conservative);
- axial load P at both pins. With k_j² = P/(E I_j), the deflection is y₁ = A sin k₁x from the base and
  y₂ = B sin k₂x' from the eye; continuity of y and y' at the step gives the characteristic equation
  (Timoshenko & Gere, *Theory of Elastic Stability*, 2nd ed., 1961, §2.10, "buckling of a bar with
  changes in cross section", written here for pinned ends):

      k₂ sin k₁L₁ cos k₂L₂ + k₁ cos k₁L₁ sin k₂L₂ = 0,

  whose smallest root is the elastic critical load P_e. For I₁ = I₂ it is sin kL = 0, Euler's π²EI/L².

**The check** (``buckling``): ISO/TS 13725:2021's yield-based limit on this geometric model
(``beam_column``: the cylinder's own weight, the off-axis load of the pins' friction, the tilt the gland and
piston clearances allow, second-order bending, F_max where the rod's largest stress reaches its yield
strength), at each pin-to-pin length over the stroke (the standard takes the cylinder fully extended, where
the factor is lowest). The load is the force the head-end line relief can hold on the cap, F = p_head π D²/4
per cylinder: the largest compression the circuit allows, whichever cylinder works. The factor of safety
k = F_max / F is the standard's "factor of safety k" (clause 1 c: "to be set by the person performing the
calculations and reported with the results"). **Threshold**: 1.0 by default — the rod must not yield
under the largest force its circuit can apply, imperfections included. The relief force is an upper bound
of the action, not a characteristic value to be factored (as an accidental design situation: EN 1990
Table A1.3, partial factors 1.0), and F_max is the characteristic resistance with the imperfections in it
(EN 1993-1-1 §6.1 NOTE 2B recommends γ_M1 = 1.00 for member instability). A characteristic (working) load
instead of the relief's would take EN 1990 Table A1.2(B)'s γ_Q = 1.5: give ``threshold=1.5``. The makers'
factors of 3 … 5 (Hänchen's "Buckling" page: S = 3 … 5; AHP Merkle: "a minimum safety factor of 5") belong
to the rod-only Euler column without imperfections, π² E I_rod / L², and are not applied here. Where the relief force alone is compared, ``reachable`` gives the largest compression the
stall envelopes reach (``stall.StallEnvelopes.push_forces``) beside it.

``euler_johnson`` (Johnson's parabola, Shigley 10th ed. eq. 4-48) is kept for callers of the elastic load;
the check does not use it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.machines.beam_column import ColumnLoads, yield_limit_load

__all__ = ["CylinderColumn", "stepped_column_load", "euler_johnson", "BucklingResult", "buckling", "ColumnLoads",
           "DEFAULT_THRESHOLD"]

#: the default threshold of k = F_max / F at the relief force (module docstring: EN 1990 Table A1.3 and
#: EN 1993-1-1 §6.1, both 1.0)
DEFAULT_THRESHOLD = 1.0


@dataclass(frozen=True)
class CylinderColumn:
    """A cylinder's column data [m]: ``bore`` D, ``rod`` d, ``tube_outer`` D_o, ``rod_length`` ℓ_rod (eye
    pin to piston), ``min_length``, ``max_length`` (pin to pin, closed and extended); ``E`` [Pa] Young's
    modulus, ``yield_strength`` S_y [Pa] of the rod."""
    bore: float
    rod: float
    tube_outer: float
    rod_length: float
    min_length: float
    max_length: float
    E: float = 210e9
    yield_strength: float = 460e6

    def __post_init__(self):
        if not 0 < self.rod < self.bore < self.tube_outer:
            raise ValueError(f"need 0 < rod < bore < tube_outer, got {self.rod}, {self.bore}, {self.tube_outer}")
        if not 0 < self.min_length < self.max_length:
            raise ValueError(f"need 0 < min_length < max_length, got {self.min_length}, {self.max_length}")
        if not 0 < self.rod_length < self.max_length:
            raise ValueError(f"need 0 < rod_length < max_length, got {self.rod_length}, {self.max_length}")

    @property
    def I_tube(self) -> float:
        """I₁ [m⁴] of the tube."""
        return np.pi * (self.tube_outer ** 4 - self.bore ** 4) / 64

    @property
    def I_rod(self) -> float:
        """I₂ [m⁴] of the rod."""
        return np.pi * self.rod ** 4 / 64

    @property
    def tube_length(self) -> float:
        """L₁ = L_max − ℓ_rod [m]: base pin to the gland."""
        return self.max_length - self.rod_length


def _char(P, EI1, L1, EI2, L2):
    k1, k2 = np.sqrt(P / EI1), np.sqrt(P / EI2)
    return k2 * np.sin(k1 * L1) * np.cos(k2 * L2) + k1 * np.cos(k1 * L1) * np.sin(k2 * L2)


def stepped_column_load(EI1, L1, EI2, L2, samples=400) -> float:
    """Elastic critical load P_e [N] of a pinned–pinned column of two sections (E I [N m²], lengths [m],
    section 1 at one end, section 2 at the other): the smallest root of the characteristic equation (module
    docstring, Timoshenko & Gere §2.10). L1 or L2 may be 0 (a uniform column). Raises ValueError for
    EI ≤ 0 or negative lengths."""
    if EI1 <= 0 or EI2 <= 0 or L1 < 0 or L2 < 0 or L1 + L2 <= 0:
        raise ValueError(f"need EI > 0, lengths >= 0: EI1 {EI1}, L1 {L1}, EI2 {EI2}, L2 {L2}")
    L = L1 + L2
    lo, hi = np.pi ** 2 * min(EI1, EI2) / L ** 2, np.pi ** 2 * max(EI1, EI2) / L ** 2
    # the root lies between the Euler loads of the weaker and the stiffer uniform column; scan from just
    # above 0 for the first sign change (the equation is positive for small P)
    P = np.linspace(0.5 * lo, 1.0001 * hi, samples)
    g = _char(P, EI1, L1, EI2, L2)
    i = int(np.argmax(g <= 0))
    if g[i] > 0:
        raise ValueError("no critical load found (numerical scan failed)")
    if g[i] == 0:
        return float(P[i])
    from scipy.optimize import brentq      # on use: 0.3 s of the import of every module that imports this one
    return float(brentq(_char, P[i - 1], P[i], args=(EI1, L1, EI2, L2), xtol=1e-12 * hi, rtol=1e-14))


def euler_johnson(P_e, area, yield_strength) -> float:
    """Critical load [N] with the Johnson parabola where the elastic (Euler) stress σ_E = P_e/area exceeds
    S_y/2: P = area (S_y − S_y²/(4 σ_E)) (Shigley, 10th ed., §4-13 eq. 4-48); else P_e."""
    s_e = P_e / area
    if s_e <= yield_strength / 2:
        return float(P_e)
    return float(area * (yield_strength - yield_strength ** 2 / (4 * s_e)))


@dataclass
class BucklingResult:
    """One cylinder over its stroke: ``length`` (M,) pin-to-pin [m], ``critical`` (M,) F_max per cylinder
    [N] (the yield-based limit, ``beam_column.yield_limit_load``), ``elastic`` (M,) the stepped column's
    elastic critical load [N], ``load`` F = ``relief`` × cap area per cylinder [N], ``relief`` [Pa] (the
    head-end line relief of the case), ``safety`` (M,) = critical / load; ``threshold`` the warning level;
    ``column`` the CylinderColumn; ``loads`` the ColumnLoads; ``reachable`` the largest compression per
    cylinder the stall envelopes reach [N] (None: not given)."""
    name: str
    length: np.ndarray
    critical: np.ndarray
    load: float
    safety: np.ndarray
    threshold: float
    column: CylinderColumn = None
    elastic: np.ndarray = None
    relief: float = np.nan
    loads: ColumnLoads = None
    reachable: float = None

    @property
    def safety_factor(self) -> float:
        """The safety factor at the worst stroke."""
        return float(self.safety.min())

    @property
    def worst_length(self) -> float:
        """Pin-to-pin length [m] at the worst stroke."""
        return float(self.length[int(np.argmin(self.safety))])

    @property
    def reachable_safety(self):
        """F_max / the largest compression the stall envelopes reach, at the worst stroke (None without it)."""
        return None if not self.reachable else float(self.critical.min() / self.reachable)

    def warning(self):
        """A one-line warning when the safety factor is below the threshold, else None."""
        if self.safety_factor < self.threshold:
            return (f"{self.name}: buckling safety factor {self.safety_factor:.2f} (ISO/TS 13725 yield-based F_max "
                    f"over the force at {self.relief / 1e5:.0f} bar) at {self.worst_length:.3f} m pin to pin is "
                    f"below {self.threshold:g}")
        return None

    def to_dict(self) -> dict:
        k = int(np.argmin(self.safety))
        return dict(buckling_safety_factor=self.safety_factor, buckling_worst_length_m=self.worst_length,
                    buckling_critical_load_N=float(self.critical[k]),
                    buckling_elastic_load_N=None if self.elastic is None else float(self.elastic[k]),
                    buckling_relief_load_N=self.load, buckling_relief_Pa=self.relief,
                    buckling_reachable_load_N=self.reachable, buckling_threshold=self.threshold,
                    buckling_method="ISO/TS 13725 yield-based limit (second-order stepped column)")


def buckling(name, col: CylinderColumn, relief, threshold=DEFAULT_THRESHOLD, samples=25, loads=None,
             reachable=None) -> BucklingResult:
    """The cylinder ``col`` under the force ``relief`` [Pa] × cap area (per cylinder; the head-end line
    relief) over its stroke (``samples`` pin-to-pin lengths from min_length to max_length): F_max by
    ISO/TS 13725's yield-based limit with ``loads`` (``ColumnLoads``; None: no weight, friction or
    clearance, so F_max = min(elastic load, rod squash load)) and the safety factor F_max / F (module
    docstring). ``reachable`` [N]: the largest compression per cylinder of the stall envelopes, reported
    beside. Raises ValueError for relief ≤ 0 or threshold < 1."""
    if not relief > 0:
        raise ValueError(f"relief must be > 0, got {relief}")
    if not threshold >= 1:
        raise ValueError(f"buckling threshold must be >= 1, got {threshold}")
    loads = ColumnLoads() if loads is None else loads
    L = np.linspace(col.min_length, col.max_length, samples)
    L1 = col.tube_length
    crit, el = np.empty(samples), np.empty(samples)
    for j, Lj in enumerate(L):
        l1 = min(L1, Lj)
        el[j] = stepped_column_load(col.E * col.I_tube, l1, col.E * col.I_rod, Lj - l1)
        crit[j] = yield_limit_load(col, Lj, loads, el[j])[0]
    F = relief * np.pi * col.bore ** 2 / 4
    return BucklingResult(name, L, crit, float(F), crit / F, float(threshold), col, el, float(relief), loads,
                          None if reachable is None else float(reachable))
