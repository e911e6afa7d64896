"""Load-case sweeps: expand a ``sweep:`` section into launch documents (one per case), check every case
against its job's schema before anything runs, and run the cases on Dask (``dask.distributed``) — an
embedded ``LocalCluster`` (one single-threaded worker process per core) or a user's scheduler.

A case is the base launch document (a dict) with parameter paths replaced: ``payload.mass``,
``motion.durations[2]``, ``actuators.cylinders.boom_cyl.bore``. Its key is a hash of the resolved document
(``outputs`` excluded, the robot file's bytes included), so a rerun in the same output folder skips what
is already computed. Each finished case is written at once to ``<out>/cases/<hash>.json`` by the client
(Ctrl-C keeps every finished case); the job's own outputs (CSV, PNG) go to ``<out>/cases/<hash>/`` on the
worker's file system. Workers keep the loaded ``Model`` of each robot description in a per-process cache,
so a description is read once per worker, not once per case, and the geometry-only machine checks of
``job: size`` likewise (the worker's ``jobs.geometry_cache.GeometryCache``). Each worker runs one coarse warm-up
case before its first task (``warm_worker``): imports, compiled kernels and those checks, once. A case that raises is recorded with its error
(one line) and the others go on.

Tables, envelope, plots and summary: ``urdf_dyn.reports.sweep_results``; the launch job:
``urdf_dyn.jobs.sweep_job``.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urdf_dyn.extras import require
from urdf_dyn.errors import ScenarioError
from urdf_dyn.io.files import atomic_path
from urdf_dyn.launch.document import Scenario, validate
from urdf_dyn.launch.registry import get_job
from urdf_dyn.jobs.sweep_case import group_size, install_geometry, one_line, run_case, run_cases, warm_worker
from urdf_dyn.jobs.sweep_checks import check_kinds, check_record, count_cases, count_values, probe_scheduler

__all__ = ["Case", "parse_path", "set_path", "expand", "sweep_axes", "make_cases", "case_hash", "run_case", "run_cases",
           "warm_worker", "group_size",
           "execute", "wait_closed", "local_cluster", "fork_workers", "QUIET_CLUSTER"]

_SEG = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


# ---------------------------------------------------------------------------------------------------------
# paths into a launch document
# ---------------------------------------------------------------------------------------------------------
def parse_path(path: str) -> list:
    """``"motion.durations[2]"`` -> ``["motion", "durations", 2]``. Raises ValueError for a malformed path."""
    if not isinstance(path, str) or not path or path.startswith(".") or path.endswith(".") or ".." in path:
        raise ValueError(f"malformed path {path!r} (expected keys joined by '.', list items as [i])")
    out, pos = [], 0
    for m in _SEG.finditer(path):
        gap = path[pos:m.start()]
        if gap not in ("", ".") or (gap == "." and m.group(2) is not None):
            raise ValueError(f"malformed path {path!r}")
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if pos != len(path) or not isinstance(out[0], str):
        raise ValueError(f"malformed path {path!r}")
    return out


def set_path(doc: dict, path: str, value):
    """Set ``path`` (``a.b[2].c``) in the nested dict/list ``doc`` in place. Missing mapping keys are created
    (the job's schema then says whether they exist); list items must exist. Raises ValueError naming the
    first segment that does not fit."""
    segs = parse_path(path)
    node, where = doc, ""
    for i, s in enumerate(segs):
        last = i == len(segs) - 1
        if isinstance(s, int):
            if not isinstance(node, list):
                raise ValueError(f"{where or 'top level'} is not a list")
            if not -len(node) <= s < len(node):
                raise ValueError(f"index {s} out of range ({where} has {len(node)} items)")
        elif not isinstance(node, dict):
            raise ValueError(f"{where or 'top level'} is not a mapping (got {node!r})")
        if last:
            node[s] = copy.deepcopy(value)
            return doc
        if isinstance(s, str) and node.get(s) is None:
            node[s] = [] if isinstance(segs[i + 1], int) else {}
        node = node[s]
        where += f"[{s}]" if isinstance(s, int) else (f".{s}" if where else s)
    return doc


# ---------------------------------------------------------------------------------------------------------
# expansion: parameters -> combinations -> cases
# ---------------------------------------------------------------------------------------------------------
def _values(spec):
    """A parameter's values: a list, or a range {start, stop, step} / {start, stop, num} (stop included),
    counted (``sweep_checks.count_values``) before it is made."""
    count_values(spec)
    if isinstance(spec, dict):
        a, b = float(spec["start"]), float(spec["stop"])
        if spec.get("num") is not None:
            v = np.linspace(a, b, int(spec["num"]))
        else:
            step = float(spec["step"])
            v = np.arange(a, b + 0.5 * step * np.sign(b - a or 1), step) if step else np.array([a])
        return [float(np.round(x, 12)) for x in v]
    return list(spec)


def expand(parameters: dict, zip_groups=(), combine="product") -> list:
    """Combinations of named parameter values: a list of {path: value}. ``parameters``: {path: list | range};
    ``zip_groups``: lists of paths that vary together (equal lengths); every other parameter, and the
    groups, combine as a Cartesian product — or all are zipped when ``combine == "zip"``. Raises ValueError
    naming the parameter for unequal lengths, unknown names in a group, or an empty list."""
    vals = {}
    for k, v in parameters.items():
        try:
            vals[k] = _values(v)
            check_kinds(vals[k])
        except ValueError as e:
            raise ValueError(f"{k}: {e}") from None
        if not vals[k]:
            raise ValueError(f"{k}: no values")
    groups = [list(g) for g in zip_groups] if combine == "product" else [list(vals)]
    seen = set()
    for g in groups:
        for k in g:
            if k not in vals:
                raise ValueError(f"zip: {k!r} is not a swept parameter ({', '.join(vals)})")
            if k in seen:
                raise ValueError(f"zip: {k!r} is in two groups")
            seen.add(k)
        n = {len(vals[k]) for k in g}
        if len(n) > 1:
            raise ValueError(f"zip: {', '.join(g)} have different numbers of values "
                             f"({', '.join(str(len(vals[k])) for k in g)})")
    count_cases([len(vals[g[0]]) for g in groups] + [len(v) for k, v in vals.items() if k not in seen])
    axes = []
    for k in vals:  # in the order given; a zip group sits where its first member is
        if k in seen:
            g = next(g for g in groups if k in g)
            if g[0] == k:
                axes.append([dict(zip(g, row)) for row in zip(*(vals[x] for x in g))])
        else:
            axes.append([{k: x} for x in vals[k]])
    return [dict(kv for part in combo for kv in part.items()) for combo in itertools.product(*axes)]


def sweep_axes(parameters, zip_groups=(), combine="product") -> dict:
    """The independent axes of a sweep: {first parameter of each axis: the parameters zipped with it}."""
    names = list(parameters)
    if combine == "zip":
        return {names[0]: names[1:]}
    grouped = {k: list(g) for g in zip_groups for k in g}
    return {k: [x for x in grouped.get(k, [k]) if x != k] for k in names
            if k not in grouped or grouped[k][0] == k}


@dataclass
class Case:
    """One load case: its index in the sweep, the swept values {path: value}, the file its relative paths
    are resolved against, the job name, the hash that keys its results and the base document it shares
    with the other cases; ``files``: whether the case writes its job's output files (``job: size``: only when
    the sweep asks, ``sweep.tables`` / ``sweep.plots``); ``data`` is its resolved launch document, built when
    asked (a million cases hold a million small parameter dicts, not a million documents)."""
    index: int
    params: dict
    base_path: str
    job: str
    hash: str
    base: dict
    files: bool = True

    @property
    def data(self) -> dict:
        doc = copy.deepcopy(self.base)
        for p, v in self.params.items():
            set_path(doc, p, v)
        return doc


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def case_hash(job: str, data: dict, base_path, digests: dict = None, files: bool = False) -> str:
    """16 hex digits of SHA-256 over the job name, the document without ``outputs`` (kept when it asks for
    plots: such a case writes more than one without) (canonical JSON), ``files`` when true (a case that
    writes its tables is not the record of one that does not) and the bytes of the robot file it names (not
    the files a xacro includes): equal hashes mean equal results. ``digests``: {path: SHA-256} remembered
    between calls, so a sweep reads the robot file once."""
    doc = {k: v for k, v in data.items() if k not in ("outputs", "job")}
    if isinstance(data.get("outputs"), dict) and data["outputs"].get("plots"):
        doc["outputs"] = data["outputs"]       # a case with plots is not the record of one without
    elif files:
        doc["case_files"] = True               # nor is a case with its tables the record of one without
    robot = (Path(base_path).parent / str((data.get("robot") or {}).get("file", ""))).resolve()
    digests = {} if digests is None else digests
    if robot not in digests:
        digests[robot] = _file_digest(robot)
    text = json.dumps({"job": job, "doc": doc, "robot_sha256": digests[robot]}, sort_keys=True,
                      default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _related(a: str, b: str) -> bool:
    """Is one key path inside the other (``payload`` and ``payload.mass``; ``motion.durations[2]``)?"""
    a, b = (x.replace("[", ".[") for x in (a, b))
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def make_cases(base: dict, base_path, job: str, combos: list, fixed: dict = None, where="sweep",
               source=None, files: bool = True) -> list:
    """The cases of a sweep, each validated against ``job``'s schema: ``base`` (the launch document without
    its ``sweep`` section) with ``fixed`` {path: value} and then each combination applied.

    Raises ScenarioError naming ``<where>.parameters.<path>`` (or ``<where>.set.<path>``) and the value when a
    path does not fit the document or the schema refuses the value; an error of the base document itself
    names its own key. Relative paths resolve against ``base_path``; errors name ``source`` (the sweep's
    launch file; default ``base_path``). ``files``: whether the cases write their job's output files
    (``Case.files``; other jobs than ``size`` always do)."""
    schema = get_job(job).schema
    base = copy.deepcopy(base)
    base["job"] = job
    base_file = Path(base_path)
    sweep_file = Path(source or base_path)

    def _apply(doc, path, value, kind):
        try:
            set_path(doc, path, value)
        except ValueError as e:
            raise ScenarioError(f"{sweep_file}: {where}.{kind}.{path}: {e}") from None

    for p, v in (fixed or {}).items():
        _apply(base, p, v, "set")
    try:
        validate(Scenario(base_file, copy.deepcopy(base)), schema, job=job)
    except ScenarioError as e:
        msg = str(e).removeprefix(f"{base_file}: ")
        raise ScenarioError(f"{sweep_file}: {msg} (in the base document of the sweep)") from None
    files = bool(files) or job != "size"
    cases, checked, digests = [], {}, {}
    for i, combo in enumerate(combos):
        doc = copy.deepcopy(base)
        for p, v in combo.items():
            _apply(doc, p, v, "parameters")
        try:
            validate(Scenario(base_file, doc), schema, job=job)
        except ScenarioError as e:  # the base passed: a swept value is at fault; name it
            msg = str(e).removeprefix(f"{base_file}: ")
            key = msg.split(": ", 1)[0]
            near = [p for p in combo if _related(p, key)] or list(combo)
            what = ", ".join(f"{where}.parameters.{p} = {combo[p]!r}" for p in near)
            raise ScenarioError(f"{sweep_file}: {what}: {msg}") from None
        h = case_hash(job, doc, base_file, digests, files=files and job == "size")
        if h in checked:
            raise ScenarioError(f"{sweep_file}: {where}.parameters: cases {checked[h]} and {i} are the same "
                              "document (a repeated value?)")
        checked[h] = i
        cases.append(Case(i, dict(combo), str(base_file), job, h, base, files))
    return cases


# ---------------------------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------------------------
def fork_workers() -> bool:
    """Whether a LocalCluster's worker processes are forked from this one (``local_cluster``): where a
    process can be forked (Linux) and the environment variable URDF_DYN_SWEEP_FORK is not 0. A forked worker
    starts in ≈ 0.2 s with this process's imports, models and loaded kernels; a spawned one (Dask's default,
    and the only way on macOS and Windows) starts a new interpreter and imports everything again (≈ 1.5–2 s
    a worker on 2 cores)."""
    import multiprocessing
    import sys
    return (os.environ.get("URDF_DYN_SWEEP_FORK", "1") != "0" and sys.platform.startswith("linux")
            and "fork" in multiprocessing.get_all_start_methods())


#: Dask settings of the embedded LocalCluster (no dashboard shows what they gather): no statistical profiler
#: (a stack sample of the running case every 10 ms), the event loop's health check every 500 ms (not 20) and
#: the system monitor every 2 s (not 0.5): they ran in each worker's other threads, ≈ 9-14 ms of CPU a case,
#: now ≈ 1.5-2.5 ms (load 5-7)
QUIET_CLUSTER = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "500ms",
                 "distributed.admin.system-monitor.interval": "2s"}


def local_cluster(workers=None, warm=None):
    """An embedded ``dask.distributed.LocalCluster``: ``workers`` processes (default one per core), one
    thread each (the kernels hold the GIL: threads would take turns), no dashboard. Its own logs are
    silenced below CRITICAL: a case that fails is recorded with its error by the sweep, and the workers'
    heartbeat errors while the cluster shuts down (a race inside distributed) would otherwise print
    tracebacks to the user's terminal.

    Where ``fork_workers()``, the workers are forked from this process (Dask's
    ``distributed.worker.multiprocessing-method: fork``), after ``warm`` (job, data, base_path: a case)
    has warmed it: ``sweep_case.warm_worker`` without the geometry checks — the job's imports, the robot's
    Model and the compiled kernels, loaded once here and inherited by every worker. The cluster runs with
    ``QUIET_CLUSTER``'s settings."""
    import logging

    import dask

    from urdf_dyn.processes import forking
    LocalCluster = require("distributed", "the load-case sweep").LocalCluster
    n = int(workers or os.cpu_count() or 1)
    fork = fork_workers()
    if fork and warm is not None:
        warm_worker(*warm, checks=False)
    config = dict(QUIET_CLUSTER, **({"distributed.worker.multiprocessing-method": "fork"} if fork else {}))
    with dask.config.set(config), forking():    # the cluster starts its event loop in a thread first
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                            silence_logs=logging.CRITICAL)


