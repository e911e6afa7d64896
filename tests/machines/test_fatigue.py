"""Fatigue spectrum (urdf_dyn.machines.fatigue): the rainflow package's documented example (its README's
signal and counts), the ASTM E1049-85 §5.4.4 example history, periodic histories counted by hand, the
spectrum's total cycles against hours × cycles per hour, the damage-equivalent load by hand, and Miner damage of
constant-amplitude histories against the closed form of the EN 1993-1-9 / IIW curves."""
from math import cos, sin

import numpy as np
import pytest
import rainflow

from urdf_dyn.machines.fatigue import (EN1993, IIW, damage_equivalent_load, duty_spectrum, magnitude_history,
                                       miner_damage, periodic_cycles, sn_curve, stress_history)


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


def test_periodic_history_counted_by_hand():
    """0, 4, 1, 3 repeated: from the peak 4 → 1 → 3 → 0 → 4, the inner 1–3 is a cycle of range 2 and 0–4 a
    cycle of range 4: two full cycles per repetition, none left as halves."""
    assert sorted(periodic_cycles([0.0, 4.0, 1.0, 3.0])) == [(2.0, 1.0), (4.0, 1.0)]
    t = np.linspace(0, 1, 401)[:-1]
    cyc = periodic_cycles(np.sin(2 * np.pi * t + 0.3))
    assert sum(c for _, c in cyc) == pytest.approx(1.0)
    assert max(r for r, _ in cyc) == pytest.approx(2.0, rel=1e-4)


def test_rotating_load_uses_its_magnitude_and_stress_its_components():
    """A load of constant magnitude 5 turning through 360°: |f| has no range (a projection on one direction
    would count a range of 10); the stress k·f at a detail with k along x swings ±5 k."""
    a = np.linspace(0, 2 * np.pi, 361)
    f = 5.0 * np.column_stack([np.cos(a), np.zeros_like(a), np.sin(a)])
    assert np.ptp(magnitude_history(f)) == pytest.approx(0.0, abs=1e-12)
    s = stress_history(f, [2.0, 0.0, 0.0])
    assert s.max() == pytest.approx(10.0) and s.min() == pytest.approx(-10.0)
    assert stress_history(f, 3.0) == pytest.approx(np.full(len(a), 15.0))
    with pytest.raises(ValueError, match="3 components"):
        stress_history(f, [1.0, 2.0])


def test_spectrum_total_cycles_is_hours_times_cycles_per_hour():
    """Each repetition of a sine is one cycle: the life's count is Σ hours × cycles per hour; the ΔF_eq of the
    two blocks by hand: ((n₁ 2³ + n₂ 6³) / N_ref)^(1/3)."""
    t = np.linspace(0, 1, 200, endpoint=False)
    hist = {"dig": np.sin(2 * np.pi * t), "lift": 3.0 * np.sin(2 * np.pi * t + 1.0)}
    reps = {"dig": 3000 * 170.0, "lift": 500 * 12.0}
    sp = duty_spectrum(hist, reps)
    assert sp.total_cycles == pytest.approx(3000 * 170 + 500 * 12, rel=1e-12)
    r1, r2 = np.ptp(hist["dig"]), np.ptp(hist["lift"])     # the sampled ranges (2 and about 6)
    eq = ((reps["dig"] * r1 ** 3 + reps["lift"] * r2 ** 3) / 2e6) ** (1 / 3)
    assert sp.damage_equivalent(3.0, 2e6) == pytest.approx(eq, rel=1e-12)
    r, c = sp.exceedance()
    assert r[0] == pytest.approx(r2, rel=1e-12) and c[-1] == pytest.approx(sp.total_cycles)
    assert sp.binned([0, 3, 7]).tolist() == pytest.approx([reps["dig"], reps["lift"]])
    with pytest.raises(ValueError, match="repetitions"):
        duty_spectrum(hist, {"dig": -1.0, "lift": 1.0})


def test_miner_damage_of_constant_amplitude_against_the_closed_form():
    """EN 1993-1-9 Figure 7.1, detail category 71: a range of 100 MPa (above the knee Δσ_D = 0.737 Δσ_C) n
    times does D = n Δσ³ / (Δσ_C³ 2·10⁶); 40 MPa (between the knee and the cut-off Δσ_L = 0.549 Δσ_D) does
    D = n / (5·10⁶ (Δσ_D / Δσ)⁵); 20 MPa does none. γ_Mf = 1.15 multiplies D by 1.15³ above the knee."""
    c = EN1993(71e6)
    assert c.knee == pytest.approx(0.737 * 71e6, rel=1e-3)
    assert c.cutoff == pytest.approx(0.549 * c.knee, rel=1e-3)
    t = np.linspace(0, 1, 100, endpoint=False)
    for rng, n in ((100e6, 1e5), (40e6, 3e6), (20e6, 1e9)):
        sp = duty_spectrum({"a": 0.5 * rng * np.sin(2 * np.pi * t)}, {"a": n})
        if rng > c.knee:
            D = n * rng ** 3 / (71e6 ** 3 * 2e6)
        elif rng > c.cutoff:
            D = n / (5e6 * (c.knee / rng) ** 5)
        else:
            D = 0.0
        assert miner_damage(sp, c) == pytest.approx(D, rel=1e-6, abs=0)
    sp = duty_spectrum({"a": 50e6 * np.sin(2 * np.pi * t)}, {"a": 1e5})
    assert miner_damage(sp, c, gamma_mf=1.15) == pytest.approx(1.15 ** 3 * miner_damage(sp, c), rel=1e-9)
    # IIW: the knee at 1e7, m2 = 22, no cut-off
    i = IIW(71e6)
    assert i.knee == pytest.approx(71e6 * 0.2 ** (1 / 3)) and i.cutoff == 0.0
    assert i.cycles_to_failure([0.5 * i.knee])[0] == pytest.approx(1e7 * 2.0 ** 22)
    with pytest.raises(ValueError, match="standard"):
        sn_curve("aisc", 71e6)
