"""The launch job ``job: size`` (also ``urdf-dyn size FILE``): prescribe a motion of the independent
coordinates, map it to consistent states and compute the actuator forces by closed-loop inverse dynamics
(RBDA §8.12), with pressures, power and pin loads.

Sections (besides ``robot`` and ``outputs``)::

    job: size
    motion:
      independent: [swing, boom_cyl, stick_cyl, bucket_cyl]   # n − r coordinates that fix the pose
      type: quintic                      # quintic (at rest at each waypoint) | spline
      waypoints: [{swing: 0, boom_cyl: -0.4}, ...]            # unnamed coordinates: initial configuration
      durations: [2.0, ...]              # s per segment
      # csv: recorded.csv                # alternative: columns t, <independent names>
      dt: 0.01                           # s between samples
    payload: {link: bucket, mass: 1800, com: [0.9, 0, 0.3], from: 3.5, until: 7.0}  # kg, m (link frame), s
    actuators:
      actuated: [swing, boom_cyl, ...]   # default: <transmission>s and actuated loops
      bounds: limits                     # optional: keep redundant actuators within <limit effort>
      weights: {boom_cyl: 1.0}           # optional: weighted minimum-norm for redundant actuation
      cylinders:                         # hydraulic pressures: bore, rod diameter [m], cylinders in parallel
        boom_cyl: {bore: 0.12, rod: 0.085, count: 2}
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional, Union

import numpy as np
from pydantic import Field, PositiveInt

from urdf_dyn.io.files import atomic_path
from urdf_dyn.launch.document import (FiniteFloat, LaunchDocument, NonNegativeFloat, PositiveFloat, Section,
                                      build_model, joint_vector, output_dir, write_animation)
from urdf_dyn.launch.registry import Job

__all__ = ["SizeDocument", "run_sizing", "JOB"]


class MotionSpec(Section):
    independent: list[str] = Field(min_length=1, description="the coordinates the motion prescribes")
    type: Literal["quintic", "spline"] = "quintic"
    waypoints: Optional[list[dict[str, FiniteFloat]]] = None
    durations: Optional[list[PositiveFloat]] = Field(None, description="[s] one per segment")
    csv: Optional[str] = Field(None, description="recorded motion: columns t, <independent names>")
    dt: PositiveFloat = Field(0.01, description="[s] between samples")


class Payload(Section):
    link: str
    mass: NonNegativeFloat = Field(description="[kg]")
    com: tuple[FiniteFloat, FiniteFloat, FiniteFloat] = Field((0.0, 0.0, 0.0), description="[m] link frame")
    inertia: Optional[list[list[FiniteFloat]]] = Field(None, description="3×3 [kg m²] about the centre of mass")
    from_: Optional[FiniteFloat] = Field(None, alias="from", description="[s] payload on from")
    until: Optional[FiniteFloat] = Field(None, description="[s] payload on until")


class CylinderSpec(Section):
    bore: PositiveFloat = Field(description="[m]")
    rod: PositiveFloat = Field(description="[m]")
    count: PositiveInt = 1


class Actuators(Section):
    actuated: Optional[list[str]] = None
    weights: Optional[Union[dict[str, PositiveFloat], list[PositiveFloat]]] = None
    bounds: Optional[Literal["limits"]] = None
    cylinders: dict[str, CylinderSpec] = Field(default_factory=dict)


class SizeDocument(LaunchDocument):
    """``job: size``: actuator sizing along a prescribed motion."""
    motion: MotionSpec
    payload: Optional[Payload] = None
    actuators: Actuators = Field(default_factory=Actuators)


def _check_actuators(launch, model):
    """actuators.actuated names actuators that exist (at least one); actuators.cylinders names actuators."""
    from urdf_dyn.applications.actuators import actuators_of
    from urdf_dyn.launch.document import unknown_name
    a = launch.doc.actuators
    known = list(model.joint_names) + [lp.name for lp in model.loops]
    for n in a.actuated or ():
        if n not in known:
            raise launch.err("actuators.actuated", unknown_name("actuator", n, known))
    try:
        names = [x.name for x in actuators_of(model, a.actuated)]
    except KeyError as e:
        raise launch.err("actuators.actuated", e.args[0]) from None
    if not names:
        raise launch.err("actuators.actuated", f"{model.name} has no actuators to size: name at least one joint "
                         "or actuated loop joint (or give the URDF <transmission>s)")
    for n in a.cylinders:
        if n not in names:
            raise launch.err(f"actuators.cylinders.{n}", unknown_name("actuator", n, names))
    if isinstance(a.weights, list) and len(a.weights) != len(names):
        raise launch.err("actuators.weights", f"{len(a.weights)} weights for {len(names)} actuators ({', '.join(names)})")


def run_sizing(launch, out_dir=None, progress=None, echo=print):
    """Run a validated ``job: size`` launch: motion -> consistent states -> actuator forces -> report.
    Returns (SizingResult, {output: path}). Raises LaunchError / ModelError / StateError for bad input."""
    from urdf_dyn.applications.simulate import MAX_SAMPLES
    from urdf_dyn.launch.document import unknown_name
    doc = launch.doc
    mo = doc.motion
    if mo.durations and sum(mo.durations) / mo.dt + 1 > MAX_SAMPLES:  # before any work (issue 15)
        raise launch.err("motion.dt", f"{mo.dt:g} s over {sum(mo.durations):g} s makes {sum(mo.durations) / mo.dt:.3g} "
                         f"samples, more than the limit of {MAX_SAMPLES}; choose a larger dt")
    if mo.csv and not (launch.path.parent / mo.csv).is_file():
        raise launch.err("motion.csv", f"{launch.path.parent / mo.csv}: file not found (relative to the launch file)")
    model = build_model(launch)
    indep = mo.independent
    for j in indep:
        if j not in model.joint_names:
            raise launch.err("motion.independent", unknown_name("joint", j, model.joint_names))
    _check_actuators(launch, model)
    from urdf_dyn.applications.motion import consistent_motion, csv_motion, spline_motion
    from urdf_dyn.applications.simulate import Trajectory
    from urdf_dyn.applications.sizing import Cylinder, size_motion, sizing_table, write_sizing
    idx = [model.joint_index(j) for j in indep]
    if mo.csv:
        motion = csv_motion(launch.path.parent / mo.csv, indep, mo.dt)
    else:
        if not mo.waypoints:
            raise launch.err("motion.waypoints", "give waypoints (or csv)")
        q0 = model.q_initial()
        W = np.array([joint_vector(launch, model, w, f"motion.waypoints[{i}]", q0)[idx]
                      for i, w in enumerate(mo.waypoints)])
        if not mo.durations or len(mo.durations) != len(W) - 1:
            raise launch.err("motion.durations", f"need {len(W) - 1} durations (one per segment)")
        motion = spline_motion(indep, W, list(mo.durations), mo.dt, mo.type)
    pl = doc.payload
    models = None
    if pl:
        if pl.link not in model.links:
            raise launch.err("payload.link", f"unknown link {pl.link!r}")
        loaded = model.with_payload(pl.link, pl.mass, list(pl.com), pl.inertia)
        t_from = -np.inf if pl.from_ is None else pl.from_
        t_until = np.inf if pl.until is None else pl.until
        models = [loaded if t_from <= t <= t_until else model for t in motion.t]
    a = doc.actuators
    cyl = {}
    for name, c in a.cylinders.items():
        if not c.rod < c.bore:
            raise launch.err(f"actuators.cylinders.{name}", "need 0 < rod < bore")
        cyl[name] = Cylinder(c.bore, c.rod, c.count)
    weights = a.weights
    if isinstance(weights, dict):
        from urdf_dyn.applications.actuators import actuators_of
        names = [x.name for x in actuators_of(model, a.actuated)]
        weights = [float(weights.get(n, 1.0)) for n in names]
    outdir = output_dir(launch, out_dir)
    echo(f"robot {model.name!r} from {model.source}: {model.nv} joints, {model.total_mass:.1f} kg"
         + (f"; payload {pl.mass:g} kg on {pl.link}" if pl else "") + f"; motion {motion.t[-1]:g} s, "
         f"{len(motion.t)} samples of {', '.join(indep)}")
    Q, QD, QDD = consistent_motion(model, motion, progress=progress)
    res = size_motion(model, motion.t, Q, QD, QDD, actuated=a.actuated, cylinders=cyl, weights=weights,
                      bounds=a.bounds, models=models, progress=progress)
    written = write_sizing(model, res, outdir)
    traj = Trajectory(motion.t, Q, QD, QDD, np.zeros_like(Q), np.zeros(len(Q)), model.joint_names,
                      {"job": "size", "launch": str(launch.path)})
    written["motion_npz"] = traj.save(outdir / "motion.npz")
    write_animation(launch, model, traj, outdir, written, echo)
    table = sizing_table(res)
    head = (f"actuation: {res.case}; rank G_u = {res.rank_Gu}, degrees of freedom {res.dof}; actuators: "
            f"{', '.join(res.names)}")
    rep = outdir / "sizing_report.md"
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(f"# {model.name}: actuator sizing\n\nlaunch: `{launch.path}`\n\n{head}\n\n{table}\n")
    written["report"] = str(rep)
    echo(head)
    echo(table)
    if res.over_limit:
        echo(f"WARNING: over the effort limit: {', '.join(res.over_limit)}")
    if res.residual is not None and res.residual.size and np.abs(res.residual).max() > 1e-6:
        echo(f"WARNING: under-actuated: largest generalised force the actuators cannot produce "
             f"{np.abs(res.residual).max():.3g}")
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return res, written


JOB = Job("size", SizeDocument, run_sizing, "actuator sizing along a prescribed motion")
