"""Fatigue spectra of load histories: rainflow counting, spectra over a duty mix, Palmgren–Miner damage on a
welded detail's S–N curve, and the damage-equivalent load range.

**Counting**: ASTM E1049-85 (2017) §5.4.4 rainflow counting by the maintained ``rainflow`` package (PyPI,
``rainflow.count_cycles``), not a hand-written counter. A work cycle repeats, so its history is counted as a
periodic signal: rotated to start at its largest |value| and closed with that value, so that every
half-cycle of the residue pairs into a full cycle (ASTM E1049 §5.4.4 on repeated histories).

**A pin's history is its force magnitude |f|** (``magnitude_history``): a pin's load rotates with the
linkage, so no one direction carries it (a projection on the peak's direction drops the load whenever the
force turns away). The magnitude is what the bushing and the pin's shear see. A detail of the structure
around the pin sees a stress that depends on the force's direction: it is counted from the stress history
σ(t) = k · f(t) the user gives per unit load (``stress_history``), never from |f|.

**Spectrum over a duty mix** (``Spectrum``, ``duty_spectrum``): activity a repeated n_a = hours_a ×
cycles_per_hour_a times in the life contributes its per-repetition rainflow cycles times n_a. Cycles that
span two activities (the transitions, a few per shift) are not counted.

**Damage on an S–N curve** (``SNCurve``, Palmgren–Miner D = Σ n_i / N_i):

- EN 1993-1-9:2005 §7.1(3), Figure 7.1, eqs. (7.1)–(7.2), direct stress: Δσ_R^3 N_R = Δσ_C^3 · 2·10⁶ for
  N ≤ 5·10⁶; the constant-amplitude fatigue limit Δσ_D = (2/5)^(1/3) Δσ_C at 5·10⁶; Δσ_R^5 N_R = Δσ_D^5 · 5·10⁶
  for 5·10⁶ < N ≤ 10⁸; the cut-off limit Δσ_L = (5/100)^(1/5) Δσ_D at 10⁸, below which a range does no damage.
  Partial factors (§3 and Table 3.1): the ranges are multiplied by γ_Ff and the curve divided by γ_Mf.
- IIW Recommendations for Fatigue Design of Welded Joints and Components (Hobbacher, 2nd ed., Springer
  2016, §3.2.1 and Fig. (3.2)-1, normal stress): FAT at 2·10⁶ with m = 3, the knee at 10⁷ and m₂ = 22 beyond
  it for variable amplitude (no cut-off).

**Damage-equivalent load range** (a load, never a stress: the S–N exponent only weights the ranges):

    ΔF_eq = ( Σ_i n_i ΔF_i^m / N_ref )^(1/m)

— the constant range that, applied N_ref times, does the damage of the whole spectrum on a single-slope
curve of exponent m (m = 3: welded steel under direct stress, EN 1993-1-9 Figure 7.1 below the knee).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import rainflow

__all__ = ["periodic_cycles", "damage_equivalent_load", "magnitude_history", "stress_history", "Spectrum",
           "duty_spectrum", "SNCurve", "EN1993", "IIW", "sn_curve", "miner_damage"]


def periodic_cycles(x):
    """Rainflow cycles [(range, count)] of a history x (N,) repeated periodically (module docstring)."""
    x = np.asarray(x, float)
    if x.size < 2:
        return []
    k = int(np.argmax(np.abs(x)))
    y = np.concatenate([x[k:], x[:k], x[k:k + 1]])
    return rainflow.count_cycles(y)


def damage_equivalent_load(cycles, m=3.0, life_cycles=2e6, reference_cycles=2e6) -> float:
    """ΔF_eq (module docstring) of rainflow ``cycles`` [(range, count)] (one repetition) repeated
    ``life_cycles`` times, referred to ``reference_cycles``, S–N exponent ``m`` > 0. Raises ValueError for
    m ≤ 0 or cycle numbers ≤ 0."""
    if not m > 0:
        raise ValueError(f"S-N exponent m must be > 0, got {m}")
    if not (life_cycles > 0 and reference_cycles > 0):
        raise ValueError(f"cycle numbers must be > 0, got {life_cycles}, {reference_cycles}")
    if not cycles:
        return 0.0
    r = np.array([c[0] for c in cycles], float)
    n = np.array([c[1] for c in cycles], float)
    return float((life_cycles / reference_cycles * np.sum(n * r ** m)) ** (1.0 / m))


def magnitude_history(force) -> np.ndarray:
    """|f| (N,) [N] of a force history (N, 3) [N]: the rotating pin load's magnitude (module docstring)."""
    return np.linalg.norm(np.asarray(force, float), axis=1)


def stress_history(force, per_unit) -> np.ndarray:
    """σ(t) (N,) [Pa] at a detail from the pin force (N, 3) [N, pin frame] and the detail's stress per unit
    load ``per_unit``: a 3-vector k [Pa/N] (σ = k · f, the detail's influence coefficients of the force's
    components in the pin frame, e.g. from unit-load cases of a finite-element model) or a number [Pa/N]
    applied to |f|. Raises ValueError for any other shape."""
    k = np.asarray(per_unit, float)
    f = np.asarray(force, float)
    if k.ndim == 0:
        return float(k) * magnitude_history(f)
    if k.shape != (3,):
        raise ValueError(f"stress per unit load must be a number or 3 components [Pa/N], got shape {k.shape}")
    return f @ k


