"""Fatigue spectrum (urdf_dyn.machines.fatigue): the rainflow package's documented example (its README's
signal and counts), the ASTM E1049-85 §5.4.4 example history, and the damage-equivalent load by hand."""
from math import cos, sin

import numpy as np
import pytest
import rainflow

from urdf_dyn.machines.fatigue import damage_equivalent_load, direction_history, periodic_cycles


def test_rainflow_documented_example():
    """rainflow's README: 201 samples of 0.2 + 0.5 sin t + 0.2 cos 10t + 0.2 sin 4t over 4 s."""
    time = [4.0 * i / 200 for i in range(200 + 1)]
    signal = [0.2 + 0.5 * sin(t) + 0.2 * cos(10 * t) + 0.2 * sin(4 * t) for t in time]
    got = rainflow.count_cycles(signal)
    doc = [(0.04258965150708488, 0.5), (0.10973439445727551, 1.0), (0.11294628078612906, 0.5),
           (0.2057106991158965, 1.0), (0.21467990941625242, 1.0), (0.4388985979776988, 1.0),
           (0.48305748051348263, 0.5), (0.5286423866535466, 0.5), (0.7809330293159786, 0.5),
           (1.4343610172143002, 0.5)]
    assert [c for _, c in got] == [c for _, c in doc]
    assert np.allclose([r for r, _ in got], [r for r, _ in doc], rtol=1e-12)
    assert rainflow.count_cycles(signal, binsize=0.5) == [(0.5, 5.5), (1.0, 1.0), (1.5, 0.5)]


def test_astm_example_and_damage_equivalent_by_hand():
    """ASTM E1049-85 Fig. 6 history −2, 1, −3, 5, −1, 3, −4, 4, −2: ranges 3 (½), 4 (1½), 6 (½), 8 (1), 9 (½).
    ΔF_eq for m = 3 over N_life = N_ref: (½·27 + 1½·64 + ½·216 + 512 + ½·729)^(1/3)."""
    y = [-2, 1, -3, 5, -1, 3, -4, 4, -2]
    cyc = rainflow.count_cycles(y)
    assert cyc == [(3, 0.5), (4, 1.5), (6, 0.5), (8, 1.0), (9, 0.5)]
    hand = (0.5 * 27 + 1.5 * 64 + 0.5 * 216 + 512 + 0.5 * 729) ** (1 / 3)
    assert damage_equivalent_load(cyc, m=3) == pytest.approx(hand, rel=1e-14)
    # life 10x the reference: the equivalent range grows by 10^(1/m)
    assert damage_equivalent_load(cyc, 3, 2e7, 2e6) == pytest.approx(hand * 10 ** (1 / 3), rel=1e-14)
    with pytest.raises(ValueError, match="exponent"):
        damage_equivalent_load(cyc, m=0)


def test_periodic_history_closes_every_cycle():
    """A repeated sine counts as exactly one full cycle of range 2 per period (no half-cycles left)."""
    t = np.linspace(0, 1, 401)[:-1]
    cyc = periodic_cycles(1.0 * np.sin(2 * np.pi * t + 0.3))
    assert sum(c for _, c in cyc) == pytest.approx(1.0)
    assert max(r for r, _ in cyc) == pytest.approx(2.0, rel=1e-4)
    # a force reversing through the pin counts its full range along its peak direction
    f = np.outer(np.sin(2 * np.pi * t), [3.0, 0.0, -4.0])
    h = direction_history(f)
    assert h.max() == pytest.approx(5.0, rel=1e-4) and h.min() == pytest.approx(-5.0, rel=1e-4)
