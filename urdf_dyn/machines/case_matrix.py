"""The case matrix of the structure's design loads: for every load case, its reliefs and anchoring, the
governing force of every pin and the slewing ring's loads (axial, radial, tilting moment, torque).

Planar cases (the boom plane) come from the stall envelopes (``stall``): one case per stalling cylinder and
per ground condition — anchored (ISO 6015 §4.5) and sliding (Coulomb, ``design.friction``) — each a grid
maximum over the envelope's poses and directions, and the converged overall row (``stall_refine``) when
given. The out-of-plane cases follow (``lateral_rows``): corner-tooth digging per stalling cylinder, the swing
stall against a wall and the eccentric tooth load (``lateral_cases``), the slewing ring at the tipping limit
(``slewing_ring``) and the end-stop impacts (``end_stop``), each with the pins' moments across their axes,
side forces along them and the torsion of boom and stick.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from urdf_dyn.machines.reliefs import plain_reliefs, relief_text

__all__ = ["CaseRow", "case_matrix", "lateral_rows"]


@dataclass
class CaseRow:
    """One load case: ``case`` (its name), ``working_relief`` [Pa], ``holding`` (the holding reliefs, plain
    data), ``anchoring`` ("anchored" | "sliding, μ = …"), ``pins`` {pin: governing force per pin [N]},
    ``ring`` (``StallEnvelopes.ring_loads``: tilting moment [N m], axial, radial [N], torque [N m], the
    state of the largest tilting moment), ``note``; out-of-plane cases also ``moments`` {pin: largest moment
    across the pin axis [N m]}, ``side`` {pin: largest force along it [N]}, ``lug`` {pin: largest lug force
    [N]} where a lug spacing is given, ``torsion`` {body: largest torsion [N m]}."""
    case: str
    working_relief: float
    holding: object
    anchoring: str
    pins: dict
    ring: dict = field(default_factory=dict)
    note: str = ""
    moments: dict = field(default_factory=dict)
    side: dict = field(default_factory=dict)
    lug: dict = field(default_factory=dict)
    torsion: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return dict(case=self.case, working_relief_Pa=self.working_relief, holding_relief_Pa=self.holding,
                    holding_relief=relief_text(self.holding), anchoring=self.anchoring, pins_N=self.pins,
                    ring=self.ring, note=self.note, pin_moments_Nm=self.moments, side_forces_N=self.side,
                    lug_forces_N=self.lug, torsion_Nm=self.torsion)


def case_matrix(model, envelopes, pins, swing="swing", converged=None) -> list:
    """Rows (``CaseRow``) of the case matrix (module docstring).

    envelopes: [StallEnvelopes] (e.g. the anchored and the sliding one); pins: {name: PinSpec | joint} as
    ``StallEnvelopes.design_loads``; swing: the slewing ring's joint (None: no ring column); converged:
    {label: ``stall_refine.ConvergedLoads``} adds one row per entry with the refined loads (its ring: the
    grid's). Returns [CaseRow], the envelopes' cylinders in order, anchored before sliding as given."""
    rows = []
    for env in envelopes:
        anch = "anchored" if env.friction is None else f"sliding, μ = {env.friction:g}"
        for c in env.working:
            dl = env.design_loads(model, pins, working=(c,))      # the pin and ring maps: once per envelope
            ring = env.ring_loads(model, swing, working=(c,)) if swing is not None else {}
            rows.append(CaseRow(f"{c} stall", env.relief, plain_reliefs(env.holding_relief), anch,
                                {p: d["design_load_N"] for p, d in dl.items()}, ring,
                                f"grid {len(env.X)} poses x {len(env.fan_deg) + 1} directions"
                                + (" and each pose's held-force polygon corners" if env.corner else "")))
    for label, conv in (converged or {}).items():
        env = envelopes[0]
        anch = "anchored" if conv.friction is None else f"sliding, μ = {conv.friction:g}"
        rows.append(CaseRow(label, env.relief, plain_reliefs(env.holding_relief), anch,
                            {p: d["design_load_N"] for p, d in conv.loads.items()}, {},
                            f"searched to convergence (< {100 * conv.tol:g} % more in the final neighbour check)"))
    return rows


def _ring_plain(ring) -> dict:
    return {k: float(ring[k]) for k in ("tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm") if k in ring}


def lateral_rows(cases=(), end_stops=(), ring_tipping=None, pins=None) -> list:
    """CaseRows of the out-of-plane cases (module docstring): ``cases`` [lateral_cases.LateralCase],
    ``end_stops`` [end_stop.EndStopCase], ``ring_tipping`` (``slewing_ring.ring_at_tipping_limit``'s dict,
    with "relief" and "holding" added by the caller, or None); pins: the pin names in table order (default
    the first case's). Every row is anchored."""
    rows = []
    for c in cases:
        names = list(pins or c.pins)
        swing = "" if c.swing_torque is None else f"; swing torque {c.swing_torque / 1e3:.1f} kN·m at the swing relief"
        rows.append(CaseRow(c.case, c.relief, plain_reliefs(c.holding), "anchored",
                            {p: c.pins[p]["force_N"] for p in names if p in c.pins}, _ring_plain(c.ring),
                            c.note + swing, {p: c.pins[p]["moment_Nm"] for p in names if p in c.pins},
                            {p: c.pins[p]["side_N"] for p in names if p in c.pins},
                            {p: c.pins[p]["lug_N"] for p in names if p in c.pins and c.pins[p]["lug_N"] is not None},
                            dict(c.torsion)))
    for e in end_stops:
        names = list(pins or e.pins)
        rows.append(CaseRow(f"end stop, {e.cylinder} {e.end}", float("nan"), None, "anchored",
                            {p: e.pins[p]["force_N"] for p in names if p in e.pins}, dict(e.ring),
                            f"{abs(e.speed):.3f} m/s into the cushion, m_eff {e.m_eff / 1e3:.1f} t, rigid cushion force "
                            f"{e.cushion_force_N / 1e3:.0f} kN ({e.cushion_pressure_Pa / 1e6:.0f} MPa in the cushion), "
                            f"dynamic factor phi7 {e.phi:.2f}",
                            {p: e.pins[p]["moment_Nm"] for p in names if p in e.pins}))
    if ring_tipping is not None:
        r = ring_tipping
        rows.append(CaseRow("slewing ring at the tipping limit", r.get("relief", float("nan")),
                            plain_reliefs(r.get("holding")), "anchored", {}, _ring_plain(r),
                            f"vertical load {r['load_N'] / 1e3:.1f} kN at the lip, slew {r['slew_deg']:g} deg over the "
                            f"tracks; Rollix equivalent axial {r['equivalent_axial_N'] / 1e3:.0f} kN"))
    return rows
