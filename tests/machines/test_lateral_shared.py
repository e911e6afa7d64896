"""The lateral cases' shortcuts against their plain forms: ``pin_values`` for a pin along a coordinate axis
(its own terms, without the products with the axis' zeros) against the general formulas written out here
with ``np.linalg.norm`` and ``np.cross``, bit for bit, on wrenches that include zeros; and the three cases
given one shared ``case_field`` against each computing its own (the same cases), with a field of other pins
refused by name."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines import lateral_cases as lc
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.machines.stability import tipping_polygon
from urdf_dyn.machines.stall import stall_envelopes

EXC = ROOT / "robots" / "excavator.urdf"
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
LIP = np.array([1.461061, 0.0, 0.183701])
FOOT = tipping_polygon(3.65, 2.38)
PINS = {"boom_foot": "boom", "boom_nose": "stick", "bucket_pivot": "bucket", "h_link_pin": "h_link_bucket_pin"}
T_SWING = 74e3 / 26.8e6 * 25.5e6


def _reference(w, a, s):
    """The pin values by their definitions (``lateral_cases`` module docstring), every axis alike."""
    n, f = w[..., :3], w[..., 3:]
    n_perp, f_perp = n - (n @ a)[..., None] * a, f - (f @ a)[..., None] * a
    d = np.cross(n_perp, a) / s
    lug = np.linalg.norm(np.stack([f_perp / 2 + d, f_perp / 2 - d], axis=-2), axis=-1).max(axis=-1)
    return dict(force_N=np.linalg.norm(f, axis=-1), moment_Nm=np.linalg.norm(n_perp, axis=-1),
                side_N=np.abs(f @ a), lug_N=lug)


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1),
                                  (0.3, 0.8, -0.2)])
def test_pin_values_match_the_definitions_bit_for_bit(axis):
    rng = np.random.default_rng(3)
    w = rng.normal(size=(40, 7, 6)) * 1e4
    w[0, 0] = 0.0
    w[1, 1, :3] = 0.0
    w[2, 2, 3:] = 0.0
    w[3, 3, 1] = -0.0
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    ref = _reference(w, a, 0.45)
    for spacing in (None, 0.45):
        got = lc.pin_values(w, a, spacing)
        for k in ("force_N", "moment_Nm", "side_N"):
            assert np.array_equal(got[k], ref[k]), k
        assert got["lug_N"] is None if spacing is None else np.array_equal(got["lug_N"], ref["lug_N"])
    one, ref1 = lc.pin_values(w[5, 4], a, 0.45), _reference(w[5, 4], a, 0.45)     # a single wrench (6,)
    assert all(np.array_equal(one[k], ref1[k]) for k in ref1)


@pytest.fixture(scope="module")
def cases():
    model = ud.load(EXC)
    env = stall_envelopes(model, CYL, 38e6, ("bucket", lc.corner_point(LIP, 0.65)), holding_relief=38e6,
                          footprint=FOOT, n=(3, 3, 3), n_fan=6)
    return model, env


def _same(a, b):
    assert (a.case, a.pins.keys(), a.torsion, a.ring.keys()) == (b.case, b.pins.keys(), b.torsion, b.ring.keys())
    assert a.pins == b.pins and a.note == b.note
    assert [s["name"] for s in a.states] == [s["name"] for s in b.states]
    assert all(np.array_equal(s["force"], t["force"]) for s, t in zip(a.states, b.states))


def test_one_shared_field_gives_the_same_cases(cases):
    model, env = cases
    kw = dict(swing="swing", spacing={"boom_foot": 0.7})
    field = lc.case_field(model, env, PINS, "swing")
    for a, b in zip(lc.corner_tooth_cases(model, env, PINS, torque=T_SWING, **kw),
                    lc.corner_tooth_cases(model, env, PINS, torque=T_SWING, pin_field=field, **kw)):
        _same(a, b)
    _same(lc.swing_stall_case(model, env, PINS, T_SWING, FOOT, **kw),
          lc.swing_stall_case(model, env, PINS, T_SWING, FOOT, pin_field=field, **kw))
    _same(lc.eccentric_tooth_case(model, env, PINS, T_SWING, FOOT, **kw),
          lc.eccentric_tooth_case(model, env, PINS, T_SWING, FOOT, pin_field=field, **kw))
    other = lc.case_field(model, env, {"boom_foot": "boom"}, "swing")
    with pytest.raises(ValueError, match="pin_field is not this case's"):
        lc.eccentric_tooth_case(model, env, PINS, T_SWING, FOOT, pin_field=other, **kw)
