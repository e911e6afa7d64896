"""Converged pin design loads from the stall envelopes: the grid's maximum of each pin, refined until it
changes by less than a tolerance.

A pin's design load (``stall.StallEnvelopes.design_loads``) is the largest force over a grid of poses (the
three cylinder strokes) and force directions (a fan in the boom plane plus the tangent). The grid samples a
function with sharp ridges (where the binding limit changes from one cylinder to another, or to tipping),
so its maximum is only as good as its spacing. **Refinement**: from each working cylinder's own maximum
for the pin (a start per working cylinder: the grid's overall maximum can sit on a lower ridge than another
cylinder's refined one), a local grid of 5 strokes per cylinder over ± one spacing and 5 fan angles over
± one angle step (plus the tangent at each pose), with that working cylinder stalling; the largest state
there replaces the case when larger; the spacing and the angle step halve; the passes stop when two
passes in a row change the design load by less than ``tol`` (relative), or after ``max_passes`` (then the
pin is reported as not converged). The design load is the largest over the starts. Pins whose case is the
same state share each local grid.

The machine is anchored unless a friction coefficient is given (``stall`` module docstring: ISO 6015 §4.5);
the sliding case is a separate call with ``friction``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from urdf_dyn.machines.stall import stall_envelopes, stroke_range

__all__ = ["ConvergedLoads", "converged_design_loads"]


@dataclass
class ConvergedLoads:
    """Design loads refined to convergence (module docstring).

    loads: {pin: {"design_load_N", "design_case", "components_N"}} as ``StallEnvelopes.design_loads``, after
    refinement; grid_loads: the same from the grid alone; history: {pin: [{"pass", "stroke_step_m" (3,),
    "angle_step_deg", "design_load_N", "change"}]} (pass 0: the grid; change relative to the value before the
    pass); converged: {pin: bool}; grid: {"n": (3,), "n_fan": K}; tol; friction (None: anchored)."""
    loads: dict
    grid_loads: dict
    history: dict
    converged: dict
    grid: dict
    tol: float
    friction: object = None

    @property
    def anchored(self) -> bool:
        return self.friction is None

    def summary(self) -> dict:
        """JSON-ready: per pin the grid's and the converged design load [N], the last change, the passes."""
        return {p: dict(grid_N=self.grid_loads[p]["design_load_N"], converged_N=self.loads[p]["design_load_N"],
                        rise=self.loads[p]["design_load_N"] / self.grid_loads[p]["design_load_N"] - 1,
                        last_change=self.history[p][-1]["change"], passes=len(self.history[p]) - 1,
                        converged=self.converged[p]) for p in self.loads} | {
            "_grid": dict(n=list(self.grid["n"]), n_fan=self.grid["n_fan"], tol=self.tol,
                          anchored=self.anchored, friction=self.friction)}


def converged_design_loads(model, cylinders, relief, tip, pins, holding_relief=None, footprint=None, friction=None,
                           strokes=("boom_cyl", "stick_cyl", "bucket_cyl"), n=(13, 13, 13), n_fan=36, tol=0.01,
                           max_passes=8, swing=None, env=None, q0=None) -> ConvergedLoads:
    """The pins' design loads over the stall envelopes, refined until each changes by less than ``tol``
    (module docstring). Arguments as ``stall.stall_envelopes`` and ``StallEnvelopes.design_loads``; ``env``:
    the grid's envelopes when already computed (with the same arguments). Returns ConvergedLoads. Raises
    as ``stall_envelopes``."""
    strokes = tuple(strokes)
    kw = dict(holding_relief=holding_relief, footprint=footprint, friction=friction, strokes=strokes, q0=q0)
    if env is None:
        env = stall_envelopes(model, cylinders, relief, tip, n=n, n_fan=n_fan, **kw)
    base = env.design_loads(model, pins, swing)
    rng = stroke_range(model, strokes, q0)
    h0 = np.array([(rng[c][1] - rng[c][0]) / max(k - 1, 1) for c, k in zip(strokes, n)])
    dth0 = 360.0 / n_fan
    memo = {}

    def local(case, h, dth):
        key = (case["cylinder"], tuple(np.round([case["pose"][c] for c in strokes], 12)),
               round(case["angle_deg"], 9), tuple(np.round(h, 12)), round(dth, 9))
        if key not in memo:
            axes = [case["pose"][c] + h[k] * np.linspace(-1, 1, 5) for k, c in enumerate(strokes)]
            fan = case["angle_deg"] + dth * np.linspace(-1, 1, 5)
            loc = stall_envelopes(model, cylinders, relief, tip, working=(case["cylinder"],), axes=axes,
                                  fan_deg=fan, **kw)
            memo[key] = loc.design_loads(model, pins, swing)
        return memo[key]

    starts = {c: replace(env, working=(c,)).design_loads(model, pins, swing) for c in env.working}
    loads, history, converged = {}, {}, {}
    for p in base:
        runs = [_refine(starts[c][p], p, local, h0, dth0, tol, max_passes) for c in env.working]
        best, hist, ok = max(runs, key=lambda r: r[0]["design_load_N"])
        loads[p], history[p], converged[p] = best, hist, ok
    return ConvergedLoads(loads, base, history, converged, dict(n=tuple(n), n_fan=int(n_fan)), float(tol),
                          None if friction is None else float(friction))


def _refine(start, p, local, h0, dth0, tol, max_passes):
    """(best case dict, history, converged) of pin ``p`` refined from ``start`` (module docstring)."""
    best = dict(start)
    h, dth = h0.copy(), dth0
    hist = [dict(stroke_step_m=h.tolist(), angle_step_deg=dth, design_load_N=best["design_load_N"],
                 change=np.nan, **{"pass": 0})]
    small = 0
    for k in range(1, max_passes + 1):
        r = local(best["design_case"], h, dth)[p]
        change = (r["design_load_N"] - best["design_load_N"]) / best["design_load_N"]
        if r["design_load_N"] > best["design_load_N"]:
            best = dict(r)
        hist.append(dict(stroke_step_m=h.tolist(), angle_step_deg=dth, design_load_N=best["design_load_N"],
                         change=float(change), **{"pass": k}))
        h, dth = h / 2, dth / 2
        small = small + 1 if change < tol else 0
        if small == 2:
            return best, hist, True
    return best, hist, False