def _record_path(out_dir, h) -> Path:
    return Path(out_dir) / "cases" / f"{h}.json"


def load_record(out_dir, h, case=None):
    """The stored record of case ``h`` in ``out_dir`` (None if absent or unreadable). With ``case``, the
    record is checked to be that case's (``sweep_checks.check_record``: ScenarioError naming the file)."""
    if case is not None:
        return check_record(_record_path(out_dir, h), case)
    from urdf_dyn.io.bounded import InputError, read_json
    p = _record_path(out_dir, h)
    if not p.is_file():
        return None
    try:
        return read_json(p, max_depth=32, what="sweep record", allow_nan=True)
    except InputError:
        return None


def _save_record(out_dir, case: Case, rec: dict) -> dict:
    rec = {"hash": case.hash, "index": case.index, "params": case.params, "job": case.job, **rec}
    p = _record_path(out_dir, case.hash)
    with atomic_path(p) as tmp:
        Path(tmp).write_text(json.dumps(rec, indent=1, default=str))
    return rec


def execute(cases, out_dir, scheduler=None, workers=None, progress=None, echo=print, window=None) -> dict:
    """Run the cases not yet in ``out_dir/cases`` (failed ones are retried) and store each record as it
    finishes.

    ``scheduler``: None for an embedded LocalCluster of ``workers`` processes (default one per core), an
    address (``tcp://host:8786``) for an existing cluster, or a ``distributed.Client``; ``workers=0`` runs the
    cases one after the other in this process (no Dask: the baseline of the benchmark). At most ``window``
    cases (default 8 per worker thread, ≥ 16) are queued at once, so a million-case sweep does not flood
    the scheduler. A progress bar (tqdm) shows cases done, failed and the ETA; ``progress=False`` hides it.

    Returns {"computed", "skipped", "failed", "seconds", "workers", "interrupted"} (and on Dask "warm_up":
    each worker's ``warm_worker`` record, "start_seconds": the cluster's start and the warm-ups). On Ctrl-C
    the queued cases are cancelled, every finished one is kept and the stats say ``interrupted``."""
    from tqdm.auto import tqdm
    out_dir = Path(out_dir)
    (out_dir / "cases").mkdir(parents=True, exist_ok=True)
    pending, skipped = [], 0
    for c in cases:
        r = load_record(out_dir, c.hash, c)
        if r is not None and r.get("status") == "ok":
            skipped += 1
        else:
            pending.append(c)
    stats = {"computed": 0, "skipped": skipped, "failed": 0, "seconds": 0.0, "workers": 0, "interrupted": False}
    bar = tqdm(total=len(cases), initial=skipped, unit="case", desc="cases", smoothing=0.1,
               disable=None if progress is None else not progress)
    t0 = time.perf_counter()

    def done(case, rec):
        rec = _save_record(out_dir, case, rec)
        stats["computed"] += 1
        stats["failed"] += rec["status"] != "ok"
        bar.update(1)
        bar.set_postfix(failed=stats["failed"], refresh=False)

    try:
        if not pending:
            return stats
        if workers == 0 and scheduler is None:
            stats["workers"] = 1
            for c in pending:
                done(c, run_case(c.job, c.data, c.base_path, out_dir / "cases" / c.hash, c.files))
        else:
            _run_dask(pending, out_dir, scheduler, workers, window, stats, done)
    except KeyboardInterrupt:
        stats["interrupted"] = True
    finally:
        stats["seconds"] = time.perf_counter() - t0
        bar.close()
    return stats


