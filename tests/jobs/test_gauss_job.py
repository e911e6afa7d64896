"""The gauss scenario job (jobs/gauss_job.py): it writes the paper's figures, agrees with the tree + <loop>
model, and names the key of every bad input."""
import numpy as np
import pytest
import yaml

pytest.importorskip("sympy")

from _robots import ROOT  # noqa: E402
from urdf_dyn.errors import ScenarioError  # noqa: E402
from urdf_dyn.launch import run_scenario  # noqa: E402

LAUNCH = ROOT / "scenarios" / "crank_slider_gauss.scenario.yaml"


def _launch_copy(tmp_path, **gauss_changes):
    data = yaml.safe_load(LAUNCH.read_text())
    data["robot"]["file"] = str((LAUNCH.parent / data["robot"]["file"]).resolve())
    data["duration"] = 1.0
    data["gauss"].update(gauss_changes)
    f = tmp_path / LAUNCH.name
    f.write_text(yaml.safe_dump(data, allow_unicode=True))
    return f


def test_launch_job_writes_the_papers_figures_and_agrees_with_the_tree(tmp_path):
    f = _launch_copy(tmp_path, compare_paper16=0.3)
    lines = []
    tr, written = run_scenario(f, out_dir=tmp_path / "out", progress=False, echo=lines.append)
    text = "\n".join(map(str, lines))
    for k in range(2, 10):
        name = next(v for key, v in written.items() if key.startswith(f"fig{k}_"))
        assert open(name, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    for key in ("overview", "diagnostics", "paper16", "report", "gauss_trajectory.csv", "tree_trajectory"):
        assert key in written
    assert "eq. (16) gives" in text and "descriptor (Gauss) vs tree + loop" in text
    report = (tmp_path / "out" / "gauss_report.md").read_text()
    assert "4.26×" in report
    back = np.load(tmp_path / "out" / "gauss_trajectory.npz")
    assert np.array_equal(back["q"], tr.q) and back["q"].shape == (101, 7)
    tree = np.load(tmp_path / "out" / "tree_trajectory.npz")
    assert np.max(np.abs(tree["q"][:, 0] - tr.coordinate("crank.theta"))) <= 1e-6


@pytest.mark.parametrize("changes, match", [
    (dict(colour="red"), "gauss.colour: unknown key"),
    (dict(q0=[0, 0, 0]), "gauss.q0: expected a list of 7"),
    (dict(q0=[0.1, 0, 0, 0.43, 0, 0, 0.71]), "gauss.q0: not an assembled configuration"),
    (dict(mechanism="four_bar"), "gauss.mechanism: unknown mechanism"),
    (dict(parameters={"m4": 1.0}), "gauss.parameters.m4: unknown parameter"),
    (dict(parameters={"m1": -1.0}), "gauss.parameters.m1: must be > 0"),
    (dict(accelerations="fast"), "gauss.accelerations: unknown method"),
    (dict(compare_tree="yes"), "gauss.compare_tree: expected true or false"),
])
def test_launch_job_errors_name_the_key(tmp_path, changes, match):
    with pytest.raises(ScenarioError, match=match):
        run_scenario(_launch_copy(tmp_path, **changes), out_dir=tmp_path / "out", progress=False, echo=lambda *a: None)


def test_launch_job_refuses_sections_it_would_ignore(tmp_path):
    f = _launch_copy(tmp_path)
    data = yaml.safe_load(f.read_text())
    data["controller"] = {"type": "constant", "tau": {"crank": 0.5}}
    f.write_text(yaml.safe_dump(data, allow_unicode=True))
    with pytest.raises(ScenarioError, match="controller: unknown key for job: gauss"):
        run_scenario(f, out_dir=tmp_path / "out", progress=False, echo=lambda *a: None)
