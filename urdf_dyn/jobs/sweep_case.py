"""One case of a load-case sweep, run in a worker process (``urdf_dyn.jobs.sweep`` plans and queues them):
``run_case`` runs a case's job with this process's Model of its robot (read once per process) and, for
``job: size``, this process's ``GeometryCache`` (memory tier on: the geometry-only machine checks computed
once per process and robot); ``run_cases`` runs a group of them (one Dask task); ``warm_worker`` loads
imports, kernels and those checks before a worker's first task.

A worker process's state is the one object ``WORKER`` (its models and its geometry cache): a Dask task
is a plain function call in a long-lived process, so what the cases of one process share lives there."""
from __future__ import annotations

import copy
import gc
import importlib
import json
import os
import time
import warnings
from pathlib import Path

from urdf_dyn.jobs.geometry_cache import GeometryCache
from urdf_dyn.launch.document import Scenario, build_model, validate
from urdf_dyn.launch.registry import run_document
from urdf_dyn.reports.sweep_results import case_metrics

__all__ = ["run_case", "run_cases", "warm_worker", "install_geometry", "group_size", "one_line", "WARM_DT",
           "WARM_SPLIT", "WARM_NEVER", "WorkerState", "WORKER"]


class WorkerState:
    """What the cases run in one worker process share: ``models`` {key (robot section, file path, mtime):
    Model} (a Model is immutable, so cases share it; a worker reads each description once) and ``geometry``
    (a ``GeometryCache`` with its memory tier on)."""

    def __init__(self):
        self.models: dict = {}
        self.geometry = GeometryCache(memory=True)


#: this process's WorkerState
WORKER = WorkerState()


def _cached_model(data: dict, base_path: Path):
    """This process's Model of the robot section of ``data`` (read on first use): (model, read_now)."""
    robot = data.get("robot") or {}
    f = (base_path.parent / str(robot.get("file", ""))).resolve()
    try:
        stamp = f.stat().st_mtime_ns
    except OSError:
        stamp = None
    key = json.dumps([str(f), stamp, str(base_path.parent.resolve()), robot], sort_keys=True, default=str)
    if key in WORKER.models:
        return WORKER.models[key], False
    WORKER.models[key] = build_model(Scenario(base_path, data))
    return WORKER.models[key], True


def one_line(e: BaseException) -> str:
    """``Type: message`` on one line, at most 500 characters of the message (a case's error)."""
    return f"{type(e).__name__}: " + " ".join(str(e).split())[:500]


def _size_case(data: dict, base_path: Path, case_dir, model, files: bool):
    """One ``job: size`` case in this process: plan and compute (``jobs.sizing_plan``, ``jobs.sizing_run``)
    with this process's geometry cache; with ``files``, the case's outputs rendered into ``case_dir`` as
    the job writes them (staged: ``jobs.outputs.run_staged``) — its plots, animation and recording too when
    its ``outputs.plots`` is true. Returns the ``SizingRun``."""
    from urdf_dyn.jobs.sizing_plan import SizingPlan
    from urdf_dyn.jobs.sizing_run import compute
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    quiet = lambda *a, **k: None  # noqa: E731 - a case prints nothing: its record says what happened
    scenario = Scenario(base_path, data, model=model)
    validate(scenario, SizeDocument, job="size")
    run = compute(SizingPlan.from_scenario(scenario, model), WORKER.geometry, progress=False, echo=quiet)
    if files:
        from urdf_dyn.jobs.outputs import RecordingTask, run_staged, write_animation
        from urdf_dyn.reports.plotting import NoPlots, PlotWorker
        from urdf_dyn.reports.sizing_render import render

        def stage(outdir, say):
            plots = PlotWorker(parallel=False) if scenario.doc.outputs.plots else NoPlots()
            written = dict(render(run, outdir, plots))
            if plots.draws:
                recording = RecordingTask(scenario, model, outdir, say)
                write_animation(scenario, model, run.trajectory(), outdir, written, say)
                recording.finish(written)
            return run, written
        run_staged(scenario, Path(case_dir), quiet, stage)
    return run


