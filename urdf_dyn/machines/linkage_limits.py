"""Mechanism limits of an excavator front, from its pin table by plane geometry.

A calibration that moves the estimated pins (``machines.calibration``) must not buy a figure with a linkage
no maker would build: a boom cylinder near dead centre, a stick lever that collapses at one end of its
stroke, a bucket four-bar near toggle, a bucket that hits the boom or the cab. Each limit is a margin
(≥ 0 when met) computed here from the table's pins and cylinder lengths alone, by the cosine rule and the
intersection of two circles (the closure of ``excavator_builder.stroke_ranges``), against the limit values
of the table's ``limits`` section (``pin_table.MechanismLimits``, where each is documented):

- ``boom_transmission_angle_deg`` (at both stroke ends): the angle between the boom cylinder's line and the
  lever boom_foot → boom_cylinder_eye, measured from the nearer dead centre (0° or 180°);
- ``boom_lever_m`` (both ends): the boom cylinder's moment arm about boom_foot, |F E| sin(angle);
- ``stick_lever_ratio`` (across the stroke): the stick cylinder's moment arm about boom_nose over its peak;
- ``bucket_link_angle_deg`` (across the stroke): at the common pin G the angle between the side link
  (G → side_link_pivot) and the H-link (G → h_link_pin), and at the H-link pin D the angle between the H-link
  (D → G) and the bucket's crank (D → bucket_pivot), each from the nearer of 0° and 180° (the four-bar's
  toggle);
- ``bucket_rotation_deg``: the bucket's turn over the whole bucket stroke (above the low limit, below the
  high one);
- ``stroke_ratio``: max_length / min_length of each cylinder;
- ``clearance_m``: over a grid of the three strokes, the least distance from the bucket's outline (its
  visual boxes' corners and edge midpoints, and its pins) to the boom's visual boxes, the cab and the
  undercarriage's boxes (tracks, car body) that lie across the bucket's width when it works over the front
  (``obstacles``), negative inside. Swung over the side, any excavator's bucket reaches its tracks (they
  are cleaned with it): that is the operator's to avoid, not the linkage's;
- ``closure``: each linkage closes over its stroke (the cosine's and the circles' margins) and the table's
  pose lies inside every stroke; without them the table cannot be built.

``FrontPose`` poses the front for cylinder lengths (boom, stick, bucket): the boom turns about boom_foot,
the stick about boom_nose (its cylinder base on the boom), the bucket about bucket_pivot through its
four-bar, all from the table's pose and on the table's assembly branch.
"""
from __future__ import annotations

import numpy as np

__all__ = ["LIMIT_KEYS", "linkage_values", "linkage_margins", "FrontPose", "bucket_outline", "obstacles",
           "min_loading_height", "limits_table"]

#: the limits (keys of ``linkage_values``) and the unit of each margin
LIMIT_KEYS = {"boom_transmission_angle_deg": "deg", "boom_lever_m": "m", "stick_lever_ratio": "1",
              "bucket_link_angle_deg": "deg", "bucket_rotation_deg": "deg", "stroke_ratio": "1", "clearance_m": "m",
              "closure": "1"}
#: a margin is divided by the scale of its unit: one unit of violation weighs alike in each
_SCALE = {"deg": 10.0, "m": 0.1, "1": 0.1}


def _ang(v):
    return np.arctan2(v[..., 1], v[..., 0])