def _run_dask(pending, out_dir, scheduler, workers, window, stats, done):
    t_start = time.perf_counter()
    distributed = require("distributed", "the load-case sweep")
    Client, as_completed = distributed.Client, distributed.as_completed
    cluster = client = None
    own = not hasattr(scheduler, "submit")
    try:
        c0 = pending[0]
        if scheduler is None:
            cluster = local_cluster(workers, warm=(c0.job, c0.data, c0.base_path))
            client = Client(cluster)
        elif own:
            try:
                probe_scheduler(str(scheduler))
            except ValueError as e:
                raise ScenarioError(f"--scheduler / sweep.scheduler: {e}") from None
            try:
                client = Client(str(scheduler), timeout="20s")
            except (OSError, TimeoutError) as e:
                raise ScenarioError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None
        else:
            client = scheduler
        if not client.scheduler_info().get("workers"):
            client.wait_for_workers(1, timeout=60)
        threads = sum(client.nthreads().values()) or 1
        stats["workers"] = len(client.nthreads())
        # imports, the Model, the compiled kernels, once per worker; the geometry-only checks shared out
        # between the workers and each one's results installed in all (sweep_case.warm_worker)
        addrs = sorted(client.nthreads())
        warm = client.gather([client.submit(warm_worker, c0.job, c0.data, c0.base_path, (i, len(addrs)),
                                            workers=[a], allow_other_workers=False, pure=False)
                              for i, a in enumerate(addrs)])
        blobs = {k: v for w in warm for k, v in w.pop("geometry", {}).items()}
        if blobs and len(addrs) > 1:
            client.run(install_geometry, blobs)
        stats["warm_up"] = warm
        stats["start_seconds"] = time.perf_counter() - t_start
        g = group_size(len(pending), threads)
        window = int(window or max(16, 8 * threads)) // g + 1      # tasks queued at once
        groups = [pending[i:i + g] for i in range(0, len(pending), g)]
        todo = iter(groups)
        by_key, live = {}, {}

        def submit(grp):
            f = client.submit(run_cases, [(c.job, c.data, c.base_path, str(out_dir / "cases" / c.hash), c.files)
                                          for c in grp],
                              key=f"urdf-dyn-cases-{grp[0].hash}-{len(grp)}", pure=False)
            by_key[f.key], live[f.key] = grp, f
            return f

        ac = as_completed([submit(c) for c in itertools.islice(todo, window)])
        try:
            for fut in ac:
                grp = by_key.pop(fut.key)
                live.pop(fut.key, None)
                if fut.status == "finished":
                    recs = fut.result()
                else:  # the worker died, or Dask could not run the task: its cases failed, the sweep goes on
                    exc = fut.exception()
                    recs = [{"status": "failed", "error": one_line(exc), "metrics": {}, "warnings": [],
                             "seconds": None, "worker": None, "model_built": False} for _ in grp]
                fut.release()
                for c, rec in zip(grp, recs):
                    done(c, rec)
                nxt = next(todo, None)
                if nxt is not None:
                    ac.add(submit(nxt))
        except KeyboardInterrupt:
            client.cancel(list(live.values()), force=True)
            raise
    finally:
        if own and client is not None:
            client.close()
        if cluster is not None:      # its workers' shutdown (≈ 2 s) overlaps the sweep's tables and plots
            t = threading.Thread(target=cluster.close, name="urdf-dyn-cluster-close")
            t.start()
            _CLOSING.append(t)


#: LocalClusters being closed in the background (``_run_dask``); ``wait_closed`` joins them
_CLOSING: list = []


def wait_closed(timeout=60.0) -> None:
    """Wait until the LocalClusters a sweep started have shut down (``execute`` closes them in a thread)."""
    while _CLOSING:
        _CLOSING.pop().join(timeout)
