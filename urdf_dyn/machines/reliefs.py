"""Relief-valve limits of an excavator's cylinders: a working (main) relief and a line (port) relief per
cylinder side, as a machine's hydraulic circuit has them.

**The circuit.** A cylinder that the operator drives is fed by the pumps, whose pressure the *main relief*
limits (a data sheet's "maximum pressure, implement"; many machines have a *heavy-lift* mode that raises
it for lifting). A cylinder whose spool is centred holds its load with both ports closed; the pressure in
each port is limited by that port's *line (port) relief*, set per cylinder and per side, usually above the
main relief so that a holding cylinder does not give way while another one works. ISO 6015:2006 §3.16
names the limit of each circuit the "maximum relief circuit hydraulic pressure": "maximum static pressure
in a specific circuit limited by a relief valve"; SAE J1179 §3.2 calls the holding circuit's pressure its
relief-limited static pressure, i.e. the line relief.

**Limits used here** (``pressure_limits``), per cylinder and side, in [Pa]:

- the working cylinder: the working relief ``relief`` on both sides (cap side pushing, rod side pulling),
  as given: a machine's line reliefs are set above its main relief (else a holding cylinder would give way
  while another works), so the working port's own line relief does not bind; where it is lower, give that
  lower figure as ``relief``;
- every holding cylinder: the line relief of the side the load pressurises — the head (cap) end when the
  cylinder pushes, the rod end when it pulls.

``holding_relief`` may be one number for every side of every cylinder, {cylinder: Pa} (both sides), or
{cylinder: LineRelief | {"head": Pa, "rod": Pa} | (head, rod)} per side; a cylinder not named has no holding
limit. No machine's numbers live here: they are the scenario's (e.g. scenarios/excavator_dig.scenario.yaml
with the Cat 320's service-information settings).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LineRelief", "pressure_limits", "line_relief", "relief_text", "plain_reliefs"]


@dataclass(frozen=True)
class LineRelief:
    """A cylinder's two line (port) reliefs [Pa]: ``head`` the cap (head) end, ``rod`` the rod end."""
    head: float
    rod: float


def _side_pair(v, key):
    """(head, rod) [Pa] of one holding-relief entry; None: unlimited. Raises ValueError naming ``key``."""
    if v is None:
        return np.inf, np.inf
    if hasattr(v, "head") and hasattr(v, "rod"):          # LineRelief, or any record with the two sides
        pair = (v.head, v.rod)
    elif isinstance(v, dict):
        bad = set(v) - {"head", "rod"}
        if bad or len(v) != 2:
            raise ValueError(f"{key}: give both sides as {{head: Pa, rod: Pa}}, got keys {', '.join(map(str, v))}")
        pair = (v["head"], v["rod"])
    elif isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{key}: give (head, rod) [Pa], got {len(v)} values")
        pair = tuple(v)
    else:
        pair = (v, v)
    out = []
    for side, p in zip(("head", "rod"), pair):
        p = np.inf if p is None else float(p)
        if not p > 0:
            raise ValueError(f"{key}{'' if pair[0] == pair[1] else '.' + side} must be > 0 [Pa], got {p!r}")
        out.append(p)
    return tuple(out)


def line_relief(holding_relief, cylinder):
    """(head, rod) [Pa] of ``cylinder`` from a ``holding_relief`` (any form of the module docstring);
    (inf, inf) where it has none. Raises ValueError for a relief ≤ 0."""
    if isinstance(holding_relief, dict):
        return _side_pair(holding_relief.get(cylinder), f"holding_relief.{cylinder}")
    return _side_pair(holding_relief, "holding_relief")


def pressure_limits(cylinders, relief, holding_relief):
    """{cylinder: (working head, working rod, holding head, holding rod)} [Pa] (module docstring).

    cylinders: the cylinder names (an iterable or a dict); relief: the working relief [Pa] (> 0);
    holding_relief: as the module docstring. Raises ValueError naming the key for a relief ≤ 0, a badly
    formed entry or a cylinder that is not among ``cylinders``."""
    if not np.isfinite(relief) or relief <= 0:
        raise ValueError(f"relief must be > 0 [Pa], got {relief!r}")
    cylinders = list(cylinders)
    if isinstance(holding_relief, dict):
        for c in holding_relief:
            if c not in cylinders:
                raise ValueError(f"holding_relief.{c}: no such cylinder ({', '.join(cylinders)})")
    out = {}
    for c in cylinders:
        h, r = line_relief(holding_relief, c)
        out[c] = (float(relief), float(relief), h, r)
    return out


def relief_text(h) -> str:
    """A holding relief (any form of the module docstring) in words, in bar: "350 bar", "boom_cyl
    410/380 bar (head/rod), ...", "unlimited"."""
    if h is None:
        return "unlimited"
    if not isinstance(h, dict):
        a, b = _side_pair(h, "holding_relief")
        return f"{a / 1e5:.0f} bar" if a == b else f"{a / 1e5:.0f}/{b / 1e5:.0f} bar (head/rod)"
    parts = []
    for k in h:
        a, b = line_relief(h, k)
        parts.append(f"{k} {a / 1e5:.0f} bar" if a == b else f"{k} {a / 1e5:.0f}/{b / 1e5:.0f} bar (head/rod)")
    return ", ".join(parts)


def plain_reliefs(h):
    """A holding relief (any form of the module docstring) as plain, JSON-ready data: None, a number, or
    {cylinder: number | {"head": Pa, "rod": Pa}}."""
    if h is None or not isinstance(h, dict):
        return None if h is None else float(h)
    out = {}
    for k, v in h.items():
        a, b = line_relief(h, k)
        out[k] = {"head": a, "rod": b} if isinstance(v, dict) or hasattr(v, "head") or isinstance(v, (tuple, list)) \
            else a
    return out