@dataclass(frozen=True)
class Spectrum:
    """A load spectrum over the life: ``ranges`` (k,) and ``counts`` (k,) (cycles over the life, of each
    range; in the history's unit: N or Pa), and ``by_activity`` {activity: (ranges, counts)}."""
    ranges: np.ndarray
    counts: np.ndarray
    by_activity: dict

    @property
    def total_cycles(self) -> float:
        """Σ counts: every counted cycle over the life."""
        return float(np.sum(self.counts))

    def exceedance(self):
        """(ranges descending (k,), cycles with at least that range (k,)): the cumulative spectrum."""
        o = np.argsort(-self.ranges, kind="stable")
        return self.ranges[o], np.cumsum(self.counts[o])

    def damage_equivalent(self, m=3.0, reference_cycles=2e6) -> float:
        """ΔF_eq = (Σ n_i ΔF_i^m / N_ref)^(1/m) (module docstring); 0 for an empty spectrum."""
        if not m > 0 or not reference_cycles > 0:
            raise ValueError(f"need m > 0 and reference_cycles > 0, got {m}, {reference_cycles}")
        return float((np.sum(self.counts * self.ranges ** m) / reference_cycles) ** (1.0 / m))

    def binned(self, edges):
        """Counts (len(edges) − 1,) of the ranges in [edges[j], edges[j+1]) (the last bin closed)."""
        return np.histogram(self.ranges, bins=np.asarray(edges, float), weights=self.counts)[0]


def duty_spectrum(histories, repetitions) -> Spectrum:
    """The life's spectrum of one quantity: ``histories`` {activity: (N_a,) one repetition of its history},
    ``repetitions`` {activity: n_a = hours × cycles per hour}. Each history is counted as periodic
    (``periodic_cycles``) and its counts multiplied by n_a. Raises ValueError for a negative or non-finite
    repetition count, KeyError for an activity without one."""
    rs, cs, by = [], [], {}
    for a, x in histories.items():
        n = float(repetitions[a])
        if not (np.isfinite(n) and n >= 0):
            raise ValueError(f"activity {a!r}: repetitions must be finite and >= 0, got {n}")
        cyc = periodic_cycles(x)
        r = np.array([c[0] for c in cyc], float)
        c = np.array([c[1] for c in cyc], float) * n
        by[a] = (r, c)
        rs.append(r)
        cs.append(c)
    r = np.concatenate(rs) if rs else np.zeros(0)
    c = np.concatenate(cs) if cs else np.zeros(0)
    return Spectrum(r, c, by)


@dataclass(frozen=True)
class SNCurve:
    """A welded detail's S–N curve for direct stress ranges (module docstring): ``fat`` Δσ_C [Pa] at
    ``n_c`` cycles with slope ``m1``; from the knee ``n_d`` on, slope ``m2`` down to the cut-off at ``n_l``
    (inf: none); ``standard`` names the source."""
    fat: float
    m1: float = 3.0
    n_c: float = 2e6
    n_d: float = 5e6
    m2: float = 5.0
    n_l: float = 1e8
    standard: str = "EN 1993-1-9:2005 §7.1, Figure 7.1"

    @property
    def knee(self) -> float:
        """Δσ_D [Pa]: the range at the knee, Δσ_C (n_c / n_d)^(1/m1)."""
        return self.fat * (self.n_c / self.n_d) ** (1.0 / self.m1)

    @property
    def cutoff(self) -> float:
        """Δσ_L [Pa]: the range at n_l (0 without a cut-off)."""
        return 0.0 if not np.isfinite(self.n_l) else self.knee * (self.n_d / self.n_l) ** (1.0 / self.m2)

    def cycles_to_failure(self, ranges, gamma_mf=1.0) -> np.ndarray:
        """N_R (k,) of the ranges (k,) [Pa] on the curve divided by γ_Mf; inf below the cut-off or at 0."""
        s = np.asarray(ranges, float) * gamma_mf
        with np.errstate(divide="ignore"):
            hi = self.n_c * (self.fat / s) ** self.m1
            lo = self.n_d * (self.knee / s) ** self.m2
        N = np.where(s >= self.knee, hi, lo)
        return np.where((s <= 0) | (s < self.cutoff), np.inf, N)


#: EN 1993-1-9:2005 §7.1(3), Figure 7.1 (direct stress): knee 5e6, m2 = 5, cut-off 1e8
def EN1993(fat):
    """The EN 1993-1-9 curve of detail category ``fat`` [Pa] (Δσ_C at 2·10⁶)."""
    return SNCurve(fat)


def IIW(fat):
    """The IIW (Hobbacher 2016, §3.2.1, Fig. (3.2)-1) curve of class ``fat`` [Pa] for variable amplitude:
    knee 10⁷, m2 = 22, no cut-off."""
    return SNCurve(fat, 3.0, 2e6, 1e7, 22.0, np.inf, "IIW (Hobbacher 2016) §3.2.1, Fig. (3.2)-1")


def sn_curve(standard: str, fat: float) -> SNCurve:
    """``EN1993`` or ``IIW`` by name ("en1993" | "iiw"). Raises ValueError for another name or fat ≤ 0."""
    if not (np.isfinite(fat) and fat > 0):
        raise ValueError(f"FAT class must be > 0 [Pa], got {fat}")
    curves = {"en1993": EN1993, "iiw": IIW}
    if standard not in curves:
        raise ValueError(f"unknown S-N standard {standard!r}: use {' or '.join(curves)}")
    return curves[standard](fat)


def miner_damage(spectrum: Spectrum, curve: SNCurve, gamma_ff=1.0, gamma_mf=1.0) -> float:
    """Palmgren–Miner damage D = Σ n_i / N_R(γ_Ff Δσ_i) (EN 1993-1-9:2005 Annex A.5) of a stress
    ``spectrum`` [Pa] on ``curve`` with the partial factors γ_Ff (load) and γ_Mf (strength, Table 3.1).
    D ≥ 1: the detail's life is used up."""
    N = curve.cycles_to_failure(spectrum.ranges * gamma_ff, gamma_mf)
    return float(np.sum(spectrum.counts / N))
