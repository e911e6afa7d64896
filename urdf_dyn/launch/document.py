"""Launch documents: reading a YAML launch file, validating it against its job's schema (pydantic), and the
helpers every job shares (the robot, joint-space vectors, the output folder, the animation).

A launch file names the robot, the job and the job's sections (ROS-launch style)::

    robot:
      file: ../robots/puma560.urdf      # .urdf or .xacro; relative to the launch file
      package_dirs: {my_pkg: ../pkgs/my_pkg}   # or a list of folders holding packages
      xacro_args: {prefix: ""}
      gravity: [0, 0, -9.81]             # m/s², root-link frame (REP-103)
    job: simulate                        # simulate | size | gauss (default: size if `motion` is given)
    outputs:
      directory: urdf_dyn_out/puma560    # default urdf_dyn_out/<launch file stem>
      animation: run.gif                 # optional: .gif/.mp4/.png via the viewer (offscreen without a display)
      animation_fps: 30
      animation_size: 640x480
      recording: run.html                # optional (job: size): the browser viewer's scene, one offline file

Each job's own sections are documented in its module (``urdf_dyn.jobs.simulate_job``,
``urdf_dyn.jobs.sizing_job``, ``urdf_dyn.jobs.gauss_job``). ``urdf-dyn run --schema`` prints the JSON
Schema of every job, for editors that complete and check YAML.

Every error is a ``LaunchError`` naming the file and the key path (``solver.rtol``), the value and what is
allowed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional, Union

import numpy as np
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from urdf_dyn.errors import LaunchError

__all__ = ["Launch", "read_launch", "validate", "Section", "LaunchDocument", "RobotSection", "OutputsSection",
           "FiniteFloat", "PositiveFloat", "NonNegativeFloat", "JointValues", "build_model", "joint_vector",
           "number", "output_dir", "run_staged", "write_animation", "write_recording", "RecordingTask", "unknown_name",
           "MAX_YAML_NODES", "MAX_LAUNCH_BYTES"]


# ---------------------------------------------------------------------------------------------------------
# field types
# ---------------------------------------------------------------------------------------------------------
def _finite(x: float) -> float:
    if not math.isfinite(x):
        raise ValueError("must be finite")
    return x


FiniteFloat = Annotated[float, AfterValidator(_finite)]
PositiveFloat = Annotated[float, Field(gt=0), AfterValidator(_finite)]
NonNegativeFloat = Annotated[float, Field(ge=0), AfterValidator(_finite)]
#: joint-space values: {joint: value}, a list in joint order, or one value for every joint
JointValues = Union[dict[str, FiniteFloat], list[FiniteFloat], FiniteFloat]


class Section(BaseModel):
    """A launch-file section: unknown keys are errors (a misspelt key never passes silently)."""
    model_config = ConfigDict(extra="forbid")


class RobotSection(Section):
    """The robot description to load (``urdf_dyn.load``)."""
    file: str = Field(description="URDF or xacro file, relative to the launch file")
    package_dirs: Optional[Union[dict[str, str], list[str], str]] = Field(
        None, description="folders holding ROS packages, or {package: folder}")
    xacro_args: Optional[dict[str, Union[str, int, float, bool]]] = Field(None, description="xacro arguments")
    gravity: tuple[FiniteFloat, FiniteFloat, FiniteFloat] = Field(
        (0.0, 0.0, -9.81), description="gravitational acceleration [m/s²] in the root-link frame")
    floating_base: bool = Field(False, description="give the root link a 6-dof floating joint 'root_joint' "
                                "(Pinocchio's free-flyer); q then names root_joint.x ... root_joint.qw")


class OutputsSection(Section):
    """Where and what to write."""
    directory: Optional[str] = Field(None, description="output folder (default urdf_dyn_out/<launch stem>)")
    animation: Optional[str] = Field(None, description=".gif, .mp4 or .png drawn by the viewer")
    animation_fps: PositiveFloat = 30.0
    animation_size: str = Field("640x480", pattern=r"^\d+x\d+$", description="WIDTHxHEIGHT in pixels")
    recording: Optional[str] = Field(None, pattern=r"(?i)\.html$", description="sizing job: a self-contained "
                                     ".html recording of the browser viewer's scene (needs viser), opens offline")


class LaunchDocument(Section):
    """The keys every launch file has; each job extends it with its own sections."""
    job: Optional[str] = Field(None, description="simulate | size | gauss")
    robot: RobotSection
    outputs: OutputsSection = Field(default_factory=OutputsSection)


# ---------------------------------------------------------------------------------------------------------
# reading and validation
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Launch:
    """A read launch file: ``path``, the raw mapping ``data`` and, once validated, the typed ``doc``."""
    path: Path
    data: dict
    doc: object = None
    outputs: dict = field(default_factory=dict)
    model: object = None  #: a Model of ``robot`` already loaded (a sweep worker's cache); build_model returns it

    def err(self, key, msg) -> LaunchError:
        """A LaunchError naming this file and ``key`` (a dotted path such as ``solver.rtol``)."""
        return LaunchError(f"{self.path}: {key}: {msg}")


MAX_LAUNCH_BYTES = 1 << 20
"""A launch file is at most 1 MiB."""
MAX_YAML_NODES = 100_000
"""YAML nodes a launch file may hold once its aliases are expanded (a 'billion laughs' holds 10⁹)."""


class _Composer(yaml.SafeLoader):
    """PyYAML's safe loader (no Python tags) that measures the document with its aliases expanded before
    anything is built, and refuses it past ``MAX_YAML_NODES``."""

    def compose_document(self):
        node = super().compose_document()
        sizes = {}

        def size(n):
            k = id(n)
            if k not in sizes:
                sizes[k] = 0  # a recursive alias counts once
                if isinstance(n, yaml.SequenceNode):
                    sizes[k] = 1 + sum(size(c) for c in n.value)
                elif isinstance(n, yaml.MappingNode):
                    sizes[k] = 1 + sum(size(a) + size(b) for a, b in n.value)
                else:
                    sizes[k] = 1
                if sizes[k] > MAX_YAML_NODES:
                    raise yaml.YAMLError(f"with its aliases expanded the document holds more than {MAX_YAML_NODES} "
                                         "values (an alias bomb?)")
            return sizes[k]

        if node is not None:
            size(node)
        return node


def read_launch(path) -> Launch:
    """Read a launch file (YAML, PyYAML's safe loader: no Python tags). Refused: files over 1 MiB and
    documents holding more than ``MAX_YAML_NODES`` values once aliases are expanded. Raises LaunchError naming
    the file (and line for YAML syntax errors). The document is validated by its job (``validate``)."""
    path = Path(path)
    if not path.is_file():
        raise LaunchError(f"{path}: scenario file not found")
    if path.name.endswith(".launch.yaml"):
        import warnings
        warnings.warn(f"{path}: the suffix .launch.yaml is deprecated (ROS 2 launch files start processes); "
                      "rename it to .scenario.yaml", FutureWarning, stacklevel=2)
    if path.stat().st_size > MAX_LAUNCH_BYTES:
        raise LaunchError(f"{path}: {path.stat().st_size} bytes; launch files are at most 1 MiB")
    try:
        data = yaml.load(path.read_text(), Loader=_Composer)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise LaunchError(f"{path}: YAML error: nested too deeply") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise LaunchError(f"{path}{where}: YAML error: {getattr(e, 'problem', None) or e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LaunchError(f"{path}: cannot read: {e}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise LaunchError(f"{path}: top level: expected a mapping of sections, got {type(data).__name__}")
    return Launch(path, data)


_BARE_TAGS = frozenset({"float", "int", "str", "bool", "none", "is-instance", "any"})
_TYPE_TAGS = ("dict[", "list[", "tuple[", "literal[", "function-", "json-or-python", "lax-or-strict", "union[",
              "tagged-union[", "constrained-")


def _key_path(loc) -> str:
    parts = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        elif isinstance(p, str) and (p in _BARE_TAGS or p.startswith(_TYPE_TAGS) or "[" in p):
            continue  # pydantic's tag for one member of a union, not a key
        else:
            parts.append(("." if parts else "") + str(p))
    return "".join(parts) or "top level"


def _message(e, job=None) -> str:
    kind, value, ctx = e["type"], e.get("input"), e.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key" + (f" for job: {job}" if job else "")
    if kind == "missing":
        return "required"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return f"{value!r} is not a number"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{value!r} is not a whole number"
    if kind in ("bool_parsing", "bool_type"):
        return f"expected true or false, got {value!r}"
    if kind == "literal_error":
        return f"unknown value {value!r} (one of: {ctx.get('expected', '')})"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        bound = next(iter(ctx.values())) if ctx else ""
        return f"must be {op} {bound}, got {value!r}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {value!r}"
    if kind in ("list_type", "tuple_type"):
        return f"expected a list, got {value!r}"
    if kind in ("too_short", "too_long"):
        return f"{e['msg'].lower()}, got {value!r}"
    if kind == "string_pattern_mismatch":
        return f"{value!r} does not have the allowed form (a string matching {ctx.get('pattern', '')})"
    if kind == "string_type":
        return f"expected a string, got {value!r}"
    if kind == "value_error":
        return f"{e['msg'].removeprefix('Value error, ')}, got {value!r}"
    return f"{e['msg']} (got {value!r})"


def validate(launch: Launch, schema: type[BaseModel], job=None):
    """Validate ``launch.data`` against ``schema`` (a LaunchDocument subclass); sets and returns
    ``launch.doc``. Raises LaunchError naming the file, the key path, the value and what is allowed; when
    several keys are wrong, the first is named and the count of the others given."""
    try:
        launch.doc = schema.model_validate(launch.data)
    except ValidationError as exc:
        errs = exc.errors()
        # a union reports each member's failure: keep the most specific (longest key path) of each key
        best = {}
        for e in errs:
            key = _key_path(e["loc"][:1]) if e["loc"] else "top level"
            if key not in best or len(e["loc"]) > len(best[key]["loc"]):
                best[key] = e
        first = next(iter(best.values()))
        more = len(best) - 1
        key, msg = _key_path(first["loc"]), _message(first, job)
        if not first["loc"] and first["type"] == "value_error":     # a whole-document check names its own key
            key, _, msg = first["msg"].removeprefix("Value error, ").partition(": ")
        raise launch.err(key, msg + (f" (and {more} more key{'s' if more > 1 else ''} wrong)" if more else "")) from None
    return launch.doc


# ---------------------------------------------------------------------------------------------------------
# helpers shared by the jobs
# ---------------------------------------------------------------------------------------------------------
def number(launch, v, key):
    """``v`` as a finite float, or LaunchError naming ``key``."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise launch.err(key, f"{v!r} is not a number") from None
    if not np.isfinite(x):
        raise launch.err(key, f"{v!r} is not finite")
    return x


def unknown_name(kind, name, known) -> str:
    """'unknown joint 'x' (did you mean 'y'?; joints: a, b, ...)': the near matches first (difflib)."""
    import difflib
    near = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
    return f"unknown {kind} {name!r} ({hint}{kind}s: {', '.join(known)})"


def joint_vector(launch, model, value, key, default=None, positions=False):
    """A joint-space vector (nv,) — or, with ``positions``, a configuration (nq,) named by ``model.q_names``
    — from a {joint: value} mapping, a list in joint order or a scalar; joints not named keep ``default``
    (zeros; ``model.neutral()`` for positions). Raises LaunchError naming ``key`` for unknown joints or a
    wrong length."""
    names = model.q_names if positions else model.joint_names
    n = len(names)
    out = (model.neutral() if positions else np.zeros(n)) if default is None else np.array(default, float)
    if value is None:
        return out
    if isinstance(value, dict):
        for j, v in value.items():
            if j not in names:
                raise launch.err(key, unknown_name("joint", j, names))
            out[names.index(j)] = number(launch, v, f"{key}.{j}")
        return _unit_quaternions(launch, names, out, key) if positions else out
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise launch.err(key, f"expected {n} values (one per joint), got {len(value)}")
        out = np.array([number(launch, v, f"{key}[{i}]") for i, v in enumerate(value)])
        return _unit_quaternions(launch, names, out, key) if positions else out
    if positions and not model.is_fixed_base:
        raise launch.err(key, "a single number cannot set a floating joint's quaternion: give {joint: value}")
    return np.full(n, number(launch, value, key))


def _unit_quaternions(launch, names, q, key):
    """``q`` after checking that the quaternion (``<joint>.qx`` … ``.qw``) of each floating joint is not zero
    (it is normalised later; a zero one has no direction). Raises LaunchError naming ``key`` and the joint."""
    for i, n in enumerate(names):
        if n.endswith(".qw") and i >= 3 and names[i - 3] == n[:-3] + ".qx":
            if not np.linalg.norm(q[i - 3:i + 1]) > 1e-9:
                raise launch.err(key, f"the quaternion of floating joint {n[:-3]!r} ({n[:-3]}.qx, .qy, .qz, .qw) is "
                                 f"zero: give a unit quaternion (no rotation: qw = 1)")
    return q


def build_model(launch):
    """Load the robot named by ``robot`` (paths relative to the launch file); ``launch.model`` if already set."""
    if launch.model is not None:
        return launch.model
    from urdf_dyn.loading import load
    r = launch.doc.robot if launch.doc is not None else RobotSection.model_validate(launch.data["robot"])
    base = launch.path.parent
    if not (base / r.file).is_file():
        raise launch.err("robot.file", f"{base / r.file}: file not found (paths are relative to the launch file)")
    pkg = r.package_dirs
    if isinstance(pkg, dict):
        pkg = {k: str((base / v).resolve()) for k, v in pkg.items()}
    elif isinstance(pkg, (list, str)):
        pkg = [str((base / p).resolve()) for p in ([pkg] if isinstance(pkg, str) else pkg)]
    xargs = {k: str(v) for k, v in (r.xacro_args or {}).items()}
    return load(base / r.file, package_dirs=pkg, xacro_args=xargs or None, gravity=list(r.gravity),
                floating_base=r.floating_base)


def output_dir(launch, out_dir=None) -> Path:
    """The output folder: ``out_dir`` if given, else ``outputs.directory``, else urdf_dyn_out/<launch stem>."""
    if out_dir:
        return Path(out_dir)
    d = launch.doc.outputs.directory if launch.doc is not None else None
    return Path(d or f"urdf_dyn_out/{launch.path.name.split('.')[0]}")


def write_recording(launch, model, outdir, written, echo):
    """``outputs.recording`` (an .html name): the browser viewer's scene over the run, one offline file
    (urdf_dyn_viewer.recording); like the animation, only a warning when the viewer cannot write it."""
    o = launch.doc.outputs
    if not o.recording:
        return
    try:
        from urdf_dyn_viewer.recording import record_run
        written["recording"] = str(record_run(model, outdir, outdir / o.recording, fps=o.animation_fps)[0])
    except Exception as e:  # noqa: BLE001 - missing viser, a run folder it cannot read
        echo(f"WARNING: outputs.recording {o.recording} not written: {type(e).__name__}: {e}")


class RecordingTask:
    """``write_recording`` started beside the caller's own work (the GIF): in a forked process where one can
    be forked (``reports.plotting.PlotWorker``'s rule: Linux, the main thread of the main process), so that
    the recording's Python (≈ 2.3 s for the dig cycle) runs on another core instead of sharing the GIL with
    the GIF's drawing loop; else in a thread. The forked child inherits the model and the run folder's path
    (nothing is pickled but its one-line answer); if it dies without answering, the recording is written
    here instead. ``finish(written)`` waits and records the path (or echoes the warning), as
    ``write_recording`` does."""

    def __init__(self, launch, model, outdir, echo):
        self._args, self._proc, self._thread, self._rec = (launch, model, outdir, echo), None, None, {}
        if not launch.doc.outputs.recording:
            return
        from urdf_dyn.reports.plotting import worker_allowed
        if worker_allowed():
            try:
                import multiprocessing
                import sys
                import warnings
                ctx = multiprocessing.get_context("fork")
                self._conn, child = ctx.Pipe(duplex=False)
                for f in (sys.stdout, sys.stderr):      # the child must not write what is buffered again
                    f.flush()
                self._proc = ctx.Process(target=_record_child, args=(launch, model, outdir, child), daemon=True)
                with warnings.catch_warnings():          # Python >= 3.12 warns of fork() beside threads
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self._proc.start()
                child.close()
                return
            except Exception:  # noqa: BLE001 - no process support here: a thread does it
                self._proc = None
        import threading
        self._thread = threading.Thread(target=write_recording, args=(launch, model, outdir, self._rec, echo),
                                        name="urdf-dyn-recording", daemon=True)
        self._thread.start()

    def finish(self, written):
        """Wait for the recording; put its path into ``written`` (or echo why it was not written)."""
        launch, model, outdir, echo = self._args
        if self._thread is not None:
            self._thread.join()
        elif self._proc is not None:
            try:
                kind, text = self._conn.recv()
            except (EOFError, OSError):                  # the child died: write it here
                kind, text = "lost", ""
            self._proc.join()
            self._conn.close()
            if kind == "ok":
                self._rec["recording"] = text
            elif kind == "warning":
                echo(text)
            else:
                write_recording(launch, model, outdir, self._rec, echo)
        written.update(self._rec)


def _record_child(launch, model, outdir, conn):
    """The forked recording process: ``write_recording``, its answer sent as ("ok", path) or ("warning", line)."""
    out, lines = {}, []
    write_recording(launch, model, outdir, out, lines.append)
    conn.send(("ok", out["recording"]) if "recording" in out else ("warning", "; ".join(lines)))
    conn.close()


def run_staged(launch, out_dir, echo, run):
    """Run a job whose outputs must not half-replace an earlier run's: ``run(stage, echo)`` -> (result,
    {output: path}) writes into ``stage``, a new hidden folder beside the output folder (``output_dir``);
    only when it returns are its files moved into the output folder (``os.replace``, file by file), and the
    paths it returns and echoes are given in the output folder. If it raises, nothing of it reaches the
    output folder (a good earlier run there stays intact) — except after a ``SimulationError``, whose
    partial trajectory is the job's answer and is moved in too. The staging folder is always removed."""
    import os
    import shutil
    import tempfile

    from urdf_dyn.errors import SimulationError
    final = output_dir(launch, out_dir)
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    a, b = str(stage), str(final)

    def fix(v):
        return v.replace(a, b) if isinstance(v, str) else Path(str(v).replace(a, b)) if isinstance(v, Path) else v

    def move():
        final.mkdir(parents=True, exist_ok=True)
        for src in sorted(stage.rglob("*")):
            dst = final / src.relative_to(stage)
            if src.is_dir():
                dst.mkdir(exist_ok=True)
            else:
                os.replace(src, dst)
    try:
        result, written = run(stage, lambda *x, **k: echo(*(fix(v) for v in x), **k))
        move()
        return result, {k: fix(v) for k, v in written.items()}
    except SimulationError as e:
        move()
        raise SimulationError(fix(str(e)), e.trajectory) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_animation(launch, model, traj, outdir, written, echo):
    """``outputs.animation`` (a .gif/.mp4/.png name): render the trajectory with the viewer, offscreen
    when there is no display. The core imports the viewer only here, lazily, and only when asked; a
    machine without OpenGL loses only the animation (a warning), never the results already written."""
    o = launch.doc.outputs
    if not o.animation:
        return
    try:
        from urdf_dyn_viewer.export import render_trajectory
    except ImportError as e:
        echo(f"WARNING: outputs.animation skipped: the viewer is not installed ({e}); "
             "pip install -e '.[viewer]'")
        return
    w, h = (int(x) for x in o.animation_size.lower().split("x"))
    try:
        run_dir = outdir if (outdir / "view.json").is_file() else None  # a sizing run: bench, soil, payload
        written["animation"] = str(render_trajectory(model, traj, outdir / o.animation, fps=o.animation_fps,
                                                     size=(w, h), run_dir=run_dir))
    except Exception as e:  # noqa: BLE001 - GL/EGL/ffmpeg failures come in many types
        text = str(e)
        cause = text[text.find("(") + 1:].split(")")[0] if "(" in text else text
        gl = not any(w in cause for w in ("NaN", "nan", "inf", "convert", "shape", "index")) and \
            any(w in text for w in ("EGL", "GL", "display", "context", "ffmpeg"))
        echo(f"WARNING: outputs.animation {o.animation} not written: {type(e).__name__}: "
             + (f"{e} (offscreen drawing needs EGL: apt-get install libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri "
                "libglu1-mesa)" if gl else f"{cause}: a visual of {model.source} (a mesh vertex or pose) is not "
                "drawable; the results are written"))
