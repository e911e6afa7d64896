"""The run of a sizing plan: ``compute(plan, cache) -> SizingRun``, the one pipeline of ``job: size``.

    motion (consistent states, RBDA §8.12's position, velocity and acceleration solves)
      → loads (the machine kind's, ``loads:`` wrenches, the payload)
      → actuator forces (closed-loop inverse dynamics, ``machines.sizing.size_motion``)
      → the kind's actuation (hydraulics, drives) → (``sized``) → the geometry-only checks → the kind's
      checks → the strokes

``SizingRun`` is the frozen, typed record of one run: what ``reports.sizing_render.render`` writes, what the
sweep takes its metrics from and what tests assert on. Nothing here names or writes a file."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.reports.sizing_render import head_of, trajectory_of

__all__ = ["SizingRun", "compute"]


@dataclass(frozen=True)
class SizingRun:
    """One sizing run. ``plan`` (the ``SizingPlan``); the motion: ``t`` (N,) [s], ``q``, ``qd``, ``qdd`` (N, nq)
    consistent states, ``windows`` {phase: (t0, t1)} [s], ``poses`` (N, NB + 1, 4, 4) [m] the world poses of
    every body at q (read-only, computed once: RBDA §4.1's forward pass, passed to every load and check that
    needs them); the loads: ``f_ext`` {link: (N, 6)} [n; f] in the
    link frame about its origin (N m, N), ``loads`` the kind's load record (excavator: ``SoilLoads``); the
    actuation: ``actuation`` (``machines.sizing.SizingResult``), ``power`` the kind's post-processing
    (excavator: ``HydraulicsResult``; None without), ``strokes`` {"end_reached": ...} and ``strokes_line`` (the
    prescribed motion against the stroke ends, ``simulation.limits.ends_reached``); ``checks`` {name: result}
    the kind's checks (absent when not asked); ``provenance``: the checks taken from the disk cache."""
    plan: object
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    windows: dict
    f_ext: dict
    loads: object
    actuation: object
    power: object
    strokes: dict
    strokes_line: str
    checks: dict
    provenance: tuple = ()
    poses: np.ndarray = None

    @property
    def model(self):
        """The robot's Model."""
        return self.plan.model

    @property
    def kind(self):
        """The machine kind (``jobs.machine_kind.MachineKind``)."""
        return self.plan.kind

    def trajectory(self):
        """The motion as a ``simulation.simulate.Trajectory`` (``reports.sizing_render.trajectory_of``)."""
        return trajectory_of(self)

    def head(self) -> str:
        """The report's first lines (``reports.sizing_render.head_of``)."""
        return head_of(self)


@dataclass(frozen=True)
class _SoFar:
    """The run up to the kind's checks (what ``MachineKind.checks`` reads)."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    f_ext: dict
    loads: object
    actuation: object
    power: object
    poses: np.ndarray


def compute(plan, cache=None, progress=None, echo=print, sized=None) -> SizingRun:
    """Run ``plan`` (a ``SizingPlan``): see the module docstring. ``cache``: the ``GeometryCache`` of the
    geometry-only checks (None: compute them); ``progress``: passed to the motion and the inverse dynamics;
    ``echo``: where the kind's warnings go; ``sized``: called with the run so far (a SizingRun without checks
    or strokes) once the motion, the loads and the actuation are known, before the checks (the job writes
    the viewers' files then and starts drawing its animation while the checks are computed). The checks,
    the geometry-only ones first, come after the actuation: none of the motion, loads or actuation reads
    them. Raises ModelError / StateError for a motion the loops cannot follow, ScenarioError for loads that
    never act (the soil never reached)."""
    from urdf_dyn.constraints.motion import consistent_motion
    from urdf_dyn.machines.loads import add_wrenches, payload_wrench, wrench_loads
    from urdf_dyn.machines.poses import body_poses
    from urdf_dyn.machines.sizing import size_motion
    from urdf_dyn.simulation.limits import ends_reached
    model, kind, a, t = plan.model, plan.kind, plan.scenario.doc.actuators, plan.t
    if cache is not None:
        cache.begin_run()
    Q, QD, QDD = consistent_motion(model, plan.motion, progress=progress)
    T = body_poses(model, Q)                      # once: the loads and the checks all read them
    f_kind, kind_loads = kind.loads(plan, Q, QD, QDD, poses=T)
    f_ext = add_wrenches({}, f_kind) if f_kind else {}
    f_ext = add_wrenches(f_ext, wrench_loads(model, Q, plan.loads, plan.frames, poses=T))
    pl, models = plan.payload, None
    if pl is not None and pl.models is None:
        f_ext = add_wrenches(f_ext, {pl.link: payload_wrench(model, Q, QD, QDD, pl.link, pl.com, pl.mass, poses=T)})
    elif pl is not None:
        models = pl.models
    res = size_motion(model, t, Q, QD, QDD, actuated=a.actuated, cylinders=plan.cylinders, weights=plan.weights,
                      bounds=a.bounds, models=models, progress=progress, f_ext=f_ext or None)
    power = kind.actuation(plan, res, f_ext)
    if sized is not None:
        sized(SizingRun(plan, t, Q, QD, QDD, plan.windows, f_ext, kind_loads, res, power, {}, "", {}, (), T))
    checks = dict(kind.geometry(plan, cache))
    checks.update(kind.checks(plan, _SoFar(t, Q, QD, QDD, f_ext, kind_loads, res, power, T), cache, echo))
    ends, ends_line = ends_reached(model, t, Q)
    provenance = tuple(cache.served_from_disk()) if cache is not None else ()
    return SizingRun(plan, t, Q, QD, QDD, plan.windows, f_ext, kind_loads, res, power, {"end_reached": ends},
                     ends_line, checks, provenance, T)
