"""What a load-case sweep writes: the results table (one row per case; Parquet through pyarrow, and CSV),
the envelope (the worst case of each actuator and each pin, with the parameters that produce it), plots
(each actuator's peak force against each swept parameter; a heat map for two-parameter sweeps) and a
Markdown summary.

Records are the dicts of ``urdf_dyn.jobs.sweep.run_case`` with ``index``, ``hash`` and ``params``
added. Metric columns: ``peak[a]``, ``rms[a]``, ``limit[a]`` (N for cylinders, N m for the swing motor —
see ``units``), ``margin[a]`` = 1 − peak/limit (< 0: over the limit), ``peak_power[a]`` (W),
``p_cap_max_bar[a]``, ``p_rod_max_bar[a]`` (bar), ``pin_force[loop]`` (N), ``pin_moment[loop]`` (N m),
``stability_margin_min`` (m) and ``pump_flow_peak`` (L/min), taken from each case's ``SizingRun`` when it
holds them (``case_metrics``).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from urdf_dyn.extras import require
from urdf_dyn.io.files import atomic_path
from urdf_dyn.machines.hydraulics import L_MIN

__all__ = ["case_metrics", "results_table", "write_table", "envelope", "envelope_table", "plot_peaks", "plot_heatmap",
           "write_summary", "WORST"]

#: metric prefix -> which extreme is the worst
WORST = {"peak": "max", "rms": "max", "margin": "min", "peak_power": "max", "p_cap_max_bar": "max",
         "p_rod_max_bar": "max", "pin_force": "max", "pin_moment": "max", "stability_margin_min": "min",
         "pump_flow_peak": "max"}


def _finite(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _reduce(v, how):
    """min or max over a number, an array or a {name: array} mapping; None if there is nothing numeric."""
    if isinstance(v, dict):
        parts = [_reduce(x, how) for x in v.values()]
        parts = [p for p in parts if p is not None]
        return (min if how == "min" else max)(parts) if parts else None
    try:
        a = np.asarray(v, float)
    except (TypeError, ValueError):
        return None
    if a.size == 0 or not np.isfinite(a).any():
        return None
    return float(np.nanmin(a) if how == "min" else np.nanmax(a))


#: the whole-machine quantities a sizing run may hold: metric -> (where in the ``SizingRun``, the reader); each
#: None when the scenario has no such section (no ``stability:`` / ``hydraulics:``)
RUN_FIELDS = {
    "stability_margin_min": ("SizingRun.checks['stability'].min_margin [m]",
                             lambda run: getattr((getattr(run, "checks", None) or {}).get("stability"), "min_margin", None)),
    "pump_flow_peak": ("SizingRun.power.peak_flow [L/min]",
                       lambda run: None if getattr(getattr(run, "power", None), "peak_flow", None) is None
                       else run.power.peak_flow * L_MIN)}


def case_metrics(run) -> dict:
    """Scalar results of one sizing case, taken from its ``SizingRun`` (``jobs.sizing_run``) in process —
    ``run.actuation`` (a ``machines.sizing.SizingResult``; a bare SizingResult is taken too): for each
    actuator peak |u|, RMS u, limit, margin 1 − peak/limit (< 0: over the limit), peak power, peak cap/rod
    pressures; per loop joint peak pin force and moment; the minimum stability margin [m] and the peak pump
    flow [L/min] when the run holds them (``RUN_FIELDS``; None otherwise) — the figures the sizing report's
    ``stability.min_margin_m`` and ``hydraulics.peak_flow_L_min`` print. Units: N or N m (``units``), W, bar.
    Also ``units`` {actuator: unit} and ``sources`` of the optional ones. A result without ``summary()``
    (another job's) gives no metrics."""
    out, units = {}, {}
    res = getattr(run, "actuation", run)
    if not hasattr(res, "summary"):
        return {"units": {}, "sources": {}}
    for r in res.summary():
        n, lim = r["name"], r["limit"]
        has = np.isfinite(lim) and lim > 0
        units[n] = r["unit"]
        out[f"peak[{n}]"] = _finite(r["peak"])
        out[f"rms[{n}]"] = _finite(r["rms"])
        out[f"limit[{n}]"] = _finite(lim) if has else None
        out[f"margin[{n}]"] = _finite(1.0 - r["peak"] / lim) if has else None
        out[f"peak_power[{n}]"] = _finite(r["peak_power"])
    try:  # read defensively: the sizing job's result grows; a changed shape loses a column only
        for n, (cap, rod) in (getattr(res, "pressures", None) or {}).items():
            out[f"p_cap_max_bar[{n}]"] = _finite(np.max(cap))
            out[f"p_rod_max_bar[{n}]"] = _finite(np.max(rod))
    except (TypeError, ValueError):
        pass
    for attr, col in (("pin_force", "pin_force"), ("pin_moment", "pin_moment")):
        for k, v in (getattr(res, attr, None) or {}).items():
            out[f"{col}[{k}]"] = _reduce(v, "max")
    sources = {}
    for col, (where, read) in RUN_FIELDS.items():
        v = read(run)
        out[col] = None if v is None else _reduce(v, "max")
        sources[col] = where if out[col] is not None else None
    out["units"] = units
    out["sources"] = sources
    return out


def _metric_names(records) -> list:
    names = {}
    for r in records:
        for k in (r.get("metrics") or {}):
            if k not in ("units", "sources"):
                names.setdefault(k, None)
    return list(names)


def _param_column(values):
    """A parameter's values as one typed column: numbers as float64, anything else as text (JSON)."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    if all(isinstance(v, bool) for v in values):
        return list(values)
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


def results_table(records, params):
    """pyarrow.Table: case, hash, status, error, seconds, worker, one column per swept parameter (named by
    its path), then one per metric (float64; null where a case failed or the job did not report it).
    Rows in case order."""
    pa = require("pyarrow", "the sweep's results table")
    records = sorted(records, key=lambda r: r["index"])
    cols = {"case": pa.array([r["index"] for r in records], pa.int64()),
            "hash": pa.array([r["hash"] for r in records], pa.string()),
            "status": pa.array([r["status"] for r in records], pa.string()),
            "error": pa.array([r.get("error") for r in records], pa.string()),
            "seconds": pa.array([r.get("seconds") for r in records], pa.float64()),
            "worker": pa.array([r.get("worker") for r in records], pa.string())}
    for p in params:
        cols[p] = pa.array(_param_column([r["params"].get(p) for r in records]))
    for m in _metric_names(records):
        cols[m] = pa.array([(r.get("metrics") or {}).get(m) for r in records], pa.float64())
    units = {}
    for r in records:
        units.update((r.get("metrics") or {}).get("units") or {})
    return pa.table(cols, metadata={"units": json.dumps(units), "params": json.dumps(list(params))})


def write_table(table, out_dir) -> dict:
    """results.parquet and results.csv in ``out_dir`` (atomic writes). Returns {name: path}."""
    pcsv, pq = require("pyarrow.csv", "the sweep's results table"), require("pyarrow.parquet", "the sweep's results table")
    out = {}
    for name, writer in (("results.parquet", pq.write_table), ("results.csv", pcsv.write_csv)):
        p = Path(out_dir) / name
        with atomic_path(p) as tmp:
            writer(table, str(tmp))
        out[name.replace(".", "_")] = str(p)
    return out


def _kind(metric: str) -> str:
    return metric.split("[", 1)[0]


def envelope(records, params) -> list:
    """The worst case of every metric (``WORST``: the largest peak, RMS, pressure, pin load and pump flow;
    the smallest limit and stability margin) over the cases that finished. Each entry: metric, worst
    ("max" | "min"), value, case (the first that reaches it), hash, params {path: value} and equal_cases
    (how many other cases reach the same value, to 1e-9 relative)."""
    ok = [r for r in records if r["status"] == "ok"]
    out = []
    for m in _metric_names(ok):
        how = WORST.get(_kind(m))
        if how is None:
            continue
        vals = [(r["metrics"].get(m), r) for r in ok if r["metrics"].get(m) is not None]
        if not vals:
            continue
        v, r = (max if how == "max" else min)(vals, key=lambda x: x[0])
        ties = sum(abs(x - v) <= 1e-9 * max(abs(v), 1e-300) for x, _ in vals) - 1
        out.append({"metric": m, "worst": how, "value": v, "case": r["index"], "hash": r["hash"],
                    "params": {p: r["params"].get(p) for p in params}, "equal_cases": ties})
    return out


def _fmt(metric, v, units) -> str:
    if v is None:
        return "–"
    k = _kind(metric)
    name = metric[len(k) + 1:-1] if "[" in metric else ""
    if k == "margin":
        return f"{100 * v:.1f} %"
    if k in ("peak", "rms"):
        u = units.get(name, "N")
        return f"{v / 1e3:.4g} kN" if u == "N" else f"{v / 1e3:.4g} kN m"
    if k == "pin_force":
        return f"{v / 1e3:.4g} kN"
    if k == "pin_moment":
        return f"{v:.4g} N m"
    if k == "peak_power":
        return f"{v / 1e3:.3g} kW"
    if k.endswith("_bar"):
        return f"{v:.0f} bar"
    return f"{v:.4g}"


def envelope_table(env, units) -> str:
    """Markdown table of the envelope: metric, worst value, case and its parameters."""
    lines = ["| quantity | worst | case | parameters |", "|---|---:|---:|---|"]
    for e in env:
        ps = ", ".join(f"{k} = {v}" for k, v in e["params"].items())
        more = f" (+{e['equal_cases']} equal)" if e.get("equal_cases") else ""
        lines.append(f"| {e['metric']} ({e['worst']}) | {_fmt(e['metric'], e['value'], units)} | "
                     f"{e['case']}{more} | {ps} |")
    return "\n".join(lines)


def _axis_values(values):
    """(x positions, tick labels or None): numbers stay numbers, anything else is categorical."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, float), None
    cats = list(dict.fromkeys(json.dumps(v) if not isinstance(v, str) else v for v in values))
    keyed = [json.dumps(v) if not isinstance(v, str) else v for v in values]
    return np.array([cats.index(k) for k in keyed], float), cats


def _levels(keys):
    """The distinct JSON-encoded parameter values in ``keys``, numbers first in numeric order, then the rest
    in text order."""
    def order(s):
        v = json.loads(s)
        num = isinstance(v, (int, float))
        return (not num, v if num else s)
    return sorted(set(keys), key=order)


def _figure_grid(n, width, height):
    """A figure with one axes per actuator (n), two columns when n > 1, the spare cell blanked:
    (fig, axes grid, columns). Fixed margins (``plotting.figure``: no pyplot, no ``tight_layout``, whose
    measuring pass cost as much as drawing: 7 s of a 40-case sweep's 3 plots, now ~1 s)."""
    from urdf_dyn.reports.plotting import figure
    ncol = 2 if n > 1 else 1
    nrow = math.ceil(n / ncol)
    fig, grid = figure((width * ncol, height * nrow + 0.6), nrow, ncol, left=0.7, right=0.15, top=0.65,
                       bottom=0.75, hspace=0.95, wspace=1.35)
    for k in range(n, nrow * ncol):
        grid[k // ncol, k % ncol].axis("off")
    return fig, grid, ncol


def _actuators(records):
    names = [m[5:-1] for m in _metric_names(records) if m.startswith("peak[")]
    units = {}
    for r in records:
        units.update((r.get("metrics") or {}).get("units") or {})
    return names, units


def _axes(params, axes):
    return axes if axes is not None else {p: [] for p in params}


def plot_peaks(records, params, out_dir, title="", axes=None) -> list:
    """For each axis of the sweep (``axes``: {parameter: the parameters zipped with it}; default every
    parameter alone), ``peak_vs_<param>.png``: one panel per actuator, the peak |u| of every case (kN or
    kN m) against the parameter, the worst over the other axes joined by a line, the limit dashed. With two
    axes the points are coloured by the other one. Returns the paths."""
    from urdf_dyn.reports.plotting import save_figure
    ok = [r for r in records if r["status"] == "ok"]
    acts, units = _actuators(ok)
    if not ok or not acts:
        return []
    paths = []
    axes = _axes(params, axes)
    for p, partners in axes.items():
        x, ticks = _axis_values([r["params"][p] for r in ok])
        others = [q for q in axes if q != p]
        fig, grid, ncol = _figure_grid(len(acts), 5.2, 2.9)
        for k, a in enumerate(acts):
            ax = grid[k // ncol, k % ncol]
            y = np.array([r["metrics"].get(f"peak[{a}]") or np.nan for r in ok]) / 1e3
            unit = "kN" if units.get(a, "N") == "N" else "kN m"
            if len(others) == 1:
                cv, cticks = _axis_values([r["params"][others[0]] for r in ok])
                sc = ax.scatter(x, y, c=cv, s=18, cmap="viridis", zorder=3)
                cb = fig.colorbar(sc, ax=ax, pad=0.01)
                cb.set_label(others[0], fontsize=7)
                if cticks:
                    cb.set_ticks(range(len(cticks)), labels=cticks)
            else:
                ax.scatter(x, y, s=18, color="C0", zorder=3)
            xs = np.unique(x)
            ax.plot(xs, [np.nanmax(y[x == v]) for v in xs], color="C3", lw=1.2, label="worst")
            lim = ok[0]["metrics"].get(f"limit[{a}]")
            if lim and lim / 1e3 < 3 * np.nanmax(y):
                ax.axhline(lim / 1e3, ls="--", lw=0.9, color="0.35", label="limit")
            ax.set_title(a, fontsize=9)
            ax.set_ylabel(f"peak |u| [{unit}]", fontsize=8)
            ax.set_xlabel(p + (f" (with {', '.join(partners)})" if partners else ""), fontsize=8)
            if ticks:
                ax.set_xticks(range(len(ticks)), labels=ticks, fontsize=7)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(f"{title}peak actuator force against {p} ({len(ok)} cases)", fontsize=10)
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in p)
        paths.append(save_figure(fig, Path(out_dir) / f"peak_vs_{safe}.png"))
    return paths


def plot_heatmap(records, params, out_dir, title="", axes=None):
    """``heatmap_peak.png`` for a sweep with two axes (``axes`` as in ``plot_peaks``): per actuator, peak |u|
    over the grid of the two axes' first parameters (worst over repeats), each cell labelled. None unless
    there are exactly two axes."""
    from urdf_dyn.reports.plotting import save_figure
    ok = [r for r in records if r["status"] == "ok"]
    acts, units = _actuators(ok)
    axes = _axes(params, axes)
    if len(axes) != 2 or not ok or not acts:
        return None
    px, py = axes
    kx = [json.dumps(r["params"][px]) for r in ok]
    ky = [json.dumps(r["params"][py]) for r in ok]
    xs, ys = _levels(kx), _levels(ky)
    fig, grid, ncol = _figure_grid(len(acts), 5.4, 3.4)
    for k, a in enumerate(acts):
        ax = grid[k // ncol, k % ncol]
        Z = np.full((len(ys), len(xs)), np.nan)
        for r, a_x, a_y in zip(ok, kx, ky):
            v = r["metrics"].get(f"peak[{a}]")
            if v is not None:
                i, j = ys.index(a_y), xs.index(a_x)
                Z[i, j] = np.fmax(Z[i, j], v / 1e3)
        im = ax.imshow(Z, origin="lower", aspect="auto", cmap="magma")
        unit = "kN" if units.get(a, "N") == "N" else "kN m"
        fig.colorbar(im, ax=ax, pad=0.01).set_label(f"peak |u| [{unit}]", fontsize=7)
        hi = np.nanmax(Z) if np.isfinite(Z).any() else 0
        lo = np.nanmin(Z) if np.isfinite(Z).any() else 0
        if Z.size <= 150:
            for i in range(len(ys)):
                for j in range(len(xs)):
                    if np.isfinite(Z[i, j]):
                        ax.text(j, i, f"{Z[i, j]:.4g}", ha="center", va="center", fontsize=6,
                                color="black" if Z[i, j] > lo + 0.6 * (hi - lo) else "white")
        ax.set_xticks(range(len(xs)), labels=[str(json.loads(s)) for s in xs], fontsize=7, rotation=30)
        ax.set_yticks(range(len(ys)), labels=[str(json.loads(s)) for s in ys], fontsize=7)
        ax.set_xlabel(px + (f" (with {', '.join(axes[px])})" if axes[px] else ""), fontsize=8)
        ax.set_ylabel(py + (f"\n(with {', '.join(axes[py])})" if axes[py] else ""), fontsize=8)
        ax.set_title(a, fontsize=9)
    fig.suptitle(f"{title}peak actuator force over {px} × {py}", fontsize=10)
    return save_figure(fig, Path(out_dir) / "heatmap_peak.png")


def write_summary(path, records, params, env, stats, head="", plots=()) -> str:
    """``summary.md``: what was swept, cases ok/failed/skipped, time, the envelope, failed cases with their
    errors, and the plots."""
    ok = [r for r in records if r["status"] == "ok"]
    bad = sorted((r for r in records if r["status"] != "ok"), key=lambda r: r["index"])
    _, units = _actuators(ok)
    lines = [f"# Load-case sweep{': ' + head if head else ''}", "",
             f"- parameters: {', '.join(f'`{p}`' for p in params)}",
             f"- cases: {len(records)} — {len(ok)} ok, {len(bad)} failed; this run computed "
             f"{stats.get('computed', 0)} and reused {stats.get('skipped', 0)} from earlier runs"
             + (" (**interrupted**: rerun to finish)" if stats.get("interrupted") else ""),
             f"- wall time {stats.get('seconds', 0):.1f} s on {stats.get('workers', 0)} worker(s)",
             "- units: peak/RMS in kN (cylinders) or kN m (swing); margin = 1 − peak/limit (negative: over)",
             "", "## Envelope (worst case of each quantity)", "", envelope_table(env, units), ""]
    srcs = {}
    for r in ok:
        srcs.update({k: v for k, v in ((r.get("metrics") or {}).get("sources") or {}).items() if v})
    if srcs:
        lines += ["Optional quantities taken from each case's run: " + ", ".join(f"{k} ← `{v}`" for k, v in srcs.items()), ""]
    if bad:
        lines += ["## Failed cases", "", "| case | parameters | error |", "|---:|---|---|"]
        for r in bad:
            ps = ", ".join(f"{k} = {v}" for k, v in r["params"].items())
            lines.append(f"| {r['index']} | {ps} | {(r.get('error') or '').replace('|', '/')} |")
        lines.append("")
    if plots:
        lines += ["## Plots", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in plots] + [""]
    text = "\n".join(lines)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return str(path)
