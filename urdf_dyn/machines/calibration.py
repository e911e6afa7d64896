"""Calibrate an excavator pin table's estimated geometry against published figures.

A maker publishes the boom and stick lengths, the cylinder bores and strokes, the working ranges (ISO 7135
dimensions) and the ISO 6015 digging forces, but not the pins of the cylinders and the bucket linkage. Those
are estimates in a pin table (``machines.pin_table``); this module moves the estimated ones — and only the
parameters the caller names — so that the model built from the table (``machines.excavator_builder``)
reproduces the published figures: scipy's ``least_squares`` (trust-region reflective, box bounds, finite
differences) on the relative errors, each scaled by its tolerance,

    r_k = (ours_k − target_k) / (target_k · tol_k),

plus a small Tikhonov term ``regularization · Δp / 0.1 m`` that keeps the moves small where the targets do
not decide them. Each evaluation builds the table, its URDF and model (in memory) and computes the working
ranges (``working_range.working_range``) and the ISO 6015 forces (``iso6015.digging_forces``) on coarser
grids (``Checks.fast``); the optimum is then checked at the full resolution (``Checks.full``).

**Parameters** (names; each value is a displacement from the table's own, metres):

- ``pins.<pin>.x`` / ``pins.<pin>.z``: one pin of the table moves (at the table's pose);
- ``front.x`` / ``front.z``: the boom foot and everything the boom carries (every pin except
  ``boom_cylinder_base``) move together: the boom, stick and bucket lengths stay;
- ``cylinders.<c>.min_length``: the closed length moves, the stroke (max_length − min_length) stays.

Whatever moves carries its masses and visuals: each link's centres of mass, inertias and visual shapes are
carried rigidly from the link's old frame to its new one (``excavator_builder.link_frames``), and a visual
that stood on a pin that moved is put on the pin. A parameter set whose linkage cannot close, or whose
cylinder lengths at the table's pose leave their strokes, counts as far off (every residual
``INFEASIBLE``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.errors import ModelError
from urdf_dyn.machines.excavator_builder import excavator_urdf, link_frames
from urdf_dyn.machines.pin_table import PIN_NAMES, PinTable, inertia_matrix, pin_table_from_dict

__all__ = ["Checks", "Calibration", "calibrate", "apply_parameters", "evaluate", "TARGET_KEYS", "INFEASIBLE",
           "DEFAULT_PARAMETERS", "parse_parameters"]

#: target keys (those of the sizing report's reference block) and what they are
TARGET_KEYS = {
    "working_range.max_digging_depth_m": "maximum digging depth [m]",
    "working_range.max_reach_ground_m": "maximum reach at ground level [m]",
    "working_range.max_cutting_height_m": "maximum cutting height [m]",
    "working_range.max_loading_height_m": "maximum loading height [m]",
    "working_range.vertical_wall_depth_m": "vertical wall digging depth [m]",
    "working_range.level_bottom_2440_depth_m": "digging depth for a 2.44 m level bottom [m]",
    "iso6015.bucket_digging_force_N": "ISO 6015 bucket digging force [N]",
    "iso6015.arm_digging_force_N": "ISO 6015 arm (stick) digging force [N]",
}
INFEASIBLE = 50.0
"""The residual of every target for a parameter set whose table cannot be built."""
_FRONT_FIXED = ("boom_cylinder_base",)
#: the pins no maker publishes for a backhoe front (every pin but the boom foot–nose, nose–bucket pivot and
#: tip distances, which are the published boom and stick lengths and the tip radius), with ±0.25 m bounds;
#: the boom foot height (``front.z``); the closed lengths of the three cylinders (the strokes stay)
DEFAULT_PARAMETERS = {**{f"pins.{p}.{a}": (-0.25, 0.25) for p in ("boom_cylinder_base", "boom_cylinder_eye",
                                                                   "stick_cylinder_base", "stick_cylinder_eye",
                                                                   "bucket_cylinder_base") for a in "xz"},
                      "front.z": (-0.25, 0.25),
                      **{f"cylinders.{c}.min_length": (-0.25, 0.25) for c in ("boom", "stick", "bucket")}}


@dataclass
class Checks:
    """What to compute for a table and how (the sizing job's ``iso6015`` and ``working_range`` sections).

    tip, lip: (point (3,) [m] in the bucket frame) of the tooth tip (working ranges) and of the lip (ISO 6015
    §3.1); None: the tip is the table's ``tip`` pin and the lip is ``lip_offset`` from it. lip_offset: (3,)
    [m] in the bucket frame, lip − tip (used when ``lip`` is None). cylinders: {actuator: sizing.Cylinder};
    relief, holding_relief [Pa]; footprint: tipping polygon (k, 2) [m] or None; include_weight: as
    ``iso6015.digging_forces``. fast / full: keyword arguments of the grids (``wr_n``: working-range
    samples per stroke; ``iso_n``, ``iso_zoom``: ISO 6015 grid and refinement passes) inside the optimiser
    and for the final check."""
    cylinders: dict
    relief: float
    holding_relief: object = None
    footprint: object = None
    include_weight: bool = False
    tip: object = None
    lip: object = None
    lip_offset: tuple = (0.0, 0.0, 0.0)
    fast: dict = field(default_factory=lambda: dict(wr_n=9, iso_n=(5, 7, 9), iso_zoom=3))
    full: dict = field(default_factory=lambda: dict(wr_n=21, iso_n=(9, 13, 17), iso_zoom=5))

    def points(self, table: PinTable):
        """(tip (3,), lip (3,)) [m] in the bucket frame of ``table``."""
        if self.tip is not None:
            tip = np.asarray(self.tip, float)
        else:
            tip = np.array([float(np.linalg.norm(table.pin("tip") - table.pin("bucket_pivot"))), 0.0, 0.0])
        lip = np.asarray(self.lip, float) if self.lip is not None else tip + np.asarray(self.lip_offset, float)
        return tip, lip


@dataclass
class Calibration:
    """The result of ``calibrate``: the calibrated table; parameters {name: displacement [m]}; before / after
    {target key: value (m or N)} at full resolution; targets {key: value}; tolerances {key: relative};
    evaluations (count) and the scipy result."""
    table: PinTable
    parameters: dict
    before: dict
    after: dict
    targets: dict
    tolerances: dict
    evaluations: int
    result: object = None
    message: str = ""           #: why the search stopped early (its budget spent), else ""

    def within(self, which="after") -> dict:
        """{key: True if |ours − target| <= tol · target}."""
        v = getattr(self, which)
        return {k: abs(v[k] - t) <= self.tolerances[k] * abs(t) for k, t in self.targets.items()}

    def report(self) -> str:
        """Markdown: each figure before and after against its target, then the parameter moves."""
        rows = ["| figure | target | before | diff | after | diff | tolerance |", "|---|---:|---:|---:|---:|---:|---:|"]
        for k, t in self.targets.items():
            scale, unit = (1e-3, "kN") if k.endswith("_N") else (1.0, "m")
            b, a = self.before[k], self.after[k]
            rows.append(f"| {TARGET_KEYS.get(k, k)} | {t * scale:.2f} {unit} | {b * scale:.2f} | {100 * (b - t) / t:+.1f} % "
                        f"| {a * scale:.2f} | {100 * (a - t) / t:+.1f} % | ±{100 * self.tolerances[k]:.0f} % |")
        rows += ["", "| parameter | move [m] |", "|---|---:|"]
        rows += [f"| {k} | {v:+.4f} |" for k, v in self.parameters.items()]
        return "\n".join(rows)


def parse_parameters(text: str) -> dict:
    """{name: (low, high)} from ``"NAME=LOW:HIGH,NAME=LOW:HIGH"`` (bounds in metres). Raises ValueError
    naming the entry that is malformed."""
    out = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        try:
            name, rng = entry.split("=")
            lo, hi = (float(v) for v in rng.split(":"))
        except ValueError:
            raise ValueError(f"calibration parameter {entry!r}: expected NAME=LOW:HIGH (metres)") from None
        out[name.strip()] = (lo, hi)
    if not out:
        raise ValueError("no calibration parameters given (expected NAME=LOW:HIGH,...)")
    return out


def _rot(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


def _carry(old: PinTable, data: dict, new_pins: dict) -> None:
    """Carry masses and visuals in ``data`` (a table mapping) from ``old``'s link frames to those of the
    new pins (module docstring)."""
    probe = old.model_copy(update={"pins": old.pins.model_copy(update=new_pins)})
    f0, f1 = link_frames(old), link_frames(probe)
    moved = {n: (old.pin(n), np.asarray(new_pins[n], float)) for n in new_pins
             if np.linalg.norm(np.asarray(new_pins[n], float) - old.pin(n)) > 0}

    def move(link, p):
        (o0, e0), (o1, e1) = f0[link], f1[link]
        return o1 + _rot(e1 - e0) @ (np.asarray(p, float) - o0), e1 - e0

    for link, b in (data.get("masses") or {}).items():
        if b is None or link not in f0:
            continue
        com, de = move(link, b["com"])
        b["com"] = [float(c) for c in com]
        if b.get("inertia") is not None and de != 0.0:
            c, s = math.cos(-de), math.sin(-de)   # a turn about y by the link's change of elevation
            R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
            I = R @ inertia_matrix(b["inertia"]) @ R.T
            b["inertia"] = [float(I[0, 0]), float(I[1, 1]), float(I[2, 2]), float(I[0, 1]), float(I[0, 2]), float(I[1, 2])]
    for link, shapes in (data.get("visuals") or {}).items():
        for v in shapes:
            p0 = np.array([v["xyz"][0], v["xyz"][2]], float)
            on = [n for n, (a, _) in moved.items() if np.linalg.norm(a - p0) < 1e-6]
            p1, de = move(link, p0)
            if on:
                p1 = moved[on[0]][1]
            v["xyz"] = [float(p1[0]), v["xyz"][1], float(p1[1])]
            v["elevation"] = float(v.get("elevation", 0.0) + math.degrees(de))


def apply_parameters(table: PinTable, names, values) -> PinTable:
    """The table with the parameters ``names`` (module docstring) displaced by ``values`` [m], its masses and
    visuals carried along. Raises ModelError (naming the key) if the result is not a valid table, KeyError
    for an unknown parameter name."""
    data = table.model_dump(mode="json")
    pins = {n: np.array(v, float) for n, v in data["pins"].items() if v is not None}
    for name, dv in zip(names, map(float, values)):
        parts = name.split(".")
        if parts[0] == "pins" and len(parts) == 3 and parts[1] in pins and parts[2] in ("x", "z"):
            pins[parts[1]][0 if parts[2] == "x" else 1] += dv
        elif parts[0] == "front" and len(parts) == 2 and parts[1] in ("x", "z"):
            for n in pins:
                if n not in _FRONT_FIXED:
                    pins[n][0 if parts[1] == "x" else 1] += dv
        elif parts[0] == "cylinders" and len(parts) == 3 and parts[1] in ("boom", "stick", "bucket") \
                and parts[2] == "min_length":
            data["cylinders"][parts[1]]["min_length"] += dv
            data["cylinders"][parts[1]]["max_length"] += dv
        else:
            raise KeyError(f"unknown calibration parameter {name!r} (pins.<pin>.x|z with a pin of {', '.join(PIN_NAMES)}; "
                           "front.x|z; cylinders.boom|stick|bucket.min_length)")
    new_pins = {n: [float(p[0]), float(p[1])] for n, p in pins.items()}
    data["pins"].update(new_pins)
    _carry(table, data, new_pins)
    return pin_table_from_dict(data, table.source)


def evaluate(table: PinTable, checks: Checks, keys=None, resolution="full") -> dict:
    """{target key: value} of the model the table builds: working ranges [m] of the tip and ISO 6015 bucket
    and arm forces [N] at the lip (``Checks``), on the grids of ``checks.fast`` or ``checks.full``
    (``resolution``). ``keys``: only the figures needed (None: all of TARGET_KEYS). Raises ModelError if the
    table cannot be built, ValueError if a dimension does not exist."""
    from urdf_dyn.loading import load
    from urdf_dyn.machines.iso6015 import digging_forces
    from urdf_dyn.machines.working_range import working_range
    keys = tuple(TARGET_KEYS) if keys is None else tuple(keys)
    opts = checks.fast if resolution == "fast" else checks.full
    model = load(excavator_urdf(table))
    tip, lip = checks.points(table)
    out = {}
    if any(k.startswith("working_range.") for k in keys):
        w = working_range(model, ("bucket", tip), n=opts["wr_n"]).to_dict()
        out.update({f"working_range.{k}": v for k, v in w.items()})
    if any(k.startswith("iso6015.") for k in keys):
        d = digging_forces(model, checks.cylinders, checks.relief, ("bucket", lip), holding_relief=checks.holding_relief,
                           include_weight=checks.include_weight, footprint=checks.footprint, n=opts["iso_n"],
                           zoom=opts["iso_zoom"])
        out["iso6015.bucket_digging_force_N"] = float(d.bucket_N)
        out["iso6015.arm_digging_force_N"] = float(d.arm_N)
    return {k: out[k] for k in keys}


def calibrate(table: PinTable, targets: dict, parameters, bounds, checks: Checks, tolerances=None,
              regularization=0.02, max_evaluations=200, diff_step=0.01, verbose=0) -> Calibration:
    """Move the parameters (module docstring) within their bounds so that the table's figures meet the
    targets.

    Args:
        table: the pin table (``pin_table.PinTable``) to start from.
        targets: {key of TARGET_KEYS: published value (m or N)}.
        parameters: parameter names (module docstring).
        bounds: {name: (low, high)} [m] displacement bounds (low < 0 < high), one per parameter.
        checks: what is computed and how (``Checks``).
        tolerances: {key: relative tolerance} (default 0.05 for working ranges, 0.10 for ISO 6015 forces):
            the residuals are scaled by them, and ``Calibration.within`` tests them.
        regularization: weight of the moves (per 0.1 m) in the least-squares sum.
        max_evaluations: the budget of table evaluations (>= 3): every one counts — the search's, the
            finite-difference Jacobian's, and the two at full resolution that check the start and the result;
            when it is spent the search stops, keeps the best point found and says so (``Calibration.message``).
        diff_step: finite-difference step [m] of the Jacobian.
    Returns Calibration (its ``before`` and ``after`` at full resolution). Raises KeyError for an unknown
    target key or parameter, ValueError naming the parameter for bounds that do not contain 0, the option for a
    budget that is not a whole number >= 3, the figure for a start whose figures are not finite; ModelError if
    the starting table cannot be built."""
    import scipy.optimize
    names = list(parameters)
    for k in targets:
        if k not in TARGET_KEYS:
            raise KeyError(f"unknown target {k!r} (targets: {', '.join(TARGET_KEYS)})")
        if not math.isfinite(targets[k]) or targets[k] == 0:
            raise ValueError(f"target {k}: {targets[k]!r}: expected a finite, non-zero published figure")
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, (int, np.integer)) or max_evaluations < 3:
        raise ValueError(f"max_evaluations {max_evaluations!r}: expected a whole number >= 3 (the starting point, "
                         "the check of the start and of the result at full resolution)")
    for n in names:
        if n not in bounds:
            raise KeyError(f"parameter {n!r}: no bounds given")
        lo_n, hi_n = (float(v) for v in bounds[n])
        if not (math.isfinite(lo_n) and math.isfinite(hi_n)) or not lo_n < 0 < hi_n:
            raise ValueError(f"parameter {n}: bounds {lo_n:g}:{hi_n:g} m must be finite and contain 0 (the "
                             "table's own value): low < 0 < high")
    lo = np.array([float(bounds[n][0]) for n in names])
    hi = np.array([float(bounds[n][1]) for n in names])
    apply_parameters(table, names, np.zeros(len(names)))       # unknown names raise here
    tol = {k: (tolerances or {}).get(k, 0.10 if k.startswith("iso6015.") else 0.05) for k in targets}
    keys = tuple(targets)
    t_vec = np.array([targets[k] for k in keys], float)
    s_vec = np.array([tol[k] for k in keys], float) * np.abs(t_vec)
    budget = int(max_evaluations) - 2         # two evaluations at full resolution check the start and the result
    count = [0]
    best = [np.inf, np.ones(len(names))]

    class _Spent(Exception):
        pass

    # the optimiser works on z = x + 1 m: scipy's relative finite-difference step (diff_step · |z|) is then
    # about diff_step metres; at x = 0 it would be 1.5e-8 m, below the figures' numerical noise. Every call
    # (the Jacobian's finite differences included) counts against the budget; past it the search stops.
    def residuals(z, strict=False):
        if count[0] >= budget:
            raise _Spent
        x = z - 1.0
        count[0] += 1
        try:
            v = evaluate(apply_parameters(table, names, x), checks, keys, "fast")
            r = (np.array([v[k] for k in keys]) - t_vec) / s_vec
        except (ModelError, ValueError):
            if strict:
                raise
            r = np.full(len(keys), INFEASIBLE)
        if strict and not np.all(np.isfinite(r)):
            bad = [k for k, ri in zip(keys, r) if not np.isfinite(ri)]
            raise ValueError(f"the starting table's figures {', '.join(bad)} are not finite "
                             f"({', '.join(f'{k} = {v[k]!r}' for k in bad)}): nothing to calibrate from")
        r = np.where(np.isfinite(r), r, INFEASIBLE)
        if verbose:
            print(f"  eval {count[0]}: |r| = {np.linalg.norm(r):.4f}  x = {np.round(x, 4).tolist()}", flush=True)
        out = np.r_[r, regularization * x / 0.1]
        cost = float(out @ out)
        if cost < best[0]:
            best[0], best[1] = cost, np.array(z, float)
        return out

    z0 = np.ones(len(names))
    r0 = residuals(z0, strict=True)      # the start, checked before the search: a located message, not scipy's
    first = [True]

    def fun(z):
        if first[0] and np.array_equal(z, z0):
            first[0] = False
            return r0
        return residuals(z)

    message, res = "", None
    try:
        res = scipy.optimize.least_squares(fun, z0, bounds=(lo + 1.0, hi + 1.0), method="trf", diff_step=diff_step,
                                           max_nfev=max(budget, 1), x_scale=0.1)
        z = res.x if float(res.fun @ res.fun) <= best[0] else best[1]
    except _Spent:
        z = best[1]
    if res is None or (res.status == 0 and count[0] >= budget):
        message = (f"stopped at the budget of {max_evaluations} evaluations (--max-evaluations; {count[0]} for the "
                   "search, Jacobians included, 2 at full resolution): the best point found is kept")
    x = z - 1.0
    new = apply_parameters(table, names, x)
    before, after = evaluate(table, checks, keys), evaluate(new, checks, keys)
    return Calibration(table=new, parameters=dict(zip(names, map(float, x))), before=before, after=after,
                       targets=dict(targets), tolerances=tol, evaluations=count[0] + 2, result=res, message=message)
