"""The duty mix's results, as records the report reads (``reports.duty_report``) and the job fills
(``jobs.sizing_duty.run_duty``): each activity's own computed history (``ActivityRun``) and the mix over the
life (``DutyResult``: the pins' spectra of the force magnitude, ``machines.fatigue.duty_spectrum``; the
bushings, ``machines.pin_bearing``; the welded details' Miner damage). Forces in N, stresses in Pa."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ActivityRun", "DutyResult"]


@dataclass(frozen=True)
class ActivityRun:
    """One activity: ``hours``, ``cycles_per_hour``, ``cycle_time`` [s], ``repetitions`` over the life,
    ``built_from`` (what its history is computed from), ``soil`` (name or ""), ``payload_kg``, ``force``
    {pin: |f| (N,) [N] one repetition}, ``bearing`` {pin: PinBearing}, ``effort_use`` {actuator: peak
    |u| / effort limit}."""
    hours: float
    cycles_per_hour: float
    cycle_time: float
    repetitions: float
    built_from: str
    soil: str
    payload_kg: float
    force: dict
    bearing: dict
    effort_use: dict


@dataclass
class DutyResult:
    """The duty mix: ``activities`` {name: ActivityRun}; ``spectra`` {pin: Spectrum of |f| [N]} over the
    life; ``details`` {detail: dict(pin, spectrum [Pa], damage, curve, gamma_Ff, gamma_Mf, source)};
    ``allowable`` (AllowableSpec or None), ``bushings`` {pin: PinBushingSpec}; ``m``, ``reference_cycles``
    of the damage-equivalent load; ``bins``; ``notes``."""
    activities: dict
    spectra: dict
    details: dict
    allowable: object
    bushings: dict
    m: float
    reference_cycles: float
    bins: int = 20
    notes: list = field(default_factory=list)

    @property
    def life_hours(self) -> float:
        """Σ hours of the activities."""
        return float(sum(a.hours for a in self.activities.values()))

    def damage_equivalent(self, pin) -> float:
        """ΔF_eq [N] of the pin's |f| spectrum (``Spectrum.damage_equivalent``)."""
        return self.spectra[pin].damage_equivalent(self.m, self.reference_cycles)
