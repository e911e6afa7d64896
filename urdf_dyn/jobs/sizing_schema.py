"""The launch-file schema of ``job: size`` (pydantic sections; documented in ``sizing_job``)."""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, PositiveInt, PrivateAttr, model_validator

from urdf_dyn.launch.document import (FiniteFloat, LaunchDocument, NonNegativeFloat, OutputsSection, PositiveFloat,
                                      Section)
from urdf_dyn.machines.soil import SOILS

__all__ = ["MotionSpec", "Payload", "FrameSpec", "LoadSpec", "GroundSpec", "SoilPayloadSpec", "SoilSpec",
           "CylinderSpec", "Actuators", "MotorSpec", "LineReliefSpec", "HydraulicsSpec", "IsoSpec", "LiftSpec", "TrackSpec",
           "StabilitySpec", "WorkingRangeSpec", "ReferenceFigure",
           "DesignPinSpec", "BucklingSpec", "PumpSpec", "FatigueSpec", "CycleSpec", "DesignSpec", "SizeOutputs",
           "SizeDocument"]

Vec3 = tuple[FiniteFloat, FiniteFloat, FiniteFloat]
#: the soil presets of ``urdf_dyn.machines.soil.SOILS``, checked by the schema
SoilPreset = Literal[tuple(SOILS)]
Phases = Union[str, list[str]]


class MotionSpec(Section):
    independent: list[str] = Field(min_length=1, description="the coordinates the motion prescribes")
    type: Literal["quintic", "spline"] = "quintic"
    waypoints: Optional[list[dict[str, FiniteFloat]]] = None
    durations: Optional[list[PositiveFloat]] = Field(None, description="[s] one per segment")
    phases: Optional[list[str]] = Field(None, description="a name per segment, for `during:`")
    csv: Optional[str] = Field(None, description="recorded motion: columns t, <independent names>")
    dt: PositiveFloat = Field(0.01, description="[s] between samples")


class Payload(Section):
    link: str
    mass: NonNegativeFloat = Field(description="[kg]")
    com: Vec3 = Field((0.0, 0.0, 0.0), description="[m] link frame")
    inertia: Optional[list[list[FiniteFloat]]] = Field(None, description="3×3 [kg m²] about the centre of mass")
    from_: Optional[FiniteFloat] = Field(None, alias="from", description="[s] payload on from")
    until: Optional[FiniteFloat] = Field(None, description="[s] payload on until")
    during: Optional[Phases] = Field(None, description="motion phases with the payload on")

    @model_validator(mode="after")
    def _window_and_inertia(self):
        """``from`` <= ``until`` (else the payload never acts); ``inertia`` a symmetric positive semi-definite
        3×3 matrix (zero: a point mass) whose principal moments satisfy the triangle inequality, as a rigid
        body's do (RBDA §2.13)."""
        if self.from_ is not None and self.until is not None and self.from_ > self.until:
            raise ValueError(f"from ({self.from_:g} s) is after until ({self.until:g} s): the payload would never act")
        if self.inertia is not None:
            import numpy as np
            J = np.array(self.inertia, float)
            if J.shape != (3, 3):
                raise ValueError(f"inertia must be 3×3, got shape {J.shape}")
            if not np.allclose(J, J.T, rtol=1e-9, atol=1e-12):
                raise ValueError("inertia must be symmetric")
            e = np.linalg.eigvalsh(J)
            tol = 1e-9 * max(abs(e[2]), 1e-300)
            if e[0] < -tol or e[2] > e[0] + e[1] + tol:
                raise ValueError(f"inertia is not a rigid body's: principal moments {', '.join(f'{x:.6g}' for x in e)} "
                                 "must be >= 0 (zero for a point mass) with the largest at most the sum of the "
                                 "other two")
        return self


class FrameSpec(Section):
    link: str
    xyz: Vec3 = Field((0.0, 0.0, 0.0), description="[m] in the link frame")
    rpy: Vec3 = Field((0.0, 0.0, 0.0), description="[rad]")


