"""The case matrix of the structure's design loads: for every load case, its reliefs and anchoring, the
governing force of every pin and the slewing ring's loads (axial, radial, tilting moment, torque).

Planar cases (the boom plane) come from the stall envelopes (``stall``): one case per stalling cylinder and
per ground condition — anchored (ISO 6015 §4.5) and sliding (Coulomb, ``design.friction``) — each a grid
maximum over the envelope's poses and directions, and the converged overall row (``stall_refine``) when
given. Side loads, corner-tooth digging, swing stall against a wall and end-stop impact are not built yet
(out-of-plane cases: the envelopes are planar).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from urdf_dyn.machines.reliefs import plain_reliefs, relief_text

__all__ = ["CaseRow", "case_matrix"]


@dataclass
class CaseRow:
    """One load case: ``case`` (its name), ``working_relief`` [Pa], ``holding`` (the holding reliefs, plain
    data), ``anchoring`` ("anchored" | "sliding, μ = …"), ``pins`` {pin: governing force per pin [N]},
    ``ring`` (``StallEnvelopes.ring_loads``: tilting moment [N m], axial, radial [N], torque [N m], the
    state of the largest tilting moment), ``note``."""
    case: str
    working_relief: float
    holding: object
    anchoring: str
    pins: dict
    ring: dict = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict:
        return dict(case=self.case, working_relief_Pa=self.working_relief, holding_relief_Pa=self.holding,
                    holding_relief=relief_text(self.holding), anchoring=self.anchoring, pins_N=self.pins,
                    ring=self.ring, note=self.note)


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
            one = replace(env, working=(c,))
            dl = one.design_loads(model, pins)
            ring = one.ring_loads(model, swing) if swing is not None else {}
            rows.append(CaseRow(f"{c} stall", env.relief, plain_reliefs(env.holding_relief), anch,
                                {p: d["design_load_N"] for p, d in dl.items()}, ring,
                                f"grid {len(env.X)} poses x {len(env.fan_deg) + 1} directions"))
    for label, conv in (converged or {}).items():
        env = envelopes[0]
        anch = "anchored" if conv.friction is None else f"sliding, μ = {conv.friction:g}"
        rows.append(CaseRow(label, env.relief, plain_reliefs(env.holding_relief), anch,
                            {p: d["design_load_N"] for p, d in conv.loads.items()}, {},
                            f"refined until two passes change < {100 * conv.tol:g} %"))
    return rows
