"""Converged pin design loads from the stall envelopes: the largest force of every pin over every stall state,
found from any starting grid.

**The landscape.** A pin's load over the stall states (``stall``) is a function of the three cylinder strokes
and the direction of the force on the lip. At one pose the held forces fill a convex polygon in the boom
plane and the load is largest at one of its corners, where two limits bind at once (``stall_corners``):
the direction is exact, not sampled. Over the strokes the load is smooth wherever the same two limits bind,
and has ridges where a third limit comes in (a corner meets another line) and kinks where tipping starts to
bind; on the excavator the largest loads sit on such ridges, often with a stroke at its end, some only a
few millimetres wide (a ridge near the bucket cylinder's retracted end, where the bucket linkage's lever
is smallest), between the points of any practical grid. A local refinement from the grid's maximum then
stays on whichever ridge its start was near.

**The search.** For every pin, starts from the grid (``n``): the best grid pose of each corner (pair of
binding limits) and working cylinder whose load is at least ``keep`` × the pin's grid maximum, the
``starts`` largest. From each start, SLSQP (``scipy.optimize.minimize``; Kraft 1988) maximises the pin's
load at that start's corner over the strokes — a smooth function there — with every other limit as an
inequality constraint (the corner must stay held) and the strokes within the grid's range (1 % inside each
end): so it runs up to a ridge and along it, and to a stroke end (values and forward-difference gradients
from the point and its 3 neighbours per iterate). The starts' problems run side by side, each its own
SLSQP problem, their iterates evaluated together in one batch of the compiled statics (``_Batches``).
Where another corner is larger at a start's optimum, that start is solved again on the new corner (an
active-set switch), at most ``max_passes`` rounds. The design load is the largest over the starts,
evaluated over every stall state at the pose it reached (``StallEnvelopes.pose_loads``); starts within
1e-9 of it (one state reached by two working cylinders, a ridge along which the load is constant) tie,
and the case goes by ``design_loads``' rule. **The check**: at each pin's final pose none of the 26
neighbours at ``check`` (0.1 %) of each stroke's span may hold a load more than ``tol`` (1 %) larger (one
more than 1e-9 larger becomes the design case); the pin is reported converged when none does (the last change
in the history is that check's).

The machine is anchored unless a friction coefficient is given (``stall`` module docstring: ISO 6015 §4.5);
the sliding case is a separate call with ``friction``.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from urdf_dyn.machines.stall import stall_envelopes, stroke_range
from urdf_dyn.machines.stall_corners import half_planes

__all__ = ["ConvergedLoads", "converged_design_loads", "METHOD"]

#: the search, in words (the report prints it)
METHOD = ("each pose's worst lip-force direction exact (the corners of its held-force polygon, where two limits "
          "bind); from the best grid pose of each corner, SLSQP over the three strokes with every other limit as a "
          "constraint (runs up a ridge and along it), again where another corner wins; then a check of the 26 "
          "neighbours at 0.1 % of each stroke")


@dataclass
class ConvergedLoads:
    """Design loads refined to convergence (module docstring).

    loads: {pin: {"design_load_N", "design_case", "components_N"}} as ``StallEnvelopes.design_loads``, after
    the search; grid_loads: the same from the grid alone; history: {pin: [{"pass", "design_load_N", "change",
    "starts"}]} (pass 0: the grid; 1, 2, …: the search's rounds with the starts solved in each; "check": the
    26-neighbour check; change relative to the value before the pass); converged: {pin: bool}; grid: {"n":
    (3,), "n_fan": K, "starts", "keep", "method"}; tol; friction (None: anchored)."""
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
                          anchored=self.anchored, friction=self.friction, method=self.grid.get("method"))}


def converged_design_loads(model, cylinders, relief, tip, pins, holding_relief=None, footprint=None, friction=None,
                           strokes=("boom_cyl", "stick_cyl", "bucket_cyl"), n=(13, 13, 13), n_fan=36, tol=0.01,
                           max_passes=6, swing=None, env=None, q0=None, starts=3, keep=0.9, check=1e-3,
                           smap=None) -> ConvergedLoads:
    """The pins' design loads over the stall envelopes, searched to convergence (module docstring).

    Arguments as ``stall.stall_envelopes`` and ``StallEnvelopes.design_loads``; ``env``: the grid's envelopes
    when already computed (with the same arguments and ``n``); starts: at most this many starts per pin (the
    best grid pose of each corner and working cylinder whose load is at least ``keep`` × the pin's grid
    maximum); max_passes: rounds of the search (a round re-solves the starts whose best corner changed);
    tol: the relative change of the design load the last round must stay under to call it converged.
    smap: the ``stall.stroke_map`` (of the same model, strokes and q0) to assemble the poses with, shared
    with the grid's envelopes and other searches (a pose depends only on its strokes); default a new one.
    Returns ConvergedLoads. Raises as ``stall_envelopes``."""
    from urdf_dyn.machines.iso6015 import _pressure_limits
    from urdf_dyn.machines.stall import stroke_map
    strokes = tuple(strokes)
    kw = dict(holding_relief=holding_relief, footprint=footprint, friction=friction, strokes=strokes, q0=q0)
    if env is None:
        env = stall_envelopes(model, cylinders, relief, tip, n=n, n_fan=n_fan, **kw)
    base = env.design_loads(model, pins, swing)
    smap = smap or stroke_map(model, strokes, q0)
    rng = stroke_range(model, strokes, q0, smap=smap)
    lo, hi = (np.array([rng[c][i] for c in strokes]) for i in (0, 1))
    limits = _pressure_limits(cylinders, relief, holding_relief)
    q = model.q_initial() if q0 is None else np.asarray(q0, float)
    sw = float(q[model.joint_index("swing")]) if "swing" in model.joint_names else 0.0
    xb = np.array([np.cos(sw), np.sin(sw), 0.0])

    def evaluate(X, working):
        """The envelopes at strokes X (N, 3), their half-planes per working cylinder and the pin maps."""
        loc = stall_envelopes(model, cylinders, relief, tip, working=working, points=X, fan_deg=[0.0], smap=smap,
                              corners=False, **kw)
        planes = {c: half_planes(loc.U, loc.u_g, loc.W0, loc.W1, xb, loc.names, cylinders, limits, c, footprint,
                                 friction)[:2] for c in working}
        return loc, planes, loc.pin_maps(model, pins, swing)

    names = list(base)
    runs = _starts(env, env.pose_loads(model, pins, swing), names, starts, keep)
    best = {p: dict(base[p]) for p in names}
    history = {p: [dict(design_load_N=best[p]["design_load_N"], change=np.nan, starts=0, **{"pass": 0})]
               for p in names}
    for k in range(1, max_passes + 1):
        act = [r for r in runs if r["rows"] is not None and not r.get("done")]
        if not act:
            break
        X = _Batches(evaluate).solve(act, names, lo, hi, xb)        # a problem per start, side by side
        loc = stall_envelopes(model, cylinders, relief, tip, working=tuple(dict.fromkeys(r["cylinder"] for r in act)),
                              points=X, fan_deg=[0.0], smap=smap, **kw)
        lp = loc.pose_loads(model, pins, swing)
        for i, r in enumerate(act):
            w, j = loc.working.index(r["cylinder"]), names.index(r["pin"])
            v, st = float(lp["load_N"][w, j, i]), int(lp["state"][w, j, i])
            r["done"] = True
            if v > r["v"] * (1 + 1e-9):                        # better: keep it, and again if its corner changed
                case = loc.case(r["cylinder"], i, st)
                r.update(x=X[i].copy(), v=v, load=dict(design_load_N=v, design_case=case,
                                                         components_N=lp["components_N"][w, j, i].copy()))
                rows = _rows(loc, r["cylinder"], i, st)
                if rows is not None and tuple(rows) != tuple(r["rows"]):
                    r.update(rows=rows, done=False)
        for p in names:
            prev = best[p]["design_load_N"]
            top = _top([r for r in runs if r["pin"] == p])
            if top is not None and top["v"] > prev:
                best[p] = dict(top["load"])
            history[p].append(dict(design_load_N=best[p]["design_load_N"], change=float(best[p]["design_load_N"] / prev - 1),
                                   starts=sum(r["pin"] == p for r in act), **{"pass": k}))
    # the check: no pose among the 26 neighbours of each pin's state at ``check`` × each stroke's span holds more
    X0 = np.array([[best[p]["design_case"]["pose"][c] for c in strokes] for p in names])
    D = np.array([d for d in product((-1.0, 0.0, 1.0), repeat=len(strokes)) if any(d)])
    pts = np.clip(X0[:, None, :] + check * (hi - lo) * D[None], lo, hi).reshape(-1, len(strokes))
    loc = stall_envelopes(model, cylinders, relief, tip, points=pts, fan_deg=[0.0], smap=smap, **kw)
    lp = loc.pose_loads(model, pins, swing)
    converged = {}
    for j, p in enumerate(names):
        w = env.working.index(best[p]["design_case"]["cylinder"])
        idx = np.arange(j * len(D), (j + 1) * len(D))
        i = int(idx[np.argmax(lp["load_N"][w, j, idx])])
        v, prev = float(lp["load_N"][w, j, i]), best[p]["design_load_N"]
        if v > prev * (1 + 1e-9):                  # more, not a tie on a flat ridge (round-off would choose)
            best[p] = dict(design_load_N=v, design_case=loc.case(loc.working[w], i, int(lp["state"][w, j, i])),
                           components_N=lp["components_N"][w, j, i].copy())
        change = max(v / prev - 1, 0.0)
        history[p].append(dict(design_load_N=best[p]["design_load_N"], change=change, starts=0, **{"pass": "check"}))
        converged[p] = bool(change < tol)
    return ConvergedLoads(best, base, history, converged,
                          dict(n=tuple(n), n_fan=int(n_fan), starts=int(starts), keep=float(keep), method=METHOD),
                          float(tol), None if friction is None else float(friction))


def _top(runs):
    """The start with the largest load; among starts within 1e-9 of it (one state reached from two working
    cylinders, or a ridge along which the load does not change) the first whose working cylinder is one of the
    limits that bind (``StallEnvelopes.design_loads``'s rule), else the first: a rule, not round-off."""
    if not runs:
        return None
    v = max(r["v"] for r in runs)
    tied = [r for r in runs if r["v"] >= v * (1 - 1e-9)]
    return next((r for r in tied if r["load"]["design_case"]["cylinder"] in r["load"]["design_case"]["binding"]),
                tied[0])


def _rows(env, c, m, k):
    """The two half-plane rows of state k of working cylinder c at pose m when it is a corner, else None."""
    K = len(env.fan_deg) + 1
    if k < K or c not in env.corner:
        return None
    rows = env.corner[c]["rows"][m, k - K]
    return None if rows[0] < 0 else rows.copy()


def _starts(env, pl, names, k, keep):
    """The search's starts (module docstring): per pin, the best grid pose of each (working cylinder, corner)
    with at least ``keep`` × the pin's grid maximum, the ``k`` largest; each a dict with the pin, the
    cylinder, the corner's rows, strokes x, load v and the grid's state."""
    runs = []
    for j, p in enumerate(names):
        top = float(pl["load_N"][:, j].max())
        cand = {}
        for w, c in enumerate(env.working):
            ms = np.flatnonzero(pl["load_N"][w, j] >= keep * top)
            sts, K = pl["state"][w, j, ms], len(env.fan_deg) + 1
            rows = env.corner[c]["rows"][ms, np.maximum(sts - K, 0)] if c in env.corner else np.full((len(ms), 2), -1)
            corner = (sts >= K) & (rows[:, 0] >= 0)                                  # as ``_rows``, pose by pose
            for m, st, v, at, r in zip(ms.tolist(), sts.tolist(), pl["load_N"][w, j, ms].tolist(), corner.tolist(),
                                       rows.tolist()):
                key = (c, tuple(r) if at else None)
                if key not in cand or v > cand[key][0]:
                    cand[key] = (v, m, st)
        for (c, r), (v, m, st) in sorted(cand.items(), key=lambda t: -t[1][0])[:k]:
            w, rows = env.working.index(c), None if r is None else np.array(r)
            load = dict(design_load_N=v, design_case=env.case(c, m, st), components_N=pl["components_N"][w, j, m].copy())
            runs.append(dict(pin=p, cylinder=c, rows=rows, x=env.X[m].copy(), v=v, load=load))
    return runs


def _slsqp(run, fetch, pj, lo, hi, xb, h=1e-5):
    """One start's corner maximised (module docstring): SLSQP over its strokes (3,), the objective its pin's
    load at its corner relative to its start value, the constraints every other half-plane at that corner,
    each stroke within [lo, hi]; values and forward-difference gradients (step ``h`` × the span) from one
    ``fetch`` of 4 poses per iterate (the point and its 3 neighbours): ``fetch(pts (4, 3), cylinder)`` gives
    the half-planes A (4, n, 2), b (4, n) of the start's working cylinder and the pin maps w0 (4, 3P), Wf
    (4, 3, 3P) there (``_Batches``); pj: the pin's index in them; xb (3,) the boom plane's forward axis.
    Returns the strokes (3,)."""
    from scipy.optimize import minimize
    d = len(lo)
    step = h * (hi - lo)
    block = [None]                                  # (the strokes' bytes, values, constraints, step sign)

    def values(z):
        if block[0] is None or block[0][0] != z.tobytes():           # evaluated again only when it moved
            sgn = np.where(z + step <= hi, 1.0, -1.0)                  # backward steps at the upper end
            pts = np.concatenate([z[None], z[None] + np.eye(d) * (sgn * step)[None]])
            A, b, w0, Wf = fetch(pts, run["cylinder"])
            i, j = run["rows"]
            a1, a2, b1, b2 = A[:, i], A[:, j], b[:, i], b[:, j]
            det = a1[:, 0] * a2[:, 1] - a1[:, 1] * a2[:, 0]
            y = np.stack([(b1 * a2[:, 1] - b2 * a1[:, 1]) / det, (a1[:, 0] * b2 - a2[:, 0] * b1) / det], axis=1)
            F = y[:, :1] * xb + y[:, 1:] * np.array([0.0, 0.0, 1.0])       # the corner's force, (d + 1, 3)
            c = 3 * pj
            pin = w0[:, c:c + 3] + np.einsum("ni,nij->nj", F, Wf[:, :, c:c + 3])
            other = np.delete(np.arange(A.shape[1]), [i, j])
            scale = np.abs(b[0, other]) + np.linalg.norm(A[0, other], axis=1) * np.linalg.norm(y[0]) + 1e-300
            block[0] = (z.tobytes(), np.linalg.norm(pin, axis=1) / run["v"],
                        (b[:, other] - np.einsum("nk,nrk->nr", y, A[:, other])) / scale, sgn)
        return block[0][1:]

    def obj(z):
        return -values(z)[0][0]

    def obj_jac(z):
        f, _, sgn = values(z)
        return -(f[1:] - f[:1]) / (sgn * step)

    def cons(z):
        return values(z)[1][0]

    def cons_jac(z):
        _, g, sgn = values(z)
        return ((g[1:] - g[:1]) / (sgn * step)[:, None]).T

    res = minimize(obj, run["x"], jac=obj_jac, method="SLSQP", bounds=list(zip(lo, hi)),
                   constraints=[dict(type="ineq", fun=cons, jac=cons_jac)], options=dict(maxiter=100, ftol=1e-10))
    return np.clip(res.x, lo, hi)


class _Abort(Exception):
    """Raised in a solver thread when the batch it waits on failed (the failure is raised in the caller)."""


class _Batches:
    """The starts' SLSQP problems side by side: each runs in its own thread (scipy's ``minimize`` calls back
    for values), and every problem's request for poses waits until each running problem has asked, then all
    go as one ``evaluate`` (the compiled statics and ``pins.pin_loads`` batched over the poses: one call of
    a few hundred poses instead of one of 4 per iterate). Each problem sees its own poses' values: the poses
    are assembled one by one (``stall._grid``) and the statics are per pose, except that the compiled closed-loop
    statics choose their independent coordinates once per call, from its first pose, so a pose's forces
    agree with those of its own call to round-off (about 1e-11 relative), not to the bit.
    ``evaluate(X (N, 3), working)`` -> (envelopes, {cylinder: (A, b)}, (names, w0, Wf)) as in
    ``converged_design_loads``."""

    def __init__(self, evaluate):
        import threading
        self.evaluate, self.cv = evaluate, threading.Condition()
        self.pending, self.results, self.running, self.error = {}, {}, 0, None

    def fetch(self, key, pts, cylinder):
        """A solver thread's request: (A, b, w0, Wf) at pts for that cylinder, when the batch has run."""
        with self.cv:
            if self.error is not None:
                raise _Abort
            self.pending[key] = (pts, cylinder)
            self.cv.notify_all()
            self.cv.wait_for(lambda: key in self.results or self.error is not None)
            if self.error is not None:
                raise _Abort
            return self.results.pop(key)

    def solve(self, runs, names, lo, hi, xb):
        """The strokes (S, 3) each start's problem (``_slsqp``) reaches."""
        import threading
        out, failed = [None] * len(runs), []

        def one(s):
            try:
                out[s] = _slsqp(runs[s], lambda pts, c: self.fetch(s, pts, c), names.index(runs[s]["pin"]),
                                lo, hi, xb)
            except _Abort:
                pass
            except BaseException as e:          # raised in the caller, after the others stopped
                failed.append(e)
                with self.cv:
                    self.error = self.error or e
            finally:
                with self.cv:
                    self.running -= 1
                    self.cv.notify_all()

        self.running = len(runs)
        threads = [threading.Thread(target=one, args=(s,), daemon=True) for s in range(len(runs))]
        for t in threads:
            t.start()
        try:
            self._serve()
        finally:
            with self.cv:
                self.error = self.error or _Abort()
                self.cv.notify_all()
            for t in threads:
                t.join()
        if failed:
            raise failed[0]
        return np.array(out)

    def _serve(self):
        """Runs the batches until every problem has finished (in the calling thread: numba and the model's
        caches see one thread)."""
        with self.cv:
            while True:
                self.cv.wait_for(lambda: self.error is not None or len(self.pending) == self.running)
                if self.error is not None or self.running == 0:
                    return
                keys = sorted(self.pending)
                req = [self.pending.pop(k) for k in keys]
                X = np.concatenate([p for p, _ in req])
                _, planes, (_, w0, Wf) = self.evaluate(X, tuple(dict.fromkeys(c for _, c in req)))
                r0 = 0
                for k, (p, c) in zip(keys, req):
                    sl = slice(r0, r0 + len(p))
                    self.results[k] = (planes[c][0][sl], planes[c][1][sl], w0[sl], Wf[sl])
                    r0 += len(p)
                self.cv.notify_all()
