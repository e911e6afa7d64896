"""The plan of a sizing run (``job: size``): ``SizingPlan.from_scenario(scenario, model)`` resolves every name
and checks every key of the scenario up front — the motion and its phases, the frames, the actuators and
cylinders, the external loads and the payload, and (through the machine kind, ``jobs.machine_kind``) every
section of the kind (the excavator's: ``jobs.excavator_plan``) — so that the run below it
(``jobs.sizing_run.compute``) raises no scenario error for a name or a key. Each error is a ``ScenarioError``
naming the file, the key path and the key's line (``Scenario.err``). What only the run can tell about a valid
scenario stays there: a motion whose cutting edge never reaches the ground (``soil.ground.height``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.launch.document import build_model, joint_vector, unknown_name

__all__ = ["SizingPlan", "PointPayload", "phase_mask_of"]


@dataclass(frozen=True)
class PointPayload:
    """The ``payload:`` section resolved: a point mass ``mass`` (N,) [kg] (zero outside its phase) at ``com``
    (3,) [m] of ``link``; or, with an inertia, ``models`` (N,) the model with or without the payload."""
    link: str
    com: tuple
    mass: np.ndarray
    models: object = None


@dataclass(frozen=True)
class SizingPlan:
    """Everything a sizing run needs, resolved and checked: ``scenario`` (the validated ``Scenario``),
    ``model``, ``motion`` (``simulation.trajectories`` motion of the independent coordinates), ``windows``
    {phase: (t0, t1)} [s], ``frames`` {name: ``machines.loads.Frame``}, ``cylinders`` {actuator:
    ``machines.sizing.Cylinder``}, ``weights`` (list or None), ``loads`` (``machines.loads.WrenchLoad`` s of
    ``loads:``), ``payload`` (``PointPayload`` or None) and ``kind`` (the ``MachineKind`` whose sections the
    scenario has) with ``kind_plan``, what the kind resolved from its sections."""
    scenario: object
    model: object
    motion: object
    windows: dict
    frames: dict
    cylinders: dict
    weights: object
    loads: tuple
    payload: object
    kind: object
    kind_plan: object = None
    options: dict = field(default_factory=dict)

    @property
    def t(self) -> np.ndarray:
        """Sample times (N,) [s]."""
        return self.motion.t

    def mask(self, key, during) -> np.ndarray:
        """(N,) bool: the samples in the phases ``during`` (a name, a list, or None: all)."""
        return phase_mask_of(self.scenario, key, self.motion.t, self.windows, during)

    @classmethod
    def from_scenario(cls, scenario, model=None, kinds=None) -> "SizingPlan":
        """Resolve and check ``scenario`` (a validated ``job: size`` Scenario); ``model`` the robot if
        already loaded (else read from ``robot``); ``kinds`` the machine kinds to choose from (default
        ``jobs.kinds.KINDS``). Raises ScenarioError / ModelError naming the key."""
        from urdf_dyn.jobs.kinds import kind_of
        from urdf_dyn.machines.loads import Frame
        from urdf_dyn.machines.sizing import Cylinder
        doc = scenario.doc
        _check_motion_size(scenario)
        model = model if model is not None else build_model(scenario)
        motion, windows = _motion(scenario, model)
        t = motion.t
        frames = {}
        for name, fr in doc.frames.items():
            if fr.link not in model.links:
                raise scenario.err(f"frames.{name}.link", f"unknown link {fr.link!r} (links: {', '.join(model.links)})")
            frames[name] = Frame(fr.link, tuple(fr.xyz), tuple(fr.rpy))
        pl = doc.payload
        if pl and pl.link not in model.links:
            raise scenario.err("payload.link", f"unknown link {pl.link!r} (links: {', '.join(model.links)})")
        a = doc.actuators
        cyl = {}
        for name, c in a.cylinders.items():
            if not c.rod < c.bore:
                raise scenario.err(f"actuators.cylinders.{name}", "need 0 < rod < bore")
            cyl[name] = Cylinder(c.bore, c.rod, c.count)
        weights = a.weights
        if isinstance(weights, dict):
            from urdf_dyn.constraints.inverse import actuators_of
            names = [x.name for x in actuators_of(model, a.actuated)]
            weights = [float(weights.get(n, 1.0)) for n in names]
        kind = kind_of(scenario, kinds)
        for i, ld in enumerate(doc.loads):
            if ld.link not in model.links:
                raise scenario.err(f"loads[{i}].link", f"unknown link {ld.link!r} (links: {', '.join(model.links)})")
            phase_mask_of(scenario, f"loads[{i}].during", t, windows, ld.during)
        if doc.payload is not None and doc.payload.during is not None:
            phase_mask_of(scenario, "payload.during", t, windows, doc.payload.during)
        plan = cls(scenario, model, motion, windows, frames, cyl, weights, (), None, kind)
        kind_plan = kind.plan(plan)                   # the kind's sections: names and keys, before any work
        loads = tuple(_loads(scenario, model, frames, t, windows))
        return cls(scenario, model, motion, windows, frames, cyl, weights, loads, _payload(plan), kind, kind_plan)


def phase_mask_of(scenario, key, t, windows, during) -> np.ndarray:
    """(N,) bool of the phases ``during`` (None: every sample); a ScenarioError at ``key`` for an unknown phase."""
    from urdf_dyn.machines.loads import phase_mask
    if during is None:
        return np.ones(len(t), bool)
    for n in [during] if isinstance(during, str) else during:
        if n not in windows:
            known = ", ".join(windows) if windows else "none: add motion.phases"
            raise scenario.err(key, f"unknown phase {n!r} (phases: {known})")
    return phase_mask(t, windows, during)


def _payload(plan):
    """The ``payload:`` section as a PointPayload (None without one)."""
    pl = plan.scenario.doc.payload
    if not pl:
        return None
    t = plan.t
    on = np.ones(len(t), bool)
    if pl.during is not None:
        on = plan.mask("payload.during", pl.during)
    if pl.from_ is not None:
        on &= t >= pl.from_
    if pl.until is not None:
        on &= t <= pl.until
    if pl.inertia is None:     # a point mass: its wrench m (g − a_c) (equal to the rigid payload)
        return PointPayload(pl.link, tuple(pl.com), pl.mass * on)
    loaded = plan.model.with_payload(pl.link, pl.mass, list(pl.com), pl.inertia)
    return PointPayload(pl.link, tuple(pl.com), pl.mass * on, [loaded if o else plan.model for o in on])


def _check_actuators(scenario, model):
    """actuators.actuated names actuators that exist (at least one); actuators.cylinders names actuators."""
    from urdf_dyn.constraints.inverse import actuators_of
    a = scenario.doc.actuators
    known = list(model.joint_names) + [lp.name for lp in model.loops]
    for n in a.actuated or ():
        if n not in known:
            raise scenario.err("actuators.actuated", unknown_name("actuator", n, known))
    try:
        names = [x.name for x in actuators_of(model, a.actuated)]
    except KeyError as e:
        raise scenario.err("actuators.actuated", e.args[0]) from None
    if not names:
        raise scenario.err("actuators.actuated", f"{model.name} has no actuators to size: name at least one joint "
                         "or actuated loop joint (or give the URDF <transmission>s)")
    for n in a.cylinders:
        if n not in names:
            raise scenario.err(f"actuators.cylinders.{n}", unknown_name("actuator", n, names))
    if isinstance(a.weights, list) and len(a.weights) != len(names):
        raise scenario.err("actuators.weights", f"{len(a.weights)} weights for {len(names)} actuators ({', '.join(names)})")


def _check_motion_size(scenario):
    """Refuse, before any work, a motion whose sample count is over the limit, or a csv that is missing."""
    from urdf_dyn.simulation.simulate import MAX_SAMPLES
    mo = scenario.doc.motion
    if mo.durations and sum(mo.durations) / mo.dt + 1 > MAX_SAMPLES:  # before any work
        raise scenario.err("motion.dt", f"{mo.dt:g} s over {sum(mo.durations):g} s makes {sum(mo.durations) / mo.dt:.3g} "
                         f"samples, more than the limit of {MAX_SAMPLES}; choose a larger dt")
    if mo.csv and not (scenario.path.parent / mo.csv).is_file():
        raise scenario.err("motion.csv", f"{scenario.path.parent / mo.csv}: file not found (relative to the scenario file)")


def _motion(scenario, model):
    from urdf_dyn.machines.loads import phase_times
    from urdf_dyn.simulation.trajectories import csv_motion, spline_motion
    mo = scenario.doc.motion
    indep = mo.independent
    for j in indep:
        if j not in model.joint_names:
            raise scenario.err("motion.independent", unknown_name("joint", j, model.joint_names))
    _check_actuators(scenario, model)
    idx = [model.joint_index(j) for j in indep]
    if mo.csv:
        if mo.phases:
            raise scenario.err("motion.phases", "phases name waypoint segments; a csv motion has none")
        return csv_motion(scenario.path.parent / mo.csv, indep, mo.dt), {}
    if not mo.waypoints:
        raise scenario.err("motion.waypoints", "give waypoints (or csv)")
    q0 = model.q_initial()
    for i, w in enumerate(mo.waypoints):  # a value for a dependent joint would be dropped without a word
        for j in (w if isinstance(w, dict) else ()):
            if j not in indep and j in model.joint_names:
                raise scenario.err(f"motion.waypoints[{i}].{j}", f"{j!r} is not one of motion.independent "
                                 f"({', '.join(indep)}): its value follows from them")
    W = np.array([joint_vector(scenario, model, w, f"motion.waypoints[{i}]", q0)[idx]
                  for i, w in enumerate(mo.waypoints)])
    if not mo.durations or len(mo.durations) != len(W) - 1:
        raise scenario.err("motion.durations", f"need {len(W) - 1} durations (one per segment)")
    windows = {}
    if mo.phases is not None:
        if len(mo.phases) != len(mo.durations):
            raise scenario.err("motion.phases", f"need {len(mo.durations)} names (one per segment), got {len(mo.phases)}")
        windows = phase_times(mo.phases, mo.durations)
    return spline_motion(indep, W, list(mo.durations), mo.dt, mo.type), windows


def _phase_start(t, mask):
    return float(t[np.argmax(mask)]) if mask.any() else 0.0


def _loads(scenario, model, frames, t, windows):
    """The ``loads:`` section as WrenchLoads (force and moment profiles resolved on the samples t)."""
    from urdf_dyn.machines.loads import WrenchLoad, profile
    out = []
    for i, ld in enumerate(scenario.doc.loads):
        key = f"loads[{i}]"
        frame = None if ld.frame == "link" else ld.frame
        if frame not in (None, "world") and frame not in frames and frame not in model.links:
            raise scenario.err(f"{key}.frame", f"unknown frame {frame!r}: use link, world, a link or a frames: name")
        mask = phase_mask_of(scenario, f"{key}.during", t, windows, ld.during)
        t0 = _phase_start(t, mask) if ld.during is not None else 0.0
        f = np.broadcast_to(np.asarray(ld.force, float), (len(t), 3)).copy()
        n = np.broadcast_to(np.asarray(ld.moment, float), (len(t), 3)).copy()
        if ld.csv:
            data = _wrench_csv(scenario, f"{key}.csv", scenario.path.parent / ld.csv)
            f, n = profile(t - t0, data[:, 0], data[:, 1:4]), profile(t - t0, data[:, 0], data[:, 4:7])
        if ld.profile:
            k = np.array(ld.profile, float)
            if np.any(np.diff(k[:, 0]) <= 0):
                raise scenario.err(f"{key}.profile", "times must increase")
            s = profile(t - t0, k[:, 0], k[:, 1])
            f, n = f * s[:, None], n * s[:, None]
        f[~mask], n[~mask] = 0.0, 0.0
        out.append(WrenchLoad(ld.link, f, n, tuple(ld.point), frame))
    return out


def _wrench_csv(scenario, key, path):
    from urdf_dyn.io.bounded import InputError, read_numeric_csv
    try:
        _, data = read_numeric_csv(path)         # bounded; a value that is not a finite number: file:line: column
    except InputError as e:
        raise scenario.err(key, str(e)) from None
    if data.ndim != 2 or data.shape[1] != 7 or len(data) < 2 or np.any(np.diff(data[:, 0]) <= 0):
        raise scenario.err(key, f"{path}: need a header and >= 2 rows t, fx, fy, fz, nx, ny, nz with increasing t")
    return data
