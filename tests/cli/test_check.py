"""What the CLI says about loops that do not close, loops that duplicate mimics and robots without
transmissions (urdf-dyn check, info, id), run as a user runs it: a subprocess, its exit status, stdout and
stderr."""
import json
import subprocess
import sys

from _robots import ROOT

DATA = ROOT / "tests" / "constraints" / "data"
SIGN = DATA / "parallelogram_sign_error.urdf"
FIX = "closes if predecessor xyz z = -1.12 instead of +1.12"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "urdf_dyn.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_check_reports_each_loop_before_and_after_assembly():
    r = _cli("check", DATA / "parallelogram_loop.urdf")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "assembly holds arm_joint" in out
    assert "loop tie_rod_crank_pin (revolute): crank -> tie_rod" in out
    assert "Fp in crank: xyz (0 0 -1.12) rpy (0 0 0); Fs in tie_rod: xyz (-0.3 0 0) rpy (0 0 0)" in out
    assert "residual at the initial configuration: position 0 m, angle 0 rad" in out
    assert "residual after assembly: position 0 m, angle 0 rad" in out
    j = json.loads(_cli("check", DATA / "parallelogram_loop.urdf", "--json").stdout)
    lp, = j["loops"]
    assert lp["Fp"]["link"] == "crank" and lp["Fs"]["link"] == "tie_rod" and lp["assembled"]["position_m"] < 1e-9


def test_sign_error_is_exit_status_2_with_the_fix_for_check_info_and_id():
    """Today info printed "loop residual there 2.2" and exited 0, and id flipped the crank silently."""
    r = _cli("check", SIGN)
    assert r.returncode == 2
    assert "residual at the initial configuration: position 2.24 m, angle 0 rad" in r.stdout
    err = [ln for ln in r.stderr.splitlines() if ln.startswith("urdf-dyn: error:")]
    assert len(err) == 1 and f"{SIGN}:" in err[0] and '<loop name="tie_rod_crank_pin">' in err[0] and FIX in err[0]
    for cmd in ("info", "id"):
        r = _cli(cmd, SIGN)
        assert r.returncode == 2 and FIX in r.stderr and "open by 2.24 m" in r.stderr, (cmd, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_id_says_why_the_duplicated_loops_force_is_not_reported():
    r = _cli("id", DATA / "parallelogram_both.urdf", "--q", "arm_joint=0.3,rod_joint=-0.3,crank_joint=0.3")
    assert r.returncode == 0, r.stderr
    assert "loop tie_rod_crank_pin duplicates the <mimic> of rod_joint, crank_joint" in r.stderr
    assert "loop tie_rod_crank_pin: undetermined: its rows duplicate the <mimic> of rod_joint, crank_joint" in r.stdout
    assert "wrench" not in r.stdout
    r = _cli("id", DATA / "parallelogram_loop.urdf", "--q", "arm_joint=0.3")
    assert r.returncode == 0 and "properly actuated" in r.stdout and "loop tie_rod_crank_pin: wrench" in r.stdout


def test_no_transmission_names_the_actuators_in_one_line():
    """A mimic file: one warning line; a loop file whose independent="true" joint is the actuator: no warning
    (it holds no surprise), info's actuated line names the passive loop joints."""
    r = _cli("info", DATA / "parallelogram_loop.urdf")
    assert r.returncode == 0 and r.stderr == ""
    assert ("actuated: arm_joint (no <transmission>; not driven: crank_joint (passive joint of loop "
            "tie_rod_crank_pin), rod_joint (passive joint of loop tie_rod_crank_pin))") in r.stdout
    r = _cli("info", DATA / "parallelogram_mimic.urdf")
    assert r.returncode == 0
    said = [ln for ln in r.stderr.splitlines() if "no <transmission>" in ln]
    assert said == [f'warning: {DATA / "parallelogram_mimic.urdf"}:9: <robot name="parallelogram">: no <transmission>: '
                    "the actuators are arm_joint (not driven: mimic followers: rod_joint, crank_joint)"]
    assert ("actuated: arm_joint (no <transmission>; not driven: rod_joint (mimic follower of arm_joint), "
            "crank_joint (mimic follower of arm_joint))\n") in r.stdout
    zero = [ln for ln in r.stderr.splitlines() if 'effort="0"' in ln]
    assert len(zero) == 1 and "arm_joint" in zero[0] and "unknown" in zero[0]
