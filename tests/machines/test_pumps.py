"""Pumps against the engine (urdf_dyn.machines.pumps): a constant-speed segment by hand p·Q, the engine's
limit (torque regulation) and the flow shares by priority and equal sharing, also by hand."""
import numpy as np
import pytest

from urdf_dyn.machines.pumps import pump_power, section_loads
from urdf_dyn.machines.hydraulics import hydraulics
from urdf_dyn.machines.sizing import Cylinder
from types import SimpleNamespace

A_CAP = np.pi * 0.14 ** 2 / 4


def test_constant_speed_segment_by_hand():
    """A 140 mm cylinder extends at 0.1 m/s pushing 300 kN: p = F/A + Δp, Q = A v, P = p Q / (η_v η_hm);
    through ``hydraulics`` (the load pressure from its power / flow)."""
    t = np.linspace(0, 2, 201)
    v, F = 0.1, 300e3
    res = SimpleNamespace(t=t, names=("stick",), u=np.full((201, 1), F), s=(v * t)[:, None],
                          sd=np.full((201, 1), v))
    hyd = hydraulics(res, {"stick": Cylinder(0.14, 0.1)}, relief=35e6, pump_flow=7.15e-3)
    Q, p = section_loads(hyd)
    r = pump_power(t, Q, p, engine_power=121e3, pump_flow=7.15e-3, relief=35e6, margin=2e6, eta_v=0.95,
                   eta_hm=0.9)
    p_hand = F / A_CAP + 2e6                         # 194.9 bar + 20 bar
    Q_hand = A_CAP * v                               # 92.4 L/min
    P_hand = p_hand * Q_hand / (0.95 * 0.9)           # 23.2 kW
    assert r.pressure == pytest.approx(np.full(201, p_hand), rel=1e-12)
    assert r.power_demand == pytest.approx(np.full(201, P_hand), rel=1e-12)
    assert r.peak_power == pytest.approx(P_hand, rel=1e-12) and r.power_limited_s == 0.0
    assert np.all(r.slowdown == 1.0) and r.slowed_time == pytest.approx(2.0)
    # the same segment against a 15 kW engine: the pumps deliver P_e η / p, the cylinder slows to that share
    r2 = pump_power(t, Q, p, engine_power=15e3, pump_flow=7.15e-3, relief=35e6, margin=2e6, eta_v=0.95,
                    eta_hm=0.9)
    Qa = 15e3 * 0.95 * 0.9 / p_hand
    assert r2.available == pytest.approx(np.full(201, Qa), rel=1e-12)
    assert r2.power_delivered == pytest.approx(np.full(201, 15e3), rel=1e-12)
    assert r2.slowdown == pytest.approx(np.full(201, Qa / Q_hand), rel=1e-12)
    assert r2.power_limited_s == pytest.approx(2.0) and r2.power_limited == [(0.0, 2.0)]
    assert r2.slowed_time == pytest.approx(2.0 * Q_hand / Qa, rel=1e-9)


def test_priority_and_equal_sharing_by_hand():
    """Boom 300 L/min at 250 bar and swing 150 L/min at 200 bar on pumps limited to 400 L/min: the pump runs
    at 250 + 20 bar; by priority the boom gets 300 and the swing 100 (2/3); equally both get 8/9."""
    t = np.array([0.0, 1.0])
    Q = {"boom": np.full(2, 300 / 6e4), "swing": np.full(2, 150 / 6e4)}
    p = {"boom": np.full(2, 250e5), "swing": np.full(2, 200e5)}
    kw = dict(engine_power=1e9, pump_flow=400 / 6e4, relief=350e5, margin=20e5, eta_v=1.0, eta_hm=1.0)
    pr = pump_power(t, Q, p, priority=["boom", "swing"], **kw)
    assert pr.pressure[0] == pytest.approx(270e5)
    assert pr.share["boom"][0] == 1.0 and pr.share["swing"][0] == pytest.approx(100 / 150)
    assert pr.slowdown[0] == pytest.approx(100 / 150)
    eq = pump_power(t, Q, p, **kw)
    assert eq.share["boom"][0] == pytest.approx(400 / 450) and eq.share["swing"][0] == pytest.approx(400 / 450)
    # relief caps the pressure
    hi = pump_power(t, Q, {"boom": np.full(2, 345e5), "swing": np.zeros(2)}, **kw)
    assert hi.pressure[0] == pytest.approx(350e5)


@pytest.mark.parametrize("kw, key", [(dict(engine_power=0.0), "engine_power"), (dict(eta_v=1.2), "eta_v"),
                                     (dict(eta_hm=0.0), "eta_hm"), (dict(priority=["arm"]), "arm")])
def test_bad_arguments_name_themselves(kw, key):
    args = dict(engine_power=121e3, pump_flow=7e-3, relief=35e6)
    args.update(kw)
    with pytest.raises(ValueError, match=key):
        pump_power([0.0, 1.0], {"boom": np.ones(2) * 1e-3}, {"boom": np.ones(2) * 1e7}, **args)