def run_case(job: str, data: dict, base_path: str, case_dir, files: bool = True) -> dict:
    """Run one case in this process: validate ``data`` against ``job``'s schema, reuse this process's Model
    of its robot (read on first use), run the job and return a record: status ("ok" | "failed"), error
    (one line), metrics (``case_metrics`` of the case's ``SizingRun``, taken in process), seconds (wall),
    cpu_seconds (this process's CPU time: what the case costs on a machine shared with others), warnings
    (distinct messages, at most 5), worker (host:pid) and model_built (True if this case read the
    description). ``files``: ``job: size`` writes its outputs to ``case_dir`` only when true (what a sweep
    asks for: ``sweep.tables`` / ``sweep.plots``); other jobs always write theirs there."""
    t0, c0 = time.perf_counter(), time.process_time()
    rec = {"status": "ok", "error": None, "metrics": {}, "warnings": [], "model_built": False,
           "worker": f"{os.uname().nodename}:{os.getpid()}"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model, rec["model_built"] = _cached_model(data, Path(base_path))
            if job == "size":
                result = _size_case(copy.deepcopy(data), Path(base_path), case_dir, model, files)
            else:
                result = run_document(copy.deepcopy(data), base_path, out_dir=str(case_dir), progress=False,
                                      echo=lambda *a, **k: None, job=job, model=model)
                result = result[0] if isinstance(result, tuple) and len(result) == 2 else result
            rec["metrics"] = case_metrics(result)
        except Exception as e:  # noqa: BLE001 - a failing case is a result of the sweep, not its end
            rec["status"], rec["error"] = "failed", one_line(e)
    rec["warnings"] = list(dict.fromkeys(" ".join(str(w.message).split())[:300] for w in caught))[:5]
    rec["seconds"] = time.perf_counter() - t0
    rec["cpu_seconds"] = time.process_time() - c0
    return rec


def run_cases(group) -> list:
    """Run a group of cases (``run_case`` arguments, one tuple each) one after the other in this worker: one
    Dask task per group, so that the scheduler's per-task cost (≈ 10–30 ms) is paid once per group."""
    return [run_case(*args) for args in group]


#: sampling of the warm-up case [s]: coarse, so that it costs little beyond what it loads
WARM_DT = 0.1


#: the geometry-only checks of ``job: size`` split between the workers' warm-ups (each about half the time:
#: the working ranges ≈ ISO 6015 + the lift chart + the stall envelopes): a worker computes one group, and
#: the sweep hands every worker the others' results (``GeometryCache.export``/``install``)
WARM_SPLIT = (("working_range",), ("iso6015", "lift_chart"))

#: the design cases' kept results (``jobs.sizing_design.CACHED_KEYS``) that no warm-up computes: the shortest
#: cycle and the duty mix are keyed by the main cycle's samples, which the warm-up's coarse ``WARM_DT``
#: changes, so a warm-up's result never serves a case
WARM_NEVER = ("cycle", "duty")


def warm_worker(job: str, data: dict, base_path: str, share=None, checks: bool = True) -> dict:
    """Prepare this worker process before its first case: import the job's modules, read the robot of
    ``data`` into the process's Model cache (``_cached_model``) and run ``data`` once in a temporary folder
    with ``motion.dt`` at least ``WARM_DT`` (its record is dropped): that loads the compiled kernels (numba's
    disk cache) and, for ``job: size``, computes the geometry-only machine checks (``run_case``), so no
    case pays for them. ``share`` (i, n): this is worker i of n ≥ 2; its warm-up case computes only the
    checks of ``WARM_SPLIT[i % 2]`` (the other group's sections left out of it), the sweep then installs
    every worker's results in all (``install_geometry``). ``checks=False``: none of them (the sweep's own
    process, warmed before it forks its LocalCluster's workers, ``jobs.sweep.local_cluster``). No warm-up
    computes the design cases' ``WARM_NEVER`` results, nor the buckling check where it leaves out the stall
    envelopes (``_leave_out``).

    The warm-up ends with ``gc.freeze()``: what it loaded (modules, the model, the kernels, the cache) lives
    as long as the process, so the collector's full passes, which would otherwise walk it every few cases
    (≈ 80 ms each), skip it.

    Returns {"worker": host:pid, "seconds", "status", "error", "geometry": {key: pickled result}} (a
    failing warm-up is not an error: the cases report it)."""
    import tempfile

    t0 = time.perf_counter()
    importlib.import_module("urdf_dyn.jobs.sizing_job" if job == "size" else "urdf_dyn.jobs.simulate_job")
    rec = {"status": "failed", "error": None}
    try:
        _cached_model(data, Path(base_path))
        warm = copy.deepcopy(data)
        motion = warm.get("motion")
        if isinstance(motion, dict) and isinstance(motion.get("dt"), (int, float)):
            motion["dt"] = max(float(motion["dt"]), WARM_DT)
        if job == "size":
            _leave_out(warm, share, checks)
        with tempfile.TemporaryDirectory(prefix="urdf_dyn_warm_") as tmp:
            rec = run_case(job, warm, base_path, Path(tmp) / "case", files=False)
    except Exception as e:  # noqa: BLE001 - the case itself reports a bad robot section
        rec = {"status": "failed", "error": one_line(e)}
    gc.collect()
    gc.freeze()
    return {"worker": f"{os.uname().nodename}:{os.getpid()}", "seconds": time.perf_counter() - t0,
            "status": rec["status"], "error": rec["error"], "geometry": WORKER.geometry.export()}


def _leave_out(warm: dict, share, checks: bool):
    """Drop from the warm-up document ``warm`` (in place) what this warm-up does not compute: the other
    workers' ``WARM_SPLIT`` groups (all of them with ``checks=False``), the design cases' ``WARM_NEVER``
    results, and the buckling check where the stall envelopes are left out (its key holds their reach: a
    buckling computed without it serves no case)."""
    if checks and (share is None or share[1] < 2):
        keep = range(len(WARM_SPLIT))
    else:
        keep = (share[0] % len(WARM_SPLIT),) if checks else ()
    for j, group in enumerate(WARM_SPLIT):
        if j not in keep:
            for k in group:
                warm[k] = None
    design = warm.get("design")
    if isinstance(design, dict):
        for k in WARM_NEVER + (("buckling",) if warm.get("iso6015") is None else ()):
            design[k] = None


def install_geometry(blobs: dict) -> int:
    """Add other workers' geometry-only results ({key: pickled result}) to this process's cache (a Dask
    ``client.run`` target); returns how many were new."""
    return WORKER.geometry.install(blobs)


def group_size(n_cases: int, threads: int) -> int:
    """Cases per task: about eight tasks per worker thread (so that the last tasks, when one worker waits for
    the other, are short: a sweep's tail), at most 8 cases a task (Dask's per-task cost, ≈ 10–30 ms, paid
    once per group)."""
    return max(1, min(8, n_cases // max(1, 8 * threads)))


