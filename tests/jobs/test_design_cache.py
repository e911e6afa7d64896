"""The buckling check, the shortest cycle and the duty mix kept by the run's ``GeometryCache``
(``jobs.sizing_design.CACHED_KEYS``): a second run serves them from the cache and they are the results computed
with no cache at all (the oracle); a changed input (a duty key, a cylinder's tube, the main cycle's loads)
computes again those that read it and only those."""
import numpy as np
import pytest
from test_duty_job import _plan
from test_excavator_job import launch_data

from urdf_dyn.jobs.geometry_cache import GeometryCache


def _design(sc, plan, run, cache=None):
    """run_design of the sized cycle ``run`` (the first scenario's SizingRun) for the scenario ``sc``."""
    from urdf_dyn.jobs.sizing_design import run_design
    return run_design(sc, plan.model, run.t, run.q, run.qd, run.qdd, run.f_ext, run.actuation, run.power,
                      plan.cylinders, reachable={"boom_cyl": 1.0e6, "stick_cyl": 8.0e5}, plan=plan, cache=cache)


@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    from urdf_dyn.jobs.sizing_run import compute
    sc, plan, _ = _plan(tmp_path_factory.mktemp("cache"), launch_data())
    run = compute(plan)
    return sc, plan, run, _design(sc, plan, run)            # the oracle: no cache


def _same_duty(a, b):
    assert list(a.activities) == list(b.activities) and a.notes == b.notes
    for n in a.spectra:
        assert np.array_equal(a.spectra[n].ranges, b.spectra[n].ranges)
        assert np.array_equal(a.spectra[n].counts, b.spectra[n].counts)
    for k in a.activities:
        assert a.activities[k].repetitions == b.activities[k].repetitions
        for n, f in a.activities[k].force.items():
            assert np.array_equal(f, b.activities[k].force[n])


def _same_cycle(a, b):
    assert a.total == b.total and np.array_equal(a.durations, b.durations) and a.binding == b.binding


def _same_buckling(a, b):
    assert list(a) == list(b)
    for n in a:
        assert np.array_equal(a[n].safety, b[n].safety) and np.array_equal(a[n].critical, b[n].critical)
        assert a[n].reachable == b[n].reachable


def test_a_second_run_serves_buckling_and_duty_from_the_cache(sized):
    sc, plan, run, fresh = sized
    assert fresh.duty is not None and len(fresh.buckling) == 3
    cache = GeometryCache(memory=True, disk=False)           # a sweep worker's
    first = _design(sc, plan, run, cache)
    assert cache.stats() == {"hits": 0, "misses": 3, "entries": 3}
    second = _design(sc, plan, run, cache)
    assert cache.stats() == {"hits": 3, "misses": 3, "entries": 3}
    for d in (first, second):
        _same_duty(d.duty, fresh.duty)
        _same_cycle(d.cycle, fresh.cycle)
        _same_buckling(d.buckling, fresh.buckling)
        assert d.damage == fresh.damage
    assert second.duty is not first.duty                     # each case its own copy


@pytest.mark.parametrize("change, recomputed, served", [
    (lambda d: d["design"]["duty"]["activities"]["lifting"].update(hours=d["design"]["duty"]["activities"]
                                                                   ["lifting"]["hours"] * 2), "duty", 2),
    (lambda d: d["actuators"]["cylinders"]["stick_cyl"].update(tube_outer=0.18), "buckling", 1),  # and the cycle
])
def test_a_changed_input_is_computed_again(sized, tmp_path, change, recomputed, served):
    sc, plan, run, fresh = sized
    cache = GeometryCache(memory=True, disk=False)
    _design(sc, plan, run, cache)
    data = launch_data()
    change(data)
    sc2, plan2, _ = _plan(tmp_path, data)
    changed = _design(sc2, plan2, run, cache)
    assert cache.stats() == {"hits": served, "misses": 6 - served, "entries": 6 - served}   # the others served
    oracle = _design(sc2, plan2, run)
    _same_duty(changed.duty, oracle.duty)
    _same_cycle(changed.cycle, oracle.cycle)
    _same_buckling(changed.buckling, oracle.buckling)
    if recomputed == "duty":
        assert changed.duty.life_hours > fresh.duty.life_hours
    else:
        assert changed.buckling["stick_cyl"].safety.min() != fresh.buckling["stick_cyl"].safety.min()


def test_a_changed_main_cycle_computes_the_duty_and_the_shortest_cycle_again(sized):
    """The duty mix re-runs the main cycle (``motion: main``) and the shortest cycle carries its loads: their
    keys hold the cycle's content; the buckling check does not read it."""
    sc, plan, run, _ = sized
    cache = GeometryCache(memory=True, disk=False)
    _design(sc, plan, run, cache)
    bumped = type("Run", (), {k: getattr(run, k) for k in ("t", "q", "qd", "qdd", "actuation", "power")})()
    bumped.f_ext = {k: v * 1.01 for k, v in run.f_ext.items()}
    bumped_design = _design(sc, plan, bumped, cache)
    assert cache.stats() == {"hits": 1, "misses": 5, "entries": 5}
    _same_cycle(bumped_design.cycle, _design(sc, plan, bumped).cycle)
