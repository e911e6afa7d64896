"""Machine kinds: what a sizing run (``job: size``) adds for one kind of machine, as a plug-in of the one
pipeline (``SizingPlan.from_scenario`` → ``compute`` → ``reports.sizing_render.render``), never a branch in it.

The pipeline sizes "a machine with actuators": it prescribes the motion, maps it to consistent states,
applies the generic loads (``loads:``, ``payload:``), computes the actuator forces by closed-loop inverse
dynamics (RBDA §8.12) and renders the actuators, the external loads and the strokes. Everything else comes
from the scenario's ``MachineKind``:

==================  ==================================================================================
``name``            the kind's name (``"excavator"``, ``"arm"``)
``sections``        the scenario sections it owns (its schema classes are fields of the job's
                    ``SizeDocument``); a scenario with any of them is of this kind
``plan(plan)``      resolve and check those sections before any work (raise ``scenario.err(key, ...)``);
                    returns what the kind resolved (kept as ``SizingPlan.kind_plan``)
``geometry(plan, cache)``  checks that do not depend on the motion (taken from the ``GeometryCache``)
``ahead(plan, cache, start)``  start the longest of the checks that do not read the motion beside the job
                    (``GeometryCache.ahead``, ``start`` is ``jobs.beside.Beside.start``), right after the plan
``loads(plan, Q, QD, QDD, poses)`` the kind's own loads: ({link: (N, 6)} wrenches, a record for the report)
``actuation(plan, res, f_ext)``  post-processing of the actuator forces (excavator: hydraulics; arm: drives)
``checks(plan, run, cache, echo)``  checks along the motion ({name: result}, typed by the kind)
``summary(run)``, ``warnings(run)``  the lines the job prints
``report``          its part of the report, a ``reports.sizing_render.KindReport``: ``render(run, report)``
                    (sections, tables, plots), ``shade(run)`` (spans on the actuator plot), ``view(run)``
                    (its items of view.json), ``check_plots`` (a cached check's plot, copied not drawn)
``plot_modules``    modules a plot worker imports before it forks (those of the results it unpickles)
==================  ==================================================================================

**How to add a machine kind.** Write its section schemas (pydantic ``Section`` s) and add them as optional
fields of ``jobs.sizing_schema.SizeDocument``; write its compute functions in ``machines/`` (pure: arrays in,
results out) and its report in ``reports/`` (a ``KindReport`` subclass whose ``render(run, report)`` adds Markdown lines,
JSON keys and files through ``report``); subclass ``MachineKind`` here (in a module of its own in
``jobs/``) with the methods above and add an instance to ``jobs.kinds.KINDS``. The pipeline needs no change.
"""
from __future__ import annotations

from urdf_dyn.reports.sizing_render import KindReport

__all__ = ["MachineKind", "GENERIC"]


class MachineKind:
    """The plug-in interface of a machine kind; this base class is also the generic kind (a machine with
    actuators and nothing more: no sections, no loads, checks or report sections of its own)."""
    name = "machine"
    sections: tuple = ()
    #: its part of the report (a ``reports.sizing_render.KindReport``: render, shade, view, check_plots)
    report = KindReport()
    plot_modules: tuple = ("sizing",)

    def applies(self, doc) -> bool:
        """Whether the scenario document ``doc`` has any of the kind's sections."""
        return any(getattr(doc, s, None) for s in self.sections)

    def plan(self, plan):
        """Resolve and check the kind's sections of ``plan.scenario`` (raise ``ScenarioError`` naming the key);
        return what the run needs of them (or None)."""
        return None

    def geometry(self, plan, cache) -> dict:
        """The checks that depend only on the machine's geometry: {name: result}."""
        return {}

    def ahead(self, plan, cache, start):
        """Start, beside the job, the geometry-only checks that the cache does not hold and that take long
        (``GeometryCache.ahead`` with ``start``, ``jobs.beside.Beside.start``); the kind's ``geometry`` or
        ``checks`` later takes them from the cache. Called by the job right after the plan, never in a sweep's
        case. The generic kind starts nothing."""

    def loads(self, plan, Q, QD, QDD, poses=None):
        """The kind's loads along the states Q, QD, QDD (N, nq), ``poses`` the body poses at Q (N, NB + 1, 4, 4)
        (``SizingRun.poses``): ({link: (N, 6)}, record or None)."""
        return {}, None

    def actuation(self, plan, res, f_ext):
        """What the kind computes from the actuator forces ``res`` (a ``machines.sizing.SizingResult``)."""
        return None

    def checks(self, plan, run, cache, echo) -> dict:
        """Checks along the motion ({name: result}); ``run`` holds the motion, loads and actuation so far."""
        return {}

    def summary(self, run) -> list:
        """The lines the job prints after the actuator table."""
        return []

    def warnings(self, run) -> list:
        """One line per problem the job prints as ``WARNING: ...``."""
        return []


#: the generic kind: a scenario with no machine kind's sections
GENERIC = MachineKind()
