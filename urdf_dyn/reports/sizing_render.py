"""Render a sizing run: ``render(run, outdir, plots) -> Manifest`` writes every file of a ``SizingRun``
(``jobs.sizing_run``) once, names each through ``reports.manifest.OUTPUTS`` and returns the manifest (output
key → file). The generic part (the actuators, the external loads, the strokes, the motion, f_ext and
view.json) is here; the machine kind adds its sections through ``kind.render(run, report)``.

Written in this order (the manifest's): actuator_forces.csv, pin_loads.csv, actuator_forces.png,
force_vs_stroke.png, motion.npz, the kind's files, sizing_report.md, sizing_report.json, f_ext.npz,
view.json. The plots go through ``plots`` (``reports.plotting.PlotWorker`` or a sink that draws nothing):
complete after its ``wait()``.

A machine kind's part of the report is a ``KindReport`` (``MachineKind.report``): ``render(run, report)`` adds
its sections, ``shade(run)`` the spans shaded on the actuator plot, ``view(run)`` its items of view.json and
``check_plots`` {geometry-only check: output key of its plot}, so that a plot kept with a cached result can be
copied into place instead of drawn (``present``); ``viewer_files(run, report)`` writes its files the viewers read
(the excavator's soil.csv).

``viewer_inputs(run, outdir)`` writes, before the checks are computed, the files the viewers read of a run
folder (``viewer.rundata``: motion.npz, actuator_forces.csv, pin_loads.csv, the kind's, f_ext.npz, view.json),
so that the job's GIF and recording can be drawn while it computes the checks; ``render`` then records them
in their places without writing them again (their keys in ``present``)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from urdf_dyn.io.files import atomic_path
from urdf_dyn.reports.actuator_report import write_actuator_csvs, write_actuators
from urdf_dyn.reports.manifest import Manifest

__all__ = ["Report", "KindReport", "render", "viewer_inputs", "jsonable", "trajectory_of", "head_of"]


def jsonable(x):
    """``x`` with numpy arrays and scalars as JSON values (non-finite floats: None)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, (np.integer, np.bool_)):
        return x.item()
    return x


class Report:
    """The report being rendered: ``run`` (the SizingRun), ``md`` (Markdown lines), ``js`` (the JSON report),
    ``manifest`` (what was written) and ``plots`` (the plot sink). A writer asks ``path(key)`` for its file
    and records it with ``wrote(key)``; ``plot(key, fn, *args, check=...)`` submits a plot (``check``: the
    geometry-only check the plot draws, so that a cached plot can be copied instead)."""

    def __init__(self, run, outdir, plots, present=()):
        self.run, self.plots, self.present = run, plots, frozenset(present)
        self.manifest = Manifest(outdir)
        self.md: list = []
        self.js: dict = {}

    def path(self, key) -> Path:
        """The file of output ``key``."""
        return self.manifest.path(key)

    def wrote(self, key, path=None):
        """Record that output ``key`` was written (at ``path(key)`` unless given)."""
        return self.manifest.add(key, self.path(key) if path is None else path)

    def has(self, key) -> bool:
        """True, and ``key`` recorded in its place, when output ``key``'s file is already in place (``present``:
        written before the report by ``viewer_inputs``, or a plot copied from the cache); False when the caller
        is to write it."""
        if key in self.present:
            self.manifest.add(key, self.path(key))
            return True
        return False

    def plot(self, key, fn, *args):
        """Submit ``fn(*args)`` (which writes ``path(key)``) to the plot sink — unless the file is already in
        place (``present``: a plot copied from the cache) — and record it."""
        if self.has(key):
            return self.manifest[key]
        return self.manifest.add(key, self.plots.submit(self.path(key), fn, *args))


class KindReport:
    """A machine kind's part of the sizing report; this base is the generic kind's (nothing to add)."""
    #: {geometry-only check: output key of its plot}
    check_plots: dict = {}

    def render(self, run, report):
        """Add the kind's sections, JSON keys and files to ``report``."""

    def shade(self, run) -> list:
        """[(t0, t1, label)] spans shaded on the actuator-force plot."""
        return []

    def view(self, run) -> dict:
        """The kind's items of view.json."""
        return {}

    def viewer_files(self, run, report):
        """Write the kind's files that the viewers read (``viewer.rundata``) through ``report``, unless
        ``report.has`` them; called by ``viewer_inputs`` before the checks (the kind's ``render`` writes the
        same files in their places, through the same writer, unless ``report.has`` them)."""


def trajectory_of(run):
    """The motion of ``run`` as a ``simulation.simulate.Trajectory`` (zero torques; meta: job, scenario)."""
    from urdf_dyn.simulation.simulate import Trajectory
    return Trajectory(run.t, run.q, run.qd, run.qdd, np.zeros_like(run.q), np.zeros(len(run.q)),
                      run.plan.model.joint_names, {"job": "size", "launch": str(run.plan.scenario.path)})


def head_of(run) -> str:
    """The report's first lines: the actuation case, the rank of G_u, the strokes and the checks a cache gave."""
    res = run.actuation
    head = (f"actuation: {res.case}; rank G_u = {res.rank_Gu}, degrees of freedom {res.dof}; actuators: "
            f"{', '.join(res.names)}\n\n{run.strokes_line}")
    if run.provenance:      # the report says which figures a cache gave and how to recompute them
        head += (f"\n\n**From the cache:** {', '.join(run.provenance)} were taken from an earlier run of this machine "
                 "(same robot, scenario sections and library; each entry authenticated); `urdf-dyn size --no-cache` "
                 "recomputes them")
    return head


