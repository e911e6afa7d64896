"""Motor-side sizing of an arm: joint motion and torques taken through each joint's gear to its motor.

For a joint driven by a motor through a reduction G (motor turns per joint turn, signed as in ROS
``<mechanicalReduction>``) with gear efficiency η and rotor inertia J_m about the motor axis:

    ω_m = G q̇,   α_m = G q̈                                    (motor speed, acceleration)
    τ_m = τ_j / (G η)   when the motor drives the load (τ_j q̇ ≥ 0)
        = τ_j η / G     when the load back-drives it (τ_j q̇ < 0)
        + J_m G q̈                                             (the rotor's own inertia)
    P_m = τ_m ω_m                                             (motor shaft power)
    τ_rms = sqrt(∫ τ_m² dt / T)                                (thermal / continuous torque)

Seen from the joint, the rotor term is the reflected inertia G² J_m q̈ (e.g. Corke's Robotics Toolbox adds
G² J_m q̈ to RNEA; Craig, *Introduction to Robotics*, §6.9 "reflected inertia"). Gear and motor friction are
not modelled. Each operating point (|ω_m|, |τ_m|) is checked against the motor's peak torque–speed envelope
(a datasheet curve, or the rectangle peak_torque × max_speed), τ_rms against the nominal torque.

A catalogue is YAML, a mapping {motor name: entry} validated by ``Motor``::

    puma_j1:
      rotor_inertia: 200.0e-6     # kg m², about the motor axis
      peak_torque: 1.56           # N m at the motor shaft
      max_speed: 120.2            # rad/s
      nominal_torque: 0.6         # N m continuous (optional)
      torque_constant: 0.223      # N m / A (optional: currents are reported)
      efficiency: 0.9             # gear efficiency, (0, 1]; default 1
      envelope: [[0, 1.56], [100, 1.56], [120.2, 0.9]]   # optional peak curve: (rad/s, N m) points
      source: "where the numbers come from"

``urdf_dyn.jobs.simulate_job`` calls ``run_motor_report`` when a launch file has a ``motors:``
section (``MotorsSection``): the drives name a catalogue motor per joint; the gear ratio defaults to the
joint's ``<transmission>`` reduction, the rotor inertia to the catalogue's, else the transmission's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from urdf_dyn.errors import ScenarioError

__all__ = ["Motor", "DriveSpec", "MotorsSection", "Drive", "MotorRow", "MotorSizing", "load_motor_catalogue",
           "drives_from", "motor_sizing", "format_motor_table"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)     # no float of a drive is inf or nan


def _finite(v):
    if v is not None and not math.isfinite(v):
        raise ValueError("must be finite")
    return v


class Motor(_Strict):
    """One catalogue entry (SI units at the motor shaft)."""
    rotor_inertia: Optional[float] = Field(None, ge=0, description="[kg m²] about the motor axis")
    peak_torque: float = Field(gt=0, description="[N m] short-time maximum")
    max_speed: float = Field(gt=0, description="[rad/s]")
    nominal_torque: Optional[float] = Field(None, gt=0, description="[N m] continuous (thermal) rating")
    torque_constant: Optional[float] = Field(None, gt=0, description="[N m / A]")
    # η in [0.1, 1]: gearboxes run at 0.5 (worm) to 0.98 (planetary); below 10 % the figure is a slip
    efficiency: float = Field(1.0, ge=0.1, le=1, description="gear efficiency η")
    envelope: Optional[list[tuple[float, float]]] = Field(
        None, min_length=2, description="peak torque–speed curve: (speed [rad/s], torque [N m]) points")
    source: str = ""

    _check = field_validator("rotor_inertia", "peak_torque", "max_speed", "nominal_torque",
                             "torque_constant")(_finite)

    @field_validator("envelope")
    @classmethod
    def _envelope(cls, v):
        if v is not None:
            w = [p[0] for p in v]
            if any(not (math.isfinite(a) and math.isfinite(b) and a >= 0 and b >= 0) for a, b in v):
                raise ValueError("points must be finite and non-negative")
            if any(b <= a for a, b in zip(w, w[1:])):
                raise ValueError("speeds must increase")
        return v

    def peak_at(self, speed):
        """Peak torque [N m] available at |speed| [rad/s] (0 beyond max_speed)."""
        s = np.abs(np.asarray(speed, float))
        if self.envelope is None:
            return np.where(s <= self.max_speed, self.peak_torque, 0.0)
        w, t = np.array(self.envelope, float).T
        return np.where(s <= min(self.max_speed, w[-1]), np.interp(s, w, t), 0.0)


class DriveSpec(_Strict):
    """A joint's drive in a launch file: the catalogue motor, and optionally the gear ratio (default: the
    joint's ``<transmission>`` reduction) and the rotor inertia (default: the catalogue's)."""
    motor: str
    gear_ratio: Optional[float] = Field(None, description="motor turns per joint turn (signed)")
    rotor_inertia: Optional[float] = Field(None, ge=0, description="[kg m²]")

    _check = field_validator("gear_ratio", "rotor_inertia")(_finite)


class MotorsSection(_Strict):
    """``motors:`` of a launch file: a catalogue (inline mapping or YAML path relative to the launch
    file), one drive per joint, and the output names."""
    catalogue: Union[str, dict[str, Motor]]
    drives: dict[str, DriveSpec] = Field(min_length=1)
    report: str = "motor_report.md"
    csv: str = "motor_torques.csv"
    plot: str = "motor_operating_points.png"
    torque_plot: str = "motor_torques.png"

    @field_validator("drives")
    @classmethod
    def _motors_exist(cls, drives, info):
        cat = info.data.get("catalogue")
        if isinstance(cat, dict):  # a catalogue file is checked when it is read
            for joint, d in drives.items():
                if d.motor not in cat:
                    raise ValueError(f"{joint}.motor {d.motor!r} is not in the catalogue ({', '.join(cat) or 'empty'})")
        return drives


def load_motor_catalogue(path) -> dict:
    """{name: Motor} from a YAML catalogue. Raises ScenarioError naming the file and the key at fault."""
    import yaml
    path = Path(path)
    if not path.is_file():
        raise ScenarioError(f"{path}: motor catalogue not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: YAML error: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a motor catalogue is a mapping {{motor name: entry}}")
    out = {}
    for name, entry in data.items():
        try:
            out[str(name)] = Motor.model_validate(entry)
        except ValidationError as e:
            err = e.errors()[0]
            key = ".".join(str(x) for x in (name, *err["loc"]))
            raise ScenarioError(f"{path}: {key}: {err['msg']}") from None
    return out


@dataclass(frozen=True)
class Drive:
    """joint, motor (Motor), gear_ratio G (signed), rotor_inertia J_m [kg m²] (0 if unknown), motor name."""
    joint: str
    motor: Motor
    gear_ratio: float
    rotor_inertia: float
    name: str = ""


def drives_from(model, section: MotorsSection, base_dir=".", where="motors"):
    """Drives of a ``MotorsSection`` for ``model``. Raises ScenarioError (key path from ``where``)."""
    cat = section.catalogue
    if isinstance(cat, str):
        cat = load_motor_catalogue(Path(base_dir) / cat)
    trans = {j: t for t in model.transmissions for j in t.joints}
    out = []
    for joint, d in section.drives.items():
        key = f"{where}.drives.{joint}"
        if joint not in model.joint_names:
            raise ScenarioError(f"{key}: no movable joint {joint!r}; joints are: {', '.join(model.joint_names)}")
        if d.motor not in cat:
            raise ScenarioError(f"{key}.motor: {d.motor!r} is not in the catalogue ({', '.join(cat) or 'empty'})")
        m = cat[d.motor]
        G = d.gear_ratio if d.gear_ratio is not None else (trans[joint].mechanical_reduction if joint in trans
                                                           else None)
        if G is None or G == 0:
            raise ScenarioError(f"{key}.gear_ratio: needed (the joint has no <transmission> reduction), non-zero")
        Jm = next((v for v in (d.rotor_inertia, m.rotor_inertia, getattr(trans.get(joint), "rotor_inertia", None))
                   if v is not None), 0.0)
        out.append(Drive(joint, m, float(G), float(Jm), d.motor))
    return out


@dataclass
class MotorRow:
    """Per drive: peaks and RMS at the motor (N m, rad/s, W, A) and the checks against its ratings."""
    joint: str
    motor: str
    gear_ratio: float
    rotor_inertia: float
    reflected_inertia: float     # G² J_m [kg m²] seen at the joint
    peak_torque: float           # max |τ_m|
    rms_torque: float
    peak_rotor_torque: float     # max |J_m G q̈|
    peak_speed: float            # max |ω_m|
    peak_power: float            # max |τ_m ω_m|
    rms_current: float           # nan without a torque constant
    envelope_use: float          # max |τ_m| / peak_at(|ω_m|) over the samples (inf when outside the speed range)
    thermal_use: float           # τ_rms / nominal (nan without a nominal torque)
    ok: bool


@dataclass
class MotorSizing:
    """t (N,), and per drive (N, p) arrays: speed ω_m, torque τ_m, rotor share, power; rows: MotorRow."""
    drives: list
    t: np.ndarray
    speed: np.ndarray
    torque: np.ndarray
    rotor_torque: np.ndarray
    power: np.ndarray
    rows: list = field(default_factory=list)


def _rms(t, x):
    if len(t) < 2 or t[-1] <= t[0]:
        return float(np.sqrt(np.mean(x ** 2))) if len(x) else 0.0
    from scipy.integrate import trapezoid
    return float(np.sqrt(trapezoid(x ** 2, t) / (t[-1] - t[0])))


def motor_sizing(model, drives, t, q, qd, qdd, tau) -> MotorSizing:
    """Motor-side torque, speed and power of each drive along a motion (module docstring formulas).

    Args:
        model: the Model (for joint order); drives: list of Drive (``drives_from``).
        t (N,) [s]; q, qd, qdd, tau (N, nv) in ``model.joint_names`` order (e.g. a Trajectory's fields):
            tau is the joint torque (inverse dynamics, or a simulation's τ); the share of the model's joint
            armature (``Model.armature`` q̈, a rotor reflected into the joint) is taken out of it, since the
            drive's rotor is modelled here (J_m G q̈ at the motor), so that it does not count twice.

    Returns:
        MotorSizing with per-drive arrays and MotorRow summaries.
    """
    t = np.asarray(t, float)
    qd, qdd, tau = (np.atleast_2d(np.asarray(a, float)) for a in (qd, qdd, tau))
    cols = [model.joint_index(d.joint) for d in drives]
    G = np.array([d.gear_ratio for d in drives])
    eta = np.array([d.motor.efficiency for d in drives])
    Jm = np.array([d.rotor_inertia for d in drives])
    v, a = qd[:, cols], qdd[:, cols]
    tj = tau[:, cols] - np.asarray(model.armature)[cols] * a       # the load alone, without the armature
    speed = G * v
    load = np.where(tj * v >= 0, tj / (G * eta), tj * eta / G)
    rotor = Jm * G * a
    torque = load + rotor
    power = torque * speed
    out = MotorSizing(list(drives), t, speed, torque, rotor, power)
    for k, d in enumerate(drives):
        m = d.motor
        avail = m.peak_at(speed[:, k])
        with np.errstate(divide="ignore", invalid="ignore"):
            use = np.where(avail > 0, np.abs(torque[:, k]) / avail, np.inf)
        env = float(np.max(use)) if len(use) else 0.0
        rms = _rms(t, torque[:, k])
        therm = rms / m.nominal_torque if m.nominal_torque else float("nan")
        cur = rms / m.torque_constant if m.torque_constant else float("nan")
        ok = env <= 1.0 and not (therm > 1.0)
        out.rows.append(MotorRow(d.joint, d.name, d.gear_ratio, d.rotor_inertia, d.gear_ratio ** 2 * d.rotor_inertia,
                                 float(np.max(np.abs(torque[:, k]))), rms, float(np.max(np.abs(rotor[:, k]))),
                                 float(np.max(np.abs(speed[:, k]))), float(np.max(np.abs(power[:, k]))), cur, env,
                                 therm, ok))
    return out


def format_motor_table(sz: MotorSizing) -> str:
    """Markdown table of the MotorRows; a drive outside its envelope or thermal rating is flagged."""
    head = ("| joint | motor | G | J_m [kg m²] | G² J_m [kg m²] | peak abs τ_m [N m] | of which rotor | RMS τ_m "
            "[N m] | peak abs ω_m [rad/s] | peak abs P [W] | RMS current [A] | peak/envelope | RMS/nominal | |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    lines = [head]
    for r in sz.rows:
        pct = (lambda x: "–" if not np.isfinite(x) else f"{100 * x:.0f} %")
        cur = "–" if not np.isfinite(r.rms_current) else f"{r.rms_current:.3g}"
        lines.append(f"| {r.joint} | {r.motor} | {r.gear_ratio:.6g} | {r.rotor_inertia:.3g} | "
                     f"{r.reflected_inertia:.4g} | {r.peak_torque:.4g} | {r.peak_rotor_torque:.3g} | "
                     f"{r.rms_torque:.4g} | {r.peak_speed:.4g} | {r.peak_power:.4g} | {cur} | "
                     f"{pct(r.envelope_use)} | {pct(r.thermal_use)} | {'' if r.ok else 'OVER'} |")
    return "\n".join(lines)


