"""What the stall computation reuses equals what it would compute afresh: a pose of a shared stroke map does
not depend on the poses assembled before it (to the bit), the search's starts solved side by side reach what
each reaches alone (to round-off: the compiled statics choose their independent coordinates from the first
pose of a call), the sliding envelopes built on the anchored ones' statics equal envelopes built from
scratch and the remembered pin and ring maps give the per-cylinder cases a copy of the envelopes would (to
the bit). The oracle in each test is the same computation done the plain way."""
from dataclasses import replace

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.machines.stability import tipping_polygon
from urdf_dyn.machines.stall import stall_envelopes, stroke_map, stroke_range

EXC = ROOT / "robots" / "excavator.urdf"
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
LIP = ("bucket", (1.368, 0.0, 0.172))
LINE = {"boom_cyl": {"head": 41e6, "rod": 38e6}, "stick_cyl": {"head": 38e6, "rod": 41e6},
        "bucket_cyl": {"head": 38e6, "rod": 38e6}}
PINS = {"boom_foot": "boom", "bucket_pivot": "bucket", "stick_nose": "stick"}
FOOT = tipping_polygon(3.65, 2.38)


@pytest.fixture(scope="module")
def model():
    return ud.load(EXC)


def _statics(env, rows=slice(None)):
    return [env.Q[rows], env.U[rows], env.u_g[rows], env.W0[rows], env.W1[rows], env.lip[rows]] + \
        [np.asarray(env.loop_forces[k][lp])[rows] for k in ("g", 0, 1, 2) for lp in env.loop_forces["g"]]


def test_a_pose_does_not_depend_on_the_poses_assembled_before_it(model):
    """Random strokes evaluated through one stroke map as a batch of 40, then 4 of them again alone, and the
    same 4 through a fresh map first: the poses are bitwise the same (a stroke value is closed once; closing it
    again would move it by round-off), the statics and pin maps the same to 1e-9 of their scale (the compiled
    statics pick their independent coordinates from a call's first pose)."""
    lo, hi = (np.array(v) for v in zip(*stroke_range(model).values()))
    X = lo + np.random.default_rng(3).random((40, 3)) * (hi - lo)
    kw = dict(holding_relief=LINE, footprint=FOOT, fan_deg=[0.0], corners=False)
    shared = stroke_map(model)
    big = stall_envelopes(model, CYL, 38e6, LIP, points=X, smap=shared, **kw)
    again = stall_envelopes(model, CYL, 38e6, LIP, points=X[8:12], smap=shared, **kw)
    alone = stall_envelopes(model, CYL, 38e6, LIP, points=X[8:12], smap=stroke_map(model), **kw)
    assert np.array_equal(big.Q[8:12], again.Q) and np.array_equal(big.Q[8:12], alone.Q)
    for a, b, c in zip(_statics(big, slice(8, 12)), _statics(again), _statics(alone)):
        assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max() and np.abs(a - c).max() <= 1e-9 * np.abs(a).max()
    for a, b in zip(big.pin_maps(model, PINS)[1:], again.pin_maps(model, PINS)[1:]):
        assert np.abs(a[8:12] - b).max() <= 1e-9 * np.abs(a).max()


def test_side_by_side_starts_reach_what_each_reaches_alone(model, monkeypatch):
    """The search with its starts solved side by side (one batched evaluation per round of iterates) and with
    each start solved on its own, one after another: the same design loads (to 1e-9: SLSQP's iterates carry
    the statics' round-off; a state on a flat ridge may move along it)."""
    from urdf_dyn.machines import stall_refine
    kw = dict(holding_relief=LINE, footprint=FOOT, n=(4, 4, 4), n_fan=12)
    side = stall_refine.converged_design_loads(model, CYL, 38e6, LIP, PINS, **kw)
    batches = stall_refine._Batches

    class OneByOne(batches):
        def solve(self, runs, *a):
            return np.concatenate([batches(self.evaluate).solve([r], *a) for r in runs])

    monkeypatch.setattr(stall_refine, "_Batches", OneByOne)
    alone = stall_refine.converged_design_loads(model, CYL, 38e6, LIP, PINS, **kw)
    assert sum(h["starts"] for p in PINS for h in side.history[p][1:-1]) >= len(PINS)   # the search did run
    for p in PINS:
        assert side.loads[p]["design_load_N"] == pytest.approx(alone.loads[p]["design_load_N"], rel=1e-9), p
        assert side.loads[p]["design_load_N"] > side.grid_loads[p]["design_load_N"], p      # the search moved


