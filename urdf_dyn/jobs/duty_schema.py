"""The ``design.duty`` section of ``job: size`` (pydantic): the machine's life as a mix of activities, each a
motion of its own with its own soil or load, repeated for a number of hours; the pins' bushings; the
allowable bearing pressure and p·v; and the welded details whose stress per unit pin load is known.
Built into load spectra by ``jobs.sizing_duty``; documented in docs/manual.md ("Duty mix")."""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import Field, model_validator

from urdf_dyn.launch.document import FiniteFloat, NonNegativeFloat, PositiveFloat, Section
from urdf_dyn.machines.soil import SOILS

__all__ = ["ActivitySoilSpec", "ActivityPayloadSpec", "ActivitySpec", "PinBushingSpec", "AllowableSpec",
           "WeldDetailSpec", "DutySpec"]

Vec3 = tuple[FiniteFloat, FiniteFloat, FiniteFloat]
Phases = Union[str, list[str]]


class ActivitySoilSpec(Section):
    """The soil an activity cuts: the scenario's ``soil`` section with these keys replaced (the edge, the
    plate, the width, the capacity and the payload's centroid stay the bucket's)."""
    preset: Optional[Literal[tuple(SOILS)]] = None
    # the same bounds as soil.density / soil.swell (sizing_schema.SoilSpec)
    density: Optional[PositiveFloat] = Field(None, ge=100, le=5000, description="[kg/m³] bank density")
    swell: Optional[FiniteFloat] = Field(None, ge=1.0, le=2.0, description="loose / bank volume")
    ground: Optional[FiniteFloat] = Field(None, description="[m] the level the edge cuts below (root frame z)")
    during: Optional[Phases] = Field(None, description="phases in which the edge cuts (default: "
                                     "soil.during for motion: main, else the phases named dig and curl)")
    release: Optional[Phases] = Field(None, description="phases in which the soil leaves the bucket "
                                      "(default: soil.payload.release for motion: main, else dump)")


class ActivityPayloadSpec(Section):
    """A load hung on a link during some phases (a lift): its weight and inertia as a point mass."""
    link: str
    # ≤ 100 t: a 20-40 t excavator lifts at most a few tonnes; beyond is a unit slip
    mass: PositiveFloat = Field(description="[kg]", le=1e5)
    com: Vec3 = Field((0.0, 0.0, 0.0), description="[m] in the link frame: where the load hangs")
    during: Phases = Field(description="phases with the load on")


class ActivitySpec(Section):
    """One activity of the duty mix. ``motion: main`` repeats the scenario's own cycle (its motion; its soil
    unless ``soil`` replaces keys); otherwise ``waypoints`` (of ``motion.independent``), ``durations`` and
    ``phases`` give its own cycle (``motion.type`` and ``motion.dt`` of the scenario, or ``design.duty.dt``)."""
    hours: NonNegativeFloat = Field(description="[h] of this activity in the design life", le=2e5)
    cycles_per_hour: Optional[PositiveFloat] = Field(
        None, description="repetitions per hour (default 3600 / cycle time: continuous work)")
    motion: Optional[Literal["main"]] = None
    waypoints: Optional[list[dict[str, FiniteFloat]]] = None
    durations: Optional[list[PositiveFloat]] = Field(None, description="[s] one per segment")
    phases: Optional[list[str]] = None
    soil: Optional[Union[ActivitySoilSpec, Literal["none"]]] = Field(
        None, description="the soil cut (keys replacing the scenario's soil); none: no cutting")
    payload: Optional[ActivityPayloadSpec] = None
    source: str = Field("", description="what the activity is built from (shown in the report)")

    @model_validator(mode="after")
    def _one_motion(self):
        """Either ``motion: main`` or waypoints + durations (+ phases), with one duration per segment and one
        phase per segment."""
        own = self.waypoints is not None or self.durations is not None
        if self.motion == "main" and own:
            raise ValueError("give motion: main or waypoints and durations, not both")
        if self.motion is None:
            if not self.waypoints or not self.durations:
                raise ValueError("give motion: main (the scenario's cycle) or waypoints and durations")
            if len(self.durations) != len(self.waypoints) - 1:
                raise ValueError(f"{len(self.waypoints)} waypoints need {len(self.waypoints) - 1} durations, got "
                                 f"{len(self.durations)}")
            if self.phases is not None and len(self.phases) != len(self.durations):
                raise ValueError(f"need {len(self.durations)} phases (one per segment), got {len(self.phases)}")
        return self


class PinBushingSpec(Section):
    """A pin's plain bearing: diameter and loaded length (summed over the bosses that carry the pin)."""
    # ≤ 1 m: the largest mining shovels' pins are ≈ 0.3-0.4 m
    diameter: PositiveFloat = Field(description="[m] pin diameter", le=1.0)
    length: PositiveFloat = Field(description="[m] bushing length carrying the load", le=5.0)


class AllowableSpec(Section):
    """Allowable mean bearing pressure and p·v of the bushings (catalogue figures, or the maker's)."""
    # ≤ 1 GPa: beyond the yield of any bushing steel
    pressure: PositiveFloat = Field(description="[Pa] allowable p = F / (d L)", le=1e9)
    pv: PositiveFloat = Field(description="[Pa m/s] allowable p·v", le=1e9)
    source: str = Field("", description="where the figures come from")


class WeldDetailSpec(Section):
    """A welded detail loaded by one pin: its stress per unit pin load and its FAT class."""
    pin: str = Field(description="the design.pins name whose force loads the detail")
    stress_per_N: Union[FiniteFloat, Vec3] = Field(
        description="[Pa/N] σ = k · f (3 components in the pin frame) or a number applied to |f|")
    # 10..300 MPa: EN 1993-1-9's detail categories run 36-160 MPa, IIW's FAT 36-225
    fat: PositiveFloat = Field(description="[Pa] detail category Δσ_C / FAT class at 2e6 cycles", ge=1e7, le=3e8)
    standard: Literal["en1993", "iiw"] = "en1993"
    gamma_Ff: PositiveFloat = Field(1.0, ge=1.0, le=2.0, description="partial factor on the stress ranges")
    gamma_Mf: PositiveFloat = Field(1.15, ge=1.0, le=2.0, description="partial factor on the fatigue strength "
                                    "(EN 1993-1-9 Table 3.1: 1.00-1.35)")
    source: str = Field("", description="where the stress per unit load comes from")


class DutySpec(Section):
    """``design.duty``: the activities, the pins' bushings, the allowables and the welded details."""
    activities: dict[str, ActivitySpec] = Field(min_length=1)
    dt: Optional[PositiveFloat] = Field(None, le=0.1, description="[s] sampling of the activities' own motions "
                                        "(default motion.dt)")
    bushings: dict[str, PinBushingSpec] = Field(default_factory=dict, description="{pin: {diameter, length}}")
    allowable: Optional[AllowableSpec] = None
    details: dict[str, WeldDetailSpec] = Field(default_factory=dict)
    bins: int = Field(20, ge=2, le=200, description="range bins of the spectra table")
