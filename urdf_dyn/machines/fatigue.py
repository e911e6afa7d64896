"""Fatigue spectrum of a load history: rainflow counting and the damage-equivalent load.

Counting: ASTM E1049-85 (2017) §5.4.4 rainflow counting by the maintained ``rainflow`` package (PyPI,
``rainflow.count_cycles``), not a hand-written counter. A dig cycle repeats, so its history is counted as
a periodic signal: rotated to start at its largest |value| and closed with that value, so that every
half-cycle of the residue pairs into a full cycle (ASTM E1049 §5.4.4 note on repeated histories).

A pin's history: the force component along the direction of its cycle peak (signed, N), so that a load that
reverses through the pin counts its full range (the magnitude |f| would fold a reversal into two small
ranges).

Damage-equivalent load (Palmgren–Miner with a single-slope S–N curve N_f ΔF^m = const):

    ΔF_eq = ( (N_life / N_ref) · Σ_i n_i ΔF_i^m )^(1/m)

— the constant range that, applied N_ref times, does the damage of N_life repetitions of the counted
cycle (n_i cycles of range ΔF_i per repetition). m = 3 for welded steel details under direct stress
(EN 1993-1-9:2005 §7.1 and Fig. 7.1, whose detail categories are stated at N_ref = 2·10⁶ cycles; IIW
Recommendations for Fatigue Design of Welded Joints, Hobbacher 2016, §3.2: m = 3 for welded joints).
"""
from __future__ import annotations

import numpy as np
import rainflow

__all__ = ["periodic_cycles", "damage_equivalent_load", "direction_history"]


def periodic_cycles(x):
    """Rainflow cycles [(range, count)] of a history x (N,) repeated periodically (module docstring)."""
    x = np.asarray(x, float)
    if x.size < 2:
        return []
    k = int(np.argmax(np.abs(x)))
    y = np.concatenate([x[k:], x[:k], x[k:k + 1]])
    return rainflow.count_cycles(y)


def damage_equivalent_load(cycles, m=3.0, life_cycles=2e6, reference_cycles=2e6) -> float:
    """ΔF_eq (module docstring) of rainflow ``cycles`` [(range, count)], S–N exponent ``m`` > 0, over
    ``life_cycles`` repetitions referred to ``reference_cycles``. Raises ValueError for m ≤ 0 or cycle
    numbers ≤ 0."""
    if not m > 0:
        raise ValueError(f"S-N exponent m must be > 0, got {m}")
    if not (life_cycles > 0 and reference_cycles > 0):
        raise ValueError(f"cycle numbers must be > 0, got {life_cycles}, {reference_cycles}")
    if not cycles:
        return 0.0
    r = np.array([c[0] for c in cycles], float)
    n = np.array([c[1] for c in cycles], float)
    return float((life_cycles / reference_cycles * np.sum(n * r ** m)) ** (1.0 / m))


def direction_history(force):
    """The component (N,) of a force history (N, 3) along the direction of its largest magnitude."""
    f = np.asarray(force, float)
    mag = np.linalg.norm(f, axis=1)
    k = int(np.argmax(mag))
    if mag[k] == 0:
        return np.zeros(len(f))
    return f @ (f[k] / mag[k])