def _rot(a):
    c, s = np.cos(a), np.sin(a)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _dead(u, v):
    """Angle [deg] between u and v (…, 2) from the nearer of 0° and 180°."""
    c = np.sum(u * v, -1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    g = np.degrees(np.arccos(np.clip(c, -1, 1)))
    return np.minimum(g, 180.0 - g)


def _triangle(pivot, base, moving, L):
    """(turn [rad] ccw of the body carrying ``moving`` about ``pivot`` so that ``moving`` is L from ``base``,
    on the table's side; closure margin 1 − |cos| (< 0: cannot close)), for lengths L (k,)."""
    u, w = moving - pivot, base - pivot
    a, b = np.linalg.norm(u), np.linalg.norm(w)
    c = (a * a + b * b - np.asarray(L, float) ** 2) / (2 * a * b)
    side = np.sign(_wrap(_ang(u) - _ang(w))) or 1.0
    return _wrap(_ang(w) + side * np.arccos(np.clip(c, -1, 1)) - _ang(u)), 1.0 - np.abs(c)


def _meet(p1, r1, p2, r2, sign):
    """The point |x − p1| = r1, |x − p2| = r2 (p1, p2 (k, 2)) on the side ``sign`` of p1 → p2, and the
    margin h²/r1² (< 0: the circles do not meet)."""
    d = p2 - p1
    dd = np.linalg.norm(d, axis=-1)
    a = (r1 * r1 - r2 * r2 + dd * dd) / (2 * dd)
    h2 = r1 * r1 - a * a
    n = np.stack([-d[:, 1], d[:, 0]], -1) / dd[:, None]
    x = p1 + (a / dd)[:, None] * d + sign * np.sqrt(np.clip(h2, 0, None))[:, None] * n
    return x, h2 / (r1 * r1)


def _four_bar(t, Lk):
    """Bucket four-bar at bucket cylinder lengths Lk (k,), in the stick's table-pose coordinates: G (k, 2),
    D (k, 2), the bucket's turn β (k,) [rad, ccw, unwrapped from the first] and the closure margin (k,)."""
    P = t.pin
    K, C3, B, G0, D0 = (P(n) for n in ("side_link_pivot", "bucket_cylinder_base", "bucket_pivot",
                                       "bucket_cylinder_eye", "h_link_pin"))
    s, h, d = np.linalg.norm(G0 - K), np.linalg.norm(D0 - G0), np.linalg.norm(D0 - B)
    Lk = np.atleast_1d(np.asarray(Lk, float))
    k = len(Lk)
    sg = np.sign(_cross(C3 - K, G0 - K))
    G, m1 = _meet(np.tile(K, (k, 1)), s, np.tile(C3, (k, 1)), Lk, sg)
    sd = np.sign(_cross(B - G0, D0 - G0))
    D, m2 = _meet(G, h, np.tile(B, (k, 1)), d, sd)
    beta = np.unwrap(_wrap(_ang(D - B) - _ang(D0 - B)))
    return G, D, beta, np.minimum(m1, m2)


class FrontPose:
    """The front posed at cylinder lengths Lb, Ls, Lk [m] (arrays broadcast to (k,)): ``phi``, ``psi``,
    ``beta`` (k,) [rad, ccw]: the boom's turn about boom_foot, the stick's about boom_nose relative to the
    boom, the bucket's about bucket_pivot relative to the stick; ``G``, ``D`` (k, 2) the four-bar's moving
    pins in the stick's table-pose coordinates; ``place(body, points)``: points (m, 2) [m] of a body
    ('house', 'boom', 'stick', 'bucket') at the table's pose → (k, m, 2) in the machine frame."""

    def __init__(self, t, Lb, Ls, Lk):
        Lb, Ls, Lk = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float)) for v in (Lb, Ls, Lk)))
        P = t.pin
        self.F, self.T, self.B = P("boom_foot"), P("boom_nose"), P("bucket_pivot")
        self.phi, mb = _triangle(self.F, P("boom_cylinder_base"), P("boom_cylinder_eye"), Lb)
        self.psi, ms = _triangle(self.T, P("stick_cylinder_base"), P("stick_cylinder_eye"), Ls)
        self.G, self.D, beta, mk = _four_bar(t, Lk)
        self.beta = _wrap(beta)
        self.closure = np.minimum(np.minimum(mb, ms), mk)

    def place(self, body, points):
        p = np.asarray(points, float)[None, :, :]
        if body == "house":
            return np.broadcast_to(p, (len(self.phi),) + p.shape[1:])
        turn = lambda a, c, x: c + np.einsum("kij,kmj->kmi", _rot(a), x - c)  # noqa: E731
        if body == "bucket":
            p = turn(self.beta, self.B, np.broadcast_to(p, (len(self.phi),) + p.shape[1:]))
            body = "stick"
        if body == "stick":
            p = turn(self.psi, self.T, np.broadcast_to(p, (len(self.phi),) + p.shape[1:]))
            body = "boom"
        if body == "boom":
            return turn(self.phi, self.F, np.broadcast_to(p, (len(self.phi),) + p.shape[1:]))
        raise KeyError(f"unknown body {body!r} (house, boom, stick, bucket)")


