"""The launch-file schema of ``job: size`` (pydantic sections; documented in ``sizing_job``)."""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, PositiveInt, PrivateAttr, field_validator, model_validator

from urdf_dyn.launch.document import (FiniteFloat, LaunchDocument, NonNegativeFloat, OutputsSection, PositiveFloat,
                                      Section)
from urdf_dyn.jobs.arm_kind import DrivesSection
from urdf_dyn.jobs.duty_schema import DutySpec
from urdf_dyn.machines.soil import SOILS

__all__ = ["MotionSpec", "Payload", "FrameSpec", "LoadSpec", "GroundSpec", "SoilPayloadSpec", "SoilSpec",
           "CylinderSpec", "Actuators", "MotorSpec", "LineReliefSpec", "HydraulicsSpec", "IsoSpec", "LiftSpec", "TrackSpec",
           "StabilitySpec", "WorkingRangeSpec", "ReferenceFigure",
           "DesignPinSpec", "BucklingSpec", "PumpSpec", "FatigueSpec", "CycleSpec", "DesignSpec", "SizeOutputs",
           "SizeDocument"]

Vec3 = tuple[FiniteFloat, FiniteFloat, FiniteFloat]
#: a force [N] or moment [N m] component within ±1e9: the largest machines' forces are ≈ 10 MN (a mining
#: shovel's crowd), so a figure beyond is a unit slip that would overflow the sums built from it
_WrenchComponent = Annotated[float, Field(ge=-1e9, le=1e9)]
Wrench3 = tuple[_WrenchComponent, _WrenchComponent, _WrenchComponent]
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
    # ≤ 1000 t: the heaviest loads a mobile machine lifts (a large crawler crane's rating ≈ 3000 t is a crane,
    # not a link payload; an excavator bucket's payload is < 100 t)
    mass: NonNegativeFloat = Field(description="[kg]", le=1e6)
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
    force: Wrench3 = Field((0.0, 0.0, 0.0), description="[N] in `frame` axes")
    moment: Wrench3 = Field((0.0, 0.0, 0.0), description="[N m] in `frame` axes")
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
    # 100..5000 kg/m³: from peat (≈ 300) to iron ore (≈ 3500 bank; Caterpillar Performance Handbook, "Weights of
    # materials"); outside it the figure is a unit slip (g/cm³, t/m³ × 1000 twice)
    density: Optional[PositiveFloat] = Field(None, ge=100, le=5000, description="[kg/m³] bank (in-situ) density")
    # ≤ 2: blasted rock swells ≈ 1.5–1.8 (same handbook's swell factors)
    swell: Optional[FiniteFloat] = Field(None, ge=1.0, le=2.0, description="loose / bank volume")
    friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    tool_friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    # ≤ 1 MPa: hard clay ≈ 0.1–0.4 MPa, weak rock ≈ 1 MPa; stronger ground is ripped or blasted, not dug
    # (the wedge model of machines.soil does not hold)
    cohesion: Optional[NonNegativeFloat] = Field(None, le=1e6, description="[Pa]")
    adhesion: Optional[NonNegativeFloat] = Field(None, le=1e6, description="[Pa] (at most the cohesion's range)")
    ground: GroundSpec
    edge: str = Field(description="frame on the cutting edge (frames: name or link)")
    plate: Vec3 = Field(description="the cutting plate's direction from the edge back along the plate, in the "
                        "edge frame (sets the rake)")
    # ≤ 10 m: bucket widths run from 0.2 m (mini excavators) to ≈ 5 m (the largest mining shovels)
    width: PositiveFloat = Field(description="[m]", le=10)
    # ≤ 100 m³: the largest shovel dippers hold ≈ 60 m³
    capacity: PositiveFloat = Field(description="[m³] heaped (loose)", le=100)
    # ≤ 0.5 m: a cutting edge is centimetres thick
    edge_thickness: NonNegativeFloat = Field(0.0, le=0.5, description="[m] blunt edge for the penetration resistance")
    during: Phases
    payload: Optional[SoilPayloadSpec] = None


