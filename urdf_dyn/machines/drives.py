"""Electric-drive sizing of an arm: per joint a servo motor and a reducer, checked along a motion.

Per drive, with the reducer's ratio N (output turns per input turn: 1/N; signed as the joint's
``<mechanicalReduction>``), efficiency η, input-side inertia J_r and the motor's rotor inertia J_m
(``machines.motors`` for the motor-side formulas, written once there):

    ω_m = N q̇,   τ_m = τ_j / (N η) when the motor drives (τ_j q̇ ≥ 0), τ_j η / N when back-driven,
                 + (J_m + J_r) N q̈,     P_m = τ_m ω_m,     τ_rms = sqrt(∫ τ_m² dt / T)

checked against the motor's rated (continuous, thermal) and peak torque, and rated and maximum speed.
The reducer carries the joint torque τ_j at its output, checked against the maker's three ratings (the
Nabtesco RV catalogues' terms): the rated torque T0 through the mean load torque
T_m = (Σ |n_i| Δt_i |T_i|^{10/3} / Σ |n_i| Δt_i)^{3/10} and the rated life L10 = K (N0/N_m)(T0/T_m)^{10/3}
(K = 6000 h, N0 = the rated output speed, N_m the mean output speed; Nabtesco RV N series catalogue,
"Technical information: life calculation"), which must reach the required life (``required_life``, default K:
the life at the rating); the allowable acceleration/deceleration torque through the
cycle's peak |τ_j|; the momentary maximum (emergency-stop) torque through the torque the motor's peak
can put through the reducer, N · τ_m,peak (the worst case: the motor braking at its peak, η = 1).

The wrist's payload checks follow the makers' data sheets (FANUC, Yaskawa "allowable moment and inertia"
tables): per wrist axis the load moment m g d and the load inertia nᵀ I_c n + m d², d the distance from the
axis line to the payload's centre of mass, n the axis; the largest over the motion's poses.

Input data: a YAML file (``DriveData``) with ``motors:``, ``reducers:``, ``drives:`` (joint → motor,
reducer) and ``payload_limits:`` (wrist joint → allowable moment and inertia), every entry with its
``source``. Motor speeds are in rad/s, torques in N m, inertias in kg m².
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from urdf_dyn.errors import ScenarioError
from urdf_dyn.machines.motors import Drive, Motor, motor_sizing, read_data_file

__all__ = ["ServoMotor", "Reducer", "DriveAxis", "PayloadLimit", "DriveData", "load_drive_data",
           "ArmPayload", "DriveRow", "ReducerRow", "WristRow", "ArmSizing", "arm_sizing", "drive_sizing", "drive_mismatch"]

G0 = 9.80665   # standard gravity [m/s²], the makers' kgf conversions


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServoMotor(_Strict):
    """A servo motor's catalogue data at its shaft."""
    rated_torque: float = Field(gt=0, description="[N m] continuous (S1) at rated speed")
    peak_torque: float = Field(gt=0, description="[N m] instantaneous maximum")
    rated_speed: float = Field(gt=0, description="[rad/s]")
    max_speed: float = Field(gt=0, description="[rad/s]")
    rotor_inertia: float = Field(ge=0, description="[kg m²]")
    curve: Optional[list[tuple[float, float]]] = Field(
        None, min_length=2, description="peak torque–speed curve: (speed [rad/s], torque [N m]) points")
    source: str = Field(min_length=1)

    @field_validator("rated_torque", "peak_torque", "rated_speed", "max_speed", "rotor_inertia")
    @classmethod
    def _finite(cls, v):
        if not math.isfinite(v):
            raise ValueError("must be finite")
        return v


