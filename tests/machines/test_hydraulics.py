"""Hydraulic demand (urdf_dyn.machines.hydraulics): flows against the stroke's finite differences,
pressures and capacities by hand, energy of a constant-power stroke, pump over-demand, end stops, relief."""
from types import SimpleNamespace

import numpy as np
import pytest

from urdf_dyn.machines.hydraulics import Motor, hydraulics, intervals
from urdf_dyn.machines.sizing import Cylinder


def fake_result(t, s, sd, u, names):
    return SimpleNamespace(t=t, names=tuple(names), u=np.column_stack(u), s=np.column_stack(s),
                           sd=np.column_stack(sd))


def test_flows_pressures_and_checks():
    t = np.linspace(0, 4, 4001)
    s = 0.3 * np.sin(np.pi * t / 2)                       # stroke [m]: out and back
    sd = 0.3 * np.pi / 2 * np.cos(np.pi * t / 2)
    u = np.where(t < 2, 100e3, -50e3)                     # push 100 kN, then pull 50 kN
    th = 0.8 * np.sin(t)                                  # swing [rad]
    res = fake_result(t, [s, th], [sd, 0.8 * np.cos(t)], [u, np.full_like(t, 30e3)], ["cyl", "swing"])
    c = Cylinder(0.12, 0.085)
    h = hydraulics(res, {"cyl": c}, {"swing": Motor(2.114e-3)}, relief=35e6, pump_flow=7.15e-3,
                   supply={"cyl": 3.575e-3})
    a = h.actuators["cyl"]
    Ac, Ar = np.pi * 0.12 ** 2 / 4, np.pi * (0.12 ** 2 - 0.085 ** 2) / 4
    # flows from the stroke's finite differences
    v_fd = np.gradient(s, t)
    assert np.allclose(a.q_cap, Ac * v_fd, atol=1e-6 * Ac)
    assert np.allclose(a.q_rod, Ar * v_fd, atol=1e-6 * Ar)
    assert np.allclose(a.demand, np.where(v_fd > 0, Ac * v_fd, -Ar * v_fd), atol=1e-6 * Ac)
    # pressures by hand: 100 kN / (π 0.12²/4) = 88.42 bar (cap); 50 kN / (π (0.12² − 0.085²)/4) = 88.73 bar (rod)
    assert a.pressure[0] / 1e5 == pytest.approx(88.42, abs=0.01)
    assert a.pressure[-1] / 1e5 == pytest.approx(88.73, abs=0.01)
    assert a.side[0] == "cap" and a.side[-1] == "rod"
    assert a.capacity_push == pytest.approx(35e6 * Ac) and a.capacity_pull == pytest.approx(35e6 * Ar)
    assert a.push_ratio == pytest.approx(100e3 / (35e6 * Ac)) and a.pull_ratio == pytest.approx(50e3 / (35e6 * Ar))
    # speed allowed by one pump section
    assert a.v_max_ext == pytest.approx(3.575e-3 / Ac) and a.peak_ext_speed == pytest.approx(0.3 * np.pi / 2, rel=1e-6)
    # power: max(u v, 0): pushing while extending (t < 1) and pulling while retracting (1 < t < 2: pushing
    # while retracting is overrunning -> 0; 2 < t < 3: pulling while retracting -> positive)
    P = np.maximum(u * sd, 0)
    assert a.positive_work == pytest.approx(np.trapezoid(P, t))
    assert a.positive_work == pytest.approx(100e3 * 0.3 + 50e3 * 0.3, rel=1e-3)  # ∫ over the driven quarters
    # swing motor
    m = h.actuators["swing"]
    assert np.allclose(m.demand, 2.114e-3 * np.abs(0.8 * np.cos(t)))
    assert m.pressure[0] == pytest.approx(30e3 / 2.114e-3)
    assert h.total_demand == pytest.approx(a.demand + m.demand)


def test_over_demand_relief_and_end_stops():
    t = np.linspace(0, 1, 101)
    v = np.full_like(t, 0.5)
    res = fake_result(t, [0.5 * t], [v], [np.full_like(t, 450e3)], ["cyl"])
    c = Cylinder(0.12, 0.085)
    model = SimpleNamespace(joint_names=("cyl",), joint_index=lambda n: 0, lower=np.array([0.1]),
                            upper=np.array([0.49]), velocity_limit=np.array([0.316]))
    h = hydraulics(res, {"cyl": c}, relief=35e6, pump_flow=1e-3, model=model)
    # demand A_c · 0.5 = 5.65e-3 m3/s > 1e-3 everywhere; 450 kN > 35 MPa · A_c = 395.8 kN everywhere
    assert h.over_demand == [(0.0, 1.0)]
    assert h.actuators["cyl"].over_relief == [(0.0, 1.0)]
    assert h.actuators["cyl"].end_stop == [(0.0, 0.21), (0.97, 1.0)]   # within 5 mm of 0.1 and 0.49 m
    a = h.actuators["cyl"]
    assert a.limit_ratio == pytest.approx(0.5 / 0.316) and a.flow_ratio == pytest.approx(0.5 / (1e-3 / c.cap_area))
    assert a.speed_ratio == max(a.limit_ratio, a.flow_ratio)
    w = " / ".join(h.warnings())
    for s in ("more flow than the pumps", "over its relief", "stroke end", "speed its supply allows", "URDF velocity"):
        assert s in w
    assert h.peak_flow * 6e4 == pytest.approx(c.cap_area * 0.5 * 6e4)
    assert intervals([0, 1, 2, 3], [False, True, True, False]) == [(1.0, 2.0)]
    d = h.to_dict()
    assert d["peak_flow_L_min"] == pytest.approx(h.peak_flow * 6e4) and "cyl" in d["actuators"]
    with pytest.raises(KeyError, match="not an actuator"):
        hydraulics(res, {"nope": c}, relief=35e6, pump_flow=1e-3)


