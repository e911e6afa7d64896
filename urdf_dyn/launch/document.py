"""Launch documents: reading a YAML launch file, validating it against its job's schema (pydantic), and the
helpers every job shares (the robot, joint-space vectors, the output folder; the output plumbing — staging,
animation, recording — is ``jobs.outputs``).

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

Every error is a ``ScenarioError`` naming the file and the key path (``solver.rtol``), the value and what is
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

from urdf_dyn.errors import ScenarioError

__all__ = ["Scenario", "read_scenario", "key_lines", "validate", "Section", "LaunchDocument", "RobotSection", "OutputsSection",
           "FiniteFloat", "PositiveFloat", "NonNegativeFloat", "JointValues", "build_model", "joint_vector",
           "number", "output_dir", "unknown_name",
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
_Gravity = Annotated[float, Field(ge=-1000, le=1000), AfterValidator(_finite)]
#: joint-space values: {joint: value}, a list in joint order, or one value for every joint
JointValues = Union[dict[str, FiniteFloat], list[FiniteFloat], FiniteFloat]


class Section(BaseModel):
    """A launch-file section: unknown keys are errors (a misspelt key never passes silently), and no float of
    any section is ``inf`` or ``nan`` (``allow_inf_nan=False``: also a bare ``float`` field, a ``.inf`` YAML
    value of a bound-only field)."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class RobotSection(Section):
    """The robot description to load (``urdf_dyn.load``), with balancers added to those of the file."""
    file: str = Field(description="URDF or xacro file, relative to the launch file")
    package_dirs: Optional[Union[dict[str, str], list[str], str]] = Field(
        None, description="folders holding ROS packages, or {package: folder}")
    xacro_args: Optional[dict[str, Union[str, int, float, bool]]] = Field(None, description="xacro arguments")
    # each component within ±1000 m/s² (100 g): Earth's 9.81, Jupiter's 24.8; beyond, a unit slip
    gravity: tuple[_Gravity, _Gravity, _Gravity] = Field(
        (0.0, 0.0, -9.81), description="gravitational acceleration [m/s²] in the root-link frame")
    floating_base: bool = Field(False, description="give the root link a 6-dof floating joint 'root_joint' "
                                "(Pinocchio's free-flyer); q then names root_joint.x ... root_joint.qw")
    balancers: list[dict[str, Union[str, FiniteFloat, tuple[FiniteFloat, FiniteFloat, FiniteFloat]]]] = Field(
        default_factory=list, description="gas or coil springs between two pins, the <balancer> keys "
        "(algorithms.force_elements.balancers_from), added to the file's")


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
class Scenario:
    """A read launch file: ``path``, the raw mapping ``data`` and, once validated, the typed ``doc``."""
    path: Path
    data: dict
    doc: object = None
    outputs: dict = field(default_factory=dict)
    model: object = None  #: a Model of ``robot`` already loaded (a sweep worker's cache); build_model returns it
    lines: dict = field(default_factory=dict)  #: {key path: line (1-based)} of the file read (``key_lines``)

    def line_of(self, key):
        """The file's line (1-based) of ``key`` (a dotted path such as ``loads[0].link``), or of the nearest
        enclosing key the file holds (a key left at its default is not in the file); None when unknown."""
        while key:
            if key in self.lines:
                return self.lines[key]
            cut = max(key.rfind("."), key.rfind("["))
            key = key[:cut] if cut > 0 else ""
        return None

    def err(self, key, msg) -> ScenarioError:
        """A ScenarioError naming this file, ``key`` (a dotted path such as ``solver.rtol``) and, when the file
        was read here, the key's line: ``<file>: <key>: <what is wrong> (line <n>)``."""
        line = self.line_of(key)
        return ScenarioError(f"{self.path}: {key}: {msg}" + (f" (line {line})" if line else ""))


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


