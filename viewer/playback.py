"""What the player plays: a sampled motion (t, Q and, when known, Q̇, Q̈, τ) and the playback clock.

``Motion`` holds the samples in the model's joint order (a Trajectory's columns are matched by joint
name); ``motion_from_trajectory``, ``motion_from_pose`` and ``demo_motion`` make one. ``Playback`` is the
clock: real time times ``speed``, pause, frame steps, jumps, repeat — no GL in here, so it is tested
without a display.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import ViewerError

__all__ = ["Motion", "motion_from_trajectory", "motion_from_pose", "demo_motion", "Playback"]


@dataclass
class Motion:
    """t (N,) [s] increasing; q (N, nq) (``Model.q_names`` order); qd, qdd, tau (N, nv) or None when unknown."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray = None
    qdd: np.ndarray = None
    tau: np.ndarray = None
    label: str = ""

    def __len__(self):
        return len(self.t)

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0]) if len(self.t) else 0.0

    def index(self, time) -> int:
        """Index of the last sample at or before ``time``."""
        return int(np.clip(np.searchsorted(self.t, time, side="right") - 1, 0, len(self.t) - 1))

    def q_at(self, time) -> np.ndarray:
        """q (nq,) at ``time`` [s], linear between samples (clamped to the ends; a quaternion so interpolated is
        normalised by the kinematics)."""
        t = self.t
        if len(t) == 1 or time <= t[0]:
            return self.q[0].copy()
        if time >= t[-1]:
            return self.q[-1].copy()
        k = int(np.searchsorted(t, time, side="right") - 1)
        a = (time - t[k]) / (t[k + 1] - t[k])
        return (1.0 - a) * self.q[k] + a * self.q[k + 1]


def _columns(model, names, what):
    names = tuple(str(n) for n in names)
    missing = [j for j in model.joint_names if j not in names]
    if missing:
        raise ViewerError(f"{what}: no column for joint(s) {', '.join(missing)} of {model.name!r} "
                          f"(the trajectory has {', '.join(names)})")
    return [names.index(j) for j in model.joint_names]


def _columns_q(model, names, what):
    """Indices in ``names`` (a trajectory's q columns) of the model's position coordinates (``q_names``)."""
    names = tuple(str(n) for n in names)
    missing = [c for c in model.q_names if c not in names]
    if missing:
        raise ViewerError(f"{what}: no column for joint(s) {', '.join(missing)} of {model.name!r} "
                          f"(the trajectory has {', '.join(names)})")
    return [names.index(c) for c in model.q_names]


def motion_from_trajectory(model, traj, label="") -> Motion:
    """A Motion from a ``urdf_dyn.simulate.Trajectory`` (columns matched to the model's joints by name).
    Raises ViewerError for an empty trajectory, missing joints or non-increasing times."""
    t = np.asarray(traj.t, float).reshape(-1)
    if len(t) == 0:
        raise ViewerError(f"{label or 'trajectory'}: no samples")
    if np.any(np.diff(t) < 0) or not np.all(np.isfinite(t)):
        raise ViewerError(f"{label or 'trajectory'}: times must be finite and non-decreasing")
    what = label or "trajectory"
    names = tuple(getattr(traj, "joint_names", None) or model.joint_names)
    # q has one column per position coordinate (q_names: a floating joint's x … qw), q̇, q̈, τ one per velocity
    # coordinate (joint_names): each is matched by its own names, never by the other's index
    qnames = tuple(getattr(traj, "q_columns", None) or names)
    extra = [n for n in qnames if n not in model.q_names]
    if extra and len(qnames) != len(names):
        raise ViewerError(f"{what}: its coordinates {', '.join(extra)} are not those of {model.name!r} (a "
                          f"floating-base trajectory on a fixed-base robot? load the robot with --floating-base)")
    qcols = _columns_q(model, qnames, what)
    cols = _columns(model, names, what)

    def pick(a, c=cols):
        if a is None:
            return None
        a = np.asarray(a, float)
        if a.ndim != 2 or a.shape[0] != len(t):
            return None
        return np.ascontiguousarray(a[:, c])

    q = pick(traj.q, qcols)
    if q is None:
        raise ViewerError(f"{what}: q must have shape ({len(t)}, {len(qnames)})")
    if not np.all(np.isfinite(q)):
        raise ViewerError(f"{label or 'trajectory'}: q holds NaN or inf")
    for kind, k, *_ in model.multi_dof_joints:      # a floating joint's quaternion must be a rotation
        if kind == "floating":
            bad = np.flatnonzero(~(np.linalg.norm(q[:, k + 3:k + 7], axis=1) > 1e-9))
            if len(bad):
                cols = ", ".join(f"q[{model.q_names[k + i]}]" for i in range(3, 7))
                raise ViewerError(f"{what}: row {int(bad[0]) + 1} of the samples: the columns {cols}, the quaternion "
                                  f"of floating joint {model.q_names[k].rsplit('.', 1)[0]!r}, are zero: not a rotation")
    tau = pick(getattr(traj, "tau", None))
    return Motion(t, q, pick(getattr(traj, "qd", None)), pick(getattr(traj, "qdd", None)), tau, label)