class Reducer(_Strict):
    """A reducer's catalogue data (output side unless said otherwise)."""
    ratio: float = Field(description="input turns per output turn (signed as <mechanicalReduction>)")
    efficiency: float = Field(gt=0, le=1)
    input_inertia: float = Field(ge=0, description="[kg m²] referred to the input shaft")
    rated_torque: float = Field(gt=0, description="[N m] T0, at the rated output speed")
    rated_output_speed: float = Field(gt=0, description="[rad/s] N0 of the life formula")
    rated_life: float = Field(6000.0, gt=0, description="[h] K of the life formula")
    peak_torque: float = Field(gt=0, description="[N m] allowable acceleration/deceleration torque")
    emergency_stop_torque: float = Field(gt=0, description="[N m] momentary maximum allowable torque")
    max_output_speed: Optional[float] = Field(None, gt=0, description="[rad/s] allowable output speed")
    source: str = Field(min_length=1)

    @field_validator("ratio")
    @classmethod
    def _ratio(cls, v):
        if not math.isfinite(v) or abs(v) < 1:
            raise ValueError("a reducer's ratio is finite with |ratio| ≥ 1")
        return v


class DriveAxis(_Strict):
    motor: str
    reducer: str


class PayloadLimit(_Strict):
    """A wrist axis' allowable load moment and inertia (the maker's data sheet)."""
    moment: float = Field(gt=0, description="[N m]")
    inertia: float = Field(gt=0, description="[kg m²]")
    source: str = Field(min_length=1)


class DriveData(_Strict):
    """The drive data file: catalogues, one drive per actuated joint, the wrist's payload limits."""
    motors: dict[str, ServoMotor] = Field(min_length=1)
    reducers: dict[str, Reducer] = Field(min_length=1)
    drives: dict[str, DriveAxis] = Field(min_length=1)
    payload_limits: dict[str, PayloadLimit] = Field(default_factory=dict)
    required_life: Optional[float] = Field(None, gt=0, description="[h] the reducers' required L10 life "
                                           "(default: each reducer's rated life K, the catalogue's basis)")
    notes: str = ""

    @field_validator("drives")
    @classmethod
    def _known(cls, drives, info):
        for joint, d in drives.items():
            for kind, name in (("motors", d.motor), ("reducers", d.reducer)):
                cat = info.data.get(kind) or {}
                if name not in cat:
                    raise ValueError(f"{joint}: {kind[:-1]} {name!r} is not in {kind} ({', '.join(cat) or 'empty'})")
        return drives


def load_drive_data(path) -> DriveData:
    """DriveData from a YAML file. Raises ScenarioError naming the file and the key at fault."""
    data = read_data_file(path, "drive data file")
    try:
        return DriveData.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        raise ScenarioError(f"{path}: {key}: {err['msg']}") from None


@dataclass(frozen=True)
class ArmPayload:
    """The load at the wrist: ``mass`` [kg] at ``com`` (3,) [m] in ``link``'s frame, ``inertia`` (3, 3)
    [kg m²] about its centre of mass in the link's axes."""
    link: str
    mass: float
    com: tuple
    inertia: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


@dataclass
class DriveRow:
    """One drive's motor side: peaks, RMS and ratios to its ratings (1 = at the rating)."""
    joint: str
    motor: str
    reducer: str
    ratio: float
    inertia_in: float            # J_m + J_r [kg m²]
    peak_torque: float           # max |τ_m| [N m]
    rms_torque: float            # [N m]
    peak_speed: float            # max |ω_m| [rad/s]
    peak_power: float            # max |τ_m ω_m| [W]
    rms_over_rated: float
    peak_over_max: float         # max over the samples of |τ_m| / peak torque available at |ω_m|
    speed_over_max: float
    speed_over_rated: float


@dataclass
class ReducerRow:
    """One reducer's output side."""
    joint: str
    reducer: str
    peak_torque: float           # max |τ_j| [N m]
    mean_torque: float           # T_m (10/3 law) [N m]
    mean_speed: float            # N_m [rad/s]
    life: float                  # L10 [h] (inf at rest)
    estop_torque: float          # N · τ_m,peak(motor) [N m]
    peak_over_rating: float      # peak / allowable acceleration torque
    mean_over_rated: float       # T_m / T0 (information: the rating is the life)
    life_use: float              # required life / L10 (≤ 1: the reducer lasts)
    estop_over_rating: float     # estop / momentary maximum
    speed_over_max: float        # max |q̇| / allowable output speed (nan without one)


