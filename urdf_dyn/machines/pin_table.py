"""An excavator's side-view pin table (YAML): the pins of its front linkage, its cylinders and its masses at
one assembled pose, read and validated with pydantic. ``urdf_dyn.machines.excavator_builder`` turns a table
into a URDF with ``<loop>`` closures.

Frame: the machine frame, REP-103 seen from the machine's left side: x forward from the swing axis, z up
from the ground (the track's ground contact), y to the left; every point is (x, z) [m] at the table's pose,
which becomes the URDF's ``<initial_configuration>`` (every joint 0).

A table (a complete one, with its sources: ``robots/excavator_pins.yaml``)::

    name: my_excavator                      # <robot name>
    description: |                          # optional: copied into the URDF's header comment (sources)
      ...
    pins:                                   # (x, z) [m]
      boom_foot: [x, z]                     # house -> boom
      boom_cylinder_base: [x, z]            # house -> boom cylinder barrel
      boom_cylinder_eye: [x, z]             # boom cylinder rod -> boom
      stick_cylinder_base: [x, z]           # boom -> stick cylinder barrel
      boom_nose: [x, z]                     # boom -> stick (the stick pivot)
      stick_cylinder_eye: [x, z]            # stick cylinder rod -> stick
      bucket_cylinder_base: [x, z]          # stick -> bucket cylinder barrel
      side_link_pivot: [x, z]               # stick -> side (guide) link
      bucket_pivot: [x, z]                  # stick -> bucket
      bucket_cylinder_eye: [x, z]           # common pin: side link, H-link and bucket cylinder rod
      h_link_pin: [x, z]                    # H-link -> bucket
      tip: [x, z]                           # tooth tip
      lip: [x, z]                           # optional: the cutting edge (ISO 6015 measures there)
    cylinders:                              # boom, stick, bucket; lengths pin to pin [m]
      boom: {bore: D, rod: d, count: 2, min_length: Lmin, max_length: Lmax,
             tube_outer: Do, rod_length: Lr, flow: Q, spacing: s}          # optional: the second line
    masses:                                 # mass [kg], com (x, z) [m], inertia about the com [kg m²]
      boom: {mass: m, com: [x, z], inertia: [ixx, iyy, izz, ixy, ixz, iyz]}
      ...                                   # undercarriage, house, boom, stick, bucket, side_link, h_link;
                                            # optional: boom_cyl_barrel, boom_cyl_rod, stick_..., bucket_...
    swing: {height: h, torque: T, speed: w} # optional: house frame height [m], N m, rad/s
    hydraulics: {relief: p}                 # optional: Pa; with it the cylinders get effort limits
    marker_links: true                      # fixed links bucket_tip (and bucket_lip) at tip (and lip)
    materials: {paint: [r, g, b, a]}        # optional: rgba of the visuals' materials
    limits:                                 # optional: the mechanism limits a calibration holds (defaults shown)
      boom_transmission_angle_min: 12       # deg from dead centre, boom cylinder, both stroke ends
      boom_lever_min: 0.45                  # m, boom cylinder's arm about boom_foot, both stroke ends
      stick_lever_ratio_min: 0.5            # stick cylinder's arm across the stroke / its peak
      bucket_link_angle_min: 10             # deg from 0/180: side link-H-link and H-link-bucket crank
      bucket_rotation: [165, 180]           # deg, the bucket's turn over its stroke
      stroke_ratio_max: 1.7                 # max_length / min_length
      clearance_min: 0.05                   # m, bucket to the boxes of clear_of over the stroke space
      clear_of: {boom: [boom_rear, boom_front], house: [cab], undercarriage: [track_right, track_left, carbody]}
    visuals:                                # optional, per link; otherwise simple shapes between the pins
      house:
        - {name: cab, box: [lx, ly, lz], xyz: [x, y, z], material: paint}
        - {name: foot_pin, cylinder: [r, l], xyz: [x, y, z], axis: y, elevation: 0}   # deg

The inertia (optional; a point mass without it) is about the centre of mass in machine axes at the table's
pose; a cylinder part's centre of mass lies on its line of pins. ``flow`` [m³/s] is the flow the valve
section can feed the cap side: the velocity limit is flow / (count · cap area). ``spacing`` [m] only draws
a cylinder pair apart (the dynamics lump a pair on the centre plane; its inertia is the table's).

Every error is a one-line ``ModelError`` naming the file and the key path (``cylinders.boom.rod``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal, Optional

import numpy as np
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from urdf_dyn.errors import ModelError

__all__ = ["PinTable", "PinSet", "MechanismLimits", "CylinderSpec", "BodyMass", "load_pin_table", "pin_table_from_dict",
           "PIN_NAMES", "BODY_NAMES", "CYLINDER_PARTS", "MAX_TABLE_BYTES", "MAX_YAML_NODES", "inertia_matrix",
           "with_tip_radius"]

MAX_TABLE_BYTES = 1 << 20
"""A pin table is at most 1 MiB."""
#: pins of the front linkage (``lip`` is optional)
PIN_NAMES = ("boom_foot", "boom_cylinder_base", "boom_cylinder_eye", "stick_cylinder_base", "boom_nose",
             "stick_cylinder_eye", "bucket_cylinder_base", "side_link_pivot", "bucket_pivot", "bucket_cylinder_eye",
             "h_link_pin", "tip", "lip")
#: bodies whose mass the table must give
BODY_NAMES = ("undercarriage", "house", "boom", "stick", "bucket", "side_link", "h_link")
#: cylinder parts whose mass the table may give (massless without it)
CYLINDER_PARTS = tuple(f"{c}_cyl_{p}" for c in ("boom", "stick", "bucket") for p in ("barrel", "rod"))


def _finite(x: float) -> float:
    if not math.isfinite(x):
        raise ValueError("must be finite")
    return x


Finite = Annotated[float, AfterValidator(_finite)]
Positive = Annotated[float, Field(gt=0), AfterValidator(_finite)]
NonNegative = Annotated[float, Field(ge=0), AfterValidator(_finite)]
Point = tuple[Finite, Finite]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PinSet(_Section):
    """The pins (x, z) [m] in the machine frame at the table's pose."""
    boom_foot: Point
    boom_cylinder_base: Point
    boom_cylinder_eye: Point
    stick_cylinder_base: Point
    boom_nose: Point
    stick_cylinder_eye: Point
    bucket_cylinder_base: Point
    side_link_pivot: Point
    bucket_pivot: Point
    bucket_cylinder_eye: Point
    h_link_pin: Point
    tip: Point
    lip: Optional[Point] = None


