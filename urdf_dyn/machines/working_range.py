"""Working ranges of a hydraulic excavator (ISO 7135 dimensions) from its closed-loop model.

The dimensions are those of the makers' "working ranges" (ISO 7135:1993 / SAE J1193, whose figures and
clause text were not retrievable from the stored material; the definitions below are as the data sheets use
them, and each is computed for the point the caller gives, normally the bucket tooth tip), all in the side
view (swing 0: x forward from the swing axis, z up from the ground the tracks stand on):

- ``max_digging_depth_m``: the lowest the tip can reach (−min z);
- ``max_reach_ground_m``: the largest x of the tip on the ground line z = 0;
- ``max_cutting_height_m``: the highest the tip can reach (max z);
- ``max_loading_height_m``: the highest the tip can be while it hangs straight below the bucket pivot
  (``bucket`` link origin): the bucket dumped, its tip radius vertical;
- ``vertical_wall_depth_m``: the lowest the tip can reach with the stick (arm) vertical — its pivot
  (``stick`` link origin) straight above the bucket pivot (``bucket`` link origin) — and the tip level with
  the bucket pivot (tip radius horizontal, the bucket's back along the wall). This reading is inferred from
  the published figures, not from the clause (not retrieved): the CAT 320's 5.18 m wall depth is its 6.73 m
  maximum depth less its 1.57 m tip radius to 0.02 m (cat320_datasheet.md S3, S6); with the tip straight
  down it would be within 0.1 m of the maximum depth, with the bucket fully curled ~3 m less;
- ``level_bottom_2440_depth_m``: the deepest level z = −d at which the tip can sweep a horizontal bottom of
  2.44 m (8 ft): the largest d with x_max(−d) − x_min(−d) ≥ 2.44 m (the reachable x at one depth taken as
  one interval).

**Method.** Each stroke is swept once over its URDF limits by the compiled closed-loop path
(``stroke_map.StrokeMap``: ``consistent_motion``), a grid over the three strokes is composed from the sweeps
and its tip positions are taken in one batch of body poses (the start points and the envelope plot); each
extreme is then refined by scipy (L-BFGS-B / SLSQP, bounded by the strokes) on the cubic-Hermite map of the
sweeps with its analytic Jacobian (J_tip G), and the optimum pose is assembled exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.algorithms.kinematics import body_poses
from urdf_dyn.machines.stroke_map import StrokeMap, point_jacobian, tip_jacobian

__all__ = ["WorkingRange", "working_range", "WORKING_RANGE_KEYS"]

#: the JSON keys (``working_range.<key>``) and their labels
WORKING_RANGE_KEYS = {"max_digging_depth_m": "maximum digging depth", "max_reach_ground_m": "maximum reach at ground level",
                      "max_cutting_height_m": "maximum cutting height", "max_loading_height_m": "maximum loading height",
                      "vertical_wall_depth_m": "vertical wall digging depth",
                      "level_bottom_2440_depth_m": "digging depth for a 2.44 m level bottom"}


@dataclass
class WorkingRange:
    """ISO 7135 working ranges [m] (module docstring); points {key: tip (3,) [m]} and poses {key: q (nv,)}
    where each is reached (the level bottom: its two ends ``level_bottom_start``/``_end``); envelope (M, 3)
    tip positions of the stroke grid and of its faces (for the plot); reference {key: {"value": m, "source": text}} published figures."""
    max_digging_depth_m: float
    max_reach_ground_m: float
    max_cutting_height_m: float
    max_loading_height_m: float
    vertical_wall_depth_m: float
    level_bottom_2440_depth_m: float
    points: dict
    poses: dict
    envelope: np.ndarray
    reference: dict = field(default_factory=dict)
    pivots: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """{key: value [m]} for the JSON report."""
        return {k: float(getattr(self, k)) for k in WORKING_RANGE_KEYS}

    def table(self) -> str:
        """Markdown: our figures, beside the published ones when ``reference`` has them."""
        ref = any(k in self.reference for k in WORKING_RANGE_KEYS)
        rows = ["| working range (ISO 7135) | this model |" + (" published | difference | source |" if ref else ""),
                "|---|---:|" + ("---:|---:|---|" if ref else "")]
        for k, label in WORKING_RANGE_KEYS.items():
            v, r = getattr(self, k), self.reference.get(k)
            row = f"| {label} | {v:.2f} m |"
            if ref:
                row += (f" {r['value']:.2f} m | {100 * (v - r['value']) / r['value']:+.1f} % | {r.get('source', '')} |"
                        if r else " – | – | – |")
            rows.append(row)
        return "\n".join(rows)


def working_range(model, tip, boom="boom_cyl", stick="stick_cyl", bucket="bucket_cyl",
                  actuators=("swing", "boom_cyl", "stick_cyl", "bucket_cyl"), stick_link="stick",
                  bucket_link="bucket", level_bottom=2.44, n=21, q0=None, margin=1e-3,
                  reference=None) -> WorkingRange:
    """ISO 7135 working ranges (module docstring) of the point ``tip`` = (link, point (3,) [m] in its frame)
    (the bucket tooth tip). boom, stick, bucket: the stroke joints; stick_link, bucket_link: the links whose
    origins are the arm and bucket pivots; level_bottom [m]: the level-bottom length; n: grid samples per stroke (start
    points, plot); margin [m] inside the stroke limits. Returns WorkingRange. Raises KeyError for unknown
    names, ValueError if a dimension does not exist (e.g. the tip never reaches the ground line)."""
    import scipy.optimize                  # on use: 0.3 s of the import of every module that imports this one
    acts = tuple(actuators)
    tip = (tip[0], np.asarray(tip[1], float))
    strokes = (boom, stick, bucket)
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    smap = StrokeMap(model, q0, strokes, acts, step=0.002, margin=margin)
    lo = np.array([smap.limits(c)[0] for c in strokes])
    hi = np.array([smap.limits(c)[1] for c in strokes])
    pts = {"tip": tip, "stick": (stick_link, np.zeros(3)), "bucket": (bucket_link, np.zeros(3))}
    memo = {}

    def at(x, which="tip"):
        """(point (3,), d point / d strokes (3, 3)) on the interpolated map, memoised per x: the body poses
        and G of an x are computed once for the tip and the arm and bucket pivots (the solvers' constraints
        ask for several points at one x)."""
        key = tuple(map(float, x))
        m = memo.get(key)
        if m is None:
            if len(memo) > 20_000:
                memo.clear()
            q, cols = smap.interpolate(dict(zip(strokes, key)))
            m = memo[key] = {"T": body_poses(model, q[None]), "G": np.column_stack([cols[c] for c in strokes])}
        if which not in m:
            P, Jt = point_jacobian(model, m["T"], pts[which])
            m[which] = (P[0], Jt[0] @ m["G"])
        return m[which]

    def exact(x, which="tip"):
        q = smap.pose(dict(zip(strokes, map(float, np.clip(x, lo, hi)))))
        return tip_jacobian(model, q[None], pts[which])[0][0], q

    axes = [np.linspace(lo[k], hi[k], n) for k in range(3)]
    for k, c in enumerate(strokes):
        for v in axes[k]:
            smap.pose({c: float(v)})
    X = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
    Q = smap.compose([dict(zip(strokes, map(float, x))) for x in X])
    TQ = body_poses(model, Q)                  # one forward-kinematics pass of the grid for the three points
    E = point_jacobian(model, TQ, tip)[0]
    bounds = list(zip(lo, hi))
    opt = dict(ftol=1e-12, maxiter=200)

    def extreme(sign, axis, x0, fixed=None, eq=None):
        """Minimise sign * tip[axis] from x0, optional fixed bucket stroke and equality constraints."""
        b = list(bounds)
        if fixed is not None:
            b[2] = (fixed, fixed)
            x0 = np.r_[x0[:2], fixed]
        fun = lambda x: sign * at(x)[0][axis]                                   # noqa: E731
        jac = lambda x: sign * at(x)[1][axis]                                   # noqa: E731
        if eq is None:
            sol = scipy.optimize.minimize(fun, x0, jac=jac, method="L-BFGS-B", bounds=b,
                                          options=dict(ftol=1e-14, gtol=1e-12, maxiter=500))
        else:
            sol = scipy.optimize.minimize(fun, x0, jac=jac, method="SLSQP", bounds=b, constraints=eq, options=opt)
        return np.clip(sol.x, lo, hi)

    out, poses = {}, {}

    def starts(mask, score, k=6):
        """Start points: the k best grid points of ``mask`` by ``score`` (smallest first), spread over the
        grid (one per bucket stroke sample at most) so that separate local optima are all tried."""
        idx = np.flatnonzero(mask)
        idx = idx[np.argsort(score[idx])]
        out_, seen = [], set()
        for i in idx:
            key = round(float(X[i, 2]), 9)
            if key not in seen:
                seen.add(key)
                out_.append(X[i])
            if len(out_) == k:
                break
        return out_

    def best_of(sign, xs, cons, tol=1e-5):
        """The best exactly assembled candidate satisfying the constraints ``cons`` to ``tol``."""
        best = None
        for x in xs:
            p, q = exact(x)
            xx = np.array([q[model.joint_index(c)] for c in strokes])
            if all(abs(c["fun"](xx)) <= tol if c["type"] == "eq" else c["fun"](xx) >= -tol for c in cons):
                if best is None or sign * p[2] < sign * best[0][2]:
                    best = (p, q)
        if best is None:
            raise ValueError("no start point converged to a pose that meets the constraints")
        return best
    x = extreme(1, 2, X[np.argmin(E[:, 2])])
    out["max_digging_depth_m"], poses["max_digging_depth_m"] = exact(x)
    x = extreme(-1, 2, X[np.argmax(E[:, 2])])
    out["max_cutting_height_m"], poses["max_cutting_height_m"] = exact(x)
    def plumb(x):         # tip straight below the bucket pivot: x-offset 0
        t, b = at(x), at(x, "bucket")
        return t[0][0] - b[0][0], t[1][0] - b[1][0]
    hang = [dict(type="eq", fun=lambda x: plumb(x)[0], jac=lambda x: plumb(x)[1][None]),
            dict(type="ineq", fun=lambda x: at(x, "bucket")[0][2] - at(x)[0][2],
                 jac=lambda x: at(x, "bucket")[1][2] - at(x)[1][2])]
    Pt = E
    Pb = point_jacobian(model, TQ, pts["bucket"])[0]
    Ps = point_jacobian(model, TQ, pts["stick"])[0]
    del TQ
    down = (Pb[:, 2] > Pt[:, 2]) & (np.abs(Pt[:, 0] - Pb[:, 0]) < 0.3 * np.linalg.norm(Pt - Pb, axis=1))
    if not down.any():
        raise ValueError("the tip never hangs below the bucket pivot: no loading height")
    out["max_loading_height_m"], poses["max_loading_height_m"] = best_of(
        -1, [extreme(-1, 2, x0, eq=hang) for x0 in starts(down, -E[:, 2])], hang)

    def on_level(z):
        return [dict(type="eq", fun=lambda x: at(x)[0][2] - z, jac=lambda x: at(x)[1][2][None])]

    def x_extent(z, sign):
        near = np.flatnonzero(np.abs(E[:, 2] - z) < 0.6)
        if not len(near):
            return None
        k = near[np.argmax(sign * E[near, 0])]
        x = extreme(-sign, 0, X[k], eq=on_level(z))
        p, q = exact(x)
        return (p, q) if abs(p[2] - z) < 1e-4 else None

    r = x_extent(0.0, 1)
    if r is None:
        raise ValueError("the tip never reaches the ground line z = 0: no reach at ground level")
    out["max_reach_ground_m"], poses["max_reach_ground_m"] = r

    def vertical(x):      # stick pivot straight above the bucket pivot: x-offset 0
        s_, b = at(x, "stick"), at(x, "bucket")
        return s_[0][0] - b[0][0], s_[1][0] - b[1][0]
    wall = [dict(type="eq", fun=lambda x: vertical(x)[0], jac=lambda x: vertical(x)[1][None]),
            dict(type="ineq", fun=lambda x: at(x, "stick")[0][2] - at(x, "bucket")[0][2],
                 jac=lambda x: at(x, "stick")[1][2] - at(x, "bucket")[1][2]),
            dict(type="eq", fun=lambda x: at(x)[0][2] - at(x, "bucket")[0][2],
                 jac=lambda x: at(x)[1][2] - at(x, "bucket")[1][2])]
    ok = (Ps[:, 2] > Pb[:, 2]) & (np.abs(Ps[:, 0] - Pb[:, 0]) < 0.3 * np.linalg.norm(Ps - Pb, axis=1)) & \
        (np.abs(Pt[:, 2] - Pb[:, 2]) < 0.3 * np.linalg.norm(Pt - Pb, axis=1))
    if not ok.any():
        raise ValueError("the stick never hangs vertical: no vertical-wall digging depth")
    out["vertical_wall_depth_m"], poses["vertical_wall_depth_m"] = best_of(
        1, [extreme(1, 2, x0, eq=wall) for x0 in starts(ok, E[:, 2])], wall)

    widths = {}

    def width(d):       # memoised: the root finder and the final pick ask again for depths already swept
        d = float(d)
        if d not in widths:
            a, b = x_extent(-d, -1), x_extent(-d, 1)
            widths[d] = (-np.inf, None) if a is None or b is None else (b[0][0] - a[0][0], (a, b))
        return widths[d]
    depth = -out["max_digging_depth_m"][2]
    ds = np.linspace(0.0, depth, 25)
    # the deepest sample depth with a wide enough bottom: searched from the deepest up (the same k as
    # sweeping all 25 depths and taking the last that passes, without the shallower ones' solves)
    k = next((k for k in range(len(ds) - 1, -1, -1) if width(ds[k])[0] >= level_bottom), None)
    if k is None:
        raise ValueError(f"the tip cannot sweep a {level_bottom} m level bottom at any depth")
    dlb = ds[k] if k + 1 == len(ds) else scipy.optimize.brentq(lambda d: width(d)[0] - level_bottom, ds[k], ds[k + 1],
                                                                xtol=1e-6)
    (pa, qa), (pb, qb) = width(dlb)[1] if width(dlb)[1] is not None else width(ds[k])[1]
    res = {k: float(v) for k, v in (
        ("max_digging_depth_m", -out["max_digging_depth_m"][2]), ("max_reach_ground_m", out["max_reach_ground_m"][0]),
        ("max_cutting_height_m", out["max_cutting_height_m"][2]), ("max_loading_height_m", out["max_loading_height_m"][2]),
        ("vertical_wall_depth_m", -out["vertical_wall_depth_m"][2]), ("level_bottom_2440_depth_m", dlb))}
    points = dict(out, level_bottom_start=pa, level_bottom_end=pb)
    poses.update(level_bottom_start=qa, level_bottom_end=qb)
    piv = {nm: tip_jacobian(model, poses["max_reach_ground_m"][None], (nm, np.zeros(3)))[0][0]
           for nm in ("boom", stick_link, bucket_link) if nm in model.links}
    # the envelope for the plot: the stroke grid plus its six faces (one stroke at an end, 2 × 41 × 41 each),
    # where the boundary of the reachable region lies
    fine = [np.linspace(lo[k], hi[k], 41) for k in range(3)]
    for k, c in enumerate(strokes):
        for v in fine[k]:
            smap.pose({c: float(v)})
    faces = []
    for k in range(3):
        a, b = [j for j in range(3) if j != k]
        for end in (lo[k], hi[k]):
            F = np.empty((41 * 41, 3))
            F[:, k], F[:, a], F[:, b] = end, np.repeat(fine[a], 41), np.tile(fine[b], 41)
            faces.append(F)
    F = np.vstack(faces)
    env = np.vstack([E, tip_jacobian(model, smap.compose([dict(zip(strokes, map(float, x))) for x in F]), tip)[0]])
    return WorkingRange(**res, points=points, poses=poses, envelope=env, reference=dict(reference or {}), pivots=piv)