def _box_points(v):
    """Corners and edge midpoints (8, 2) (x, z) of a box visual at the table's pose."""
    lx, lz = v.box[0] / 2, v.box[2] / 2
    loc = np.array([[sx * lx, sz * lz] for sx, sz in ((-1, -1), (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0))])
    e = np.radians(v.elevation)
    R = np.array([[np.cos(e), -np.sin(e)], [np.sin(e), np.cos(e)]])
    return np.array([v.xyz[0], v.xyz[2]]) + loc @ R.T


def bucket_outline(t) -> np.ndarray:
    """(m, 2) [m] points of the bucket at the table's pose: its pins (bucket_pivot, h_link_pin, tip, lip) and
    the corners and edge midpoints of its box visuals."""
    pts = [t.pin(n) for n in ("bucket_pivot", "h_link_pin", "tip")] + ([t.pin("lip")] if t.pins.lip else [])
    for v in t.visuals.get("bucket", []):
        if v.box is not None:
            pts.extend(_box_points(v))
    return np.array(pts)


def obstacles(t) -> list:
    """[(name, body, centre (2,), half sizes (2,), elevation [rad])]: the rectangles the bucket must clear
    (``limits.clear_of``: visual boxes of the boom and the house by name, at the table's pose; boxes of the
    undercarriage as the front sees them working over the front, swing 0: a box counts where it overlaps
    the bucket's width across the front's plane). Over the side the bucket can reach the tracks on any
    excavator (operators clean the tracks with it); keeping it off them there is the operator's, not the
    linkage's."""
    half_w = max((v.box[1] / 2 + abs(v.xyz[1]) for v in t.visuals.get("bucket", []) if v.box is not None), default=0.65)
    out = []
    for body, names in t.limits.clear_of.items():
        for name in names:
            v = next((v for v in t.visuals.get(body, []) if v.name == name and v.box is not None), None)
            if v is None:
                raise t.err(f"limits.clear_of.{body}", f"no box visual named {name!r} on {body}")
            half = np.array([v.box[0], v.box[2]]) / 2
            if body != "undercarriage":
                out.append((name, body, np.array([v.xyz[0], v.xyz[2]]), half, np.radians(v.elevation)))
                continue
            if abs(v.xyz[1]) - v.box[1] / 2 < half_w:       # the box meets the front's plane over the front
                out.append((name, "house", np.array([v.xyz[0], v.xyz[2]]), half, 0.0))
    return out


def _strokes(t, n):
    c = t.cylinders
    return [np.linspace(getattr(c, k).min_length, getattr(c, k).max_length, n) for k in ("boom", "stick", "bucket")]


def _clearance(t, n):
    """(least distance [m], (obstacle, lengths (3,))) over an n³ grid of the strokes."""
    Ls = np.array(np.meshgrid(*_strokes(t, n), indexing="ij")).reshape(3, -1)
    fp = FrontPose(t, *Ls)
    pts = fp.place("bucket", bucket_outline(t))                        # (k, m, 2)
    best = (np.inf, None)
    for name, body, c, half, e in obstacles(t):
        cw = fp.place(body, c[None])[:, 0]                              # (k, 2) the obstacle's centre
        ew = e + (fp.phi if body == "boom" else 0.0)
        ew = np.broadcast_to(ew, (len(cw),))
        loc = np.einsum("kji,kmj->kmi", _rot(ew), pts - cw[:, None])    # into the rectangle's axes
        q = np.abs(loc) - half
        dist = np.where((q > 0).any(-1), np.linalg.norm(np.clip(q, 0, None), axis=-1), q.max(-1))
        k = np.unravel_index(np.argmin(dist), dist.shape)[0]
        if dist.min() < best[0]:
            best = (float(dist.min()), (name, Ls[:, k].copy()))
    return best