@dataclass
class WristRow:
    joint: str
    moment: float                # max m g d [N m]
    inertia: float               # max nᵀ I_c n + m d² [kg m²]
    moment_limit: float
    inertia_limit: float


@dataclass
class ArmSizing:
    """The result: t (N,); u (N, p) joint torques of the actuated joints (``names``); the motor side
    (``motors``: machines.motors.MotorSizing, speed/torque/power (N, p)); rows per drive, reducer and
    wrist axis; balancers {name: (L (N,) [m], F (N,) [N])}; pin_forces {loop: (force (N,) [N], moment (N,)
    [N m])};
    loaded (N,) bool: the payload on; data: the DriveData; balancer_types {name: "gas_spring, pull" ...}."""
    names: tuple
    t: np.ndarray
    u: np.ndarray
    motors: object
    drives: list
    reducers: list
    wrist: list
    balancers: dict
    pin_forces: dict
    loaded: np.ndarray
    data: DriveData
    payload: Optional[ArmPayload] = None
    warnings: list = field(default_factory=list)
    balancer_types: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every ratio to a rating is ≤ 1."""
        vals = [v for r in self.drives for v in (r.rms_over_rated, r.peak_over_max, r.speed_over_max)]
        vals += [v for r in self.reducers for v in (r.peak_over_rating, r.life_use, r.estop_over_rating,
                                                    r.speed_over_max)]
        vals += [v for r in self.wrist for v in (r.moment / r.moment_limit, r.inertia / r.inertia_limit)]
        return all(not (v > 1.0) for v in vals)


def _mean_torque(t, n, T):
    """Nabtesco's mean load torque and mean output speed over samples (speed-weighted 10/3 law)."""
    dt = np.gradient(t) if len(t) > 1 else np.ones(1)
    w = np.abs(n) * dt
    if w.sum() <= 0:
        return 0.0, 0.0
    Tm = float((np.sum(w * np.abs(T) ** (10 / 3)) / w.sum()) ** 0.3)
    return Tm, float(w.sum() / dt.sum())


def _wrist_rows(model, Q, payload, limits):
    from urdf_dyn.algorithms.kinematics import body_poses
    if payload is None or not limits:
        return []
    T = body_poses(model, Q)
    lf = model.link(payload.link)
    Tl = T[:, lf.body] @ np.asarray(lf.T_body_link)
    c = Tl[:, :3, :3] @ np.asarray(payload.com, float) + Tl[:, :3, 3]          # (N, 3) centre of mass
    Ic = np.asarray(payload.inertia, float)
    rows = []
    for joint, lim in limits.items():
        i = model.joint_index(joint) + 1
        n = T[:, i, :3, :3] @ np.asarray(model.axis[i])                       # axis in the base frame
        r = c - T[:, i, :3, 3]
        d = np.linalg.norm(r - np.sum(r * n, axis=1)[:, None] * n, axis=1)   # distance to the axis line
        Rl = Tl[:, :3, :3]
        n_l = np.einsum("nji,nj->ni", Rl, n)                                  # the axis in the link's axes
        I_ax = np.einsum("ni,ij,nj->n", n_l, Ic, n_l) + payload.mass * d ** 2
        rows.append(WristRow(joint, float(payload.mass * G0 * d.max()), float(I_ax.max()), lim.moment, lim.inertia))
    return rows