def test_swing_motor_sized_at_the_swing_relief():
    """The data sheet's 74 kN·m belongs to the 26.8 MPa swing relief (cat320_datasheet.md S1): the ideal
    motor has D = τ / Δp = 74e3 / 26.8e6 = 2.7612e-3 m³/rad (hand), gives 74 kN·m at that relief, needs
    35/26.8 = 1.306 times the flow of a motor sized at the 35 MPa main relief, and its pressure is checked
    against its own relief: 60 kN·m is 60/74 of 268 bar (the old sizing plotted 60/74 of 350 bar against the
    350 bar line), 75 kN·m is over it."""
    m = Motor.from_torque(74e3, 26.8e6)
    assert m.displacement == pytest.approx(2.7612e-3, rel=1e-4) and m.relief == 26.8e6
    t = np.linspace(0, 1, 101)
    w = np.full_like(t, 0.5)                                     # rad/s
    tau = np.where(t < 0.5, 60e3, 75e3)
    res = fake_result(t, [0.5 * t], [w], [tau], ["swing"])
    h = hydraulics(res, {}, {"swing": m}, relief=35e6, pump_flow=7.15e-3)
    a = h.actuators["swing"]
    assert a.capacity_push == pytest.approx(74e3) and a.relief == 26.8e6
    assert a.demand[0] == pytest.approx(0.5 * 74e3 / 26.8e6)
    old = hydraulics(res, {}, {"swing": Motor(74e3 / 35e6)}, relief=35e6, pump_flow=7.15e-3).actuators["swing"]
    assert a.demand[0] / old.demand[0] == pytest.approx(35 / 26.8)
    assert a.pressure[-1] == pytest.approx(75e3 / (74e3 / 26.8e6)) and a.over_relief == [(0.5, 1.0)]
    assert a.pressure[0] == pytest.approx(60 / 74 * 26.8e6) and old.pressure[0] == pytest.approx(60 / 74 * 35e6)
    with pytest.raises(ValueError, match="relief > 0"):
        Motor.from_torque(74e3, 0.0)


def test_speed_limits_depend_on_the_direction():
    """Extension is fed on the cap side, retraction on the annulus: with the section's flow Q the limits are
    Q / A_cap and Q / A_annulus (hand), and the URDF limit (the extension speed at the rated flow) allows
    retraction v_lim A_cap / A_annulus. A retraction at 0.5 m/s with v_lim = 0.316 m/s (= Q / A_cap of one
    3.575e-3 m³/s pump section on a 120 mm bore) is within both; the same speed extending is over both."""
    Q, v_lim = 3.575e-3, 0.316
    Ac, Aa = np.pi * 0.12 ** 2 / 4, np.pi * (0.12 ** 2 - 0.085 ** 2) / 4
    c = Cylinder(0.12, 0.085)
    t = np.linspace(0, 1, 101)
    model = SimpleNamespace(joint_names=("cyl",), joint_index=lambda n: 0, lower=np.array([-5.0]),
                            upper=np.array([5.0]), velocity_limit=np.array([v_lim]))
    for v, over in ((-0.5, False), (0.5, True)):
        res = fake_result(t, [v * t], [np.full_like(t, v)], [np.full_like(t, 10e3)], ["cyl"])
        h = hydraulics(res, {"cyl": c}, supply={"cyl": Q}, relief=35e6, pump_flow=1.0, model=model)
        a = h.actuators["cyl"]
        assert a.v_max_ext == pytest.approx(Q / Ac) and a.v_max_ret == pytest.approx(Q / Aa)
        assert a.v_limit == v_lim and a.v_limit_ret == pytest.approx(v_lim * Ac / Aa)
        ratio = 0.5 / (Q / Ac if v > 0 else Q / Aa)
        assert a.flow_ratio == pytest.approx(ratio)
        assert a.limit_ratio == pytest.approx(0.5 / (v_lim if v > 0 else v_lim * Ac / Aa))
        assert (a.speed_ratio > 1) == over
        assert any("URDF velocity" in w for w in h.warnings()) == over
