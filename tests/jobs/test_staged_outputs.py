"""A failed run never overwrites a good one: ``jobs.outputs.run_staged`` writes a job's
outputs into a hidden staging folder and moves them into the output folder only when the job returns."""
from pathlib import Path

import pytest

from urdf_dyn.errors import ScenarioError, SimulationError
from urdf_dyn.jobs.outputs import run_staged
from urdf_dyn.launch.document import Scenario


def _launch(tmp_path):
    return Scenario(tmp_path / "job.scenario.yaml", {})


def _writer(files, fail=None):
    def run(stage, echo):
        written = {}
        for name, text in files.items():
            (stage / name).write_text(text)
            written[name] = str(stage / name)
        echo("wrote: " + ", ".join(written.values()))
        if fail is not None:
            raise fail
        return "result", written
    return run


def test_a_failed_run_leaves_the_good_one_intact(tmp_path):
    out = tmp_path / "out"
    said = []
    res, written = run_staged(_launch(tmp_path), out, said.append, _writer({"lift_chart.png": "good", "a.csv": "1"}))
    assert res == "result" and written == {"lift_chart.png": str(out / "lift_chart.png"), "a.csv": str(out / "a.csv")}
    assert said == [f"wrote: {out / 'lift_chart.png'}, {out / 'a.csv'}"]  # the staging folder is never shown
    with pytest.raises(ScenarioError):
        run_staged(_launch(tmp_path), out, said.append,
                   _writer({"lift_chart.png": "redrawn by a failing run"}, fail=ScenarioError("x: later.key: bad")))
    assert (out / "lift_chart.png").read_text() == "good" and (out / "a.csv").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left behind


def test_a_second_good_run_replaces_the_files_it_writes(tmp_path):
    out = tmp_path / "out"
    run_staged(_launch(tmp_path), out, print, _writer({"a.csv": "1", "b.csv": "old"}))
    run_staged(_launch(tmp_path), out, print, _writer({"a.csv": "2"}))
    assert (out / "a.csv").read_text() == "2" and (out / "b.csv").read_text() == "old"


def test_a_simulation_error_keeps_its_partial_trajectory(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SimulationError, match=str(out)):
        run_staged(_launch(tmp_path), out, print, lambda stage, echo: (
            (stage / "trajectory.npz").write_text("partial"),
            (_ for _ in ()).throw(SimulationError(f"a loop opened (saved to {stage / 'trajectory.npz'})", None)))[1])
    assert (out / "trajectory.npz").read_text() == "partial"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
