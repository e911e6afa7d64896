"""The calibration's budget holds: every model evaluation — the search's, the finite-difference Jacobian's, and
the two at full resolution — counts against ``max_evaluations``; past it the search stops with the best point
found and says so. Bad options and bounds are named; a start whose figures are not finite is refused before
any search.

The model is replaced by an analytic one (a figure linear in two parameters) that counts its calls: the
oracle for the count is the call counter, for the optimum the linear algebra. scipy's own ``max_nfev`` is
shown not to count the Jacobian's evaluations (what the budget guards against)."""
import numpy as np
import pytest

import urdf_dyn.machines.calibration as cal
from _robots import ROOT
from urdf_dyn.machines.pin_table import load_pin_table

PINS = ROOT / "robots" / "excavator_pins.yaml"
P = ["front.x", "front.z"]
KEY = "iso6015.arm_digging_force_N"
TARGET = {KEY: 1.0e5, "working_range.max_digging_depth_m": 6.0}


@pytest.fixture
def model(monkeypatch):
    """An analytic stand-in for the model: each figure linear in the front's move; counts its calls. The
    stand-in has no linkage to limit: the table's mechanism limits are opened wide, so that the optimum is
    the linear algebra's."""
    from urdf_dyn.machines.pin_table import MechanismLimits
    table = load_pin_table(PINS)
    table = table.model_copy(update={"limits": MechanismLimits(
        boom_transmission_angle_min=0.0, boom_lever_min=0.0, stick_lever_ratio_min=0.0, bucket_link_angle_min=0.0,
        bucket_rotation=(0.0, 360.0), stroke_ratio_max=10.0, clearance_min=-10.0)})
    foot = np.array(table.pin("boom_foot"), float)
    calls = []

    def evaluate(t, checks, keys=None, resolution="full"):
        calls.append(resolution)
        dx, dz = np.array(t.pin("boom_foot"), float) - foot
        v = {KEY: 1.0e5 * (1 + 0.5 * dx - 0.2 * dz + 0.05), "working_range.max_digging_depth_m": 6.0 * (1 + dz + 0.02)}
        return {k: v[k] for k in (keys or v)}
    monkeypatch.setattr(cal, "evaluate", evaluate)
    return table, calls


def test_the_budget_counts_every_evaluation_and_keeps_the_best_point(model):
    table, calls = model
    out = cal.calibrate(table, TARGET, P, {p: (-0.5, 0.5) for p in P}, checks=None, max_evaluations=3)
    assert len(calls) == 3 == out.evaluations                       # the start, before, after
    assert "stopped at the budget of 3 evaluations" in out.message
    calls.clear()
    out = cal.calibrate(table, TARGET, P, {p: (-0.5, 0.5) for p in P}, checks=None, max_evaluations=9)
    assert len(calls) == out.evaluations <= 9 and out.message
    assert calls.count("fast") <= 7
    calls.clear()
    out = cal.calibrate(table, TARGET, P, {p: (-0.5, 0.5) for p in P}, checks=None, max_evaluations=200,
                        regularization=0.0)
    assert out.message == "" and len(calls) == out.evaluations < 200
    # the linear oracle: both residuals vanish at dz = -0.02, 0.5 dx - 0.2 dz + 0.05 = 0
    dz = -0.02
    dx = (-0.05 + 0.2 * dz) / 0.5
    assert out.parameters["front.z"] == pytest.approx(dz, abs=1e-4)
    assert out.parameters["front.x"] == pytest.approx(dx, abs=1e-4)


def test_scipy_max_nfev_alone_does_not_count_the_jacobian():
    import scipy.optimize
    n = [0]

    def f(x):
        n[0] += 1
        return np.array([x[0] - 1.0, x[1] + 2.0, x[0] * x[1]])
    scipy.optimize.least_squares(f, np.ones(2), max_nfev=3, method="trf")
    assert n[0] > 3


def test_bad_options_and_bounds_are_named(model, tmp_path):
    table, calls = model
    for bad in (0, 2, 2.5, True, "10"):
        with pytest.raises(ValueError, match=f"max_evaluations {bad!r}: expected a whole number >= 3"):
            cal.calibrate(table, TARGET, P, {p: (-0.5, 0.5) for p in P}, checks=None, max_evaluations=bad)
    with pytest.raises(ValueError, match=r"parameter front.z: bounds 0.1:0.2 m must be finite and contain 0"):
        cal.calibrate(table, TARGET, P, {"front.x": (-0.5, 0.5), "front.z": (0.1, 0.2)}, checks=None)
    with pytest.raises(ValueError, match=r"parameter front.x: bounds -inf:0.5"):
        cal.calibrate(table, TARGET, P, {"front.x": (-np.inf, 0.5), "front.z": (-0.1, 0.2)}, checks=None)
    with pytest.raises(KeyError, match="parameter 'front.z': no bounds given"):
        cal.calibrate(table, TARGET, P, {"front.x": (-0.5, 0.5)}, checks=None)
    with pytest.raises(ValueError, match="target iso6015.arm_digging_force_N: 0.0"):
        cal.calibrate(table, {KEY: 0.0}, P, {p: (-0.5, 0.5) for p in P}, checks=None)
    assert calls == []
    from urdf_dyn.cli.main import main
    scen = ROOT / "scenarios" / "excavator_dig.scenario.yaml"
    import sys
    from io import StringIO
    err, sys.stderr = sys.stderr, StringIO()
    try:
        assert main(["excavator", str(PINS), "--calibrate", str(scen), "--max-evaluations", "0",
                     "-o", str(tmp_path / "x.yaml")]) == 2
        text = sys.stderr.getvalue().strip().splitlines()
    finally:
        sys.stderr = err
    assert len(text) == 1 and "--max-evaluations 0: expected a whole number >= 3" in text[0]
    assert not (tmp_path / "x.yaml").exists()


def test_a_start_whose_figures_are_not_finite_is_refused_before_the_search(model, monkeypatch):
    table, calls = model

    def nan(t, checks, keys=None, resolution="full"):
        calls.append(resolution)
        return {k: float("nan") for k in keys}
    monkeypatch.setattr(cal, "evaluate", nan)
    with pytest.raises(ValueError, match=r"the starting table's figures iso6015.arm_digging_force_N, working_range"):
        cal.calibrate(table, TARGET, P, {p: (-0.5, 0.5) for p in P}, checks=None)
    assert calls == ["fast"]