def render(run, outdir, plots, present=()) -> Manifest:
    """Write the SizingRun ``run`` into ``outdir`` (which must exist); see the module docstring. ``present``:
    output keys whose files are already in place (plots copied from the cache)."""
    from urdf_dyn.machines.sizing import sizing_table
    rep = Report(run, outdir, plots, present)
    model, res, kind, windows = run.plan.model, run.actuation, run.plan.kind.report, run.windows
    write_actuators(rep, phases=windows, shade=kind.shade(run))
    if not rep.has("motion_npz"):
        rep.wrote("motion_npz", trajectory_of(run).save(rep.path("motion_npz")))
    md, js = rep.md, rep.js
    scenario = run.plan.scenario.path
    md += [f"# {model.name}: actuator sizing", "", f"launch: `{scenario}`", "", head_of(run), ""]
    if windows:
        md += ["phases: " + ", ".join(f"{n} {a:.2f}–{b:.2f} s" for n, (a, b) in windows.items()), ""]
    md += ["## Actuators (closed-loop inverse dynamics, RBDA §8.12)", "", sizing_table(res), ""]
    js.update(robot=model.name, launch=str(scenario), case=res.case, phases=windows or {}, actuators={})
    for i, r in enumerate(res.summary()):
        u = res.u[:, i]
        cp, cl = res.capacities(i)
        js["actuators"][r["name"]] = dict(
            unit=r["unit"], peak=r["peak"], rms=r["rms"], peak_push=float(np.maximum(u, 0).max(initial=0)),
            peak_pull=float(np.maximum(-u, 0).max(initial=0)), push_capacity=cp, pull_capacity=cl,
            t_peak_s=float(res.t[int(np.argmax(np.abs(u)))]), peak_power_W=r["peak_power"], net_work_J=r["net_work"],
            positive_work_J=r["work_pos"])
    _external_loads(rep)
    kind.render(run, rep)
    js["strokes"] = run.strokes
    from urdf_dyn.io.escape import md_document      # no raw HTML from a name; no inf, NaN or 300-digit figure
    text = md_document("\n".join(md) + "\n", str(rep.path("report")))
    with atomic_path(rep.path("report")) as tmp:
        Path(tmp).write_text(text)
    rep.wrote("report")
    with atomic_path(rep.path("report_json")) as tmp:
        Path(tmp).write_text(json.dumps(jsonable(js), indent=1, allow_nan=False) + "\n")
    rep.wrote("report_json")
    _write_f_ext(rep)
    _write_view(rep)
    return rep.manifest


def viewer_inputs(run, outdir) -> frozenset:
    """Write the files of ``run``'s folder that the viewers read (``viewer.rundata``: motion.npz,
    actuator_forces.csv, pin_loads.csv, the kind's ``viewer_files``, f_ext.npz, view.json) into ``outdir`` —
    the same bytes ``render`` writes — for a run whose motion, loads and actuation are known and whose checks
    are not computed yet (``jobs.sizing_run.compute``'s ``sized``), so that the job's GIF and recording are
    drawn while it computes the checks. Returns their output keys, for ``render``'s ``present``."""
    rep = Report(run, outdir, None)
    rep.wrote("motion_npz", trajectory_of(run).save(rep.path("motion_npz")))
    write_actuator_csvs(rep)
    run.plan.kind.report.viewer_files(run, rep)
    _write_f_ext(rep)
    _write_view(rep)
    return frozenset(rep.manifest)


def _external_loads(rep):
    """The "External loads" section: per link the peak force and moment of f_ext and when."""
    run, md, js = rep.run, rep.md, rep.js
    if not run.f_ext:
        return
    t = run.actuation.t
    md += ["## External loads (f_ext: soil, payload, loads:)", "",
           "| link | peak force | at | peak moment about the link origin | at |", "|---|---:|---:|---:|---:|"]
    js["external_loads"] = {}
    for link, w in run.f_ext.items():
        fn, nn = np.linalg.norm(w[:, 3:], axis=1), np.linalg.norm(w[:, :3], axis=1)
        i, j = int(np.argmax(fn)), int(np.argmax(nn))
        md.append(f"| {link} | {fn[i] / 1e3:.1f} kN | {t[i]:.2f} s | {nn[j] / 1e3:.1f} kN·m | {t[j]:.2f} s |")
        js["external_loads"][link] = dict(peak_force_N=fn[i], t_peak_force_s=t[i], peak_moment_Nm=nn[j],
                                          t_peak_moment_s=t[j])
    md.append("")


def _write_f_ext(rep):
    """f_ext.npz: t (N,) [s], links (L,) and wrench (L, N, 6) [n; f] (N m, N) in each link's frame about its
    origin — what the run applied, so that the viewer draws the loads without recomputing them."""
    if rep.has("f_ext_npz"):
        return
    run = rep.run
    links = list(run.f_ext)
    W = np.stack([run.f_ext[k] for k in links]) if links else np.zeros((0, len(run.t), 6))
    path = rep.path("f_ext_npz")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, t=run.t, links=np.array(links, dtype=str), wrench=W)
    rep.wrote("f_ext_npz")


def _write_view(rep):
    """view.json: what the viewers (``urdf-dyn view RUN_DIR [--web]``) need beside the run's files to draw it
    (the robot and its packages; the kind's items, e.g. the bench, the cutting edge and the payload)."""
    if rep.has("view_json"):
        return
    run = rep.run
    model = run.plan.model
    items = (tuple(model.package_dirs) + ((), ()))[0]
    view = {"robot": str(Path(model.source).resolve()), "package_dirs": [f"{k}={v}" for k, v in items],
            "loop_tol": 1e-3}
    view.update(run.plan.kind.report.view(run))
    with atomic_path(rep.path("view_json")) as tmp:
        Path(tmp).write_text(json.dumps(view, indent=1, allow_nan=False))
    rep.wrote("view_json")