class CylinderSpec(_Section):
    """One cylinder (or ``count`` equal ones in parallel): bore, rod [m] diameters; min_length, max_length
    [m] pin to pin (retracted, extended); optional tube_outer [m], rod_length [m] (buckling; visuals), flow
    [m³/s] (velocity limit), spacing [m] (visual distance between the cylinders of a pair)."""
    bore: Positive
    rod: Positive
    count: int = Field(1, ge=1)
    min_length: Positive
    max_length: Positive
    tube_outer: Optional[Positive] = None
    rod_length: Optional[Positive] = None
    flow: Optional[Positive] = None
    spacing: NonNegative = 0.0


class Cylinders(_Section):
    boom: CylinderSpec
    stick: CylinderSpec
    bucket: CylinderSpec


class BodyMass(_Section):
    """mass [kg], com (x, z) [m] in the machine frame, inertia (ixx, iyy, izz, ixy, ixz, iyz) [kg m²] about the
    com in machine axes at the table's pose (a point mass when omitted)."""
    mass: Positive
    com: Point
    inertia: Optional[tuple[Finite, Finite, Finite, Finite, Finite, Finite]] = None


class Masses(_Section):
    undercarriage: BodyMass
    house: BodyMass
    boom: BodyMass
    stick: BodyMass
    bucket: BodyMass
    side_link: BodyMass
    h_link: BodyMass
    boom_cyl_barrel: Optional[BodyMass] = None
    boom_cyl_rod: Optional[BodyMass] = None
    stick_cyl_barrel: Optional[BodyMass] = None
    stick_cyl_rod: Optional[BodyMass] = None
    bucket_cyl_barrel: Optional[BodyMass] = None
    bucket_cyl_rod: Optional[BodyMass] = None


class Swing(_Section):
    """height [m]: the house frame's origin above the ground on the swing axis; torque [N m] and speed
    [rad/s]: the swing joint's effort and velocity limits."""
    height: NonNegative = 0.0
    torque: Optional[Positive] = None
    speed: Optional[Positive] = None


