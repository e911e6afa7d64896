"""The shortest cycle (urdf_dyn.machines.cycle) against a hand solution: the excavator swings 90° and back
with its front held still, so the swing torque is J θ̈ with J the swing's inertia (H[swing, swing]); a
minimum-jerk (quintic) segment of angle θ and duration T peaks at θ̈ = (10/√3) θ/T² and θ̇ = (15/8) θ/T, so
the shortest T is the larger of √((10/√3) θ J / τ_max) and (15/8) θ / ω_max (ω_max: the URDF's swing
velocity limit, 11.3 rpm)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.cycle import CycleLimits, evaluate_cycle, shortest_cycle

EXC = ROOT / "robots" / "excavator.urdf"
NAMES = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
W = [[0.0, -0.15, -0.25, 0.4], [1.57, -0.15, -0.25, 0.4], [0.0, -0.15, -0.25, 0.4]]


@pytest.mark.parametrize("tau_max, expect", [(74e3, "torque swing"), (400e3, "speed swing")])
def test_swing_only_cycle_by_hand(tau_max, expect):
    model = ud.load(EXC)
    mo = ud.spline_motion(NAMES, np.array(W[:1] * 2), [1.0], 0.5, "quintic")
    Q, _, _ = ud.consistent_motion(model, mo, progress=False)
    J = ud.mass_matrix(model, Q[0])[0, 0]
    theta, omega_max = 1.57, model.velocity_limit[model.joint_index("swing")]
    T_torque = np.sqrt(10 / np.sqrt(3) * theta * J / tau_max)
    T_speed = 15 / 8 * theta / omega_max
    T = max(T_torque, T_speed)
    assert abs(T_torque / T_speed - 1) > 0.1                     # one limit clearly binds
    lim = CycleLimits({}, 35e6, torque={"swing": tau_max})
    res = shortest_cycle(model, NAMES, W, [6.0, 6.0], lim, dt=0.005, phases=["swing", "return"])
    assert res.durations == pytest.approx([T, T], rel=5e-3)
    assert res.binding == [expect, expect]
    assert res.to_dict()["binding_limits"] == [f"swing: {expect}", f"return: {expect}"]
    e = evaluate_cycle(model, NAMES, W, res.durations, lim, dt=0.005)
    assert e.worst.max() <= 1 + 2e-3
    assert res.total == pytest.approx(2 * T, rel=5e-3)