def test_a_failing_evaluation_stops_every_start(model):
    """An error in the batched evaluation reaches the caller (not a hang, not a thread's traceback)."""
    from urdf_dyn.machines import stall_refine

    def broken(X, working):
        raise RuntimeError("no statics here")

    runs = [dict(pin="boom_foot", cylinder="stick_cyl", rows=np.array([0, 1]), x=np.zeros(3), v=1.0)] * 3
    with pytest.raises(RuntimeError, match="no statics here"):
        stall_refine._Batches(broken).solve(runs, ["boom_foot"], -np.ones(3), np.ones(3), np.array([1.0, 0, 0]))


def test_sliding_envelopes_like_the_anchored_ones_equal_fresh_ones(model):
    """``stall_envelopes(..., like=anchored)`` reuses the anchored grid's statics: every held force, corner,
    design load and ring load equals the sliding envelopes computed from scratch; other strokes or a slim copy
    cannot lend theirs."""
    kw = dict(holding_relief=LINE, footprint=FOOT, n=(4, 4, 4), n_fan=12)
    anch = stall_envelopes(model, CYL, 38e6, LIP, **kw)
    anch.pin_maps(model, PINS)                                       # remembered, then shared
    like = stall_envelopes(model, CYL, 38e6, LIP, friction=0.5, like=anch, **kw)
    fresh = stall_envelopes(model, CYL, 38e6, LIP, friction=0.5, **kw)
    for c in fresh.working:
        for kind in ("fan", "tangent", "corner"):
            for k, v in getattr(fresh, kind)[c].items():
                assert np.array_equal(np.asarray(getattr(like, kind)[c][k]), np.asarray(v)), (c, kind, k)
    assert _same(like.design_loads(model, PINS), fresh.design_loads(model, PINS))
    assert _same(like.ring_loads(model), fresh.ring_loads(model))
    assert np.array_equal(like._push(), fresh._push())
    with pytest.raises(ValueError, match="like"):
        stall_envelopes(model, CYL, 38e6, LIP, friction=0.5, like=anch.slim(), **kw)
    with pytest.raises(ValueError, match="like"):
        stall_envelopes(model, CYL, 38e6, LIP, friction=0.5, like=anch, strokes=("stick_cyl", "boom_cyl", "bucket_cyl"),
                        **kw)


def test_one_cylinder_of_the_remembered_maps_is_that_cylinder_s_copy(model):
    """The case matrix's per-cylinder rows (``design_loads`` / ``ring_loads`` with ``working=(c,)`` on the
    envelopes' remembered maps) equal those of a copy of the envelopes with that cylinder alone; a field set
    anew (the corners dropped) is seen, not answered from the memo."""
    env = stall_envelopes(model, CYL, 38e6, LIP, holding_relief=LINE, footprint=FOOT, n=(4, 4, 4), n_fan=12)
    env.design_loads(model, PINS), env.ring_loads(model)             # the memo filled for every cylinder
    for c in env.working:
        one = replace(env, working=(c,))
        assert _same(env.design_loads(model, PINS, working=(c,)), one.design_loads(model, PINS))
        assert _same(env.ring_loads(model, working=(c,)), one.ring_loads(model))
    with_corners = env.design_loads(model, PINS)
    env.corner = {}
    without = env.design_loads(model, PINS)
    assert all(without[p]["design_case"]["direction"] != "corner" for p in PINS)
    assert any(with_corners[p]["design_case"]["direction"] == "corner" for p in PINS)


def _same(a, b):
    """Equal to the last bit: dicts, lists and arrays compared element by element."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b
