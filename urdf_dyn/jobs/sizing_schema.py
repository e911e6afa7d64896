"""The launch-file schema of ``job: size`` (pydantic sections; documented in ``sizing_job``)."""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import Field, PositiveInt, model_validator

from urdf_dyn.launch.document import FiniteFloat, LaunchDocument, NonNegativeFloat, PositiveFloat, Section

__all__ = ["MotionSpec", "Payload", "FrameSpec", "LoadSpec", "GroundSpec", "SoilPayloadSpec", "SoilSpec",
           "CylinderSpec", "Actuators", "MotorSpec", "HydraulicsSpec", "IsoSpec", "LiftSpec", "StabilitySpec",
           "SizeDocument"]

Vec3 = tuple[FiniteFloat, FiniteFloat, FiniteFloat]
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
    preset: str
    density: Optional[PositiveFloat] = Field(None, description="[kg/m³]")
    friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    tool_friction_angle: Optional[NonNegativeFloat] = Field(None, lt=90, description="[deg]")
    cohesion: Optional[NonNegativeFloat] = Field(None, description="[Pa]")
    adhesion: Optional[NonNegativeFloat] = Field(None, description="[Pa]")
    ground: GroundSpec
    edge: str = Field(description="frame on the cutting edge (frames: name or link)")
    face: Vec3 = Field((-0.51, 0.0, 0.86), description="tool-face direction in the edge frame")
    width: PositiveFloat = Field(description="[m]")
    capacity: PositiveFloat = Field(description="[m³] heaped")
    opening: PositiveFloat = Field(1.0, description="[m]")
    during: Phases
    payload: Optional[SoilPayloadSpec] = None


class CylinderSpec(Section):
    bore: PositiveFloat = Field(description="[m]")
    rod: PositiveFloat = Field(description="[m]")
    count: PositiveInt = 1


class Actuators(Section):
    actuated: Optional[list[str]] = None
    weights: Optional[Union[dict[str, PositiveFloat], list[PositiveFloat]]] = None
    bounds: Optional[Literal["limits"]] = None
    cylinders: dict[str, CylinderSpec] = Field(default_factory=dict)


class MotorSpec(Section):
    displacement: PositiveFloat = Field(description="[m³/rad] at the joint")


class HydraulicsSpec(Section):
    relief: PositiveFloat = Field(35e6, description="[Pa]")
    pump_flow: PositiveFloat = Field(429 / 60e3, description="[m³/s] all pumps")
    supply: dict[str, PositiveFloat] = Field(default_factory=dict, description="[m³/s] per actuator")
    motors: dict[str, MotorSpec] = Field(default_factory=dict)


class IsoSpec(Section):
    relief: PositiveFloat = Field(35e6, description="[Pa]")
    tip: Optional[str] = Field(None, description="frame on the cutting edge")


class LiftSpec(Section):
    radii: Optional[list[FiniteFloat]] = Field(None, description="[m]")
    heights: Optional[list[FiniteFloat]] = Field(None, description="[m]")
    lift_pressure: PositiveFloat = Field(38e6, description="[Pa]")


class StabilitySpec(Section):
    footprint: Optional[list[tuple[FiniteFloat, FiniteFloat]]] = Field(None, description="[m] convex polygon")
    ground_height: FiniteFloat = Field(0.0, description="[m]")


class SizeDocument(LaunchDocument):
    """``job: size``: actuator sizing along a prescribed motion."""
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