def drive_mismatch(data, actuated):
    """What is wrong between the drive data's joints and the actuated joints (one line), or None."""
    missing = [j for j in actuated if j not in data.drives]
    extra = [j for j in data.drives if j not in actuated]
    if not (missing or extra):
        return None
    return "; ".join(([f"no drive for the actuated joint(s) {', '.join(missing)}"] if missing else [])
                     + ([f"drives for joints that are not actuated: {', '.join(extra)} (actuated: {', '.join(actuated)})"]
                        if extra else []))


def _check_names(data, actuated):
    msg = drive_mismatch(data, actuated)
    if msg:
        raise ScenarioError(f"drive data: {msg}")


def arm_sizing(model, data: DriveData, t, q, qd, qdd, payload: Optional[ArmPayload] = None, loaded=None,
               f_ext=None) -> ArmSizing:
    """Size an arm's drives along a motion (module docstring for the formulas): the actuator forces by
    closed-loop inverse dynamics (``constraints.inverse.actuator_forces``, RBDA eq. 8.63; the balancers
    enter as passive forces), then ``drive_sizing``.

    Args:
        model: the Model (its balancers, loops and transmissions as loaded); data: the DriveData, one
            drive per actuated joint of ``model.actuated_joints``.
        t (N,) [s]; q (N, nq), qd, qdd (N, nv): a motion consistent with the loops
            (``constraints.motion.consistent_motion``).
        payload: the load at the wrist, carried where ``loaded`` (N,) bool is True (default: everywhere).
        f_ext: further external wrenches {link: (6,) or (N, 6)} (``actuator_forces``).
    Returns an ArmSizing. Raises ScenarioError when a drive names a joint that is not actuated, or an actuated
    joint has no drive; StateError from the dynamics (an inconsistent state, a bottomed-out balancer)."""
    from urdf_dyn.constraints.inverse import actuator_forces
    t = np.asarray(t, float)
    Q, QD, QDD = (np.asarray(a, float) for a in (q, qd, qdd))
    _check_names(data, tuple(model.actuated_joints))
    names = tuple(data.drives)                 # the data file's order
    N = len(t)
    loaded = np.ones(N, bool) if loaded is None else np.asarray(loaded, bool)
    u = np.zeros((N, len(names)))
    pins = {lp.name: (np.zeros(N), np.zeros(N)) for lp in model.loops}
    for on in (True, False):
        idx = np.flatnonzero(loaded == on)
        if not len(idx):
            continue
        m = model.with_payload(payload.link, payload.mass, payload.com, payload.inertia) if (on and payload) else model
        fx = {k: (np.asarray(v, float)[idx] if np.ndim(v) == 2 else v) for k, v in (f_ext or {}).items()} or None
        af = actuator_forces(m, Q[idx], QD[idx], QDD[idx], actuated=list(names), f_ext=fx, warn=False)
        u[idx] = af.u
        for k, v in af.loop_forces.items():
            pins[k][0][idx] = np.linalg.norm(v[:, 3:], axis=1)
            pins[k][1][idx] = np.linalg.norm(v[:, :3], axis=1)
    return drive_sizing(model, data, t, Q, QD, QDD, names, u, pins, payload, loaded)


