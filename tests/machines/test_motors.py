"""Motor-side sizing (urdf_dyn.machines.motors) against analytic results and Corke's Robotics Toolbox.

Oracles:
- a single horizontal link in a sinusoid q = A sin(ω t): τ_j = I q̈, so with a gear G and a rotor J_m,
  τ_m = (I/G + J_m G) q̈ (η = 1): RMS = (I/G + J_m G) A ω²/√2 over whole periods, peak speed |G| A ω, peak
  power |τ_m ω_m| = (I + J_m G²) A² ω³ / 2; with η < 1 the motoring / back-driven halves by hand;
- roboticstoolbox-python's Puma560 (Corke & Armstrong-Hélouvry 1994, the source of robots/puma560.urdf):
  its RNEA adds the rotor term G² J_m q̈; rne(J_m) − rne(J_m = 0) must equal G (τ_m − τ_j/G) here, and the
  launch file's J_m and the URDF's G must be the toolbox's published values.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from urdf_dyn.machines.motors import (Motor, MotorsSection, drives_from, load_motor_catalogue,
                                          motor_sizing)

from conftest import ROOT
I_ZZ = 0.5 + 2.0 * 0.4 ** 2   # about the joint axis: I_c + m d²


def one_link(G=50.0, Jm=1.0e-4):
    return f"""<robot name="one"><link name="base"/>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
  <link name="arm"><inertial><mass value="2.0"/><origin xyz="0.4 0 0"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.5" iyz="0" izz="0.5"/></inertial></link>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type><joint name="j"/>
    <actuator name="m" xmlns:drake="http://drake.mit.edu"><mechanicalReduction>{G}</mechanicalReduction>
    <drake:rotor_inertia value="{Jm}"/></actuator></transmission></robot>"""


def sinusoid(model, A=0.8, w=2 * math.pi, periods=2, n=4001):
    t = np.linspace(0, periods * 2 * math.pi / w, n)
    q = (A * np.sin(w * t))[:, None]
    qd = (A * w * np.cos(w * t))[:, None]
    qdd = (-A * w ** 2 * np.sin(w * t))[:, None]
    tau = np.array([ud.inverse_dynamics(model, a, b, c) for a, b, c in zip(q, qd, qdd)])
    return t, q, qd, qdd, tau


def section(**motor):
    entry = dict(peak_torque=5.0, max_speed=400.0)
    entry.update(motor)
    return MotorsSection(catalogue={"m": entry}, drives={"j": {"motor": "m"}})


def test_single_link_sinusoid_analytic():
    G, Jm, A, w = 50.0, 1.0e-4, 0.8, 2 * math.pi
    model = ud.load(one_link(G, Jm))
    t, q, qd, qdd, tau = sinusoid(model, A, w)
    # the link and, as Drake reads <drake:rotor_inertia> without <drake:gear_ratio> (ρ = 1), J_m as armature;
    # motor_sizing takes the armature out and models the rotor itself (J_m G q̈ at the motor)
    assert np.allclose(tau[:, 0], (I_ZZ + Jm) * qdd[:, 0], rtol=1e-12, atol=1e-12)
    (drive,) = drives_from(model, section())
    assert (drive.gear_ratio, drive.rotor_inertia) == (G, Jm)  # from the <transmission>
    sz = motor_sizing(model, [drive], t, q, qd, qdd, tau)
    r = sz.rows[0]
    k = I_ZZ / G + Jm * G
    assert np.allclose(sz.torque[:, 0], k * qdd[:, 0], rtol=1e-12, atol=1e-14)
    assert r.rms_torque == pytest.approx(k * A * w ** 2 / math.sqrt(2), rel=1e-6)
    assert r.peak_speed == pytest.approx(G * A * w, rel=1e-6)
    assert r.peak_power == pytest.approx((I_ZZ + Jm * G ** 2) * A ** 2 * w ** 3 / 2, rel=1e-5)
    assert r.reflected_inertia == pytest.approx(G ** 2 * Jm)
    assert r.peak_rotor_torque == pytest.approx(Jm * G * A * w ** 2, rel=1e-6)
    assert r.ok and r.envelope_use == pytest.approx(np.max(np.abs(sz.torque)) / 5.0)


def test_efficiency_motoring_and_back_driven():
    G, eta = -30.0, 0.8
    model = ud.load(one_link(G, 0.0))
    t, q, qd, qdd, tau = sinusoid(model)
    sz = motor_sizing(model, drives_from(model, section(efficiency=eta)), t, q, qd, qdd, tau)
    tj, v = tau[:, 0], qd[:, 0]
    want = np.where(tj * v >= 0, tj / (G * eta), tj * eta / G)
    assert np.allclose(sz.torque[:, 0], want, rtol=1e-12, atol=1e-14)
    # the motor supplies more energy than the load takes when driving, and recovers less when driven
    P, Pj = sz.power[:, 0], tj * v
    assert np.all(P[Pj > 0] >= Pj[Pj > 0] - 1e-12) and np.all(P[Pj < 0] >= Pj[Pj < 0] - 1e-12)
    assert np.allclose(sz.speed[:, 0], G * v)


def test_envelope_and_thermal_flags():
    model = ud.load(one_link(50.0, 1.0e-4))
    t, q, qd, qdd, tau = sinusoid(model)
    peak = float(np.max(np.abs(motor_sizing(model, drives_from(model, section()), t, q, qd, qdd, tau).torque)))
    low = motor_sizing(model, drives_from(model, section(peak_torque=0.5 * peak)), t, q, qd, qdd, tau).rows[0]
    assert not low.ok and low.envelope_use == pytest.approx(2.0, rel=1e-9)
    hot = motor_sizing(model, drives_from(model, section(nominal_torque=0.1 * peak)), t, q, qd, qdd, tau).rows[0]
    assert not hot.ok and hot.thermal_use > 1
    # a falling torque–speed curve: points at high speed run out of torque first
    # (at ω_m = 150 rad/s of 251 the sinusoid still needs 0.8 of its peak torque; the curve gives 0.2)
    curve = section(envelope=[[0, 10 * peak], [100, 10 * peak], [150, 0.2 * peak], [260, 0.2 * peak]],
                    max_speed=260.0)
    r = motor_sizing(model, drives_from(model, curve), t, q, qd, qdd, tau).rows[0]
    assert r.peak_speed < 260 and not r.ok and r.envelope_use > 3
    flat = section(envelope=[[0, 10 * peak], [100, 10 * peak], [150, 0.9 * peak], [260, 0.9 * peak]],
                   max_speed=260.0)
    assert motor_sizing(model, drives_from(model, flat), t, q, qd, qdd, tau).rows[0].ok
    m = Motor(peak_torque=2.0, max_speed=100.0, envelope=[[0, 2.0], [50, 2.0], [100, 1.0]])
    assert np.allclose(m.peak_at([0, 50, 75, 100, 101]), [2.0, 2.0, 1.5, 1.0, 0.0])


def test_catalogue_errors_name_file_and_key(tmp_path):
    f = tmp_path / "cat.yaml"
    f.write_text(yaml.safe_dump({"good": {"peak_torque": 1.0, "max_speed": 10.0},
                                 "bad": {"peak_torque": 1.0, "max_speed": 10.0, "efficiency": 1.5}}))
    with pytest.raises(ud.ScenarioError, match=r"cat\.yaml: bad\.efficiency: "):
        load_motor_catalogue(f)
    f.write_text(yaml.safe_dump({"m": {"peak_torque": 1.0, "max_speed": 10.0, "colour": "red"}}))
    with pytest.raises(ud.ScenarioError, match=r"m\.colour: "):
        load_motor_catalogue(f)
    model = ud.load(one_link())
    with pytest.raises(ud.ScenarioError, match=r"motors\.drives\.nope: no movable joint"):
        drives_from(model, MotorsSection(catalogue={"m": {"peak_torque": 1, "max_speed": 1}},
                                         drives={"nope": {"motor": "m"}}))
    f.write_text(yaml.safe_dump({"m": {"peak_torque": 1.0, "max_speed": 10.0}}))
    with pytest.raises(ud.ScenarioError, match=r"motors\.drives\.j\.motor: 'x' is not in the catalogue"):
        drives_from(model, MotorsSection(catalogue=str(f), drives={"j": {"motor": "x"}}), base_dir=tmp_path)


@pytest.mark.parametrize("motors, message", [
    ({"catalogue": {"m": {"peak_torque": -1, "max_speed": 10}}, "drives": {"joint1": {"motor": "m"}}},
     "motors.catalogue.m.peak_torque"),
    ({"catalogue": {"m": {"peak_torque": 1, "max_speed": 10}}, "drives": {"joint1": {"motor": "typo"}}},
     "motors.drives: joint1.motor 'typo' is not in the catalogue"),
    ({"catalogue": {"m": {"peak_torque": 1, "max_speed": 10}}, "drives": {"joint9": {"motor": "m"}}},
     "motors.drives.joint9: no movable joint"),
])
def test_launch_motors_errors_are_one_line(motors, message, tmp_path, capsys):
    from urdf_dyn.cli.main import main
    src = ROOT / "scenarios" / "puma560_pick.scenario.yaml"
    data = yaml.safe_load(src.read_text())
    data["robot"]["file"] = str((src.parent / data["robot"]["file"]).resolve())
    data["duration"] = 0.05
    data["motors"] = motors
    f = tmp_path / "bad.scenario.yaml"
    f.write_text(yaml.safe_dump(data))
    assert main(["launch", str(f), "--out-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(f) in err and len(err.splitlines()) == 1


def _puma_launch_motors():
    doc = yaml.safe_load((ROOT / "scenarios" / "puma560_pick.scenario.yaml").read_text())
    return MotorsSection.model_validate(doc["motors"])


def test_puma_rotor_term_matches_robotics_toolbox():
    rtb = pytest.importorskip("roboticstoolbox")
    puma = rtb.models.DH.Puma560().nofriction()
    G_rtb = np.array([lk.G for lk in puma.links])
    Jm_rtb = np.array([lk.Jm for lk in puma.links])
    model = ud.load(ROOT / "robots" / "puma560.urdf")
    drives = drives_from(model, _puma_launch_motors())
    # the published numbers: URDF <transmission> G and the launch catalogue's J_m are the toolbox's
    assert np.array_equal([d.gear_ratio for d in drives], G_rtb)
    assert np.array_equal([d.rotor_inertia for d in drives], Jm_rtb)
    rng = np.random.default_rng(560)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    bare = puma.copy()
    for lk in bare.links:
        lk.Jm = 0.0
    want = puma.rne(q, qd, qdd, gravity=[0, 0, 9.81]) - bare.rne(q, qd, qdd, gravity=[0, 0, 9.81])
    tau = ud.inverse_dynamics(model, q, qd, qdd)
    sz = motor_sizing(model, drives, [0.0], q[None], qd[None], qdd[None], tau[None])
    got = G_rtb * (sz.torque[0] - tau / G_rtb)  # the rotor share seen at the joint
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_puma_launch_reports_at_the_motors(tmp_path):
    from urdf_dyn.launch import run_scenario
    lines = []
    traj, written = run_scenario(ROOT / "scenarios" / "puma560_pick.scenario.yaml", out_dir=tmp_path, progress=False,
                               echo=lines.append)
    for key in ("motor_report", "motor_csv", "motor_plot", "motor_torque_plot"):
        assert Path(written[key]).is_file()
    for f in ("motor_operating_points.png", "motor_torques.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rep = (tmp_path / "motor_report.md").read_text()
    assert "| joint1 | puma_motor_1 | -62.6111 | 0.0002 | 0.784 |" in rep
    data = np.genfromtxt(tmp_path / "motor_torques.csv", delimiter=",", skip_header=1)
    model = ud.load(ROOT / "robots" / "puma560.urdf")
    G = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    Jm = np.array([200e-6] * 3 + [33e-6] * 3)
    tau_m = traj.tau / G + Jm * G * traj.qdd   # η = 1: the formula by hand
    assert np.allclose(data[:, 7:13], tau_m, rtol=1e-9, atol=1e-12)
    assert np.allclose(data[:, 1:7], G * traj.qd, rtol=1e-12)
    assert model.nv == 6 and any("puma_motor_2" in s for s in lines)