def linkage_values(t, n: int = 41, grid: int = 9) -> dict:
    """{limit key: value(s)} of the table (module docstring): boom_transmission_angle_deg, boom_lever_m
    (2,) at (min_length, max_length); stick_lever_ratio (n,) and stick_lever_m (n,) over the stroke;
    bucket_link_angle_deg (2, n): at G and at D; bucket_rotation_deg; stroke_ratio (3,) boom, stick, bucket;
    clearance_m and clearance_at (obstacle, lengths); closure (margins); table_in_stroke (6,) [m]."""
    P, c = t.pin, t.cylinders
    out = {}
    F, A, E = P("boom_foot"), P("boom_cylinder_base"), P("boom_cylinder_eye")
    Lb = np.array([c.boom.min_length, c.boom.max_length])
    phi, mb = _triangle(F, A, E, Lb)
    Ew = F + np.einsum("kij,j->ki", _rot(phi), E - F)
    out["boom_transmission_angle_deg"] = _dead(Ew - A, Ew - F)
    out["boom_lever_m"] = np.abs(_cross(Ew - A, Ew - F)) / np.linalg.norm(Ew - A, axis=-1)
    T, S, Es = P("boom_nose"), P("stick_cylinder_base"), P("stick_cylinder_eye")
    psi, ms = _triangle(T, S, Es, np.linspace(c.stick.min_length, c.stick.max_length, n))
    Ew = T + np.einsum("kij,j->ki", _rot(psi), Es - T)
    lever = np.abs(_cross(Ew - S, Ew - T)) / np.linalg.norm(Ew - S, axis=-1)
    out["stick_lever_m"] = lever
    out["stick_lever_ratio"] = lever / lever.max()
    G, D, beta, mk = _four_bar(t, np.linspace(c.bucket.min_length, c.bucket.max_length, n))
    K, B = P("side_link_pivot"), P("bucket_pivot")
    out["bucket_link_angle_deg"] = np.array([_dead(K - G, D - G), _dead(G - D, B - D)])
    out["bucket_rotation_deg"] = float(np.degrees(beta.max() - beta.min()))
    out["stroke_ratio"] = np.array([getattr(c, k).max_length / getattr(c, k).min_length for k in ("boom", "stick", "bucket")])
    out["closure"] = np.r_[mb, ms[[0, -1]], mk.min()]
    L0 = [float(np.linalg.norm(P(e) - P(b))) for b, e in (("boom_cylinder_base", "boom_cylinder_eye"),
                                                          ("stick_cylinder_base", "stick_cylinder_eye"),
                                                          ("bucket_cylinder_base", "bucket_cylinder_eye"))]
    out["table_in_stroke"] = np.array([v for L, k in zip(L0, ("boom", "stick", "bucket"))
                                       for v in (L - getattr(c, k).min_length, getattr(c, k).max_length - L)])
    if (out["closure"] > 0).all():
        out["clearance_m"], out["clearance_at"] = _clearance(t, grid)
    else:
        out["clearance_m"], out["clearance_at"] = -1.0, None
    return out


def linkage_margins(t, n: int = 41, grid: int = 9):
    """(names [str], margins (m,)): every limit of ``t.limits`` as a margin ≥ 0 when met, divided by its
    unit's scale (``_SCALE``: 10°, 0.1 m, 0.1), for an optimiser's inequality constraints; and the values
    (``linkage_values``) they came from, as a third item."""
    lim, v = t.limits, linkage_values(t, n, grid)
    rows = [("boom_transmission_angle_deg", v["boom_transmission_angle_deg"] - lim.boom_transmission_angle_min),
            ("boom_lever_m", v["boom_lever_m"] - lim.boom_lever_min),
            ("stick_lever_ratio", v["stick_lever_ratio"] - lim.stick_lever_ratio_min),
            ("bucket_link_angle_deg", v["bucket_link_angle_deg"].ravel() - lim.bucket_link_angle_min),
            ("bucket_rotation_deg", np.array([v["bucket_rotation_deg"] - lim.bucket_rotation[0],
                                              lim.bucket_rotation[1] - v["bucket_rotation_deg"]])),
            ("stroke_ratio", lim.stroke_ratio_max - v["stroke_ratio"]),
            ("clearance_m", np.array([v["clearance_m"] - lim.clearance_min])),
            ("closure", np.r_[v["closure"], v["table_in_stroke"]])]
    names, vals = [], []
    for key, m in rows:
        m = np.atleast_1d(np.asarray(m, float)) / _SCALE[LIMIT_KEYS[key]]
        names += [key] * len(m)
        vals.append(m)
    return names, np.concatenate(vals), v