class CylinderSpec(Section):
    # ≤ 2 m bore/rod, ≤ 3 m tube, ≤ 50 m rod length: the largest press and mining cylinders are ≈ 1 m bore
    bore: PositiveFloat = Field(description="[m]", le=2)
    rod: PositiveFloat = Field(description="[m]", le=2)
    count: PositiveInt = Field(1, le=100)
    tube_outer: Optional[PositiveFloat] = Field(None, le=3, description="[m] tube outer diameter (buckling)")
    rod_length: Optional[PositiveFloat] = Field(None, le=50, description="[m] rod eye pin to piston (buckling)")
    # ≤ 1 m: a cylinder's eye pins are about its rod's diameter (a 20 t excavator's ≈ 0.09 m, a mining
    # shovel's ≈ 0.3 m); the bound keeps the pins' friction moment mu F d/2 physical
    pin_diameter: Optional[PositiveFloat] = Field(
        None, le=1.0, description="[m] the pins at both ends (buckling: their friction moment)")
    # ≤ 10 mm: gland and piston guides run at 0.05–1 mm diametral clearance (ISO 286 fits); 10 mm is a guide
    # worn out, beyond which the tilt model (clearance over guide length) means nothing
    clearance: NonNegativeFloat = Field(
        0.0, le=0.01, description="[m] gland plus piston diametral clearance (buckling: the rod's tilt)")
    # ≤ 10 m: the guide length (gland to piston at full extension) is a fraction of the rod length (≤ 50 m)
    guide_length: Optional[PositiveFloat] = Field(
        None, le=10.0, description="[m] gland to piston at full extension (buckling: the rod's tilt)")


class Actuators(Section):
    actuated: Optional[list[str]] = None
    weights: Optional[Union[dict[str, PositiveFloat], list[PositiveFloat]]] = None
    bounds: Optional[Literal["limits"]] = None
    cylinders: dict[str, CylinderSpec] = Field(default_factory=dict)


class MotorSpec(Section):
    # ≤ 1 m³/rad and ≤ 10 MN m at the joint (after gearing): a 1000 t mining shovel's swing ≈ 5 MN m
    displacement: Optional[PositiveFloat] = Field(None, le=1.0, description="[m³/rad] at the joint")
    torque: Optional[PositiveFloat] = Field(None, le=1e7,
                                            description="[N m] rated at `relief`: displacement = torque / relief")
    # hydraulic pressures ≤ 100 MPa: mobile hydraulics run ≤ 50 MPa (ISO 4413 components are rated ≤ 70 MPa)
    relief: Optional[PositiveFloat] = Field(None, le=1e8,
                                            description="[Pa] the motor circuit's relief (default: the main one)")


#: a relief valve's setting [Pa]: above 0 and at most 100 MPa (mobile hydraulics stay below about 50 MPa)
ReliefPa = Annotated[PositiveFloat, Field(le=1e8)]
#: a holding (line) relief as a number [Pa]: finite, ≤ 100 MPa as ReliefPa; its sign is checked with the cylinder
HoldingPa = Annotated[FiniteFloat, Field(le=1e8)]
#: a working relief by its name in ``hydraulics``, or a number [Pa]
WorkingRelief = Union[ReliefPa, Literal["main", "heavy_lift"]]


class LineReliefSpec(Section):
    head: ReliefPa = Field(description="[Pa] line (port) relief of the head (cap) end")
    rod: ReliefPa = Field(description="[Pa] line (port) relief of the rod end")


class HydraulicsSpec(Section):
    # hydraulic pressures ≤ 100 MPa (ReliefPa): mobile hydraulics run ≤ 50 MPa (ISO 4413 components ≤ 70 MPa)
    relief: ReliefPa = Field(description="[Pa] main relief (the machine's data sheet)")
    heavy_lift_relief: Optional[ReliefPa] = Field(None, description="[Pa] main relief in heavy-lift mode")
    line_reliefs: dict[str, LineReliefSpec] = Field(
        default_factory=dict, description="{cylinder: {head, rod}} [Pa] line (port) reliefs per cylinder side")
    # ≤ 1 m³/s (60 000 L/min): the largest mining shovels pump ≈ 8000 L/min
    pump_flow: PositiveFloat = Field(description="[m³/s] all pumps", le=1.0)
    supply: dict[str, Annotated[float, Field(gt=0, le=1.0)]] = Field(default_factory=dict,
                                                                   description="[m³/s] per actuator")
    motors: dict[str, MotorSpec] = Field(default_factory=dict)