class Hydraulics(_Section):
    """relief [Pa]: the cylinders' effort limit is count · relief · cap area (push)."""
    relief: Positive


class Visual(_Section):
    """A box [lx, ly, lz] or a cylinder [radius, length] [m] centred at xyz (machine frame, table pose);
    elevation [deg] turns it about y (counter-clockwise seen from the left, x towards z); a cylinder's
    axis is x, y or z before that turn."""
    name: str
    box: Optional[tuple[Positive, Positive, Positive]] = None
    cylinder: Optional[tuple[Positive, Positive]] = None
    xyz: tuple[Finite, Finite, Finite]
    elevation: Finite = 0.0
    axis: Literal["x", "y", "z"] = "z"
    material: Optional[str] = None


class MechanismLimits(_Section):
    """The hard limits of the front linkage (``machines.linkage_limits`` computes each from the pins; the
    calibration holds them as inequality constraints). Defaults: a 20 t excavator front a maker would build.

    boom_transmission_angle_min [deg]: the boom cylinder's line and the lever boom_foot → boom_cylinder_eye
    at least this far from dead centre (0°/180°) at both stroke ends; boom_lever_min [m]: the boom
    cylinder's moment arm about boom_foot at both ends; stick_lever_ratio_min: the stick cylinder's moment
    arm about boom_nose across its stroke, as a fraction of its peak; bucket_link_angle_min [deg]: the
    angles side link / H-link (at the common pin) and H-link / bucket crank (at the H-link pin) at least this
    far from 0° and 180° across the bucket stroke (no toggle); bucket_rotation [deg]: (low, high) of the
    bucket's turn over its stroke; stroke_ratio_max: max_length / min_length of each cylinder;
    clearance_min [m]: the least distance from the bucket to the boxes named in clear_of over the stroke
    space; clear_of: {body: [visual box names]} (``boom``, ``house``: boxes on that body; ``undercarriage``:
    its boxes as the front sees them over the front and over the side, ``linkage_limits.obstacles``)."""
    boom_transmission_angle_min: Annotated[float, Field(ge=0, lt=90), AfterValidator(_finite)] = 12.0
    boom_lever_min: NonNegative = 0.45
    stick_lever_ratio_min: Annotated[float, Field(ge=0, le=1), AfterValidator(_finite)] = 0.5
    bucket_link_angle_min: Annotated[float, Field(ge=0, lt=90), AfterValidator(_finite)] = 10.0
    bucket_rotation: tuple[Finite, Finite] = (165.0, 180.0)
    stroke_ratio_max: Annotated[float, Field(gt=1), AfterValidator(_finite)] = 1.7
    clearance_min: Finite = 0.05
    clear_of: dict[Literal["boom", "house", "undercarriage"], list[str]] = Field(
        default_factory=lambda: {"boom": ["boom_rear", "boom_front"], "house": ["cab"],
                                 "undercarriage": ["track_right", "track_left", "carbody"]})


class PinTable(_Section):
    """A validated pin table (module docstring). ``source`` is the file it came from (for messages)."""
    name: str = "excavator"
    description: str = ""
    pins: PinSet
    cylinders: Cylinders
    masses: Masses
    swing: Swing = Field(default_factory=Swing)
    hydraulics: Optional[Hydraulics] = None
    marker_links: bool = True
    materials: dict[str, tuple[Finite, Finite, Finite, Finite]] = Field(default_factory=dict)
    visuals: dict[str, list[Visual]] = Field(default_factory=dict)
    limits: MechanismLimits = Field(default_factory=MechanismLimits)
    source: str = Field("<pin table>", exclude=True)

    def err(self, key: str, msg: str) -> ModelError:
        """A ModelError naming this table's file and ``key`` (a dotted path such as ``cylinders.boom.rod``)."""
        return ModelError(msg, file=self.source, element=key)

    def pin(self, name: str) -> np.ndarray:
        """Pin ``name`` as (2,) [m] (x, z) in the machine frame."""
        return np.array(getattr(self.pins, name), float)


def _key_path(loc) -> str:
    return ".".join(str(p) for p in loc) or "top level"