def read_scenario(path) -> Scenario:
    """Read a launch file (YAML, PyYAML's safe loader: no Python tags). Refused: files over 1 MiB and
    documents holding more than ``MAX_YAML_NODES`` values once aliases are expanded. Raises ScenarioError naming
    the file (and line for YAML syntax errors). The document is validated by its job (``validate``)."""
    path = Path(path)
    if not path.is_file():
        raise ScenarioError(f"{path}: scenario file not found")
    if path.name.endswith(".launch.yaml"):
        import warnings
        warnings.warn(f"{path}: the suffix .launch.yaml is deprecated (ROS 2 launch files start processes); "
                      "rename it to .scenario.yaml", FutureWarning, stacklevel=2)
    if path.stat().st_size > MAX_LAUNCH_BYTES:
        raise ScenarioError(f"{path}: {path.stat().st_size} bytes; launch files are at most 1 MiB")
    from urdf_dyn.io.files import note_input
    note_input(path)              # no output of this run may replace it
    try:
        loader = _Composer(path.read_text())
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except RecursionError:
        raise ScenarioError(f"{path}: YAML error: nested too deeply") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ScenarioError(f"{path}{where}: YAML error: {getattr(e, 'problem', None) or e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{path}: cannot read: {e}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: top level: expected a mapping of sections, got {type(data).__name__}")
    return Scenario(path, data, lines=key_lines(node))


def key_lines(node, prefix="", out=None, within=()) -> dict:
    """{key path: line (1-based)} of a composed YAML ``node``: ``a.b`` for a mapping's key (the key's line),
    ``a[2]`` for a sequence's item; the paths of ``Scenario.err``. A node holding itself (a recursive alias)
    is walked once."""
    out = {} if out is None else out
    if id(node) in within:
        return out
    within = (*within, id(node))
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                path = f"{prefix}.{k.value}" if prefix else str(k.value)
                if path not in out:          # an alias met twice keeps its first place
                    out[path] = k.start_mark.line + 1
                    key_lines(v, path, out, within)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            path = f"{prefix}[{i}]"
            if path not in out:
                out[path] = v.start_mark.line + 1
                key_lines(v, path, out, within)
    return out


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
    if kind == "finite_number":
        return f"must be finite, got {value!r}"
    if kind in ("float_parsing", "float_type"):
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


def validate(launch: Scenario, schema: type[BaseModel], job=None):
    """Validate ``launch.data`` against ``schema`` (a LaunchDocument subclass); sets and returns
    ``launch.doc``. Raises ScenarioError naming the file, the key path, the value and what is allowed; when
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
    """``v`` as a finite float, or ScenarioError naming ``key``."""
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
    (zeros; ``model.neutral()`` for positions). Raises ScenarioError naming ``key`` for unknown joints or a
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
    (it is normalised later; a zero one has no direction). Raises ScenarioError naming ``key`` and the joint."""
    for i, n in enumerate(names):
        if n.endswith(".qw") and i >= 3 and names[i - 3] == n[:-3] + ".qx":
            if not np.linalg.norm(q[i - 3:i + 1]) > 1e-9:
                kind = "floating" if i >= 6 and names[i - 6] == n[:-3] + ".x" else "ball"   # (or ball joint)
                raise launch.err(key, f"the quaternion of {kind} joint {n[:-3]!r} ({n[:-3]}.qx, .qy, .qz, .qw) is "
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
    model = load(base / r.file, package_dirs=pkg, xacro_args=xargs or None, gravity=list(r.gravity),
                 floating_base=r.floating_base)
    if r.balancers:
        from urdf_dyn.algorithms.force_elements import balancers_from
        try:
            model = balancers_from(model, r.balancers)
        except ValueError as e:
            raise launch.err(f"robot.balancers{e.args[0]}", e.args[1]) from None
    return model


def output_dir(launch, out_dir=None) -> Path:
    """The output folder: ``out_dir`` if given, else ``outputs.directory``, else urdf_dyn_out/<launch stem>."""
    if out_dir:
        return Path(out_dir)
    d = launch.doc.outputs.directory if launch.doc is not None else None
    return Path(d or f"urdf_dyn_out/{launch.path.name.split('.')[0]}")


from urdf_dyn._deprecated import deprecated_getattr  # noqa: E402 - the old names, with a FutureWarning

__getattr__ = deprecated_getattr(__name__)