class LoadSpec(Section):
    link: str = Field(description="the link the wrench acts on")
    frame: str = Field("link", description="link | world | <link name> | <frames: name>")
    point: Vec3 = Field((0.0, 0.0, 0.0), description="[m] in `frame`")
    force: Vec3 = Field((0.0, 0.0, 0.0), description="[N] in `frame` axes")
    moment: Vec3 = Field((0.0, 0.0, 0.0), description="[N m] in `frame` axes")
    during: Optional[Phases] = None
    profile: Optional[list[tuple[FiniteFloat, FiniteFloat]]] = Field(
        None, description="[[t (s from the phase start), factor], ...] scaling force and moment")
    csv: Optional[str] = Field(None, description="columns t, fx, fy, fz, nx, ny, nz (s, N, N m)")


class GroundSpec(Section):
    height: FiniteFloat = Field(description="[m] level ground in the root frame")


class SoilPayloadSpec(Section):
    com: Vec3 = Field(description="[m] centroid of the cut soil in the edge link's frame")
    release: Optional[Phases] = Field(None, description="phases in which the soil leaves the bucket")


class SoilSpec(Section):
    preset: SoilPreset
    density: Optional[PositiveFloat] = Field(None, description="[kg/m³] bank (in-situ) density")
    swell: Optional[FiniteFloat] = Field(None, ge=1.0, description="loose / bank volume")
    friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    tool_friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    cohesion: Optional[NonNegativeFloat] = Field(None, description="[Pa]")
    adhesion: Optional[NonNegativeFloat] = Field(None, description="[Pa]")
    ground: GroundSpec
    edge: str = Field(description="frame on the cutting edge (frames: name or link)")
    plate: Vec3 = Field(description="the cutting plate's direction from the edge back along the plate, in the "
                        "edge frame (sets the rake)")
    width: PositiveFloat = Field(description="[m]")
    capacity: PositiveFloat = Field(description="[m³] heaped (loose)")
    edge_thickness: NonNegativeFloat = Field(0.0, description="[m] blunt edge for the penetration resistance")
    during: Phases
    payload: Optional[SoilPayloadSpec] = None


class CylinderSpec(Section):
    bore: PositiveFloat = Field(description="[m]")
    rod: PositiveFloat = Field(description="[m]")
    count: PositiveInt = 1
    tube_outer: Optional[PositiveFloat] = Field(None, description="[m] tube outer diameter (buckling)")
    rod_length: Optional[PositiveFloat] = Field(None, description="[m] rod eye pin to piston (buckling)")


class Actuators(Section):
    actuated: Optional[list[str]] = None
    weights: Optional[Union[dict[str, PositiveFloat], list[PositiveFloat]]] = None
    bounds: Optional[Literal["limits"]] = None
    cylinders: dict[str, CylinderSpec] = Field(default_factory=dict)


class MotorSpec(Section):
    displacement: Optional[PositiveFloat] = Field(None, description="[m³/rad] at the joint")
    torque: Optional[PositiveFloat] = Field(None, description="[N m] rated at `relief`: displacement = torque / relief")
    relief: Optional[PositiveFloat] = Field(None, description="[Pa] the motor circuit's relief (default: the main one)")


#: a relief valve's setting [Pa]: above 0 and at most 100 MPa (mobile hydraulics stay below about 50 MPa)
ReliefPa = Annotated[PositiveFloat, Field(le=1e8)]
#: a working relief by its name in ``hydraulics``, or a number [Pa]
WorkingRelief = Union[ReliefPa, Literal["main", "heavy_lift"]]


class LineReliefSpec(Section):
    head: ReliefPa = Field(description="[Pa] line (port) relief of the head (cap) end")
    rod: ReliefPa = Field(description="[Pa] line (port) relief of the rod end")


class HydraulicsSpec(Section):
    relief: ReliefPa = Field(description="[Pa] main relief (the machine's data sheet)")
    heavy_lift_relief: Optional[ReliefPa] = Field(None, description="[Pa] main relief in heavy-lift mode")
    line_reliefs: dict[str, LineReliefSpec] = Field(
        default_factory=dict, description="{cylinder: {head, rod}} [Pa] line (port) reliefs per cylinder side")
    pump_flow: PositiveFloat = Field(description="[m³/s] all pumps")
    supply: dict[str, PositiveFloat] = Field(default_factory=dict, description="[m³/s] per actuator")
    motors: dict[str, MotorSpec] = Field(default_factory=dict)