class IsoSpec(Section):
    relief: WorkingRelief = Field(description="[Pa] working relief (ISO 6015 §3.16), or main | heavy_lift: "
                                  "hydraulics.relief | hydraulics.heavy_lift_relief")
    # the sign is checked where the cylinder is known (sizing_checks names the cylinder); the size as ReliefPa
    holding_relief: Union[HoldingPa, Literal["line"], dict[str, Union[HoldingPa, LineReliefSpec]]] = Field(
        description="[Pa] every holding cylinder's port relief, {cylinder: Pa | {head, rod}}, or line: "
                    "hydraulics.line_reliefs")
    lip: str = Field(description="frame on the bucket lip, where ISO 6015 §3.1 measures the force")
    tip: Optional[str] = Field(None, description="frame on the tooth tip (the lip must not be farther out)")
    include_weight: bool = Field(False, description="add the cylinder forces holding the machine's own weight")
    arm_bucket: Literal["max_moment", "maximum", "bucket_force"] = Field(
        "max_moment", description="the arm force's bucket stroke: max_moment (SAE J1179 §3.3.1: the bucket "
        "linkage's largest output moment), maximum (the largest arm force, ISO 6015 §4.4 literally) or "
        "bucket_force (the bucket force's, makers' convention)")


class LiftSpec(Section):
    radii: list[FiniteFloat] = Field(min_length=1, description="[m] load-point radii")
    heights: list[FiniteFloat] = Field(min_length=1, description="[m] load-point heights")
    lift_pressure: PositiveFloat = Field(description="[Pa] lift (boom) cylinder", le=1e8)  # ≤ 100 MPa
    holding_pressure: Optional[PositiveFloat] = Field(None, le=1e8,
                                                      description="[Pa] the other cylinders (default lift)")


class TrackSpec(Section):
    # ≤ 20 m: the largest crawler undercarriages are ≈ 10 m long and wide
    roller_length: PositiveFloat = Field(description="[m] length to centre of rollers (front to rear tipping line)",
                                         le=20)
    gauge: PositiveFloat = Field(description="[m] track gauge (side tipping lines at ±gauge/2)", le=20)


class StabilitySpec(Section):
    track: Optional[TrackSpec] = Field(None, description="tipping polygon from the track (stability.tipping_polygon)")
    footprint: Optional[list[tuple[FiniteFloat, FiniteFloat]]] = Field(None, description="[m] convex tipping polygon")
    ground_height: FiniteFloat = Field(0.0, description="[m]")


class WorkingRangeSpec(Section):
    tip: str = Field(description="frame on the tooth tip")


class ReferenceFigure(Section):
    value: FiniteFloat = Field(description="published figure, in the unit its key names")
    source: str = Field(description="where it is published")


#: an efficiency in [0.1, 1]: hydraulic pumps and motors run at 0.8–0.98; below 10 % the unit is broken and
#: the figure a slip (1e-300 would make a cycle last 10²⁹⁹ s)
Efficiency = Annotated[float, Field(ge=0.1, le=1)]


class DesignPinSpec(Section):
    joint: str = Field(description="tree joint or loop joint of the pin")
    count: PositiveInt = Field(1, description="identical pins in parallel sharing its load")


class BucklingSpec(Section):
    # 1 ≤ threshold ≤ 100: the factor is ISO/TS 13725's yield-based limit over the relief force, a resistance over
    # an upper-bound load, so 1 is the criterion (EN 1990 Table A1.3, EN 1993-1-1 §6.1 gamma_M1 = 1.00); below 1
    # a cylinder that yields would pass; above 100 every cylinder would be flagged
    threshold: Annotated[float, Field(ge=1, le=100)] = Field(
        1.0, description="warn below this factor F_max / F (ISO/TS 13725 yield-based limit over the relief force)")
    # ≤ 0.5: greased steel-on-bronze or steel-on-steel pin bushings run at 0.1–0.2, dry steel ≈ 0.5
    pin_friction: NonNegativeFloat = Field(
        0.0, le=0.5, description="friction coefficient of the pin bushings (the pins' moment mu F d/2)")
    # 1 GPa (polymers) .. 1.2 TPa (diamond): any solid a rod is made of
    youngs_modulus: PositiveFloat = Field(210e9, ge=1e9, le=1.2e12, description="[Pa] steel")
    # ≤ 5 GPa: the strongest steels yield at ≈ 2.5 GPa
    rod_yield: PositiveFloat = Field(460e6, le=5e9, description="[Pa] rod yield strength (Johnson parabola)")
    # a number or per cylinder ≤ 100 MPa (ReliefPa)
    relief: Optional[Union[ReliefPa, Literal["line_head", "main", "heavy_lift"], dict[str, ReliefPa]]] = Field(
        None, description="[Pa] the load's pressure on the cap: line_head (default when hydraulics.line_reliefs "
                          "are given: each cylinder's head-end line relief), main, heavy_lift or a number")


