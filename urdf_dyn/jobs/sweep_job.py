"""The launch job ``job: sweep`` (also ``urdf-dyn sweep FILE``): run a matrix of load cases of another job
(``size`` by default) on Dask and keep the worst of each actuator and pin.

Sections::

    job: sweep
    sweep:
      base: excavator_dig.scenario.yaml    # the launch file to vary (relative to this one); without it, this
                                         # file's other sections (robot, motion, ...) are the base document
      job: size                          # the job each case runs
      parameters:                        # path into the base document -> values
        payload.mass: [0, 900, 1800, 2700]                  # a list (numbers, text, lists)
        motion.durations[2]: {start: 3.0, stop: 6.0, step: 1.0}   # a range, stop included (or num: 4)
        actuators.cylinders.boom_cyl.bore: [0.12, 0.13]
      combine: product                   # product (Cartesian, default) | zip (all lists side by side)
      zip: [[payload.mass, payload.until]]   # groups that vary together inside a product
      set: {motion.dt: 0.05}             # fixed changes applied to every case
      scheduler: tcp://head:8786         # optional: an existing Dask cluster (default: a LocalCluster);
                                         # used only with --trust-scheduler (see below)
      workers: 2                         # LocalCluster processes (default: one per core; 0: no Dask, in turn)
      tables: false                      # job: size: each case's tables and reports (CSV, JSON, Markdown, npz)
      plots: false                       # job: size: each case's PNG plots (and the base's animation/recording)
    outputs:
      directory: urdf_dyn_out/excavator_sweep

Every case is checked against its job's schema before anything runs: a path the schema does not know, a
list index out of range or a value of the wrong type is a one-line ScenarioError naming
``sweep.parameters.<path>`` (exit status 2 from the CLI). A ``scheduler`` address in a file is refused unless the command line says ``--trust-scheduler``: Dask
unpickles what a scheduler sends while connecting, so a downloaded file naming a hostile "scheduler" would
run code on this machine; choosing a scheduler is the user's decision (``--scheduler ADDRESS``). Ranges and
grids are counted before anything is built (at most ``sweep_checks.MAX_CASES`` cases), ``workers`` is at
most ``sweep_checks.MAX_WORKERS``, a stored record is used only if it is the record of its case, and a
sweep whose every case fails is an error (exit status 2). Cases drop the base's ``outputs``: a ``job: size``
case writes no file (its metrics are taken from its ``SizingRun`` in the worker and stored in its record)
unless ``sweep.tables: true`` (the job's tables and reports) or ``sweep.plots: true`` (those and its plots,
with the base's animation and recording keys kept too), to ``<out>/cases/<hash>/``; other jobs always write
their outputs there. The machine checks
that depend only on the geometry (ISO 6015, lift chart, working ranges, stall envelopes) are computed once
per worker and robot (the worker's ``jobs.geometry_cache.GeometryCache``, ``jobs.sweep_case.WORKER``). The sweep writes ``results.parquet``,
``results.csv``, ``envelope.json``, ``peak_vs_<param>.png``, ``heatmap_peak.png`` (two parameters) and
``summary.md`` (``urdf_dyn.reports.sweep_results``). Rerunning in the same folder computes only the
cases not yet there; Ctrl-C keeps every finished case and writes the tables of what is done.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from urdf_dyn.errors import ScenarioError
from urdf_dyn.io.files import atomic_path
from urdf_dyn.launch.document import (FiniteFloat, OutputsSection, PositiveFloat, Section, output_dir,
                                      read_scenario, validate)
from urdf_dyn.launch.registry import Job, get_job
from urdf_dyn.jobs.sweep_checks import MAX_WORKERS, probe_scheduler, scheduler_address

__all__ = ["SweepDocument", "SweepResult", "plan_sweep", "run_sweep", "run_sweep_file", "JOB"]


class RangeSpec(Section):
    """start … stop (included) by ``step``, or ``num`` evenly spaced values."""
    start: FiniteFloat
    stop: FiniteFloat
    step: Optional[PositiveFloat] = None
    num: Optional[PositiveInt] = None

    @model_validator(mode="after")
    def _one_of(self):
        if (self.step is None) == (self.num is None):
            raise ValueError("give exactly one of step and num")
        return self


class SweepSpec(Section):
    base: Optional[str] = Field(None, description="launch file to vary, relative to this one")
    job: str = Field("size", description="the job every case runs")
    parameters: dict[str, Union[RangeSpec, list[Any]]] = Field(
        min_length=1, description="path into the launch document (payload.mass, motion.durations[2]) -> values")
    combine: Literal["product", "zip"] = "product"
    zip: list[list[str]] = Field(default_factory=list, description="groups of parameters that vary together")
    set: dict[str, Any] = Field(default_factory=dict, description="path -> value applied to every case")
    scheduler: Optional[str] = Field(None, pattern=r"^[a-z]+://\S+$",
                                     description="address of a Dask scheduler (default: a LocalCluster)")
    workers: Optional[NonNegativeInt] = Field(
        None, le=MAX_WORKERS, description="LocalCluster worker processes (default one per core; 0: in turn, without Dask)")
    tables: bool = Field(False, description="job: size: each case writes the job's tables and reports (CSV, JSON, "
                         "Markdown, npz) to cases/<hash>/; default false: a case writes only its record (metrics)")
    plots: bool = Field(False, description="job: size: each case writes its tables, reports and PNG plots (and the "
                        "base's outputs.animation and outputs.recording); default false: no plots")


class SweepDocument(Section):
    """``job: sweep``: load cases of another job on Dask. Sections other than these form the base document
    (validated per case by that job's schema)."""
    model_config = ConfigDict(extra="allow")
    job: Optional[str] = None
    sweep: SweepSpec
    outputs: OutputsSection = Field(default_factory=OutputsSection)


@dataclass
class SweepResult:
    """A finished (or interrupted) sweep: records (one dict per case, ``sweep.run_case``), the pyarrow
    table, the envelope and the run's stats (computed, skipped, failed, seconds, workers, interrupted)."""
    records: list
    table: object
    envelope: list
    stats: dict
    params: list = field(default_factory=list)


def _base_document(launch):
    """(base document, file its paths resolve against). Its ``outputs``: for ``job: size`` cases
    ``{plots: sweep.plots}`` and, with plots, the base's animation and recording keys; none for other jobs."""
    s = launch.doc.sweep
    own = {k: v for k, v in launch.data.items() if k not in ("job", "sweep", "outputs")}
    if s.base:
        base_launch = read_scenario(launch.path.parent / s.base)
        data = copy.deepcopy(base_launch.data)
        data.update(own)  # sections given in the sweep file replace the base's
        path = base_launch.path
    else:
        data, path = own, launch.path
    base_out = data.pop("outputs", None) or {}
    if "sweep" in data:
        raise launch.err("sweep.base", f"{path} is itself a sweep")
    if s.job == "size":            # per-case plots (and animation, recording) only when the sweep asks
        out = {"plots": bool(s.plots)}
        if s.plots and isinstance(base_out, dict):
            out.update({k: v for k, v in base_out.items() if k != "directory"})
        data["outputs"] = out
    return data, path


def plan_sweep(launch):
    """The cases of a validated ``job: sweep`` launch, each checked against its job's schema, without
    running any: (cases, {parameter: values spec}, axes {parameter: parameters zipped with it}). Raises
    ScenarioError naming ``sweep.<key>``."""
    from urdf_dyn.jobs.sweep import expand, make_cases, parse_path, sweep_axes
    s = launch.doc.sweep
    try:
        get_job(s.job)
    except KeyError as e:
        raise launch.err("sweep.job", e.args[0]) from None
    if s.job == "sweep":
        raise launch.err("sweep.job", "a sweep of sweeps is not supported")
    for kind, keys in (("parameters", s.parameters), ("set", s.set)):
        for k in keys:
            try:
                parse_path(k)
            except ValueError as e:
                raise launch.err(f"sweep.{kind}.{k}", str(e)) from None
    params = {k: (v.model_dump(exclude_none=True) if isinstance(v, RangeSpec) else v)
              for k, v in s.parameters.items()}
    try:
        combos = expand(params, s.zip, s.combine)
    except ValueError as e:
        key = "sweep.zip" if str(e).startswith("zip") else "sweep.parameters"
        name = next((k for k in params if str(e).startswith(f"{k}: ")), None)
        if name is not None:
            key, e = f"sweep.parameters.{name}", str(e).removeprefix(f"{name}: ")
        raise launch.err(key, str(e).removeprefix("zip: ")) from None
    base, base_path = _base_document(launch)
    cases = make_cases(base, base_path, s.job, combos, fixed=s.set, source=launch.path, files=s.tables or s.plots)
    return cases, params, sweep_axes(params, s.zip, s.combine)


def _where_to_run(launch, scheduler, workers, trust_scheduler):
    """(scheduler address or None, workers) from the command line, else the file; a file's scheduler only
    with ``trust_scheduler``. Raises ScenarioError naming the option or key."""
    s = launch.doc.sweep
    key = "--scheduler" if scheduler else "sweep.scheduler"
    if not scheduler and s.scheduler and not trust_scheduler:
        raise launch.err("sweep.scheduler", f"{s.scheduler!r} refused: Dask unpickles what a scheduler sends "
                         "while connecting, so an address in a file could run code on this machine; give "
                         "--scheduler ADDRESS on the command line, or run `urdf-dyn sweep FILE --trust-scheduler` "
                         "if you trust this file")
    scheduler = scheduler or s.scheduler
    if scheduler and not hasattr(scheduler, "submit"):
        try:
            scheduler = scheduler_address(scheduler)
            probe_scheduler(scheduler)  # before any case is planned: a Dask scheduler answers there
        except ValueError as e:
            raise launch.err(key, str(e)) from None
    workers = s.workers if workers is None else workers
    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        raise launch.err("--workers", f"expected 0 to {MAX_WORKERS} worker processes, got {workers}")
    return scheduler, workers


def run_sweep(launch, out_dir=None, progress=None, echo=print, scheduler=None, workers=None,
              trust_scheduler=False):
    """Run a validated ``job: sweep`` launch (see the module docstring); ``scheduler``/``workers`` override
    the file's; ``trust_scheduler`` lets the file's ``sweep.scheduler`` be used. Returns (SweepResult,
    {output: path}). Raises ScenarioError for a bad sweep before any case runs (a scheduler address in the
    file without ``trust_scheduler`` included), when every case failed, and KeyboardInterrupt after writing
    the tables of the finished cases when interrupted."""
    from urdf_dyn.jobs.sweep import execute, wait_closed
    s = launch.doc.sweep
    scheduler, workers = _where_to_run(launch, scheduler, workers, trust_scheduler)
    cases, params, axes = plan_sweep(launch)
    base_path = Path(cases[0].base_path)
    outdir = output_dir(launch, out_dir)
    where = (scheduler if scheduler else "in this process" if workers == 0 else
             f"a LocalCluster of {workers or 'one worker per core'}")
    echo(f"sweep: {len(cases)} cases of job {s.job!r} ({base_path.name}) over {', '.join(params)} on {where}; "
         f"results in {outdir}")
    try:
        stats = execute(cases, outdir, scheduler=scheduler, workers=workers, progress=progress, echo=echo)
        return _finish(launch, s, cases, params, axes, outdir, stats, echo)
    finally:
        wait_closed()


def _finish(launch, s, cases, params, axes, outdir, stats, echo):
    """The tables, envelope, plots and summary of a run sweep (``run_sweep``)."""
    from urdf_dyn.jobs.sweep import load_record
    from urdf_dyn.reports.sweep_results import (envelope, plot_heatmap, plot_peaks, results_table,
                                                write_summary, write_table)
    records = []
    for c in cases:
        r = load_record(outdir, c.hash, c)
        if r is not None:
            r.update(index=c.index, params=c.params)
            records.append(r)
    names = list(params)
    written = {}
    table = results_table(records, names)
    env = envelope(records, names)
    if records:
        written.update(write_table(table, outdir))
        p = outdir / "envelope.json"
        with atomic_path(p) as tmp:
            Path(tmp).write_text(json.dumps(env, indent=1, default=str))
        written["envelope"] = str(p)
        plots = plot_peaks(records, names, outdir, axes=axes)
        hm = plot_heatmap(records, names, outdir, axes=axes)
        plots += [hm] if hm else []
        written.update({Path(x).stem: x for x in plots})
        written["summary"] = write_summary(outdir / "summary.md", records, names, env, stats,
                                           head=f"`{launch.path.name}`", plots=plots)
    ok = sum(r["status"] == "ok" for r in records)
    if stats.get("warm_up"):
        echo("workers warm: " + ", ".join(f"{w['worker']} {w['seconds']:.1f} s" + ("" if w["status"] == "ok" else
                                          f" (warm-up case failed: {w['error']})") for w in stats["warm_up"])
             + f"; cluster start and warm-up {stats.get('start_seconds', float('nan')):.1f} s of the "
             f"{stats['seconds']:.1f} s")
    echo(f"{ok} of {len(cases)} cases ok, {len(records) - ok} failed; computed {stats['computed']}, reused "
         f"{stats['skipped']}; {stats['seconds']:.1f} s" + (f" ({stats['computed'] / stats['seconds']:.2f} cases/s)"
                                                          if stats["computed"] and stats["seconds"] else ""))
    for e in env:
        if e["metric"].startswith(("peak[", "pin_force[", "stability", "pump")):
            echo(f"  worst {e['metric']}: {e['value']:.6g} in case {e['case']} "
                 f"({', '.join(f'{k}={v}' for k, v in e['params'].items())})")
    for r in records:
        if r["status"] != "ok":
            echo(f"  case {r['index']} failed: {r['error']}")
    if written:
        echo("wrote: " + ", ".join(str(v) for v in written.values()))
    result = SweepResult(records, table, env, stats, names)
    if stats.get("interrupted"):
        echo(f"interrupted: {len(records)} of {len(cases)} cases kept; rerun to compute the rest")
        raise KeyboardInterrupt
    if records and not ok:
        raise launch.err("sweep", f"every one of the {len(records)} cases failed (records in {outdir / 'cases'}); "
                         f"case {records[0]['index']}: {records[0]['error']}")
    return result, written


def run_sweep_file(path, out_dir=None, scheduler=None, workers=None, progress=None, echo=print,
                   trust_scheduler=False):
    """Read and validate a sweep launch file and run it (``urdf-dyn sweep``); see ``run_sweep``."""
    launch = read_scenario(path)
    if launch.data.get("job") not in (None, "sweep"):
        raise launch.err("job", f"expected job: sweep, got {launch.data.get('job')!r}")
    validate(launch, SweepDocument, job="sweep")
    return run_sweep(launch, out_dir=out_dir, progress=progress, echo=echo, scheduler=scheduler, workers=workers,
                     trust_scheduler=trust_scheduler)


JOB = Job("sweep", SweepDocument, run_sweep, "load-case sweeps of another job on Dask, with the envelope")
