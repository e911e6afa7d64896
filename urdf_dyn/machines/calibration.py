"""Calibrate an excavator pin table's estimated geometry against published figures, within mechanism limits.

A maker publishes the boom and stick lengths, the cylinder bores and strokes, the working ranges (ISO 7135
dimensions), the ISO 6015 digging forces and the operating mass, but not the pins of the cylinders and the
bucket linkage. Those are estimates in a pin table (``machines.pin_table``); this module moves the
estimated ones — and only the parameters the caller names — so that the model built from the table
(``machines.excavator_builder``) reproduces the published figures, while every mechanism limit of the
table's ``limits`` section holds (``machines.linkage_limits``: boom transmission angle and lever at both
stroke ends, stick lever ratio, no toggle in the bucket four-bar, bucket rotation, stroke ratio, bucket
clearance to boom, cab and tracks, closure).

**Problem.** scipy's SLSQP (sequential least squares programming, Kraft 1988) minimises

    f(x) = Σ_k r_k² + Σ_i (regularization · x_i / 0.1 m)²,   r_k = (ours_k − target_k) / (target_k · tol_k),

subject to every limit's margin g_j(x) ≥ 0 (hard inequality constraints, no tuned boxes: a parameter has
bounds only if the caller gives them). The gradient of f and the Jacobian of g are forward differences of
step ``diff_step``; every value — objective, constraint, Jacobian column — comes from one memoised function,
``evaluate`` of the problem (``_Problem.evaluate``), which counts each model evaluation against
``max_evaluations``. Each model evaluation builds the table, its URDF and model (in memory) and computes the
working ranges (``working_range.working_range``), the ISO 6015 forces (``iso6015.digging_forces``) on
coarser grids (``Checks.fast``), the minimum loading height (``linkage_limits.min_loading_height``) and
the operating mass; the optimum is checked at full resolution (``Checks.full``). A candidate that violates
a limit is still evaluated (SLSQP steps through such points); one whose linkage cannot close counts as
far off (every residual ``INFEASIBLE``). The result is the best point seen that meets every limit.

**Parameters** (names; each value is a displacement from the table's own, metres unless said):

- ``pins.<pin>.x`` / ``pins.<pin>.z``: one pin of the table moves (at the table's pose);
- ``front.x`` / ``front.z``: the boom foot and everything the boom carries (every pin except
  ``boom_cylinder_base``) move together: the boom, stick and bucket lengths stay;
- ``cylinders.<c>.min_length``: the closed length moves, the stroke (max_length − min_length) stays;
- ``masses.<body>.tonnes``: the body's mass [t] (1000 kg), its inertia scaled with it.

Whatever moves carries its masses and visuals: each link's centres of mass, inertias and visual shapes are
carried rigidly from the link's old frame to its new one (``excavator_builder.link_frames``), and a visual
that stood on a pin that moved is put on the pin.

``Calibration.sensitivity``: ∂figure/∂parameter at the result (forward differences, fast resolution).
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
    "working_range.min_loading_height_m": "minimum loading height [m]",
    "working_range.vertical_wall_depth_m": "vertical wall digging depth [m]",
    "working_range.level_bottom_2440_depth_m": "digging depth for a 2.44 m level bottom [m]",
    "iso6015.bucket_digging_force_N": "ISO 6015 bucket digging force [N]",
    "iso6015.arm_digging_force_N": "ISO 6015 arm (stick) digging force [N]",
    "mass.operating_kg": "operating mass [kg]",
}
INFEASIBLE = 50.0
"""The residual of every target for a parameter set whose table cannot be built."""
_FRONT_FIXED = ("boom_cylinder_base",)
#: the pins no maker publishes for a backhoe front (every pin but the boom foot–nose, nose–bucket pivot and
#: tip distances, which are the published boom and stick lengths and the tip radius), the boom foot (``front``),
#: the closed lengths of the three cylinders (the strokes stay) and the undercarriage's mass (the shoes and
#: track frames of the long undercarriage with 790 mm shoes); no bounds: the limits decide
DEFAULT_PARAMETERS = {**{f"pins.{p}.{a}": None for p in ("boom_cylinder_base", "boom_cylinder_eye", "stick_cylinder_base",
                                                         "stick_cylinder_eye", "bucket_cylinder_base", "side_link_pivot",
                                                         "bucket_cylinder_eye", "h_link_pin") for a in "xz"},
                      "front.x": None, "front.z": None,
                      **{f"cylinders.{c}.min_length": None for c in ("boom", "stick", "bucket")},
                      "masses.undercarriage.tonnes": None}


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
    """The result of ``calibrate``: the calibrated table; parameters {name: displacement}; before / after
    {target key: value} at full resolution; targets {key: value}; tolerances {key: relative}; evaluations
    (model evaluations counted); limits_before / limits_after (``linkage_limits.linkage_values``); feasible
    (the result meets every limit); sensitivity {parameter: {key: ∂figure/∂parameter}} (per metre, per t);
    message (the optimiser's); result (scipy's)."""
    table: PinTable
    parameters: dict
    before: dict
    after: dict
    targets: dict
    tolerances: dict
    evaluations: int
    result: object = None
    limits_before: dict = field(default_factory=dict)
    limits_after: dict = field(default_factory=dict)
    feasible: bool = True
    sensitivity: dict = field(default_factory=dict)
    message: str = ""           #: why the search stopped early (its budget spent, SLSQP's failure), else ""

    def within(self, which="after") -> dict:
        """{key: True if |ours − target| <= tol · target}."""
        v = getattr(self, which)
        return {k: abs(v[k] - t) <= self.tolerances[k] * abs(t) for k, t in self.targets.items()}

    def report(self) -> str:
        """Markdown: each figure before and after against its target, the limits reached, the parameter
        moves and the sensitivities (per 0.1 m of a pin's move, per t of a mass)."""
        from urdf_dyn.machines.linkage_limits import limits_table
        rows = ["| figure | target | before | diff | after | diff | tolerance |", "|---|---:|---:|---:|---:|---:|---:|"]
        for k, t in self.targets.items():
            scale, unit = (1e-3, "kN") if k.endswith("_N") else (1e-3, "t") if k.endswith("_kg") else (1.0, "m")
            b, a = self.before[k], self.after[k]
            rows.append(f"| {TARGET_KEYS.get(k, k)} | {t * scale:.2f} {unit} | {b * scale:.2f} | {100 * (b - t) / t:+.1f} % "
                        f"| {a * scale:.2f} | {100 * (a - t) / t:+.1f} % | ±{100 * self.tolerances[k]:.0f} % |")
        r = [(self.after[k] - t) / (t * self.tolerances[k]) for k, t in self.targets.items()]
        rows += ["", f"residual |r| = {math.sqrt(sum(v * v for v in r)):.3f} (r_k = (ours − target)/(target · tol)); "
                     f"{'meets every limit' if self.feasible else 'VIOLATES A LIMIT'}; {self.evaluations} model "
                     f"evaluations; {self.message}"]
        if self.limits_after:
            rows += ["", limits_table(self.limits_before, self.limits_after, self.table.limits)]
        rows += ["", "| parameter | move |", "|---|---:|"]
        rows += [f"| {k} | {v:+.4f} {'t' if k.endswith('.tonnes') else 'm'} |" for k, v in self.parameters.items()]
        if self.sensitivity:
            keys = list(self.targets)
            rows += ["", "sensitivity: change of each figure per 0.1 m of the parameter (per 1 t of a mass), "
                         "relative to its target [%]", "",
                     "| parameter | " + " | ".join(k.split(".")[-1] for k in keys) + " |", "|---|" + "---:|" * len(keys)]
            for p, d in self.sensitivity.items():
                step = 1.0 if p.endswith(".tonnes") else 0.1
                rows.append(f"| {p} | " + " | ".join(f"{100 * step * d[k] / self.targets[k]:+.2f}" for k in keys) + " |")
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


def apply_parameters(table: PinTable, names, values, check: bool = True) -> PinTable:
    """The table with the parameters ``names`` (module docstring) displaced by ``values`` [m | t], its masses
    and visuals carried along. Raises ModelError (naming the key) if the result is not a valid table (with
    ``check`` False only the schema is checked, not the strokes: a candidate's limits are measured), KeyError
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
        elif parts[0] == "masses" and len(parts) == 3 and data["masses"].get(parts[1]) and parts[2] == "tonnes":
            b = data["masses"][parts[1]]
            k = (b["mass"] + 1000.0 * dv) / b["mass"]
            b["mass"] = b["mass"] * k
            if b.get("inertia") is not None:
                b["inertia"] = [float(v * k) for v in b["inertia"]]
        else:
            raise KeyError(f"unknown calibration parameter {name!r} (pins.<pin>.x|z with a pin of {', '.join(PIN_NAMES)}; "
                           "front.x|z; cylinders.boom|stick|bucket.min_length; masses.<body>.tonnes)")
    new_pins = {n: [float(p[0]), float(p[1])] for n, p in pins.items()}
    data["pins"].update(new_pins)
    _carry(table, data, new_pins)
    return pin_table_from_dict(data, table.source, check=check)


def evaluate(table: PinTable, checks: Checks, keys=None, resolution="full") -> dict:
    """{target key: value} of the model the table builds: working ranges [m] of the tip (the minimum loading
    height by ``linkage_limits.min_loading_height``), ISO 6015 bucket and arm forces [N] at the lip
    (``Checks``) and the operating mass [kg] (the table's masses), on the grids of ``checks.fast`` or ``checks.full``
    (``resolution``). ``keys``: only the figures needed (None: all of TARGET_KEYS). Raises ModelError if the
    table cannot be built, ValueError if a dimension does not exist."""
    from urdf_dyn.loading import load
    from urdf_dyn.machines.iso6015 import digging_forces
    from urdf_dyn.machines.working_range import working_range
    from urdf_dyn.machines.linkage_limits import min_loading_height
    keys = tuple(TARGET_KEYS) if keys is None else tuple(keys)
    opts = checks.fast if resolution == "fast" else checks.full
    model = load(excavator_urdf(table))
    tip, lip = checks.points(table)
    out = {}
    if "working_range.min_loading_height_m" in keys:
        out["working_range.min_loading_height_m"] = min_loading_height(table)
    if "mass.operating_kg" in keys:
        out["mass.operating_kg"] = float(sum(b.mass for b in dict(table.masses).values() if b is not None))
    if any(k.startswith("working_range.") and k != "working_range.min_loading_height_m" for k in keys):
        w = working_range(model, ("bucket", tip), n=opts["wr_n"]).to_dict()
        out.update({f"working_range.{k}": v for k, v in w.items()})
    if any(k.startswith("iso6015.") for k in keys):
        d = digging_forces(model, checks.cylinders, checks.relief, ("bucket", lip), holding_relief=checks.holding_relief,
                           include_weight=checks.include_weight, footprint=checks.footprint, n=opts["iso_n"],
                           zoom=opts["iso_zoom"])
        out["iso6015.bucket_digging_force_N"] = float(d.bucket_N)
        out["iso6015.arm_digging_force_N"] = float(d.arm_N)
    return {k: out[k] for k in keys}




class _Budget(Exception):
    """The model evaluations allowed are spent."""


class _Problem:
    """The constrained least-squares problem of ``calibrate``: x (parameters' displacements) → (residuals r,
    limit margins g). ``evaluate`` is the one way to a value: memoised on x, it counts each model
    evaluation (a table built and its figures computed) and raises ``_Budget`` past ``max_evaluations``;
    the limits alone (plane geometry of the table, ``figures=False``) are not model evaluations."""

    def __init__(self, table, names, keys, targets, scales, checks, regularization, max_evaluations, verbose):
        self.table, self.names, self.keys, self.checks = table, names, keys, checks
        self.t, self.s = targets, scales
        self.reg, self.max, self.verbose = regularization, max_evaluations, verbose
        self.count, self.memo, self.best = 0, {}, None
        from urdf_dyn.machines.linkage_limits import linkage_margins
        names_g, g, _ = linkage_margins(apply_parameters(table, names, np.zeros(len(names))))
        self.limit_names = names_g
        self._closure = np.array([n == "closure" for n in names_g])

    def evaluate(self, x, figures=True, strict=False):
        """(r (len(keys),) or None when ``figures`` is False, g (m,)) at x; ``strict``: the start, whose
        figures must be finite (ValueError naming them)."""
        from urdf_dyn.machines.linkage_limits import linkage_margins
        key = np.asarray(x, float).tobytes()
        r, g, cand = self.memo.get(key, (None, None, None))
        if g is None:
            try:
                cand = apply_parameters(self.table, self.names, x, check=False)
                g = linkage_margins(cand)[1]
                g = np.where(np.isfinite(g), g, -INFEASIBLE) if len(g) == len(self._closure) else None
            except (ModelError, ValueError):
                g = None
            if g is None:
                cand, g = None, np.full(len(self._closure), -INFEASIBLE)
        if figures and r is None:
            r = np.full(len(self.keys), INFEASIBLE)
            if cand is not None and (g[self._closure] > 0).all():
                if self.count >= self.max:
                    raise _Budget
                self.count += 1
                try:
                    v = evaluate(pin_table_from_dict(cand.model_dump(mode="json"), self.table.source), self.checks,
                                 self.keys, "fast")
                    r = (np.array([v[k] for k in self.keys]) - self.t) / self.s
                except (ModelError, ValueError):
                    if strict:
                        raise
                if strict and not np.all(np.isfinite(r)):
                    bad = [k for k, ri in zip(self.keys, r) if not np.isfinite(ri)]
                    raise ValueError(f"the starting table's figures {', '.join(bad)} are not finite "
                                     f"({', '.join(f'{k} = {v[k]!r}' for k in bad)}): nothing to calibrate from")
                r = np.where(np.isfinite(r), r, INFEASIBLE)
            f = float(r @ r + np.sum((self.reg * np.asarray(x) / 0.1) ** 2))
            if (g >= 0).all() and r[0] != INFEASIBLE and (self.best is None or f < self.best[0]):
                self.best = (f, np.array(x, float))
            if self.verbose:
                print(f"  eval {self.count}: f = {f:.4f}  least margin {g.min():+.3f}  x = {np.round(x, 4).tolist()}",
                      flush=True)
        self.memo[key] = (r, g, cand)
        return r, g

    def objective(self, x):
        self.last = np.array(x, float)
        r, _ = self.evaluate(x)
        return float(r @ r + np.sum((self.reg * np.asarray(x) / 0.1) ** 2))

    def jacobian(self, x, h, figures=True):
        """(J_r (len(keys), n) or None, J_g (m, n)) by forward differences of step h."""
        r0, g0 = self.evaluate(x, figures)
        Jr, Jg = np.zeros((len(self.keys), len(x))), np.zeros((len(g0), len(x)))
        for i in range(len(x)):
            xi = np.array(x, float)
            xi[i] += h
            r, g = self.evaluate(xi, figures)
            Jg[:, i] = (g - g0) / h
            if figures:
                Jr[:, i] = (r - r0) / h
        return (Jr if figures else None), Jg

    def feasible_start(self, x0, margin=0.05, max_nfev=100):
        """The first point least_squares reaches that meets every limit with ``margin`` (scaled units):
        scipy's least_squares on the violations min(g − margin, 0) and a small pull towards x0 (geometry
        only: no model evaluation); x0 itself if it meets them (with no margin); least_squares' end point
        if none does."""
        import scipy.optimize
        if (self.evaluate(x0, False)[1] >= 0).all():
            return np.array(x0, float)

        class Found(Exception):
            pass

        def fun(x):
            g = self.evaluate(x, False)[1]
            if (g >= margin).all():
                raise Found(np.array(x, float))
            return np.r_[np.minimum(g - margin, 0), 0.05 * (x - x0) / 0.1]

        def jac(x):
            g, Jg = self.evaluate(x, False)[1], self.jacobian(x, 1e-3, False)[1]
            return np.r_[np.where((g < margin)[:, None], Jg, 0.0), 0.5 * np.eye(len(x0))]

        try:
            return scipy.optimize.least_squares(fun, x0, jac=jac, x_scale=0.1, max_nfev=max_nfev).x
        except Found as e:
            return e.args[0]


def calibrate(table: PinTable, targets: dict, parameters, bounds, checks: Checks, tolerances=None,
              regularization=0.02, max_evaluations=400, diff_step=0.01, verbose=0, maxiter=60) -> Calibration:
    """Move the parameters (module docstring) so that the table's figures meet the targets while every
    mechanism limit of ``table.limits`` holds.

    First a start that meets the limits: if the table does not, scipy's least_squares on the limits'
    violations (geometry only, no model evaluation) moves it the least way into them. Then SLSQP (module
    docstring) from there, its objective scaled so that its first step (the steepest descent) is 0.05 m.

    Args:
        table: the pin table (``pin_table.PinTable``) to start from; it need not meet the limits.
        targets: {key of TARGET_KEYS: published value (m, N or kg)}.
        parameters: parameter names (module docstring).
        bounds: None, or {name: None | (low, high)} displacement bounds (low < 0 < high), one entry per
            parameter; None (for all or for one): the limits alone constrain.
        checks: what is computed and how (``Checks``).
        tolerances: {key: relative tolerance} (default 0.05 for working ranges and the mass, 0.10 for ISO 6015
            forces): the residuals are scaled by them, and ``Calibration.within`` tests them.
        regularization: weight of the moves (per 0.1 m) in the sum.
        max_evaluations: the budget of model evaluations (>= 3): every one counts — the start's, the search's
            (objective, finite-difference Jacobians, line search), the sensitivities' and the two at full
            resolution that check the start and the result; when it is spent the search stops, keeps the best
            point found that meets the limits and says so (``Calibration.message``).
        diff_step: forward-difference step [m | t] of the gradients.
        maxiter: SLSQP iterations.
    Returns Calibration: the best point seen that meets every limit (the start if none does, with
    ``feasible`` False), its ``before`` and ``after`` at full resolution and the sensitivities there (when
    the budget leaves room for their Jacobian). Raises KeyError for an unknown target key or parameter, or a
    bounds mapping without the parameter; ValueError naming the parameter for bounds that are not finite or
    do not contain 0, the option for a budget that is not a whole number >= 3, the figure for a start whose
    figures are not finite; ModelError if the starting table cannot be built."""
    import scipy.optimize
    from urdf_dyn.machines.linkage_limits import linkage_values
    names = list(parameters)
    for k in targets:
        if k not in TARGET_KEYS:
            raise KeyError(f"unknown target {k!r} (targets: {', '.join(TARGET_KEYS)})")
        if not math.isfinite(targets[k]) or targets[k] == 0:
            raise ValueError(f"target {k}: {targets[k]!r}: expected a finite, non-zero published figure")
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, (int, np.integer)) or max_evaluations < 3:
        raise ValueError(f"max_evaluations {max_evaluations!r}: expected a whole number >= 3 (the starting point, "
                         "the check of the start and of the result at full resolution)")
    box = []
    for n in names:
        if bounds is not None and n not in bounds:
            raise KeyError(f"parameter {n!r}: no bounds given")
        if bounds is None or bounds[n] is None:
            box.append((None, None))
            continue
        lo_n, hi_n = (float(v) for v in bounds[n])
        if not (math.isfinite(lo_n) and math.isfinite(hi_n)) or not lo_n < 0 < hi_n:
            raise ValueError(f"parameter {n}: bounds {lo_n:g}:{hi_n:g} m must be finite and contain 0 (the "
                             "table's own value): low < 0 < high")
        box.append((lo_n, hi_n))
    x0 = np.zeros(len(names))
    apply_parameters(table, names, x0)                       # unknown names raise here
    tol = {k: (tolerances or {}).get(k, 0.10 if k.startswith("iso6015.") else 0.05) for k in targets}
    keys = tuple(targets)
    t_vec = np.array([targets[k] for k in keys], float)
    prob = _Problem(table, names, keys, t_vec, np.array([tol[k] for k in keys]) * np.abs(t_vec), checks,
                    regularization, int(max_evaluations) - 2, verbose)   # two at full resolution
    h = float(diff_step)
    res, message = None, ""
    try:
        xs = prob.feasible_start(x0)
        prob.evaluate(xs, strict=True)      # the start, checked before the search: a located message
        g0 = np.linalg.norm(2 * prob.jacobian(xs, h)[0].T @ prob.evaluate(xs)[0]
                            + 2 * (regularization / 0.1) ** 2 * xs)
        sigma = 0.05 / max(g0, 1e-12)                       # the first SLSQP step: 0.05 m
        res = scipy.optimize.minimize(
            lambda x: sigma * prob.objective(x), xs, method="SLSQP",
            bounds=box if any(b != (None, None) for b in box) else None,
            jac=lambda x: sigma * (2 * prob.jacobian(x, h)[0].T @ prob.evaluate(x)[0]
                                   + 2 * (regularization / 0.1) ** 2 * np.asarray(x)),
            constraints=[{"type": "ineq", "fun": lambda x: prob.evaluate(x, False)[1],
                          "jac": lambda x: prob.jacobian(x, h, False)[1]}],
            options=dict(maxiter=maxiter, ftol=1e-4 * sigma))
        message = "" if res.success else f"SLSQP: {res.message}"
    except _Budget:
        message = (f"stopped at the budget of {max_evaluations} evaluations (--max-evaluations; {prob.count} for the "
                   "search, Jacobians included, 2 at full resolution): the best point found is kept")
    last = getattr(prob, "last", None)
    try:
        if last is not None and (prob.evaluate(last, False)[1] < 0).any():
            # SLSQP's last iterate breaks a limit (it steps through such points): its nearest point inside the
            # limits (geometry only), evaluated if the budget allows, competes with the best seen
            prob.evaluate(prob.feasible_start(last, margin=0.01))
    except _Budget:
        pass
    feasible = prob.best is not None
    x = prob.best[1] if feasible else x0
    new = apply_parameters(table, names, x)
    sens = {}
    if feasible and prob.max - prob.count >= len(names):     # the sensitivities at the result: one more Jacobian
        Jr, _ = prob.jacobian(x, h)
        sens = {n: {k: float(Jr[j, i] * prob.s[j]) for j, k in enumerate(keys)} for i, n in enumerate(names)}
    return Calibration(table=new, parameters=dict(zip(names, map(float, x))),
                       before=evaluate(table, checks, keys), after=evaluate(new, checks, keys),
                       targets=dict(targets), tolerances=tol, evaluations=prob.count + 2, result=res,
                       limits_before=linkage_values(table), limits_after=linkage_values(new), feasible=feasible,
                       sensitivity=sens, message=message)
