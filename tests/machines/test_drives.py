"""Electric-drive sizing (machines/drives.py) against independent computations: the energy balance of a
sprung four-bar along a motion (the drive's shaft work equals the change of kinetic, gravitational and
spring energy when η = 1 and the rotors are weightless), the motor-torque formula by hand with an efficiency
and a rotor, Nabtesco's mean-torque life formula on a constant load, the wrist's load moment and inertia
from the geometry, and located errors for bad drive data."""
import math
import re

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms.force_elements import balancer_lengths
from urdf_dyn.constraints.motion import consistent_motion
from urdf_dyn.errors import ScenarioError
from urdf_dyn.machines.drives import G0, ArmPayload, DriveData, arm_sizing, load_drive_data
from urdf_dyn.reports.drive_report import write_drive_report
from urdf_dyn.simulation.trajectories import spline_motion


def data(joints, ratio=50.0, eff=1.0, Jm=0.0, Jr=0.0, limits=None):
    return DriveData.model_validate({
        "motors": {"m": {"rated_torque": 10.0, "peak_torque": 30.0, "rated_speed": 300.0, "max_speed": 600.0,
                         "rotor_inertia": Jm, "source": "test"}},
        "reducers": {"r": {"ratio": ratio, "efficiency": eff, "input_inertia": Jr, "rated_torque": 100.0,
                           "rated_output_speed": 1.5708, "peak_torque": 250.0, "emergency_stop_torque": 500.0,
                           "source": "test"}},
        "drives": {j: {"motor": "m", "reducer": "r"} for j in joints},
        "payload_limits": limits or {}})


FOUR_BAR_SPRING = ('<balancer name="lift" type="coil_spring" action="push" link_a="base" xyz_a="0.1 0 0.35" '
                   'link_b="rocker" xyz_b="0.3 0 0" rate="400" free_length="0.45" preload="20"/>\n</robot>')
FOUR_BAR_TRANSMISSION = ('<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
                         '<joint name="crank_joint"/><actuator name="m"><mechanicalReduction>50</mechanicalReduction>'
                         '</actuator></transmission>\n')


def test_shaft_work_equals_energy_change():
    text = (ROOT / "robots" / "four_bar.urdf").read_text()
    model = ud.load(re.sub(r"</robot>\s*$", FOUR_BAR_TRANSMISSION + FOUR_BAR_SPRING, text))
    mo = spline_motion(["crank_joint"], [[0.6], [1.9], [1.2]], [0.6, 0.6], dt=1e-3, kind="quintic")
    Q, QD, QDD = consistent_motion(model, mo, progress=False)
    sz = arm_sizing(model, data(["crank_joint"]), mo.t, Q, QD, QDD)
    work = np.trapezoid(sz.motors.power[:, 0], mo.t)
    L = balancer_lengths(model, Q)["lift"]
    x = 0.45 - L
    V_spring = 20 * x + 0.5 * 400 * x ** 2
    E = ud.kinetic_energy(model, Q, QD) + ud.potential_energy(model, Q) + V_spring
    assert abs(E[-1] - E[0]) > 0.5
    assert work == pytest.approx(E[-1] - E[0], rel=1e-5)
    # the balancer's force over the cycle is reported, pushing (compressed)
    Lr, F = sz.balancers["lift"]
    assert np.allclose(F, 20 + 400 * (0.45 - Lr)) and np.allclose(Lr, L)


ONE = """<robot name="one">
  <link name="base"/>
  <link name="arm"><inertial><mass value="3"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.01" iyy="0.3" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-30" upper="30" effort="100" velocity="10"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="1.0 0 0" rpy="0 0 0.3"/></joint>
</robot>"""


def test_motor_torque_by_hand():
    """One joint about the vertical: τ_j = I_zz,O q̈ (no gravity moment). The motor torque is
    τ_j/(N η) + (J_m + J_r) N q̈ while accelerating (driving) and τ_j η/N + (J_m + J_r) N q̈ while braking."""
    model = ud.load(ONE)
    t = np.linspace(0, 1, 201)
    q = 0.5 * np.sin(np.pi * t) ** 2
    qd = 0.5 * np.pi * np.sin(2 * np.pi * t)
    qdd = np.pi ** 2 * np.cos(2 * np.pi * t)
    N, eta, Jm, Jr = 80.0, 0.8, 2e-3, 5e-4
    sz = arm_sizing(model, data(["j"], N, eta, Jm, Jr), t, q[:, None], qd[:, None], qdd[:, None])
    Izz = 0.3 + 3 * 0.5 ** 2
    tau = Izz * qdd
    assert np.allclose(sz.u[:, 0], tau, rtol=1e-12, atol=1e-12)
    drive = tau * qd >= 0
    tm = np.where(drive, tau / (N * eta), tau * eta / N) + (Jm + Jr) * N * qdd
    assert np.allclose(sz.motors.torque[:, 0], tm, rtol=1e-12, atol=1e-12)
    assert np.allclose(sz.motors.speed[:, 0], N * qd)
    r = sz.drives[0]
    rms = math.sqrt(np.trapezoid(tm ** 2, t) / (t[-1] - t[0]))
    assert r.rms_torque == pytest.approx(rms, rel=1e-12) and r.rms_over_rated == pytest.approx(rms / 10.0)
    assert r.peak_over_max == pytest.approx(np.abs(tm).max() / 30.0)
    assert sz.reducers[0].estop_torque == pytest.approx(N * 30.0)