class IsoSpec(Section):
    relief: WorkingRelief = Field(description="[Pa] working relief (ISO 6015 §3.16), or main | heavy_lift: "
                                  "hydraulics.relief | hydraulics.heavy_lift_relief")
    holding_relief: Union[Literal["line"], FiniteFloat, dict[str, Union[FiniteFloat, LineReliefSpec]]] = Field(
        description="[Pa] every holding cylinder's port relief, {cylinder: Pa | {head, rod}}, or line: "
                    "hydraulics.line_reliefs")
    lip: str = Field(description="frame on the bucket lip, where ISO 6015 §3.1 measures the force")
    tip: Optional[str] = Field(None, description="frame on the tooth tip (the lip must not be farther out)")
    include_weight: bool = Field(False, description="add the cylinder forces holding the machine's own weight")


class LiftSpec(Section):
    radii: list[FiniteFloat] = Field(min_length=1, description="[m] load-point radii")
    heights: list[FiniteFloat] = Field(min_length=1, description="[m] load-point heights")
    lift_pressure: PositiveFloat = Field(description="[Pa] lift (boom) cylinder")
    holding_pressure: Optional[PositiveFloat] = Field(None, description="[Pa] the other cylinders (default lift)")


class TrackSpec(Section):
    roller_length: PositiveFloat = Field(description="[m] length to centre of rollers (front to rear tipping line)")
    gauge: PositiveFloat = Field(description="[m] track gauge (side tipping lines at ±gauge/2)")


class StabilitySpec(Section):
    track: Optional[TrackSpec] = Field(None, description="tipping polygon from the track (stability.tipping_polygon)")
    footprint: Optional[list[tuple[FiniteFloat, FiniteFloat]]] = Field(None, description="[m] convex tipping polygon")
    ground_height: FiniteFloat = Field(0.0, description="[m]")


class WorkingRangeSpec(Section):
    tip: str = Field(description="frame on the tooth tip")


class ReferenceFigure(Section):
    value: FiniteFloat = Field(description="published figure, in the unit its key names")
    source: str = Field(description="where it is published")


Efficiency = Annotated[float, Field(gt=0, le=1)]


class DesignPinSpec(Section):
    joint: str = Field(description="tree joint or loop joint of the pin")
    count: PositiveInt = Field(1, description="identical pins in parallel sharing its load")


class BucklingSpec(Section):
    threshold: Annotated[float, Field(gt=1)] = Field(3.5, description="warn below this safety factor")
    youngs_modulus: PositiveFloat = Field(210e9, description="[Pa] steel")
    rod_yield: PositiveFloat = Field(460e6, description="[Pa] rod yield strength (Johnson parabola)")
    relief: Optional[Union[ReliefPa, Literal["line_head", "main", "heavy_lift"], dict[str, ReliefPa]]] = Field(
        None, description="[Pa] the load's pressure on the cap: line_head (default when hydraulics.line_reliefs "
                          "are given: each cylinder's head-end line relief), main, heavy_lift or a number")


class PumpSpec(Section):
    engine_power: PositiveFloat = Field(description="[W] net engine power")
    margin: NonNegativeFloat = Field(2e6, description="[Pa] load-sensing margin")
    volumetric_efficiency: Efficiency = 0.95
    mechanical_efficiency: Efficiency = 0.9
    priority: Union[Literal["equal"], list[str]] = Field("equal", description="equal | sections, first served first")


class FatigueSpec(Section):
    m: PositiveFloat = Field(3.0, description="S-N exponent (3: welded steel, EN 1993-1-9)")
    life_cycles: PositiveFloat = Field(2e6, description="dig cycles in the design life")
    reference_cycles: PositiveFloat = Field(2e6, description="cycles of the damage-equivalent range")


class CycleSpec(Section):
    dt: PositiveFloat = Field(0.02, description="[s] sampling of each candidate")
    min_duration: PositiveFloat = Field(0.2, description="[s] shortest segment")


