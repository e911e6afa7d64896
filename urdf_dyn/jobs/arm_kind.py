"""The industrial arm as a machine kind of the sizing pipeline (``jobs.machine_kind``): its section ``drives``
(the drive data file: a servo motor and a reducer per actuated joint, the wrist's payload limits,
``machines.drives``); its checks along the motion (the electric-drive sizing: ``machines.drives.drive_sizing``
on the pipeline's actuator forces, with the balancers of the model and the payload of ``payload:``); and its
report (``reports.drive_report.render_arm``). The balancers themselves are the robot's (``<balancer>`` in the
URDF or ``robot.balancers`` in the scenario): they enter the actuator forces as passive forces."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from urdf_dyn.jobs.machine_kind import MachineKind
from urdf_dyn.launch.document import Section
from urdf_dyn.reports.drive_report import ArmReport

__all__ = ["DrivesSection", "ArmKind", "ArmPlan", "ARM"]


class DrivesSection(Section):
    """``drives:`` of a sizing scenario: the drive data file (``machines.drives.DriveData``), relative to the
    scenario."""
    data: str = Field(description="YAML drive data: motors, reducers, drives, payload_limits")


@dataclass(frozen=True)
class ArmPlan:
    """The arm's sections resolved: the DriveData (``machines.drives``)."""
    data: object


class ArmKind(MachineKind):
    """An electrically driven arm: see the module docstring."""
    name = "arm"
    sections = ("drives",)
    report = ArmReport()
    plot_modules = ("sizing", "drives")

    def plan(self, plan):
        from urdf_dyn.constraints.inverse import actuators_of
        from urdf_dyn.errors import ScenarioError
        from urdf_dyn.machines.drives import ArmPayload, drive_mismatch, load_drive_data
        sc, model, doc = plan.scenario, plan.model, plan.scenario.doc
        path = Path(sc.path).parent / doc.drives.data
        try:
            data = load_drive_data(path)
        except ScenarioError as e:
            raise sc.err("drives.data", str(e)) from None
        msg = drive_mismatch(data, [a.name for a in actuators_of(model, doc.actuators.actuated)])
        if msg:
            raise sc.err("drives.data", f"{path}: {msg}")
        for j in data.payload_limits:
            if j not in model.joint_names:
                raise sc.err("drives.data", f"{path}: payload_limits.{j}: no joint {j!r}")
        return ArmPlan(data)

    def checks(self, plan, run, cache, echo):
        from urdf_dyn.machines.drives import ArmPayload, drive_sizing
        res, pl, doc_pl = run.actuation, plan.payload, plan.scenario.doc.payload
        pins = {k: (res.pin_force[k], res.pin_moment[k]) for k in res.pin_force}
        payload, loaded = None, None
        if pl is not None:                 # the pipeline's payload (sizing_plan.PointPayload): its mass on (N,)
            loaded = np.asarray(pl.mass, float) > 0
            inertia = np.zeros((3, 3)) if doc_pl.inertia is None else np.asarray(doc_pl.inertia, float)
            payload = ArmPayload(pl.link, float(doc_pl.mass), tuple(pl.com), tuple(map(tuple, inertia)))
        return {"drives": drive_sizing(plan.model, plan.kind_plan.data, run.t, run.q, run.qd, run.qdd, res.names,
                                       res.u, pins, payload, loaded)}

    def summary(self, run):
        from urdf_dyn.reports.drive_report import summary_lines
        return summary_lines(run.checks["drives"])

    def warnings(self, run):
        return [f"drives: {w}" for w in run.checks["drives"].warnings]



#: the arm kind (``jobs.kinds.KINDS``)
ARM = ArmKind()