def test_reducer_life_on_a_constant_load():
    """Constant speed and a constant external moment: T_m = |τ|, N_m = |q̇|, L10 = K (N0/N_m)(T0/T_m)^{10/3}."""
    model = ud.load(ONE)
    t = np.linspace(0, 2, 101)
    w = 0.7
    q, qd, qdd = (w * t)[:, None], np.full((101, 1), w), np.zeros((101, 1))
    sz = arm_sizing(model, data(["j"]), t, q, qd, qdd, f_ext={"arm": np.array([0, 0, -60.0, 0, 0, 0])})
    r = sz.reducers[0]
    assert np.allclose(sz.u[:, 0], 60.0)
    assert r.mean_torque == pytest.approx(60.0) and r.mean_speed == pytest.approx(w)
    assert r.life == pytest.approx(6000 * (1.5708 / w) * (100.0 / 60.0) ** (10 / 3), rel=1e-12)
    assert r.mean_over_rated == pytest.approx(0.6) and r.peak_over_rating == pytest.approx(60 / 250)
    assert r.life_use == pytest.approx(6000 / r.life)


def test_wrist_moment_and_inertia_from_geometry():
    """A payload on the tool (1 m out along the arm, turned 0.3 rad): centre of mass at (0.2, 0.1, 0.05) in the
    tool frame, so its distance from the vertical joint axis is |(1, 0) + R(0.3)(0.2, 0.1)|."""
    model = ud.load(ONE)
    Ic = ((1.0, 0.0, 0.0), (0.0, 2.0, 0.0), (0.0, 0.0, 3.0))
    pl = ArmPayload("tool", 40.0, (0.2, 0.1, 0.05), Ic)
    t = np.linspace(0, 1, 11)
    z = np.zeros((11, 1))
    sz = arm_sizing(model, data(["j"], limits={"j": {"moment": 500.0, "inertia": 50.0, "source": "test"}}), t,
                    np.linspace(0, 2, 11)[:, None], z, z, payload=pl)
    c, s = math.cos(0.3), math.sin(0.3)
    d = math.hypot(1.0 + c * 0.2 - s * 0.1, s * 0.2 + c * 0.1)
    w = sz.wrist[0]
    assert w.moment == pytest.approx(40 * G0 * d, rel=1e-12)
    assert w.inertia == pytest.approx(3.0 + 40 * d * d, rel=1e-12)
    assert not sz.ok     # 40 kg at ~1.2 m: 471 N m is within 500, but 60 kg m² is over 50
    assert any("wrist j" in m for m in sz.warnings)


def test_report_files(tmp_path):
    model = ud.load(ONE)
    t = np.linspace(0, 1, 51)
    q = (0.5 * np.sin(np.pi * t) ** 2)[:, None]
    qd = np.gradient(q[:, 0], t)[:, None]
    qdd = np.gradient(qd[:, 0], t)[:, None]
    sz = arm_sizing(model, data(["j"]), t, q, qd, qdd)
    lines = []
    out = write_drive_report(sz, tmp_path, "one", echo=lines.append)
    text = (tmp_path / "drive_report.md").read_text()
    assert "## Motors" in text and "## Reducers" in text and "pressure" not in text and "cylinder" not in text
    assert set(out) == {"drive_csv", "drive_operating_points", "drive_cycle", "drive_report"}
    assert (tmp_path / "drive_operating_points.png").stat().st_size > 10_000
    assert lines and "RMS/rated" in lines[0]


def test_bad_drive_data_is_located(tmp_path):
    model = ud.load(ONE)
    z = np.zeros((3, 1))
    with pytest.raises(ScenarioError, match="no drive for the actuated joint"):
        arm_sizing(model, data(["k"]).model_copy(update={"drives": {}}), np.arange(3.0), z, z, z)
    bad = data(["j"]).model_dump()
    bad["reducers"]["r"]["ratio"] = 0.5
    p = tmp_path / "d.yaml"
    p.write_text(yaml.safe_dump(bad))
    with pytest.raises(ScenarioError, match=r"d.yaml: reducers.r.ratio: .*\|ratio\| ≥ 1"):
        load_drive_data(p)
    bad = data(["j"]).model_dump()
    bad["drives"]["j"]["motor"] = "nope"
    p.write_text(yaml.safe_dump(bad))
    with pytest.raises(ScenarioError, match="drives: .*motor 'nope' is not in motors"):
        load_drive_data(p)


def test_shipped_drive_data_reads():
    d = load_drive_data(ROOT / "robots" / "fanuc_m900ib700" / "m900ib700_drives.yaml")
    assert set(d.drives) == {"joint_1", "joint_2", "pjoint_1", "joint_4", "joint_5", "joint_6"}
    assert all(m.source for m in d.motors.values()) and all(r.source for r in d.reducers.values())
