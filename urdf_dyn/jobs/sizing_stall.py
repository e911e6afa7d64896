"""The stall envelopes and the pins' design loads in ``job: size``: computed when
the scenario has a ``design:`` section with pins and an ``iso6015:`` section (its working relief, holding
reliefs and lip), with the one tipping polygon (``stability.track``) and ``design.friction`` (default
``machines.stall.DEFAULT_FRICTION``); reported inside the "Design cases" section beside each pin's cycle peak:
``pins.<name>.design_load_N``, ``pins.<name>.design_case``, the ``stall`` summary, the design-load columns of
``pin_design_loads.csv`` and two plots (``reports.design_report.render_stall``). The machine is anchored
(ISO 6015 §4.5) for the design loads, refined to convergence (``machines.stall_refine``); the sliding case at
``design.friction`` is its own; the stalling cylinder works at ``design.stall_relief`` (default the heavy-lift
relief). The case matrix (``machines.case_matrix``) and the FE export of the design cases
(``machines.fe_export``) are computed here too, so that the geometry cache keeps them
(``reports.fe_report.render_cases``)."""
from __future__ import annotations

__all__ = ["StallReport", "run_stall"]


class StallReport:
    """The stall envelopes (``env``, a ``machines.stall.StallEnvelopes``; from ``run_stall`` its ``slim`` copy:
    what the report, the plots and ``push_forces`` read) and the design loads (``loads``, {pin: dict}) of a
    run."""

    def __init__(self, env, loads, convergence=None, sliding=None, sliding_env=None, cases=None, free_bodies=None,
                 relief_name=None):
        self.env, self.loads = env, loads
        self.convergence = convergence      # stall_refine.ConvergedLoads of the anchored case (grid, change)
        self.sliding = sliding              # the sliding case (design.friction), its own ConvergedLoads
        self.sliding_env = sliding_env      # and its envelopes (for case_matrix; not kept by run_stall)
        self.cases = cases                  # [case_matrix.CaseRow]: anchored and sliding per cylinder, converged
        self.free_bodies = free_bodies      # [fe_export.FreeBody] of the anchored design cases, every body
        self.relief_name = relief_name      # the stall relief's word (main | heavy_lift) or None: a number


def run_stall(launch, model, cyl, frames, pins, cache=None, start=None):
    """A StallReport for the scenario, or None without ``iso6015`` or pins.
    ``pins``: {name: PinSpec} (the design section's); ``cache``: the run's ``GeometryCache`` (geometry only: no
    motion, soil or payload). With ``start`` (``jobs.beside.Beside.start``) the envelopes and the lateral
    cases that the cache does not hold are started beside the job instead (``GeometryCache.ahead``), and None
    is returned: the later call without ``start`` takes them. Raises ScenarioError naming the key for bad
    input."""
    from urdf_dyn.jobs.sizing_checks import geometry_ahead, geometry_cached, tipping_polygon_of
    from urdf_dyn.machines.stall import DEFAULT_FRICTION, stall_envelopes, stroke_map
    doc = launch.doc
    if doc.iso6015 is None or not pins:
        return None
    iso = doc.iso6015
    lip = frames.get(iso.lip)
    if lip is None:
        raise launch.err("iso6015.lip", f"unknown frame {iso.lip!r}")
    mu = doc.design.friction if doc.design.friction is not None else DEFAULT_FRICTION
    swing = doc.design.swing_bearing
    if swing is not None and swing not in model.joint_names:
        raise launch.err("design.swing_bearing", f"unknown joint {swing!r}")

    def compute():
        from urdf_dyn.machines.case_matrix import case_matrix
        from urdf_dyn.machines.fe_export import design_case_free_bodies
        from urdf_dyn.machines.stall_refine import converged_design_loads
        try:
            args = (model, cyl, doc.design.stall_relief or iso.relief, (lip.link, tuple(lip.xyz)))
            kw = dict(holding_relief=iso.holding_relief, footprint=tipping_polygon_of(launch))
            smap = stroke_map(model)                                     # one assembly of each stroke value
            env = stall_envelopes(*args, friction=None, smap=smap, **kw)   # anchored (ISO 6015 §4.5)
            conv = converged_design_loads(*args, pins, env=env, smap=smap, **kw)
            env_s = stall_envelopes(*args, friction=mu, like=env, **kw)  # the same statics, other limits
            sliding = converged_design_loads(*args, pins, friction=mu, env=env_s, smap=smap, **kw)
            cases = case_matrix(model, [env, env_s], pins, swing=swing,
                                converged={"design loads (converged, anchored)": conv,
                                           f"converged, sliding μ = {mu:g}": sliding})
            bodies = design_case_free_bodies(model, conv.loads, cyl, args[2], args[3], **kw)
            return StallReport(env.slim(), conv.loads, conv, sliding, None, cases, bodies,     # kept: what the
                               doc.relief_names.get("design.stall_relief"))                  # report reads
        except KeyError as e:
            raise launch.err("actuators.cylinders", e.args[0]) from None
        except ValueError as e:
            raise launch.err("design", str(e)) from None
    def lateral():                  # the out-of-plane cases (jobs.sizing_lateral)
        from urdf_dyn.jobs.sizing_lateral import run_lateral
        return run_lateral(launch, model, cyl, frames, pins, swing, tipping_polygon_of(launch))
    pin_specs = {n: [p.joint, p.count] for n, p in pins.items()}
    if start is not None:
        geometry_ahead(cache, launch, "stall", compute, start, extra={"pins": pin_specs}, model=model)
        if doc.design.lateral is not None:
            geometry_ahead(cache, launch, "lateral", lateral, start, extra={"pins": pin_specs}, model=model)
        return None
    rep = geometry_cached(cache, launch, "stall", compute, extra={"pins": pin_specs}, model=model)
    if rep is not None and doc.design.lateral is not None:
        rep.lateral = geometry_cached(cache, launch, "lateral", lateral, extra={"pins": pin_specs}, model=model)
    return rep
