"""Soil-cutting resistance on a bucket's cutting edge: the Fundamental Earthmoving Equation (FEE).

**The equation** (Reece, "The fundamental equation of earth-moving mechanics", Proc. IMechE 179(3F), 1964;
McKyes, *Soil Cutting and Tillage*, Elsevier 1985, ch. 3–4)::

    F = w (γ g d² N_γ + c d N_c + q d N_q + c_a d N_a)                                         [N]

w tool width [m], d cutting depth [m], γ bulk density [kg/m³], c cohesion [Pa], q surcharge on the free
surface [Pa], c_a soil–tool adhesion [Pa]. F is the soil's force on the tool; it acts at the soil–tool
friction angle δ from the face normal: H = F sin(α + δ) against the motion and V = F cos(α + δ) pushing the
edge away from the free surface (into the soil) [Zhang-code; McKyes 1985].

**N-factors** from the planar failure wedge (rake α of the tool face from the direction of travel, failure
plane at β, internal friction φ), McKyes' form as implemented in the open codes [Zhang-code] (C. Zhang,
UC Davis 2020, ``excavation_force.py``, McKyesModel), [Patel-AppD] (Patel, PhD thesis, App. D, MATLAB
codes of McKyes' and Zeng's models) and [Tillage-code]::

    D   = cos(α+δ) + sin(α+δ) cot(β+φ)
    N_γ = (cot α + cot β) / (2 D)           N_c = (1 + cot β cot(β+φ)) / D
    N_q = (cot α + cot β) / D               N_a = (1 − cot α cot(β+φ)) / D

β is the failure angle that minimises N_γ (McKyes' choice, as described by Onwualu & Watts, Soil & Tillage
Research 48, 1998, and done in [Patel-AppD]); all four factors are evaluated at that β. For a vertical
smooth wall (α = 90°, δ = 0) this gives Rankine's passive pressure: β = 45° − φ/2, N_γ = K_p/2,
N_c = 2√K_p with K_p = tan²(45° + φ/2) (``tests/test_soil.py`` checks this, and the closed form against
the wedge's force equilibrium solved numerically). The original equation numbers of McKyes (1985) could
not be retrieved; no published worked example with all inputs and outputs was found (see
``tests/test_soil.py``).

**Along a bucket path** (``soil_cutting``): d = ground height − edge height (0 above ground); the direction
of travel is the edge velocity; α is the angle between the tool face (a direction in the bucket frame, from
the edge along the face) and the backward direction of travel, clipped to [15°, 90°] (outside it the
planar wedge does not describe the cut). The soil cut so far, V = ∫ w d |v_h| dt (v_h: horizontal edge
speed), fills the bucket up to its heaped capacity; it acts as a surcharge q = γ g V / (w l) over the
bucket opening l on the failure wedge (the soil pushed ahead of and into the bucket, the surcharge term of
Holz et al., "Real-time simulation of mining and earthmoving operations", ISARC 2013), so the resistance
grows with depth and with the filled volume. The passive resistance is only mobilised while the edge
moves: F is scaled by min(1, |v| / v_ref) (v_ref = 0.05 m/s) so that a bucket at rest in the soil carries
no cutting force and the force has no step.

**Presets** (``SOILS``), each value with its source [keys of /work/research/excavator.md §0]:
[DNR] Colorado DRMS, "Table 3.5-10 Typical soil & rock properties"; [SoilTyp] "Typical Soil Properties"
(unit weight, φ, c, δ of agricultural soils; δ ≈ 0.5–0.7 φ for soil on steel, adhesion negligible except
in wet sticky clays).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["Soil", "SOILS", "soil_preset", "n_factors", "failure_angle", "fee_force", "SoilCut", "soil_cutting"]

G0 = 9.81  # m/s², the standard value the sources use


@dataclass(frozen=True)
class Soil:
    """Soil for the FEE: ``density`` γ [kg/m³], ``friction_angle`` φ and ``tool_friction_angle`` δ [rad],
    ``cohesion`` c and ``adhesion`` c_a [Pa]; ``source``: where the numbers come from."""
    name: str
    density: float
    friction_angle: float
    tool_friction_angle: float
    cohesion: float = 0.0
    adhesion: float = 0.0
    source: str = field(default="", compare=False)

    def __post_init__(self):
        for k in ("density", "friction_angle", "tool_friction_angle", "cohesion", "adhesion"):
            v = getattr(self, k)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"soil {self.name!r}: {k} must be finite and >= 0, got {v}")
        if self.density <= 0 or self.friction_angle >= np.pi / 2 or self.tool_friction_angle >= np.pi / 2:
            raise ValueError(f"soil {self.name!r}: need density > 0 and friction angles < 90 deg")


def _d(deg):
    return float(np.radians(deg))


#: Named presets. Unit weights are dry values of [DNR] divided by g; φ the middle of [DNR]'s range; δ = 2/3 φ
#: for granular soils ([SoilTyp]: δ ≈ 0.5–0.7 φ on steel); clay = [SoilTyp]'s clay loam defaults.
SOILS = {
    "loose_sand": Soil("loose_sand", 14e3 / G0, _d(31.0), _d(21.0), 0.0, 0.0,
                       "[DNR] loose sand, uniform grain: 14 kN/m3 dry, phi 28-34 deg, c = 0; delta = 2/3 phi [SoilTyp]"),
    "dense_sand": Soil("dense_sand", 17e3 / G0, _d(36.0), _d(24.0), 0.0, 0.0,
                       "[DNR] dense sand, uniform grain: 17 kN/m3 dry, phi 32-40 deg, c = 0; delta = 2/3 phi [SoilTyp]"),
    "clay": Soil("clay", 14e3 / G0, _d(10.0), _d(6.0), 30e3, 0.0,
                 "[SoilTyp] clay loam defaults: 14 kN/m3, phi 10 deg, c 30 kPa, delta 6 deg, c_a 0"),
    "stiff_clay": Soil("stiff_clay", 17e3 / G0, _d(31.0), _d(15.5), 70e3, 35e3,
                       "[DNR] stiff glacial clay: 17 kN/m3 dry, phi 30-32 deg, c 70-150 kPa (lower bound); "
                       "delta = 0.5 phi, c_a = c/2 (within c_a <= c of Egli et al. 2022)"),
    "gravel": Soil("gravel", 20e3 / G0, _d(35.5), _d(23.7), 0.0, 0.0,
                   "[DNR] gravel, uniform grain: 20 kN/m3 dry, phi 34-37 deg, c = 0; delta = 2/3 phi [SoilTyp]"),
}


def soil_preset(name: str, **overrides) -> Soil:
    """The preset ``name`` (``SOILS``), with fields replaced by ``overrides`` (angles in rad, SI units).
    Raises KeyError naming the presets; ValueError for a negative or non-finite parameter."""
    if name not in SOILS:
        raise KeyError(f"unknown soil {name!r}; presets: {', '.join(SOILS)}")
    return replace(SOILS[name], **overrides) if overrides else SOILS[name]


def n_factors(rake, phi, delta, beta):
    """(N_γ, N_c, N_q, N_a) of the McKyes wedge (module docstring) for rake α, soil friction φ, soil–tool
    friction δ and failure angle β [rad] (arrays broadcast). D ≤ 0 (no wedge) gives inf."""
    a, p, d, b = (np.asarray(x, float) for x in (rake, phi, delta, beta))
    cot_bp = 1.0 / np.tan(b + p)
    D = np.cos(a + d) + np.sin(a + d) * cot_bp
    ok = D > 1e-12
    Ds = np.where(ok, D, 1.0)
    cot_a, cot_b = 1.0 / np.tan(a), 1.0 / np.tan(b)
    inf = np.inf
    Ng = np.where(ok, (cot_a + cot_b) / (2 * Ds), inf)
    Nc = np.where(ok, (1 + cot_b * cot_bp) / Ds, inf)
    Nq = np.where(ok, (cot_a + cot_b) / Ds, inf)
    Na = np.where(ok, (1 - cot_a * cot_bp) / Ds, inf)
    return Ng, Nc, Nq, Na


def _dNg_sign(a, p, d, b):
    """A positive multiple of ∂N_γ/∂β (N_γ = (cot α + cot β) / 2D, ∂D/∂β = −sin(α+δ)/sin²(β+φ)), times
    2 D² sin²β sin²(β+φ) > 0: −D sin²(β+φ) + (cot α + cot β) sin(α+δ) sin²β."""
    D = np.cos(a + d) + np.sin(a + d) / np.tan(b + p)
    return -D * np.sin(b + p) ** 2 + (1.0 / np.tan(a) + 1.0 / np.tan(b)) * np.sin(a + d) * np.sin(b) ** 2


def failure_angle(rake, phi, delta):
    """β* [rad] minimising N_γ (McKyes), for rake α (scalar or (n,)) and φ, δ [rad]: the 0.25° grid point
    of least N_γ, then bisection of ∂N_γ/∂β = 0 (analytic, ``_dNg_sign``) within one grid step on each side,
    for all rakes at once (60 halvings: to rounding). A minimum at the end of the bracket stays there."""
    rake = np.atleast_1d(np.asarray(rake, float))
    grid = np.radians(np.arange(0.25, 89.8, 0.25))
    Ng = n_factors(rake[:, None], phi, delta, grid[None, :])[0]
    b0 = grid[np.argmin(Ng, axis=1)]
    step = np.radians(0.25)
    lo, hi = np.maximum(b0 - step, 1e-4), np.minimum(b0 + step, np.pi / 2)
    at_lo = _dNg_sign(rake, phi, delta, lo) >= 0          # N_γ increasing already: the minimum is lo
    at_hi = _dNg_sign(rake, phi, delta, hi) <= 0          # still decreasing: the minimum is hi
    a, b = lo.copy(), hi.copy()
    for _ in range(60):
        m = 0.5 * (a + b)
        up = _dNg_sign(rake, phi, delta, m) > 0
        b = np.where(up, m, b)
        a = np.where(up, a, m)
    return np.where(at_lo, lo, np.where(at_hi, hi, 0.5 * (a + b)))


def fee_force(soil: Soil, depth, width, rake, surcharge=0.0, g=G0):
    """FEE force magnitude F [N] (module docstring) for depth d [m] (arrays), tool width w [m], rake α [rad]
    (arrays broadcast with depth) and surcharge q [Pa]; β = ``failure_angle``. Returns (F, β)."""
    d = np.asarray(depth, float)
    rake = np.broadcast_to(np.asarray(rake, float), d.shape)
    phi, delta = soil.friction_angle, soil.tool_friction_angle
    ua, inv = np.unique(rake.ravel(), return_inverse=True)
    beta = failure_angle(ua, phi, delta)[inv].reshape(d.shape) if d.size else np.zeros(d.shape)
    Ng, Nc, Nq, Na = n_factors(rake, phi, delta, beta)
    F = width * (soil.density * g * d ** 2 * Ng + soil.cohesion * d * Nc + np.asarray(surcharge) * d * Nq
                 + soil.adhesion * d * Na)
    return np.where(d > 0, F, 0.0), beta


@dataclass
class SoilCut:
    """Soil along a path (N samples): depth [m], rake α [rad], force (N, 3) [N] the soil applies to the edge
    in world (root) coordinates, magnitude [N], volume cut so far [m³] (capped at the capacity), surcharge
    [Pa], in_soil (N,) bool; ``reached``: whether the edge ever went below the ground."""
    depth: np.ndarray
    rake: np.ndarray
    force: np.ndarray
    magnitude: np.ndarray
    volume: np.ndarray
    surcharge: np.ndarray
    in_soil: np.ndarray

    @property
    def reached(self) -> bool:
        return bool(np.any(self.in_soil))


def soil_cutting(t, edge, face, soil: Soil, ground_height, width, capacity, opening=1.0, active=None,
                 v_ref=0.05, rake_limits=(np.radians(15.0), np.pi / 2), g=G0) -> SoilCut:
    """Cutting resistance along a path of the cutting edge (module docstring).

    t (N,) [s]; edge (N, 3) [m] positions of the cutting edge in world (root) coordinates, z up; face (N, 3)
    unit directions of the tool face from the edge (world); ground_height [m] (z of a level ground);
    width [m]; capacity [m³] the bucket's heaped volume; opening [m] the bucket opening over which the
    filled soil rests; active (N,) bool: where cutting applies (e.g. the dig phases; default everywhere).
    The volume keeps its value after the last active sample."""
    t = np.asarray(t, float)
    edge, face = np.asarray(edge, float), np.asarray(face, float)
    N = len(t)
    active = np.ones(N, bool) if active is None else np.asarray(active, bool)
    depth = np.where(active, np.maximum(ground_height - edge[:, 2], 0.0), 0.0)
    v = np.gradient(edge, t, axis=0) if N > 1 else np.zeros((N, 3))
    speed = np.linalg.norm(v, axis=1)
    u = v / np.maximum(speed, 1e-12)[:, None]
    cosr = np.clip(np.einsum("ij,ij->i", face, -u), -1.0, 1.0)
    rake = np.clip(np.arccos(cosr), *rake_limits)
    vh = np.linalg.norm(v[:, :2], axis=1)
    rate = width * depth * vh
    vol = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * np.diff(t))]) if N > 1 else np.zeros(N)
    vol = np.minimum(vol, capacity)
    q = soil.density * g * vol / (width * opening)
    F, _ = fee_force(soil, depth, width, rake, q, g)
    F = F * np.minimum(1.0, speed / v_ref)
    # direction: H against the travel, V away from the free surface, in the plane of u and the face
    fperp = face - cosr[:, None] * (-u)
    n_down = -fperp / np.maximum(np.linalg.norm(fperp, axis=1), 1e-12)[:, None]
    force = F[:, None] * (-np.sin(rake + soil.tool_friction_angle)[:, None] * u
                          + np.cos(rake + soil.tool_friction_angle)[:, None] * n_down)
    return SoilCut(depth, rake, force, F, vol, q, depth > 0)