class PumpSpec(Section):
    # 1 kW .. 10 MW: a mini excavator's engine ≈ 10 kW, the largest mining shovels ≈ 3.5 MW
    engine_power: PositiveFloat = Field(description="[W] net engine power", ge=1e3, le=1e7)
    # ≤ 10 MPa: load-sensing margins are 1.5–3 MPa
    margin: NonNegativeFloat = Field(2e6, le=1e7, description="[Pa] load-sensing margin")
    volumetric_efficiency: Efficiency = 0.95
    mechanical_efficiency: Efficiency = 0.9
    priority: Union[Literal["equal"], list[str]] = Field("equal", description="equal | sections, first served first")

    @field_validator("priority")
    @classmethod
    def _no_repeats(cls, v):
        """A section named twice in ``priority`` has no defined place: refused."""
        if isinstance(v, list):
            seen = [x for i, x in enumerate(v) if x in v[:i]]
            if seen:
                raise ValueError(f"{seen[0]!r} is named more than once: give each section one place")
        return v


class FatigueSpec(Section):
    # 1 ≤ m ≤ 20: EN 1993-1-9 uses 3 and 5 (welded steel), bolts in shear 8, composites up to ≈ 15; a larger
    # exponent overflows Δσ^m
    m: PositiveFloat = Field(3.0, ge=1, le=20, description="S-N exponent (3: welded steel, EN 1993-1-9)")
    # ≤ 1e10 cycles: 1e10 is the very-high-cycle regime; a machine digs ≈ 1e7 cycles in its life
    life_cycles: PositiveFloat = Field(2e6, le=1e10, description="dig cycles in the design life")
    reference_cycles: PositiveFloat = Field(2e6, le=1e10, description="cycles of the damage-equivalent range")


class CycleSpec(Section):
    dt: PositiveFloat = Field(0.02, description="[s] sampling of each candidate")
    min_duration: PositiveFloat = Field(0.2, description="[s] shortest segment")


class LateralSpec(Section):
    """``design.lateral``: the out-of-plane load cases (machines.lateral_cases, slewing_ring, end_stop)."""
    # ≤ 10 m as soil.width: the bucket's width at its corner teeth (default soil.width)
    bucket_width: Optional[PositiveFloat] = Field(None, le=10, description="[m] corner teeth apart (default soil.width)")
    swing_relief: Optional[ReliefPa] = Field(None, description="[Pa] the swing circuit's crossover relief "
                                             "(swing stall and eccentric tooth load; none: those cases left out)")
    swing_motor: str = Field("swing", description="the motor of hydraulics.motors whose displacement turns the ring")
    # ≤ 5 m: a 20 t machine's boom foot lugs stand ≈ 0.7–1 m apart
    lug_spacing: dict[str, Annotated[float, Field(gt=0, le=5)]] = Field(
        default_factory=dict, description="{pin: [m]} between the lug mid-planes (the lug forces)")
    # 1 mm .. 1 m: cylinder cushions run 20–100 mm
    cushion_length: Optional[Annotated[float, Field(ge=1e-3, le=1.0)]] = Field(
        None, description="[m] end-of-stroke cushion (end-stop impact; none: that case left out)")
    cushion_xi: Annotated[float, Field(gt=0, le=1)] = Field(
        0.5, description="the cushion's force-stroke characteristic E/(F_max s) (EN 1991-3 Table 2.10)")
    min_reach: Optional[NonNegativeFloat] = Field(None, le=50, description="[m] no wall nearer the swing axis "
                                                  "(default the tipping polygon's front edge)")


class DesignSpec(Section):
    pins: dict[str, Union[str, DesignPinSpec]] = Field(default_factory=dict, description="pin name: joint")
    swing_bearing: Optional[str] = Field(None, description="the swing joint")
    # ≤ 2: steel grousers on rock ≈ 0.9, rubber on dry concrete ≈ 1
    friction: Optional[NonNegativeFloat] = Field(None, le=2.0, description="ground friction coefficient of the "
                                                  "stall envelopes' separate sliding case (the design loads: anchored)")
    # a number ≤ 100 MPa (ReliefPa) or a relief of hydraulics: by name
    stall_relief: Optional[WorkingRelief] = Field(
        None, description="[Pa] the stalling cylinder's relief, or main | heavy_lift (default heavy_lift when "
                          "hydraulics.heavy_lift_relief is given, else iso6015.relief)")
    buckling: Optional[BucklingSpec] = None
    pumps: Optional[PumpSpec] = None
    fatigue: FatigueSpec = Field(default_factory=FatigueSpec)
    cycle: Optional[CycleSpec] = None
    duty: Optional[DutySpec] = Field(None, description="the life as a mix of activities (jobs.duty_schema)")
    lateral: Optional[LateralSpec] = None


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
    drives: Optional[DrivesSection] = Field(None, description="an arm's electric drives (jobs.arm_kind)")

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