def min_loading_height(t, n: int = 201) -> float:
    """Minimum loading height [m] (ISO 7135 as the makers' working-range drawings show it; the clause was not
    retrieved): the tip's height with the boom fully raised (the boom stroke end that puts boom_nose
    highest), the stick fully crowded (the stick stroke end that puts bucket_pivot nearest the swing axis)
    and the bucket dumped, its tip radius hanging straight below bucket_pivot (the bucket stroke where the
    tip's offset from the pivot changes sign, by linear interpolation of ``n`` samples; the lowest-hanging
    sample where it never does). Raises ValueError if the bucket cannot hang below its pivot there."""
    c = t.cylinders
    ends = lambda k: (getattr(c, k).min_length, getattr(c, k).max_length)  # noqa: E731
    mid = lambda k: sum(ends(k)) / 2  # noqa: E731
    nose = [FrontPose(t, L, mid("stick"), mid("bucket")).place("boom", t.pin("boom_nose")[None])[0, 0, 1] for L in ends("boom")]
    Lb = ends("boom")[int(np.argmax(nose))]
    piv = [abs(FrontPose(t, Lb, L, mid("bucket")).place("stick", t.pin("bucket_pivot")[None])[0, 0, 0]) for L in ends("stick")]
    Ls = ends("stick")[int(np.argmin(piv))]
    Lk = np.linspace(*ends("bucket"), n)
    fp = FrontPose(t, Lb, Ls, Lk)
    tip = fp.place("bucket", np.array([t.pin("tip"), t.pin("bucket_pivot")]))
    dx, dz = tip[:, 0, 0] - tip[:, 1, 0], tip[:, 0, 1] - tip[:, 1, 1]
    below = dz < 0
    if not below.any():
        raise ValueError("the bucket cannot hang below its pivot with the boom raised and the stick crowded")
    s = np.flatnonzero(below[:-1] & below[1:] & (np.sign(dx[:-1]) != np.sign(dx[1:])))
    if len(s) == 0:
        return float(tip[below, 0, 1].min())
    i = s[0]
    w = dx[i] / (dx[i] - dx[i + 1])
    return float((1 - w) * tip[i, 0, 1] + w * tip[i + 1, 0, 1])


def limits_table(before: dict, after: dict, lim) -> str:
    """Markdown: each limit (``pin_table.MechanismLimits`` ``lim``) beside the values of two tables
    (``linkage_values``), the least over the stroke ends / the stroke / the cylinders."""
    def row(label, limit, f):
        b, a = (f(v) if v else float("nan") for v in (before, after))
        return f"| {label} | {limit} | {b} | {a} |"
    ends = lambda v, k, fmt: " / ".join(format(x, fmt) for x in v[k])  # noqa: E731
    rows = ["| limit | required | before | after |", "|---|---:|---:|---:|",
            row("boom transmission angle from dead centre, retracted / extended [deg]",
                f"≥ {lim.boom_transmission_angle_min:g}", lambda v: ends(v, "boom_transmission_angle_deg", ".1f")),
            row("boom cylinder lever about boom_foot, retracted / extended [m]", f"≥ {lim.boom_lever_min:g}",
                lambda v: ends(v, "boom_lever_m", ".3f")),
            row("stick cylinder lever, least / peak over the stroke", f"≥ {lim.stick_lever_ratio_min:g}",
                lambda v: f"{v['stick_lever_ratio'].min():.3f} ({v['stick_lever_m'].min():.3f} / {v['stick_lever_m'].max():.3f} m)"),
            row("bucket four-bar angle from 0°/180°, side link–H-link / H-link–bucket crank [deg]",
                f"≥ {lim.bucket_link_angle_min:g}",
                lambda v: f"{v['bucket_link_angle_deg'][0].min():.1f} / {v['bucket_link_angle_deg'][1].min():.1f}"),
            row("bucket rotation over the stroke [deg]", f"{lim.bucket_rotation[0]:g}–{lim.bucket_rotation[1]:g}",
                lambda v: f"{v['bucket_rotation_deg']:.1f}"),
            row("stroke ratio boom / stick / bucket", f"≤ {lim.stroke_ratio_max:g}", lambda v: ends(v, "stroke_ratio", ".3f")),
            row("bucket clearance to boom, cab, tracks [m] (nearest)", f"≥ {lim.clearance_min:g}",
                lambda v: f"{v['clearance_m']:.3f}" + (f" ({v['clearance_at'][0]})" if v.get("clearance_at") else ""))]
    return "\n".join(rows)