def _message(e) -> str:
    kind, value = e["type"], e.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required"
    if kind in ("greater_than", "greater_than_equal"):
        ctx = e.get("ctx") or {}
        return f"must be {'>' if kind == 'greater_than' else '>='} {next(iter(ctx.values()), '')}, got {value!r}"
    return f"{e['msg'].removeprefix('Value error, ')}, got {value!r}"


def pin_table_from_dict(data: dict, source: str = "<pin table>", check: bool = True) -> PinTable:
    """Validate a mapping as a PinTable (schema, then the checks of ``_check`` unless ``check`` is False: a
    calibration measures how far a candidate is from valid). Raises ModelError naming ``source`` and the
    first wrong key path."""
    if not isinstance(data, dict):
        raise ModelError(f"expected a mapping of sections, got {type(data).__name__}", file=source)
    try:
        table = PinTable.model_validate(data)
    except ValidationError as exc:
        errs = exc.errors()
        e = errs[0]
        more = len(errs) - 1
        raise ModelError(_message(e) + (f" (and {more} more key{'s' if more > 1 else ''} wrong)" if more else ""),
                         file=source, element=_key_path(e["loc"])) from None
    table.source = str(source)
    if check:
        _check(table)
    return table


MAX_YAML_NODES = 100_000
"""Values a pin table may hold once its YAML aliases are expanded (a 'billion laughs' holds 10⁹)."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader (no Python tags) that refuses a document of more than ``MAX_YAML_NODES`` values
    with its aliases expanded, before anything is built."""

    def compose_document(self):
        node = super().compose_document()
        sizes = {}

        def size(n):
            if id(n) not in sizes:
                sizes[id(n)] = 0  # a recursive alias counts once
                kids = ([c for kv in n.value for c in kv] if isinstance(n, yaml.MappingNode) else
                        n.value if isinstance(n, yaml.SequenceNode) else [])
                sizes[id(n)] = 1 + sum(size(c) for c in kids)
                if sizes[id(n)] > MAX_YAML_NODES:
                    raise yaml.YAMLError(f"with its aliases expanded the document holds more than {MAX_YAML_NODES} "
                                         "values (an alias bomb?)")
            return sizes[id(n)]

        if node is not None:
            size(node)
        return node


