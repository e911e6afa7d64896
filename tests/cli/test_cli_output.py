"""What the CLI shows a user: warnings as one line naming the file, line and element (never urdf_dyn's own
source), and the launch-file JSON Schema, checked by an independent validator (jsonschema) against every
launch file we ship."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from _robots import ROOT

TRIANGLE = """<robot name="r">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "urdf_dyn.cli", *args], capture_output=True, text=True, timeout=300)


def test_warning_is_one_line_with_the_input_location(tmp_path):
    f = tmp_path / "tri.urdf"
    f.write_text(TRIANGLE)
    r = _cli("info", str(f))
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"warning: {f}:3: <link name=\"a\">: ") and "triangle inequality" in lines[0]
    assert "urdf_dyn/" not in r.stderr and "ModelWarning" not in r.stderr


def test_debug_keeps_the_full_warning_form(tmp_path):
    f = tmp_path / "tri.urdf"
    f.write_text(TRIANGLE)
    r = _cli("--debug", "info", str(f))
    assert r.returncode == 0 and "ModelWarning" in r.stderr and "triangle inequality" in r.stderr


def test_launch_schema_validates_every_shipped_launch_file():
    jsonschema = pytest.importorskip("jsonschema")
    r = _cli("launch", "--schema")
    assert r.returncode == 0, r.stderr
    schema = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted((ROOT / "scenarios").glob("*.yaml"))
    assert files
    for f in files:
        errors = list(validator.iter_errors(yaml.safe_load(f.read_text())))
        assert not errors, f"{f.name}: {errors[0].message}"
    # and the schema is not vacuous: a misspelt key and a negative tolerance fail it
    doc = yaml.safe_load((ROOT / "scenarios" / "puma560_pick.scenario.yaml").read_text())
    assert list(validator.iter_errors({**doc, "durattion": 1.0}))
    assert list(validator.iter_errors({**doc, "solver": {"rtol": -1.0}}))