def drive_sizing(model, data: DriveData, t, q, qd, qdd, names, u, pin_forces=None,
                 payload: Optional[ArmPayload] = None, loaded=None) -> ArmSizing:
    """The drives' checks from given actuator forces (module docstring): ``names`` (p,) the actuated joints,
    ``u`` (N, p) their torques [N m] along t (N,), q (N, nq), qd, qdd (N, nv); ``pin_forces`` {loop: (force
    (N,) [N], moment (N,) [N m])} the pins' loads; ``payload`` and ``loaded`` (N,) bool for the wrist check
    (the torques already include the payload). Returns an ArmSizing; raises ScenarioError as ``arm_sizing``."""
    from urdf_dyn.algorithms.force_elements import balancer_generalized_forces
    t = np.asarray(t, float)
    Q, QD, QDD = (np.asarray(a, float) for a in (q, qd, qdd))
    names, u = tuple(names), np.asarray(u, float)
    _check_names(data, names)
    N = len(t)
    loaded = np.ones(N, bool) if loaded is None else np.asarray(loaded, bool)
    pins = dict(pin_forces or {})
    tau = np.zeros((N, model.nv))
    drives = []
    order = [names.index(j) for j in data.drives]      # the data file's order
    names, u = tuple(data.drives), u[:, order]
    for k, j in enumerate(names):
        tau[:, model.joint_index(j)] = u[:, k]
        ax = data.drives[j]
        mo, rd = data.motors[ax.motor], data.reducers[ax.reducer]
        Jin = mo.rotor_inertia + rd.input_inertia
        drives.append(Drive(j, Motor(rotor_inertia=Jin, peak_torque=mo.peak_torque, max_speed=mo.max_speed,
                                     nominal_torque=mo.rated_torque, efficiency=rd.efficiency, envelope=mo.curve,
                                     source=mo.source), rd.ratio, Jin, ax.motor))
    ms = motor_sizing(model, drives, t, Q, QD, QDD, tau)
    drows, rrows = [], []
    for k, j in enumerate(names):
        ax = data.drives[j]
        mo, rd = data.motors[ax.motor], data.reducers[ax.reducer]
        r = ms.rows[k]
        drows.append(DriveRow(j, ax.motor, ax.reducer, rd.ratio, drives[k].rotor_inertia, r.peak_torque,
                              r.rms_torque, r.peak_speed, r.peak_power, r.rms_torque / mo.rated_torque,
                              r.envelope_use, r.peak_speed / mo.max_speed, r.peak_speed / mo.rated_speed))
        v = QD[:, model.joint_index(j)]
        Tm, Nm = _mean_torque(t, v, u[:, k])
        life = rd.rated_life * (rd.rated_output_speed / Nm) * (rd.rated_torque / Tm) ** (10 / 3) if Tm > 0 and Nm > 0 \
            else float("inf")
        peak = float(np.abs(u[:, k]).max(initial=0.0))
        estop = abs(rd.ratio) * mo.peak_torque
        need = data.required_life or rd.rated_life
        rrows.append(ReducerRow(j, ax.reducer, peak, Tm, Nm, life, estop, peak / rd.peak_torque, Tm / rd.rated_torque,
                                need / life, estop / rd.emergency_stop_torque,
                                float(np.abs(v).max() / rd.max_output_speed) if rd.max_output_speed else float("nan")))
    _, bal = balancer_generalized_forces(model, Q, detail=True)
    out = ArmSizing(names, t, u, ms, drows, rrows, _wrist_rows(model, Q, payload, data.payload_limits), bal, pins,
                    loaded, data, payload, balancer_types={b.name: f"{b.type}, {b.action}" for b in model.balancers})
    for r in out.drives:
        if r.rms_over_rated > 1 or r.peak_over_max > 1 or r.speed_over_max > 1:
            out.warnings.append(f"motor of {r.joint} ({r.motor}) over its rating: RMS/rated {r.rms_over_rated:.2f}, "
                                f"peak/available {r.peak_over_max:.2f}, speed/max {r.speed_over_max:.2f}")
    for r in out.reducers:
        if max(r.peak_over_rating, r.life_use, r.estop_over_rating) > 1:
            out.warnings.append(f"reducer of {r.joint} ({r.reducer}) over its rating: peak/acceleration "
                                f"{r.peak_over_rating:.2f}, life {r.life:.3g} h of {data.required_life or 'K'}"
                                f" required, "
                                f"e-stop/momentary {r.estop_over_rating:.2f}")
    for r in out.wrist:
        if r.moment > r.moment_limit or r.inertia > r.inertia_limit:
            out.warnings.append(f"wrist {r.joint}: load moment {r.moment:.0f} N m (allowed {r.moment_limit:.0f}), "
                                f"inertia {r.inertia:.0f} kg m² (allowed {r.inertia_limit:.0f})")
    return out
