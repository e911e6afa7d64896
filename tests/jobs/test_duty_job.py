"""The main job's duty mix (design.duty of scenarios/excavator_dig.scenario.yaml, jobs.sizing_duty): every
activity is counted hours × cycles per hour times; the stiff-clay activity is a recomputed cut, not a scaled
copy of the clay one; a welded detail's damage is Miner's sum over the stress spectrum k·|F|; bad duty input is
refused naming its key."""
import numpy as np
import pytest
import yaml
from test_excavator_job import launch_data

from urdf_dyn.errors import ScenarioError


def _plan(tmp_path, data):
    from urdf_dyn.jobs.sizing_design import design_pins
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.launch import read_scenario, validate
    f = tmp_path / "dig.yaml"
    f.write_text(yaml.safe_dump(data))
    sc = read_scenario(f)
    validate(sc, SizeDocument)
    plan = SizingPlan.from_scenario(sc)
    return sc, plan, design_pins(sc, plan.model)[0]


def _duty(sc, plan, pins):
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.jobs.sizing_duty import run_duty
    Q, QD, QDD = consistent_motion(plan.model, plan.motion)
    f_ext, _ = plan.kind.loads(plan, Q, QD, QDD)
    return run_duty(plan, (plan.t, Q, QD, QDD, f_ext), pins, sc.doc.design.fatigue)


@pytest.fixture(scope="module")
def duty(tmp_path_factory):
    data = launch_data()
    data["design"]["duty"]["details"] = {"foot_lug": {"pin": "boom_foot", "stress_per_N": 2.5e2, "fat": 71e6}}
    sc, plan, pins = _plan(tmp_path_factory.mktemp("duty"), data)
    return data, _duty(sc, plan, pins)


def test_every_activity_is_counted_hours_times_cycles_per_hour(duty):
    data, d = duty
    spec = data["design"]["duty"]["activities"]
    assert set(d.activities) == set(spec)
    for a, r in d.activities.items():
        cph = spec[a].get("cycles_per_hour", 3600.0 / r.cycle_time)
        assert r.repetitions == pytest.approx(spec[a]["hours"] * cph, rel=1e-12)
        for n, s in d.spectra.items():
            ranges, counts = s.by_activity[a]
            per_rep = sum(c for _, c in __import__("rainflow").count_cycles(
                np.r_[np.roll(r.force[n], -int(np.argmax(r.force[n]))), r.force[n].max()]))
            assert counts.sum() == pytest.approx(per_rep * r.repetitions, rel=1e-12)
    assert d.life_hours == pytest.approx(sum(v["hours"] for v in spec.values()))
    assert d.activities["lifting"].cycles_per_hour == 12 and d.activities["lifting"].payload_kg == 2500


def test_stiff_clay_is_a_recomputed_cut_not_a_scaled_copy(duty):
    """Same motion, other soil: the boom foot's force ratio stiff / clay is not one number over the cycle, and
    outside the cutting phases (the same swing, the same payload released) the two agree only where no soil
    acts on either."""
    _, d = duty
    a, b = d.activities["dig_clay"].force["boom_foot"], d.activities["dig_stiff_clay"].force["boom_foot"]
    ratio = b / a
    assert np.ptp(ratio) > 0.2
    assert "stiff_clay" in d.activities["dig_stiff_clay"].soil


def test_weld_detail_damage_is_miners_sum_on_the_stress_spectrum(duty):
    from urdf_dyn.machines.fatigue import EN1993, Spectrum, miner_damage
    _, d = duty
    x = d.details["foot_lug"]
    s = d.spectra["boom_foot"]
    ref = miner_damage(Spectrum(2.5e2 * s.ranges, s.counts, {}), EN1993(71e6), 1.0, 1.15)
    assert x["damage"] == pytest.approx(ref, rel=1e-12) and x["damage"] > 0


@pytest.mark.parametrize("change, key", [
    (lambda du: du["activities"]["lifting"].update(cycles_per_hour=200), "activities.lifting.cycles_per_hour"),
    (lambda du: du["bushings"].update(nowhere={"diameter": 0.1, "length": 0.1}), "bushings.nowhere"),
    (lambda du: du["activities"]["trenching"]["waypoints"][0].update(boom=0.1), "waypoints[0].boom"),
    (lambda du: du["activities"]["trenching"]["soil"].update(ground=-9.0), "trenching.soil.ground"),
    (lambda du: du["activities"]["lifting"]["payload"].update(during="hoist"), "lifting.payload.during"),
    (lambda du: du.update(details={"lug": {"pin": "nowhere", "stress_per_N": 1.0, "fat": 71e6}}), "details.lug.pin"),
])
def test_bad_duty_input_names_its_key(tmp_path, change, key):
    """Names and keys are refused with the plan, before any work; the ground never reached, at the run."""
    data = launch_data()
    change(data["design"]["duty"])
    with pytest.raises(ScenarioError, match=key.replace("[", r"\[").replace("]", r"\]")):
        _duty(*_plan(tmp_path, data))


@pytest.mark.parametrize("change, words", [
    (lambda du: du["activities"]["dig_clay"].update(durations=[1.0]), "not both"),
    (lambda du: du["activities"]["trenching"].update(phases=["dig"]), "one per segment"),
    (lambda du: du["activities"]["lifting"]["payload"].update(mass=-5), "payload.mass: must be > 0"),
])
def test_bad_duty_schema_is_refused(tmp_path, change, words):
    data = launch_data()
    change(data["design"]["duty"])
    with pytest.raises(ScenarioError, match=words):
        _plan(tmp_path, data)


def test_life_cycles_beside_a_duty_mix_is_refused(tmp_path):
    """The duty mix's hours set the life: a life_cycles given beside it is a contradiction, named."""
    from urdf_dyn.jobs.sizing_design import _duty
    data = launch_data()
    data["design"]["fatigue"]["life_cycles"] = 1.7e6
    sc, plan, pins = _plan(tmp_path, data)
    with pytest.raises(ScenarioError, match="design.fatigue.life_cycles: the duty mix"):
        _duty(sc, plan, pins, None, sc.doc.design, None, [])
