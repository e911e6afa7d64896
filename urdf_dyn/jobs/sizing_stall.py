"""The stall envelopes and the pins' design loads in ``job: size`` (issue 26, items 1 and 2): computed when
the scenario has a ``design:`` section with pins and an ``iso6015:`` section (its working relief, holding
reliefs and lip), with the one tipping polygon (``stability.track``) and ``design.friction`` (default
``machines.stall.DEFAULT_FRICTION``); reported inside the "Design cases" section beside each pin's cycle peak:
``pins.<name>.design_load_N``, ``pins.<name>.design_case``, the ``stall`` summary, the design-load columns of
``pin_design_loads.csv`` and two plots (stall_envelopes.png, pin_design_loads.png)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["StallReport", "run_stall"]


class StallReport:
    """The stall envelopes (``env``, a StallEnvelopes) and the design loads (``loads``, {pin: dict}) of a job;
    ``report`` adds them to the sizing report (called by ``reports.report`` without importing this layer)."""

    def __init__(self, env, loads):
        self.env, self.loads = env, loads

    def report(self, md, js, out, outdir, plots, design=None):
        """As ``report_stall``."""
        report_stall((self.env, self.loads), design, md, js, out, outdir, plots)


def run_stall(launch, model, cyl, frames, pins):
    """A StallReport for the scenario, or None without ``iso6015`` or pins.
    ``pins``: {name: PinSpec} (the design section's). Raises LaunchError naming the key for bad input."""
    from urdf_dyn.jobs.sizing_checks import geometry_cached, tipping_polygon_of
    from urdf_dyn.machines.stall import DEFAULT_FRICTION, stall_envelopes
    doc = launch.doc
    if doc.iso6015 is None or not pins:
        return None
    iso = doc.iso6015
    lip = frames.get(iso.lip)
    if lip is None:
        raise launch.err("iso6015.lip", f"unknown frame {iso.lip!r}")
    mu = doc.design.friction if doc.design.friction is not None else DEFAULT_FRICTION

    def compute():
        try:
            env = stall_envelopes(model, cyl, doc.design.stall_relief or iso.relief, (lip.link, tuple(lip.xyz)), holding_relief=iso.holding_relief,
                                  footprint=tipping_polygon_of(launch), friction=mu)
            return StallReport(env, env.design_loads(model, pins))
        except KeyError as e:
            raise launch.err("actuators.cylinders", e.args[0]) from None
        except ValueError as e:
            raise launch.err("design", str(e)) from None
    # geometry only (no motion, soil or payload): computed once per sweep and robot (sizing_checks)
    pin_specs = {n: [p.joint, p.count] for n, p in pins.items()}
    return geometry_cached(launch, "stall", compute, extra={"pins": pin_specs}, model=model)


def report_stall(stall, design, md, js, out, outdir, plots):
    """Append the stall subsection to ``md``, the keys to ``js``, rewrite ``pin_design_loads.csv`` with the
    design loads beside the cycle peaks (``design``: the DesignCases), and submit the two plots."""
    from urdf_dyn.machines.pins import write_pin_loads
    from urdf_dyn.machines.stall import plot_design_loads
    env, dl = stall
    outdir = Path(outdir)
    fr = "not checked" if env.friction is None else f"μ = {env.friction:g} (design.friction)"
    md += ["### Stall envelopes and the pins' design loads (urdf_dyn.machines.stall)", "",
           f"Each cylinder at its working relief {env.relief / 1e5:.0f} bar against a locked bucket over {len(env.X)} "
           f"poses (a grid over the three strokes, 1 % inside their ends), every other cylinder at most at its holding "
           f"relief, the machine neither tipping (the tipping polygon{'' if env.tipping_checked else ': not given'}) nor "
           f"sliding ({fr}); weights included. The force at the lip in the ISO 6015 tangent direction and as the worst "
           f"of {len(env.fan_deg)} directions in the boom plane (plus the tangent).", "",
           "Where the holding relief equals the working relief, the fan's states do not depend on which cylinder "
           "works (every cylinder has the same limit): its worst force is then the same for the three, and a design "
           "case names the cylinder that is at its limit.", "",
           "| working cylinder | tangent: largest held force | limited by | fan: largest held force | limited by |",
           "|---|---:|---|---:|---|"]
    for c in env.working:
        t, f = env.tangent[c], env.fan[c]
        kt, kf = int(np.argmax(t["force_N"])), int(np.argmax(f["force_N"]))
        md.append(f"| {c} | {t['force_N'][kt] / 1e3:.1f} kN | {t['limited_by'][kt]} | {f['force_N'][kf] / 1e3:.1f} kN "
                  f"| {f['limited_by'][kf]} |")
    pl = design.pins if design is not None else None
    md += ["", "| pin | design load (per pin) | cycle peak | design / peak | case: working cylinder, direction, "
           "tip force, limited by | strokes boom, stick, bucket [m] |", "|---|---:|---:|---:|---|---|"]
    js.setdefault("pins", {})
    csv = {}
    for n, d in dl.items():
        c = d["design_case"]
        peak = pl.cycle_peak(n)[0] if pl is not None and n in pl.names else float("nan")
        case = (f"{c['cylinder']} stall, {c['direction']} {c['angle_deg']:.0f}°, {c['tip_force_N'] / 1e3:.1f} kN, "
                f"{c['limited_by']}")
        md.append(f"| {n} | **{d['design_load_N'] / 1e3:.1f} kN** | {peak / 1e3:.1f} kN | {d['design_load_N'] / peak:.1f} | "
                  f"{case} | " + ", ".join(f"{v:+.3f}" for v in c["pose"].values()) + " |")
        js["pins"].setdefault(n, {}).update(design_load_N=d["design_load_N"], design_case=c,
                                            design_load_components_N=d["components_N"])
        csv[n] = (f"{d['design_load_N']:.6g}", case + " at " + ", ".join(f"{k} {v:+.4f} m" for k, v in c["pose"].items()))
    md.append("")
    js["stall"] = env.summary()
    if pl is not None:
        out["pin_design_loads_csv"] = str(write_pin_loads(pl, outdir / "pin_design_loads.csv", design.damage, csv))
    from urdf_dyn.jobs.sizing_checks import geometry_plot
    out["stall_envelopes_png"] = geometry_plot(plots, "stall", outdir / "stall_envelopes.png", env.plot,
                                               outdir / "stall_envelopes.png")
    peaks = {n: pl.cycle_peak(n)[0] for n in pl.names} if pl is not None else {}
    out["pin_design_loads_png"] = plots.submit(outdir / "pin_design_loads.png", plot_design_loads, dl, peaks,
                                               outdir / "pin_design_loads.png")