def load_pin_table(path) -> PinTable:
    """Read and validate a pin table (YAML, PyYAML's safe loader; at most 1 MiB). Raises ModelError naming
    the file and the key path (or the line, for YAML syntax errors) and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ModelError("pin table not found", file=str(path))
    if path.stat().st_size > MAX_TABLE_BYTES:
        raise ModelError(f"{path.stat().st_size} bytes; a pin table is at most 1 MiB", file=str(path))
    from urdf_dyn.io.files import note_input
    note_input(path)              # no output of this run may replace it
    try:
        data = yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise ModelError("YAML error: nested too deeply", file=str(path)) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ModelError(f"YAML error: {getattr(e, 'problem', None) or e}", file=str(path),
                         line=mark.line + 1 if mark is not None else None) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ModelError(f"cannot read: {e}", file=str(path)) from None
    return pin_table_from_dict({} if data is None else data, str(path))


def _check(t: PinTable) -> None:
    """What the schema alone cannot say: rods thinner than bores, strokes that are strokes, the table's
    cylinder lengths within them, the lip inside the tip radius, distinct pins, inertias that are inertias.
    (Whether the linkage closes over the strokes is checked where it is swept, in the builder.)"""
    for key, c in (("boom", t.cylinders.boom), ("stick", t.cylinders.stick), ("bucket", t.cylinders.bucket)):
        k = f"cylinders.{key}"
        if c.rod >= c.bore:
            raise t.err(f"{k}.rod", f"{c.rod:g} m: the rod must be smaller than the bore ({c.bore:g} m)")
        if c.tube_outer is not None and c.tube_outer <= c.bore:
            raise t.err(f"{k}.tube_outer", f"{c.tube_outer:g} m: the tube must be wider than the bore ({c.bore:g} m)")
        if c.max_length <= c.min_length:
            raise t.err(f"{k}.max_length", f"{c.max_length:g} m: must be longer than min_length ({c.min_length:g} m)")
    names = [n for n in PIN_NAMES if getattr(t.pins, n) is not None]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if np.linalg.norm(t.pin(a) - t.pin(b)) < 1e-6:
                raise t.err(f"pins.{b}", f"coincides with pins.{a} {tuple(t.pin(a))}: every pin is a distinct point")
    for key, base, eye in (("boom", "boom_cylinder_base", "boom_cylinder_eye"),
                           ("stick", "stick_cylinder_base", "stick_cylinder_eye"),
                           ("bucket", "bucket_cylinder_base", "bucket_cylinder_eye")):
        c = getattr(t.cylinders, key)
        L = float(np.linalg.norm(t.pin(eye) - t.pin(base)))
        if not c.min_length <= L <= c.max_length:
            raise t.err(f"pins.{eye}", f"the {key} cylinder is {L:.4f} m pin to pin at the table's pose, outside its "
                                       f"stroke cylinders.{key}.min_length..max_length = {c.min_length:g}..{c.max_length:g} m")
    if t.pins.lip is not None:
        r_tip = np.linalg.norm(t.pin("tip") - t.pin("bucket_pivot"))
        r_lip = np.linalg.norm(t.pin("lip") - t.pin("bucket_pivot"))
        if r_lip > r_tip:
            raise t.err("pins.lip", f"{r_lip:.4f} m from bucket_pivot, farther out than the tip ({r_tip:.4f} m): the "
                                    "lip (cutting edge) lies inside the tooth tip's radius")
    for name in BODY_NAMES + CYLINDER_PARTS:
        b = getattr(t.masses, name)
        if b is None or b.inertia is None:
            continue
        I = inertia_matrix(b.inertia)
        ev = np.linalg.eigvalsh(I)
        tol = 1e-9 * max(ev.max(), 1e-300)
        if ev.min() < -tol or ev[0] + ev[1] < ev[2] - tol:
            raise t.err(f"masses.{name}.inertia", f"principal moments {np.round(ev, 6).tolist()} kg m² are not those "
                                                  "of a body (each must be >= 0 and at most the sum of the others)")
    for link, shapes in t.visuals.items():
        if link not in BODY_NAMES + CYLINDER_PARTS:
            raise t.err(f"visuals.{link}", f"unknown link (links: {', '.join(BODY_NAMES + CYLINDER_PARTS)})")
        for i, v in enumerate(shapes):
            if (v.box is None) == (v.cylinder is None):
                raise t.err(f"visuals.{link}[{i}]", "give exactly one of box: [lx, ly, lz] or cylinder: [radius, length]")


def inertia_matrix(six) -> np.ndarray:
    """(3, 3) symmetric tensor from (ixx, iyy, izz, ixy, ixz, iyz) [kg m²]."""
    ixx, iyy, izz, ixy, ixz, iyz = (float(v) for v in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def with_tip_radius(table: PinTable, radius: float) -> PinTable:
    """The table with its bucket scaled about bucket_pivot so that the tip is ``radius`` [m] from it (a
    published tip radius, e.g. the HD bucket's): the tip, the lip, the bucket's centre of mass and box
    visuals (centres and sizes in the side view) scale by k = radius / the table's; the inertia by k²; the
    linkage pin h_link_pin and the mass stay. Raises ModelError for a radius ≤ 0."""
    B = table.pin("bucket_pivot")
    r0 = float(np.linalg.norm(table.pin("tip") - B))
    if not radius > 0:
        raise table.err("pins.tip", f"tip radius {radius!r} m: must be > 0")
    k = float(radius) / r0
    data = table.model_dump(mode="json")
    sc = lambda p: [float(v) for v in B + k * (np.asarray(p, float) - B)]  # noqa: E731
    for n in ("tip", "lip"):
        if data["pins"].get(n) is not None:
            data["pins"][n] = sc(data["pins"][n])
    b = data["masses"]["bucket"]
    b["com"] = sc(b["com"])
    if b.get("inertia") is not None:
        b["inertia"] = [float(v * k * k) for v in b["inertia"]]
    for v in data["visuals"].get("bucket", []):
        x, z = sc([v["xyz"][0], v["xyz"][2]])
        v["xyz"] = [x, v["xyz"][1], z]
        if v.get("box") is not None:
            v["box"] = [v["box"][0] * k, v["box"][1], v["box"][2] * k]
    return pin_table_from_dict(data, table.source)