def motion_from_pose(model, q) -> Motion:
    """A one-sample Motion at rest at q (nq,)."""
    q = np.asarray(q, float).reshape(1, model.nq)
    z = np.zeros((1, model.nv))
    return Motion(np.zeros(1), q, z, z.copy(), None, "pose")


def demo_coordinates(model):
    """The coordinates a demo motion drives: the URDF's independent joints (URDF+), else its actuated tree
    joints when the model has loops (cylinders, swing), else every joint."""
    if model.independent:
        return tuple(model.independent)
    if model.has_constraints:
        acts = tuple(j for j in model.actuated_joints if j in model.joint_names)
        return acts or (model.joint_names[0],)
    return tuple(model.joint_names)


def _demo_start(model, q0, names):
    """(q, coordinates) to drive a demo of a closed-loop model from: the preferred ``names`` at q0 when they
    parametrise the motion there, else the coordinates complete pivoting picks (RBDA §8.8), else the same
    from a nearby assembled pose (q0 may be singular, e.g. a four-bar folded flat, or a mimic pair both
    marked actuated)."""
    from urdf_dyn import assemble, explicit_constraint
    from urdf_dyn.errors import UrdfDynError
    rng = np.random.default_rng(0)
    starts = [q0]
    for _ in range(4):
        try:
            starts.append(assemble(model, q0 + 0.3 * rng.standard_normal(model.nv), branch_tol=None))  # probes
        except (UrdfDynError, ValueError, np.linalg.LinAlgError):
            continue
    zero = np.zeros(model.nv)
    found = []  # (freedoms, order, q, coordinates): a singular pose has more freedoms than a regular one
    for k, q in enumerate(starts):
        for j, cand in enumerate((names, None)):
            try:
                ec = explicit_constraint(model, q, zero, independent=cand)
            except (UrdfDynError, ValueError, np.linalg.LinAlgError):
                continue
            if ec.G.shape[1]:
                found.append((ec.G.shape[1], 2 * k + j, q, tuple(ec.independent)))
    if not found:
        return q0, ()
    best = min(found, key=lambda f: (f[0], f[1]))
    return best[2], best[3]


def demo_motion(model, duration=4.0, dt=1.0 / 30.0, q0=None) -> Motion:
    """A motion to look at when there is no trajectory: each driven coordinate (``demo_coordinates``) moves
    from q0 (default the initial configuration) towards its farther limit, 60 % of the way (at most 1 rad or
    0.25 m; 0.8 rad / 0.2 m without limits), and back, as (1 − cos) in ``duration`` [s]. With loops, every
    sample is assembled holding the driven coordinates (urdf_dyn.motion.consistent_motion), so the loops
    stay closed; when the preferred coordinates cannot drive the mechanism at q0 (a singular start, mimic
    pairs) the coordinates chosen by complete pivoting are used, from a nearby pose if need be, and the
    amplitude is halved until the loops close along the whole motion. A mechanism that cannot move gives
    its assembled pose, at rest."""
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    names = demo_coordinates(model)
    t = np.arange(0.0, duration + 0.5 * dt, dt)
    if model.has_constraints:
        from urdf_dyn import assemble
        from urdf_dyn.errors import UrdfDynError
        try:
            q0 = assemble(model, q0)
        except UrdfDynError:
            pass
        q0, names = _demo_start(model, q0, names)
        for scale in (1.0, 0.5, 0.25, 0.1):
            if not names:
                break
            try:
                return _demo(model, t, duration, q0, names, scale)
            except (UrdfDynError, ValueError, np.linalg.LinAlgError):
                continue
        return Motion(t[:1], q0[None].copy(), np.zeros((1, model.nv)), np.zeros((1, model.nv)), None,
                      "assembled pose (the demo motion could not move the mechanism)")
    return _demo(model, t, duration, q0, names, 1.0)


