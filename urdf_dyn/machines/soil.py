"""Soil–tool interaction on a bucket's cutting edge that follows the cut: the failure wedge of Reece's
Fundamental Earthmoving Equation (FEE), oriented by the edge's velocity and the bucket's cutting plate.

**The equation** (Reece, "The fundamental equation of earth-moving mechanics", Proc. IMechE 179(3F), 1964,
the form F = (γ g d² N_γ + c d N_c + q d N_q + c_a d N_a) w; McKyes, *Soil Cutting and Tillage*, Elsevier
1985, ch. 4 "two-dimensional soil cutting", the planar wedge and its N-factors)::

    P = w (γ g d² N_γ + c d N_c + q d N_q + c_a d N_a)                                         [N]

w tool width [m], d cutting depth [m], γ bank density [kg/m³], c cohesion [Pa], q surcharge on the free
surface [Pa], c_a soil–tool adhesion [Pa]. P is the soil's normal-and-friction force on the tool face: it
acts at the soil–tool friction angle δ from the face normal. **Adhesion acts separately, along the face**:
C_a = c_a w d / sin α (the wetted face length d / sin α); the N_a term is its effect on P through the
wedge's equilibrium. (The same split of the blade's load — a normal force, its friction N tan δ, and an
adhesive force A = c_a × blade area along the blade — is the force list of Miedema, *The Delft Sand, Clay
and Rock Cutting Model*, IOS Press 2014, §4.7 nomenclature and §10.2 "The force equilibrium"; W. J.
Wagner, arXiv:2505.19330, 2025, §1 derives the FEE for a flat blade the same way.) In the travel frame (u along the edge velocity, n normal to it on the side of the free
surface, which is the side the plate leans to), the force of the soil on the tool is::

    f = −P [sin(α+δ) u + cos(α+δ) n] + C_a e − F_pen u,      e = −cos α u + sin α n (up the plate)

so H = P sin(α+δ) + c_a w d cot α against the travel and V = P cos(α+δ) − c_a w d into the soil (McKyes'
horizontal and vertical tool forces). The failure angle, the page and equation numbers of McKyes (1985)
could not be retrieved with the research tools; the closed forms are checked instead against the wedge's
force equilibrium solved numerically, in ``tests/machines/test_soil.py`` (and Rankine's passive pressure).

**N-factors** from the planar failure wedge (rake α of the tool face from the direction of travel, failure
plane at β, internal friction φ), McKyes' form as implemented in the open codes [Zhang-code] (C. Zhang,
UC Davis 2020, ``excavation_force.py``, McKyesModel), [Patel-AppD] (Patel, PhD thesis, App. D)::

    D   = cos(α+δ) + sin(α+δ) cot(β+φ)
    N_γ = (cot α + cot β) / (2 D)           N_c = (1 + cot β cot(β+φ)) / D
    N_q = (cot α + cot β) / D               N_a = (1 − cot α cot(β+φ)) / D

β minimises N_γ (McKyes' choice, as described by Onwualu & Watts, Soil & Tillage Research 48, 1998); all
four factors are evaluated at that β. A vertical smooth wall (α = 90°, δ = 0) gives Rankine's passive
pressure: β = 45° − φ/2, N_γ = K_p/2, N_c = 2√K_p, N_q = K_p.

**The rake follows the cut** (``soil_cutting``): α is the angle between the bucket's **cutting plate**
(the lip and teeth: a direction in the bucket frame, from the edge back along the plate) and the backward
direction of travel −u, at every sample. The bucket's bottom plate is not the tool face: it trails the
edge almost parallel to the path (α < 15° for most of a dig), so it would turn the resistance into a
force pressing straight down. α is clipped to [15°, 90°] (``rake_limits``; outside it the planar wedge
does not describe the cut) and the clipped share is reported. The wedge assumes a free surface parallel to
the travel (McKyes' horizontal cut); the depth is measured below the level ground.

**Volume, swell, fill and berm.** The bank (in-situ) volume cut so far is V = ∫ w d |v_h| dt (v_h the
horizontal edge speed: the side-view area between the ground and the edge path, times the width). Cut soil
swells by the factor s = V_loose / V_bank (bank density ρ_b = s ρ_loose). The bucket takes the loose volume
s V up to its heaped capacity C; the **payload** is ρ_b min(V, C / s) [kg] (= ρ_loose × fill). Past a full
bucket the edge keeps cutting and the excess V_berm = V − C / s is pushed ahead of the blade as a **berm**:
its weight is the **surcharge** on the failure wedge's free surface, spread over the wedge's top length
L_s = d (cot α + cot β): q = ρ_b g V_berm / (w L_s) (then w q d N_q = ρ_b g V_berm / D, the berm's weight
lifted through the wedge; it ends with the wedge when the edge leaves the ground, a drop of that size
between two samples: the berm stays behind on the surface). The soil inside
the bucket is payload only (its weight and inertia act on the bucket, ``loads.payload_wrench``); it is not
a surcharge on the wedge.

**Penetration resistance of the edge.** The wedge mechanism assumes a sharp edge. A blunt edge of
thickness t (``edge_thickness`` [m]; 0 leaves it out) also bears on the soil ahead of it like a strip
footing of width t at depth d: Terzaghi's bearing capacity without the (small, ∝ t) weight term,
q_ult = c N_c + γ g d N_q with Prandtl–Reissner's N_q = e^{π tan φ} tan²(45° + φ/2), N_c = (N_q − 1) cot φ
(N_c → π + 2 as φ → 0) (Terzaghi, *Theoretical Soil Mechanics*, 1943, ch. VIII; Craig's *Soil
Mechanics* §8.3). F_pen = q_ult w min(d, t) (the embedded part of the edge's front) acts against the edge
velocity.

The passive resistance is only mobilised while the edge moves: all the terms are scaled by
min(1, |v| / v_ref) (v_ref = 0.05 m/s) so that a bucket at rest in the soil carries no cutting force and the
force has no step.

**Presets** (``SOILS``), each value with its source. The **bank density is the moist in-situ density** (the
soil as it lies, water included: what the bucket lifts), the **loose density is bank / swell**. [CE-ref]
ce-ref.com, "Soil mechanics: engineering properties of soil commonly used" (moist unit weights of granular
soils by density and of cohesive soils by consistency, with their unconfined compressive strength q_u; the
undrained shear strength is c_u = q_u / 2); [DNR] Colorado DRMS, "Table 3.5-10 Typical soil & rock
properties" (φ, c; its unit weights are dry, used only for gravel); [SoilTyp] "Typical Soil Properties"
(δ ≈ 0.5–0.7 φ on steel, adhesion negligible except in wet sticky clays); [Swell-PE] projectengineer.net,
"Swell factors for various soils" (swell %: clay 40, earth/loam 25, sand 12, gravel 12); [Swell-Spike]
spikevm.com, "Bulking/swell factors" (clay, damp 40 %, dry 35 %); [Cat-PHB] Caterpillar Performance
Handbook, "Tables" (its swell–voids–load factor table; natural-bed clay swells about 22 %: the material
table itself was not retrievable here). The clay presets differ by consistency: moist density and a cohesion
inside their c_u band; they keep a friction angle, because McKyes' failure-angle rule (β minimising N_γ) is
degenerate for an undrained φ_u = 0 (with δ = 0, N_γ does not depend on β; with δ > 0 its minimum runs to
β → 0, an endless wedge), so a total-stress (φ = 0) cut needs another failure criterion, not built here.

**Left out, with the reason.** *Bucket-fill resistance* (the soil's friction and compression as it enters
and moves inside the bucket, Balovnev's / Zelenin's filling term): no formula with a retrievable source was
found; the bucket's content acts through its weight and inertia (``loads.payload_wrench``) and a full bucket
through the berm's surcharge on the wedge, so the filling friction is the missing part. *Side-plate
cutting* (the two side plates' edges cutting slots of the cutting depth): the wedge here is planar over the
bucket's width; the side plates' edges would add their bearing resistance, of the size of the penetration
term with the plates' thickness t_s: 2 q_ult t_s d (for the main job's clay, q_ult ≈ 264 kPa at d = 0.3 m,
t_s = 20 mm: about 3 kN, a few per cent of the cutting force); no side-plate thickness is published, so it
is left out rather than guessed.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["Soil", "SOILS", "PCF", "soil_preset", "n_factors", "failure_angle", "fee_force", "bearing_factors",
           "SoilCut", "soil_cutting"]

G0 = 9.81  # m/s², the standard value the sources use


@dataclass(frozen=True)
class Soil:
    """Soil for the FEE: ``density`` γ the bank (in-situ) density [kg/m³], ``friction_angle`` φ and
    ``tool_friction_angle`` δ [rad], ``cohesion`` c and ``adhesion`` c_a [Pa], ``swell`` s = loose / bank
    volume (≥ 1); ``source``: where the numbers come from. Raises ValueError naming the field for a
    negative, non-finite or out-of-range value."""
    name: str
    density: float
    friction_angle: float
    tool_friction_angle: float
    cohesion: float = 0.0
    adhesion: float = 0.0
    swell: float = 1.0
    source: str = field(default="", compare=False)

    def __post_init__(self):
        for k in ("density", "friction_angle", "tool_friction_angle", "cohesion", "adhesion", "swell"):
            v = getattr(self, k)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"soil {self.name!r}: {k} must be finite and >= 0, got {v}")
        if self.density <= 0 or self.friction_angle >= np.pi / 2 or self.tool_friction_angle >= np.pi / 2:
            raise ValueError(f"soil {self.name!r}: need density > 0 and friction angles < 90 deg")
        if self.swell < 1:
            raise ValueError(f"soil {self.name!r}: swell must be >= 1 (loose / bank volume), got {self.swell}")

    @property
    def bank_density(self) -> float:
        """ρ_b [kg/m³] in the ground (= ``density``)."""
        return self.density

    @property
    def loose_density(self) -> float:
        """ρ_loose = ρ_b / s [kg/m³], the cut soil in the bucket."""
        return self.density / self.swell


def _d(deg):
    return float(np.radians(deg))


#: Named presets (each one's ``source`` says where its numbers come from). Bank densities are the moist
#: in-situ unit weights of [CE-ref] (gravel: [DNR]'s dry value, no moist figure retrieved); loose = bank /
#: swell; φ the middle of [DNR]'s range; δ = 2/3 φ for granular soils ([SoilTyp]: δ ≈ 0.5–0.7 φ on steel);
#: swell from [Swell-PE] / [Swell-Spike] / [Cat-PHB].
#: lb/ft³ -> kg/m³ (the [CE-ref] table's unit)
PCF = 16.0185

SOILS = {
    "loose_sand": Soil("loose_sand", 110 * PCF, _d(31.0), _d(21.0), 0.0, 0.0, 1.12,
                       "bank = moist in-situ: loose sand 100-120 lb/ft3 [CE-ref] (110: 1762 kg/m3); [DNR] phi "
                       "28-34 deg, c = 0; delta = 2/3 phi [SoilTyp]; swell 12 % [Swell-PE] (loose 1573 kg/m3)"),
    "dense_sand": Soil("dense_sand", 130 * PCF, _d(36.0), _d(24.0), 0.0, 0.0, 1.12,
                       "bank = moist in-situ: dense sand 130-140 lb/ft3 [CE-ref] (130: 2082 kg/m3); [DNR] phi "
                       "32-40 deg, c = 0; delta = 2/3 phi [SoilTyp]; swell 12 % [Swell-PE] (loose 1859 kg/m3)"),
    "soft_clay": Soil("soft_clay", 100 * PCF, _d(10.0), _d(6.0), 18e3, 0.0, 1.30,
                      "soft clay, moist 100 lb/ft3 [CE-ref] (bank 1602 kg/m3); c 18 kPa within its c_u = q_u/2 = "
                      "12-24 kPa (q_u 500-1000 lb/ft2 [CE-ref]); phi 10 deg, delta 6 deg, c_a 0 as the clay preset "
                      "([SoilTyp] clay loam); swell 30 %: Cat natural-bed clay 22 % [Cat-PHB] .. damp clay 40 % "
                      "[Swell-Spike] (loose 1232 kg/m3)"),
    "clay": Soil("clay", 115 * PCF, _d(10.0), _d(6.0), 30e3, 0.0, 1.30,
                 "medium clay, moist 115 lb/ft3 [CE-ref] (bank 1842 kg/m3); c 30 kPa within its c_u = q_u/2 = "
                 "24-48 kPa (q_u 1000-2000 lb/ft2 [CE-ref]); phi 10 deg, delta 6 deg, c_a 0 ([SoilTyp] clay loam); "
                 "swell 30 %: Cat natural-bed clay 22 % [Cat-PHB] .. damp clay 40 % [Swell-Spike] (loose 1417 kg/m3)"),
    "stiff_clay": Soil("stiff_clay", 120 * PCF, _d(31.0), _d(15.5), 70e3, 35e3, 1.40,
                       "stiff clay, moist 120 lb/ft3 [CE-ref] (bank 1922 kg/m3); c 70 kPa within its c_u = q_u/2 = "
                       "48-96 kPa (q_u 2000-4000 lb/ft2 [CE-ref]) and [DNR] stiff glacial clay's 70-150 kPa, phi "
                       "30-32 deg; delta = 0.5 phi, c_a = c/2 (within c_a <= c of Egli et al. 2022); swell 40 % "
                       "(clay) [Swell-PE] (loose 1373 kg/m3)"),
    "gravel": Soil("gravel", 20e3 / G0, _d(35.5), _d(23.7), 0.0, 0.0, 1.12,
                   "[DNR] gravel, uniform grain: 20 kN/m3 dry (bank 2039 kg/m3; no moist figure retrieved: a dry "
                   "bank, moist gravel is heavier), phi 34-37 deg, c = 0; delta = 2/3 phi [SoilTyp]; swell 12 % "
                   "[Swell-PE] (loose 1820 kg/m3)"),
}


def soil_preset(name: str, **overrides) -> Soil:
    """The preset ``name`` (``SOILS``), with fields replaced by ``overrides`` (angles in rad, SI units).
    Raises KeyError naming the presets; ValueError for a negative or non-finite parameter."""
    if name not in SOILS:
        raise KeyError(f"unknown soil {name!r}; presets: {', '.join(SOILS)}")
    return replace(SOILS[name], **overrides) if overrides else SOILS[name]


def _wedge(a, p, d, b):
    """(D, ok, D where ok else 1, cot α, cot β, cot(β+φ)) of ``n_factors``."""
    cot_bp = 1.0 / np.tan(b + p)
    D = np.cos(a + d) + np.sin(a + d) * cot_bp
    ok = D > 1e-12
    return D, ok, np.where(ok, D, 1.0), 1.0 / np.tan(a), 1.0 / np.tan(b), cot_bp


def n_factors(rake, phi, delta, beta):
    """(N_γ, N_c, N_q, N_a) of the McKyes wedge (module docstring) for rake α, soil friction φ, soil–tool
    friction δ and failure angle β [rad] (arrays broadcast). D ≤ 0 (no wedge) gives inf."""
    a, p, d, b = (np.asarray(x, float) for x in (rake, phi, delta, beta))
    D, ok, Ds, cot_a, cot_b, cot_bp = _wedge(a, p, d, b)
    inf = np.inf
    Ng = np.where(ok, (cot_a + cot_b) / (2 * Ds), inf)
    Nc = np.where(ok, (1 + cot_b * cot_bp) / Ds, inf)
    Nq = np.where(ok, (cot_a + cot_b) / Ds, inf)
    Na = np.where(ok, (1 - cot_a * cot_bp) / Ds, inf)
    return Ng, Nc, Nq, Na


def _dNg_sign(a, p, d, b, rake_terms=None):
    """A positive multiple of ∂N_γ/∂β (N_γ = (cot α + cot β) / 2D, ∂D/∂β = −sin(α+δ)/sin²(β+φ)), times
    2 D² sin²β sin²(β+φ) > 0: −D sin²(β+φ) + (cot α + cot β) sin(α+δ) sin²β. ``rake_terms``: (cos(α+δ),
    sin(α+δ), cot α) when already computed (``failure_angle``'s bisection: the same numbers)."""
    c_ad, s_ad, cot_a = rake_terms or (np.cos(a + d), np.sin(a + d), 1.0 / np.tan(a))
    D = c_ad + s_ad / np.tan(b + p)
    return -D * np.sin(b + p) ** 2 + (cot_a + 1.0 / np.tan(b)) * s_ad * np.sin(b) ** 2


def failure_angle(rake, phi, delta):
    """β* [rad] minimising N_γ (McKyes), for rake α (scalar or (n,)) and φ, δ [rad]: the 0.25° grid point
    of least N_γ, then bisection of ∂N_γ/∂β = 0 (analytic, ``_dNg_sign``) within one grid step on each side,
    for all rakes at once (at most 60 halvings: to rounding; it stops when a halving changes no bracket, as
    every later one would then change none). A minimum at the end of the bracket stays there."""
    rake = np.atleast_1d(np.asarray(rake, float))
    grid = np.radians(np.arange(0.25, 89.8, 0.25))
    _, ok, Ds, cot_a, cot_b, _ = _wedge(rake[:, None], phi, delta, grid[None, :])
    Ng = np.where(ok, (cot_a + cot_b) / (2 * Ds), np.inf)        # n_factors' N_γ alone
    b0 = grid[np.argmin(Ng, axis=1)]
    step = np.radians(0.25)
    lo, hi = np.maximum(b0 - step, 1e-4), np.minimum(b0 + step, np.pi / 2)
    terms = (np.cos(rake + delta), np.sin(rake + delta), 1.0 / np.tan(rake))
    at_lo = _dNg_sign(rake, phi, delta, lo, terms) >= 0    # N_γ increasing already: the minimum is lo
    at_hi = _dNg_sign(rake, phi, delta, hi, terms) <= 0    # still decreasing: the minimum is hi
    a, b = lo.copy(), hi.copy()
    for _ in range(60):
        m = 0.5 * (a + b)
        up = _dNg_sign(rake, phi, delta, m, terms) > 0
        b_new = np.where(up, m, b)
        a_new = np.where(up, a, m)
        if np.array_equal(a_new, a) and np.array_equal(b_new, b):
            break
        a, b = a_new, b_new
    return np.where(at_lo, lo, np.where(at_hi, hi, 0.5 * (a + b)))


def _cut_failure_angle(rake, depth, phi, delta):
    """``failure_angle`` of each rake (any shape, with ``depth`` of the same shape) where the depth is > 0,
    each distinct rake once; π/4 elsewhere (no wedge there: the caller computes no force)."""
    beta = np.full(np.shape(rake), np.pi / 4)
    cut = depth > 0
    if np.any(cut):
        ua, inv = np.unique(rake[cut], return_inverse=True)
        beta[cut] = failure_angle(ua, phi, delta)[inv.ravel()]
    return beta


def fee_force(soil: Soil, depth, width, rake, surcharge=0.0, g=G0, beta=None):
    """FEE force P [N] (module docstring: the force at δ from the face normal, adhesion's effect on it
    included, the adhesion force itself not) for depth d [m] (arrays), tool width w [m], rake α [rad]
    (arrays broadcast with depth) and surcharge q [Pa]; β = ``failure_angle`` (``beta``: the failure angles
    where d > 0 when already computed, same shape as d). Returns (P, β [rad])."""
    d = np.asarray(depth, float)
    rake = np.broadcast_to(np.asarray(rake, float), d.shape)
    phi, delta = soil.friction_angle, soil.tool_friction_angle
    if beta is None:
        ua, inv = np.unique(rake.ravel(), return_inverse=True)
        beta = failure_angle(ua, phi, delta)[inv].reshape(d.shape) if d.size else np.zeros(d.shape)
    beta = np.asarray(beta, float)
    Ng, Nc, Nq, Na = n_factors(rake, phi, delta, beta)
    F = width * (soil.density * g * d ** 2 * Ng + soil.cohesion * d * Nc + np.asarray(surcharge) * d * Nq
                 + soil.adhesion * d * Na)
    return np.where(d > 0, F, 0.0), beta


def bearing_factors(phi):
    """Prandtl–Reissner bearing-capacity factors (N_c, N_q) for friction angle φ [rad] (module docstring):
    N_q = e^{π tan φ} tan²(π/4 + φ/2), N_c = (N_q − 1) cot φ, N_c = π + 2 at φ = 0."""
    Nq = np.exp(np.pi * np.tan(phi)) * np.tan(np.pi / 4 + phi / 2) ** 2
    Nc = (Nq - 1.0) / np.tan(phi) if phi > 1e-9 else np.pi + 2.0
    return float(Nc), float(Nq)


@dataclass
class SoilCut:
    """Soil along a path (N samples), world (root) coordinates, z up. depth [m]; rake α [rad] (clipped) and
    rake_raw (unclipped); force (N, 3) [N] the soil applies to the edge; magnitude |force| [N]; velocity
    (N, 3) [m/s] of the edge; volume: bank volume cut so far [m³]; fill: loose volume in the bucket [m³]
    (≤ capacity); berm: bank volume pushed ahead of the blade [m³]; payload [kg] the soil in the bucket;
    surcharge q [Pa] of the berm; adhesion [N] (along the face) and penetration [N] (against the velocity)
    magnitudes; in_soil (N,) bool."""
    depth: np.ndarray
    rake: np.ndarray
    force: np.ndarray
    magnitude: np.ndarray
    volume: np.ndarray
    surcharge: np.ndarray
    in_soil: np.ndarray
    velocity: np.ndarray = None
    rake_raw: np.ndarray = None
    fill: np.ndarray = None
    berm: np.ndarray = None
    payload: np.ndarray = None
    adhesion: np.ndarray = None
    penetration: np.ndarray = None

    @property
    def reached(self) -> bool:
        return bool(np.any(self.in_soil))


def soil_cutting(t, edge, plate, soil: Soil, ground_height, width, capacity, active=None, edge_thickness=0.0,
                 v_ref=0.05, rake_limits=(np.radians(15.0), np.pi / 2), g=G0) -> SoilCut:
    """Soil force on the cutting edge along its path (module docstring).

    t (N,) [s]; edge (N, 3) [m] positions of the cutting edge in world (root) coordinates, z up; plate
    (N, 3) directions (world) of the bucket's cutting plate from the edge back along the plate (normalised
    here); ground_height [m] (z of a level ground); width [m]; capacity [m³] the bucket's heaped (loose)
    volume; active (N,) bool: where cutting applies (e.g. the dig phases; default everywhere);
    edge_thickness t [m] for the penetration resistance (0: left out). The volume keeps its value after the
    last active sample. Raises ValueError for a zero plate direction."""
    t = np.asarray(t, float)
    edge, plate = np.asarray(edge, float), np.asarray(plate, float)
    N = len(t)
    nrm = np.linalg.norm(plate, axis=1)
    if np.any(nrm < 1e-12):
        raise ValueError("the cutting-plate direction must be nonzero")
    e = plate / nrm[:, None]
    active = np.ones(N, bool) if active is None else np.asarray(active, bool)
    depth = np.where(active, np.maximum(ground_height - edge[:, 2], 0.0), 0.0)
    v = np.gradient(edge, t, axis=0) if N > 1 else np.zeros((N, 3))
    speed = np.linalg.norm(v, axis=1)
    u = v / np.maximum(speed, 1e-12)[:, None]
    cosr = np.clip(np.einsum("ij,ij->i", e, -u), -1.0, 1.0)
    rake_raw = np.arccos(cosr)
    rake = np.clip(rake_raw, *rake_limits)
    # n: normal to the travel on the side the plate leans to (the free surface); world up if the plate is
    # along the travel
    perp = e + cosr[:, None] * u
    up = np.array([0.0, 0.0, 1.0]) - u[:, 2:3] * u
    perp = np.where(np.linalg.norm(perp, axis=1)[:, None] > 1e-9, perp, up)
    n = perp / np.maximum(np.linalg.norm(perp, axis=1), 1e-12)[:, None]
    # bank volume cut, fill of the heaped capacity, berm
    vh = np.linalg.norm(v[:, :2], axis=1)
    rate = width * depth * vh
    vol = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * np.diff(t))]) if N > 1 else np.zeros(N)
    in_bucket = np.minimum(vol, capacity / soil.swell)            # bank volume the bucket holds
    fill = soil.swell * in_bucket
    berm = vol - in_bucket
    payload = soil.density * in_bucket
    # the berm's weight over the wedge's top length L_s = d (cot α + cot β): w q d N_q = ρ_b g V_berm / D
    beta = _cut_failure_angle(rake, depth, soil.friction_angle, soil.tool_friction_angle)   # once, for both
    Ls = depth * (1.0 / np.tan(rake) + 1.0 / np.tan(beta))
    q = np.where(Ls > 0, soil.density * g * berm / (width * np.maximum(Ls, 1e-300)), 0.0)
    cut = depth > 0                                                  # P = 0 elsewhere (fee_force's too)
    P = np.zeros(N)
    P[cut] = fee_force(soil, depth[cut], width, rake[cut], q[cut], g, beta=beta[cut])[0]
    Ca = np.where(depth > 0, soil.adhesion * width * depth / np.sin(rake), 0.0)
    Nc, Nq = bearing_factors(soil.friction_angle)
    Fp = width * np.minimum(depth, edge_thickness) * (soil.cohesion * Nc + soil.density * g * depth * Nq)
    mob = np.minimum(1.0, speed / v_ref)                            # mobilised only while the edge moves
    P, Ca, Fp = P * mob, Ca * mob, Fp * mob
    ad = rake + soil.tool_friction_angle
    e_face = -np.cos(rake)[:, None] * u + np.sin(rake)[:, None] * n    # up the (clipped) face
    force = (-P[:, None] * (np.sin(ad)[:, None] * u + np.cos(ad)[:, None] * n) + Ca[:, None] * e_face
             - Fp[:, None] * u)
    return SoilCut(depth, rake, force, np.linalg.norm(force, axis=1), vol, q, depth > 0, v, rake_raw, fill, berm,
                   payload, Ca, Fp)
