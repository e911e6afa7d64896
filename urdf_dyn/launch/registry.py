"""The launch-job registry: ``job: NAME`` in a launch file runs the job registered under NAME.

A job is a ``Job(name, schema, run)``: ``schema`` a ``LaunchDocument`` subclass that validates the whole
file, ``run(launch, out_dir=None, progress=None, echo=print)`` the function that does the work. The jobs
that ship with urdf_dyn are listed by module in ``BUILTIN_JOBS`` and imported only when used (a launch of
the simulator does not import the Gauss job's sympy); each such module defines a module-level ``JOB``.
Other packages add jobs with ``register_job``.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from urdf_dyn.collector import raised
from urdf_dyn.errors import ScenarioError
from urdf_dyn.launch.document import Scenario, read_scenario, validate

__all__ = ["Job", "BUILTIN_JOBS", "register_job", "get_job", "job_names", "run_scenario", "run_document",
           "launch_schema"]


@dataclass(frozen=True)
class Job:
    """A launch job: its name, the pydantic schema of its launch document, and its runner."""
    name: str
    schema: type
    run: Callable
    summary: str = ""


#: job name -> module that defines ``JOB`` (imported on first use)
BUILTIN_JOBS = {
    "simulate": "urdf_dyn.jobs.simulate_job",
    "size": "urdf_dyn.jobs.sizing_job",
    "gauss": "urdf_dyn.jobs.gauss_job",
    "sweep": "urdf_dyn.jobs.sweep_job",
}
_REGISTERED: dict = {}


def register_job(job: Job) -> Job:
    """Make ``job`` available as ``job: <job.name>`` in launch files. Returns the job."""
    _REGISTERED[job.name] = job
    return job


def job_names() -> tuple:
    return tuple(dict.fromkeys([*BUILTIN_JOBS, *_REGISTERED]))


def get_job(name: str) -> Job:
    """The Job registered as ``name``. Raises KeyError listing the known jobs."""
    if name not in _REGISTERED and name in BUILTIN_JOBS:
        _REGISTERED[name] = importlib.import_module(BUILTIN_JOBS[name]).JOB
    try:
        return _REGISTERED[name]
    except KeyError:
        raise KeyError(f"unknown job {name!r} (one of: {', '.join(job_names())})") from None


def run_scenario(path, out_dir=None, progress=None, echo=print, job=None):
    """Run a launch file: read it, pick its job (``job:``; default ``size`` when a ``motion`` section is
    given, else ``simulate``; ``job`` overrides it), validate the document against the job's schema and
    run the job.

    Returns what the job returns (for ``simulate``: (Trajectory, outputs); ``size``: (SizingResult,
    outputs)). Raises ScenarioError / ModelError for bad input; SimulationError after saving what was
    computed."""
    return _run(read_scenario(path), out_dir, progress, echo, job)


def run_document(data: dict, base_path, out_dir=None, progress=None, echo=print, job=None, model=None, **options):
    """Run a launch document given as a mapping (e.g. one case of a sweep) as ``run_scenario`` runs a file;
    relative paths in it resolve against ``base_path`` (the launch file it came from). ``model``: the
    robot's Model if already loaded (it must be the one ``robot`` names); ``options``: passed to the job's
    runner (``job: size`` takes ``cache``, a ``jobs.geometry_cache.GeometryCache``). Same returns and errors."""
    return _run(Scenario(Path(base_path), data, model=model), out_dir, progress, echo, job, options)


def _run(launch, out_dir, progress, echo, job, options=None):
    name = job or launch.data.get("job") or ("size" if launch.data.get("motion") else "simulate")
    if not isinstance(name, str):
        raise launch.err("job", f"expected a job name, got {name!r}")
    try:
        the_job = get_job(name)
    except KeyError as e:
        raise launch.err("job", e.args[0]) from None
    validate(launch, the_job.schema, job=name)
    with raised():      # the collector's thresholds for a job's allocations (``collector``), its forks' too
        return the_job.run(launch, out_dir=out_dir, progress=progress, echo=echo, **(options or {}))


def launch_schema(name=None) -> dict:
    """The JSON Schema of one job's launch document, or (``name`` None) of every job: ``{"anyOf": [...]}``
    with each job's schema under ``$defs``."""
    if name is not None:
        try:
            return get_job(name).schema.model_json_schema()
        except KeyError as e:
            raise ScenarioError(e.args[0]) from None
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "urdf_dyn launch file",
           "anyOf": [], "$defs": {}}
    for n in job_names():
        s = get_job(n).schema.model_json_schema()
        defs = s.pop("$defs", {})
        out["$defs"].update(defs)
        s["title"] = f"job: {n}"
        out["$defs"][f"job_{n}"] = s
        out["anyOf"].append({"$ref": f"#/$defs/job_{n}"})
    json.dumps(out)  # fails loudly here rather than in an editor if anything is not serialisable
    return out


from urdf_dyn._deprecated import deprecated_getattr  # noqa: E402 - the old names, with a FutureWarning

__getattr__ = deprecated_getattr(__name__)