def _demo(model, t, duration, q0, names, scale):
    idx = [model.joint_index(j) for j in names]
    amp = []
    for i in idx:
        prismatic = model.joint_types[i] == "prismatic"
        cap = 0.25 if prismatic else 1.0
        lo, hi = model.lower[i] - q0[i], model.upper[i] - q0[i]
        if np.isfinite(lo) and np.isfinite(hi):
            room = hi if hi >= -lo else lo
            amp.append(float(np.sign(room) * min(0.6 * abs(room), cap)))
        else:
            amp.append(0.2 if prismatic else 0.8)
    amp = scale * np.array(amp)
    s = 0.5 * (1.0 - np.cos(2 * np.pi * t / duration))
    sd = 0.5 * np.sin(2 * np.pi * t / duration) * 2 * np.pi / duration
    sdd = 0.5 * np.cos(2 * np.pi * t / duration) * (2 * np.pi / duration) ** 2
    y = q0[idx] + s[:, None] * amp
    yd = sd[:, None] * amp
    ydd = sdd[:, None] * amp
    if model.has_constraints:
        from urdf_dyn import CoordinateMotion, consistent_motion
        Q, QD, QDD = consistent_motion(model, CoordinateMotion(names, t, y, yd, ydd), q_start=q0, progress=False)
    else:
        Q = np.repeat(q0[None], len(t), axis=0)
        QD, QDD = np.zeros_like(Q), np.zeros_like(Q)
        Q[:, idx], QD[:, idx], QDD[:, idx] = y, yd, ydd
    return Motion(t, Q, QD, QDD, None, "demo motion of " + ", ".join(names))


class Playback:
    """The clock of a Motion: ``time`` [s] advances by wall-clock dt × ``speed`` unless ``paused``; at the
    end it wraps to the start when ``repeat`` (else it stops there). Steps move by one sample."""

    def __init__(self, motion: Motion, speed=1.0, repeat=True, paused=False):
        self.motion = motion
        self.speed = float(speed)
        self.repeat = bool(repeat)
        self.paused = bool(paused) or len(motion) < 2
        self.time = float(motion.t[0])

    @property
    def t0(self):
        return float(self.motion.t[0])

    @property
    def t1(self):
        return float(self.motion.t[-1])

    def advance(self, dt):
        """Move on by wall-clock ``dt`` [s]."""
        if self.paused or len(self.motion) < 2:
            return self.time
        t = self.time + dt * self.speed
        span = self.t1 - self.t0
        if t > self.t1 or t < self.t0:
            if self.repeat and span > 0:
                t = self.t0 + (t - self.t0) % span
            else:
                t = min(max(t, self.t0), self.t1)
                self.paused = True
        self.time = t
        return t

    def toggle_pause(self):
        if self.paused and self.time >= self.t1 and not self.repeat:
            self.time = self.t0
        self.paused = not self.paused

    def step(self, n=1):
        """Pause and move ``n`` samples (negative: back)."""
        self.paused = True
        m = self.motion
        k = m.index(self.time + 1e-12)
        k = int(np.clip(k + n, 0, len(m) - 1))
        self.time = float(m.t[k])
        return self.time

    def seek(self, time):
        """Jump to ``time`` [s] (clamped)."""
        self.time = float(np.clip(time, self.t0, self.t1))
        return self.time

    def seek_fraction(self, f):
        return self.seek(self.t0 + f * (self.t1 - self.t0))

    def scale_speed(self, factor):
        self.speed = float(np.clip(self.speed * factor, 1.0 / 64, 64.0))
        return self.speed

    @property
    def q(self):
        return self.motion.q_at(self.time)

    @property
    def index(self):
        return self.motion.index(self.time + 1e-12)