class DesignSpec(Section):
    pins: dict[str, Union[str, DesignPinSpec]] = Field(default_factory=dict, description="pin name: joint")
    swing_bearing: Optional[str] = Field(None, description="the swing joint")
    friction: Optional[NonNegativeFloat] = Field(None, le=2.0, description="ground friction coefficient (stall "
                                                  "envelopes' sliding case)")
    stall_relief: Optional[WorkingRelief] = Field(
        None, description="[Pa] the stalling cylinder's relief, or main | heavy_lift (default heavy_lift when "
                          "hydraulics.heavy_lift_relief is given, else iso6015.relief)")
    buckling: Optional[BucklingSpec] = None
    pumps: Optional[PumpSpec] = None
    fatigue: FatigueSpec = Field(default_factory=FatigueSpec)
    cycle: Optional[CycleSpec] = None


class SizeOutputs(OutputsSection):
    """The sizing job's ``outputs``: those of every job, and whether to draw its PNG plots."""
    plots: bool = Field(True, description="draw the PNG plots (actuator forces, soil, ISO 6015, lift chart, ...); "
                        "false writes only the tables and the reports (a sweep's cases: sweep.plots)")


class SizeDocument(LaunchDocument):
    """``job: size``: actuator sizing along a prescribed motion."""
    outputs: SizeOutputs = Field(default_factory=SizeOutputs)
    motion: MotionSpec
    frames: dict[str, FrameSpec] = Field(default_factory=dict)
    loads: list[LoadSpec] = Field(default_factory=list)
    soil: Optional[SoilSpec] = None
    payload: Optional[Payload] = None
    actuators: Actuators = Field(default_factory=Actuators)
    hydraulics: Optional[HydraulicsSpec] = None
    iso6015: Optional[IsoSpec] = None
    lift_chart: Optional[LiftSpec] = None
    stability: Optional[StabilitySpec] = None
    working_range: Optional[WorkingRangeSpec] = None
    reference: dict[str, ReferenceFigure] = Field(default_factory=dict,
                                                  description="published figures by report key, e.g. iso6015.bucket_N")
    design: Optional[DesignSpec] = None

    @model_validator(mode="after")
    def _named_reliefs(self):
        """Resolve the reliefs named by word (main, heavy_lift, line) into the numbers of ``hydraulics``, so
        that every consumer reads [Pa]; the words are kept in ``relief_names`` for the report."""
        h = self.hydraulics
        names = {}

        def working(v, key):
            if not isinstance(v, str):
                return v
            val = None if h is None else (h.relief if v == "main" else h.heavy_lift_relief)
            if val is None:
                raise ValueError(f"{key}: {v} needs hydraulics.{'relief' if v == 'main' else 'heavy_lift_relief'}")
            names[key] = v
            return val
        if self.iso6015 is not None:
            self.iso6015.relief = working(self.iso6015.relief, "iso6015.relief")
            if self.iso6015.holding_relief == "line":
                if h is None or not h.line_reliefs:
                    raise ValueError("iso6015.holding_relief: line needs hydraulics.line_reliefs")
                self.iso6015.holding_relief = dict(h.line_reliefs)
                names["iso6015.holding_relief"] = "line"
        if self.design is not None:
            d = self.design
            if d.stall_relief is None and self.iso6015 is not None:
                d.stall_relief = "heavy_lift" if h is not None and h.heavy_lift_relief else self.iso6015.relief
            d.stall_relief = working(d.stall_relief, "design.stall_relief")
            b = d.buckling
            if b is not None:
                if b.relief is None and h is not None and h.line_reliefs:
                    b.relief = "line_head"
                if b.relief == "line_head":
                    if h is None or not h.line_reliefs:
                        raise ValueError("design.buckling.relief: line_head needs hydraulics.line_reliefs")
                    b.relief = {c: v.head for c, v in h.line_reliefs.items()}
                    names["design.buckling.relief"] = "line_head"
                else:
                    b.relief = working(b.relief, "design.buckling.relief")
        self._relief_names = names
        return self

    _relief_names: dict = PrivateAttr(default_factory=dict)

    @property
    def relief_names(self) -> dict:
        """{key: the word it was given as (main, heavy_lift, line, line_head)} for the reliefs named by word."""
        return dict(self._relief_names)
