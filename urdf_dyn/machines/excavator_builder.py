"""An excavator URDF, with its ``<loop>`` closures, from its side-view pin table (``machines.pin_table``).

The table's pins, at one assembled pose, place every link frame; that pose is the URDF's
``<initial_configuration>`` (every joint 0), so assembling the model there gives the table's pins back.

Links and frames (all pin axes are y; a frame's x axis points along its body's line of pins):

=====================  ======================  ============================================
link                   origin                  x axis towards
=====================  ======================  ============================================
undercarriage (root)   ground, swing axis      forward
house                  swing axis, ``swing.height``  forward
boom                   boom_foot               boom_nose
stick                  boom_nose               bucket_pivot
bucket                 bucket_pivot            tip
side_link              side_link_pivot         bucket_cylinder_eye
h_link                 bucket_cylinder_eye     h_link_pin
<c>_cyl_barrel         <c>_cylinder_base       <c>_cylinder_eye
<c>_cyl_rod            <c>_cylinder_eye        along the cylinder (prismatic q = length − length at the table)
bucket_tip, bucket_lip tip, lip (fixed)        as the bucket (unless ``marker_links: false``)
=====================  ======================  ============================================

Joints (the names of the earlier ``robots/excavator.urdf``): ``swing`` (continuous, z), ``boom``,
``stick``, ``bucket``, the passive pins ``boom_cyl_pin``, ``stick_cyl_pin``, ``bucket_cyl_pin``,
``side_link_pin``, ``h_link_pin`` (revolute, y; q > 0 turns clockwise seen from the left, i.e. lowers the
boom, crowds the stick and curls the bucket), and the actuated cylinders ``boom_cyl``, ``stick_cyl``,
``bucket_cyl`` (prismatic, x). Loops (revolute, y): ``boom_cylinder_eye`` (rod → boom),
``stick_cylinder_eye`` (rod → stick), ``bucket_cylinder_eye`` (rod → side link), ``h_link_bucket_pin``
(H-link → bucket). Joint limits: the range each stroke (min_length..max_length) sweeps, found by following
the linkage over the stroke (triangles for boom and stick, the four-bar for the bucket), widened by
``RANGE_MARGIN``; the cylinders' effort limit is count · relief · π/4 bore² (push) when ``hydraulics.relief``
is given and the velocity limit flow / (count · π/4 bore²) when ``flow`` is.

A linkage that cannot close over a stroke (a cylinder longer or shorter than its pins allow, a four-bar
that cannot meet) raises ModelError naming the table's file and the cylinder's ``min_length`` or
``max_length``.
"""
from __future__ import annotations

import math

import numpy as np

from urdf_dyn.io.escape import xml_attr, xml_comment
from urdf_dyn.machines.pin_table import BODY_NAMES, CYLINDER_PARTS, PinTable, inertia_matrix, load_pin_table

__all__ = ["excavator_urdf", "write_excavator_urdf", "link_frames", "stroke_ranges", "RANGE_MARGIN", "SWEEP_SAMPLES"]

RANGE_MARGIN = 0.01
"""rad added on both sides of the range a stroke sweeps, for the passive and driven revolute joints."""
SWEEP_SAMPLES = 401
"""cylinder lengths at which each stroke is followed (per direction from the table's length, bucket)."""

_CYL = {"boom": ("boom_cylinder_base", "boom_cylinder_eye", "house", "boom"),
        "stick": ("stick_cylinder_base", "stick_cylinder_eye", "boom", "stick"),
        "bucket": ("bucket_cylinder_base", "bucket_cylinder_eye", "stick", "side_link")}
_LINKS = ("undercarriage", "house", "boom", "stick", "bucket", "side_link", "h_link", "boom_cyl_barrel", "boom_cyl_rod",
          "stick_cyl_barrel", "stick_cyl_rod", "bucket_cyl_barrel", "bucket_cyl_rod")
_DEFAULT_MATERIALS = {"body": (0.85, 0.85, 0.85, 1.0), "pin": (0.45, 0.45, 0.45, 1.0), "rod": (0.72, 0.72, 0.75, 1.0)}


def _elev(v) -> float:
    return float(math.atan2(v[1], v[0]))


def _rot(a) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def link_frames(t: PinTable) -> dict:
    """{link: (origin (2,) [m] (x, z), elevation [rad])} of every link frame in the machine frame at the
    table's pose (module docstring)."""
    P = t.pin
    F, T, B, G = P("boom_foot"), P("boom_nose"), P("bucket_pivot"), P("bucket_cylinder_eye")
    fr = {"undercarriage": (np.zeros(2), 0.0), "house": (np.array([0.0, t.swing.height]), 0.0),
          "boom": (F, _elev(T - F)), "stick": (T, _elev(B - T)), "bucket": (B, _elev(P("tip") - B)),
          "side_link": (P("side_link_pivot"), _elev(G - P("side_link_pivot"))),
          "h_link": (G, _elev(P("h_link_pin") - G))}
    for c, (base, eye, _, _) in _CYL.items():
        e = _elev(P(eye) - P(base))
        fr[f"{c}_cyl_barrel"] = (P(base), e)
        fr[f"{c}_cyl_rod"] = (P(eye), e)
    return fr


def _local(frame, p) -> np.ndarray:
    return _rot(-frame[1]) @ (np.asarray(p, float) - frame[0])


# --------------------------------------------------------------------------------------------- strokes
def _triangle(t, key, pivot, moving, lengths):
    """Rotation φ [rad] (counter-clockwise) of the body carrying pin ``moving`` about ``pivot`` for each
    cylinder length, from the cosine rule in the triangle pivot / cylinder base / moving pin."""
    base = t.pin(_CYL[key][0])
    u, w = t.pin(moving) - pivot, base - pivot
    a, b = np.linalg.norm(u), np.linalg.norm(w)
    c = (a * a + b * b - lengths ** 2) / (2 * a * b)
    for L, ci, end in ((lengths[0], c[0], "min_length"), (lengths[-1], c[-1], "max_length")):
        if not -1 < ci < 1:
            raise t.err(f"cylinders.{key}.{end}", f"{L:g} m: the linkage cannot close: pins {_CYL[key][0]} and "
                                                  f"{moving} can only be {abs(a - b):.4f}..{a + b:.4f} m apart")
    side = np.sign(_wrap(_elev(u) - _elev(w))) or 1.0
    return _wrap(_elev(w) - _elev(u) + side * np.arccos(c))


def _circles(p1, r1, p2, r2):
    """Both intersections of circle (p1, r1) and circle (p2, r2), or None."""
    d = p2 - p1
    dd = float(np.linalg.norm(d))
    a = (r1 * r1 - r2 * r2 + dd * dd) / (2 * dd)
    h2 = r1 * r1 - a * a
    if h2 < 0:
        return None
    n = np.array([-d[1], d[0]]) / dd
    m = p1 + a * d / dd
    return m + math.sqrt(h2) * n, m - math.sqrt(h2) * n


def stroke_ranges(t: PinTable, n: int = SWEEP_SAMPLES) -> dict:
    """{joint: (min, max)} [rad | m] of the joint values the strokes sweep (before ``RANGE_MARGIN``):
    boom and stick by the cosine rule at ``n`` lengths over the stroke, the bucket's four-bar at ``n``
    lengths from the table's to either end, on the table's assembly branch (the side of the line through
    the two fixed centres each moving pin lies on: it changes only through a dead centre, where the circles
    touch and past which the linkage cannot close).
    Raises ModelError (naming ``cylinders.<c>.min_length|max_length``) if a linkage cannot close."""
    fr = link_frames(t)
    out = {}
    for key, joint, pivot, moving in (("boom", "boom", "boom_foot", "boom_cylinder_eye"),
                                      ("stick", "stick", "boom_nose", "stick_cylinder_eye")):
        c = getattr(t.cylinders, key)
        base = t.pin(_CYL[key][0])
        L0 = float(np.linalg.norm(t.pin(moving) - base))
        Ls = np.linspace(c.min_length, c.max_length, n)
        phi = _triangle(t, key, t.pin(pivot), moving, Ls)
        u = t.pin(moving) - t.pin(pivot)
        eyes = t.pin(pivot) + np.einsum("nij,j->ni", np.array([_rot(p) for p in phi]), u)
        barrel = -_wrap(np.arctan2(eyes[:, 1] - base[1], eyes[:, 0] - base[0]) - fr[f"{key}_cyl_barrel"][1])
        out[joint] = (-phi.max(), -phi.min())
        out[f"{key}_cyl_pin"] = (barrel.min(), barrel.max())
        out[f"{key}_cyl"] = (c.min_length - L0, c.max_length - L0)
    c = t.cylinders.bucket
    K, C3, B = t.pin("side_link_pivot"), t.pin("bucket_cylinder_base"), t.pin("bucket_pivot")
    G0, D0 = t.pin("bucket_cylinder_eye"), t.pin("h_link_pin")
    s, h, d = np.linalg.norm(G0 - K), np.linalg.norm(D0 - G0), np.linalg.norm(D0 - B)
    L0 = float(np.linalg.norm(G0 - C3))
    # the assembly branch of the table: which side of the line K -> C3 the common pin G lies on, and which
    # side of G -> B the H-link pin D; a continuous motion keeps both until the linkage reaches a dead
    # centre (the circles touch), beyond which it cannot close
    cross = lambda a, b: a[0] * b[1] - a[1] * b[0]  # noqa: E731
    sg, sd = np.sign(cross(C3 - K, G0 - K)), np.sign(cross(B - G0, D0 - G0))
    rows = []
    for Lend, end in ((c.min_length, "min_length"), (c.max_length, "max_length")):
        for L in np.linspace(L0, Lend, n):
            gs = _circles(K, s, C3, L)
            G = None if gs is None else max(gs, key=lambda g: sg * cross(C3 - K, g - K))
            ds = None if gs is None else _circles(G, h, B, d)
            if ds is None:
                what = "side link and bucket cylinder" if gs is None else "H-link and bucket"
                raise t.err(f"cylinders.bucket.{end}", f"{Lend:g} m: the bucket linkage cannot close at a bucket "
                                                       f"cylinder length of {L:.4f} m ({what} cannot meet)")
            D = max(ds, key=lambda x: sd * cross(B - G, x - G))
            rows.append((L, _elev(G - K), _elev(D - G), _elev(D - B), _elev(G - C3)))
    r = np.array(rows)
    es0, eh0 = _elev(G0 - K), _elev(D0 - G0)
    q = {"bucket_cyl": r[:, 0] - L0, "side_link_pin": -_wrap(r[:, 1] - es0),
         "h_link_pin": -_wrap((r[:, 2] - r[:, 1]) - (eh0 - es0)), "bucket": -_wrap(r[:, 3] - _elev(D0 - B)),
         "bucket_cyl_pin": -_wrap(r[:, 4] - _elev(G0 - C3))}
    for k in q:  # each half-sweep starts at the table (q = 0) and turns continuously: past ±180° unwrapped
        q[k] = np.concatenate([np.unwrap(q[k][:n]), np.unwrap(q[k][n:])])
    out.update({k: (float(v.min()), float(v.max())) for k, v in q.items()})
    return {k: (float(a), float(b)) for k, (a, b) in out.items()}


# --------------------------------------------------------------------------------------------- XML
def _f(v) -> str:
    s = f"{v:.12f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _v(*xs) -> str:
    return " ".join(_f(x) for x in xs)


def _origin(xyz, pitch=0.0, roll=0.0) -> str:
    return f'<origin xyz="{_v(*xyz)}" rpy="{_v(roll, pitch, 0.0)}"/>'


def _pitch(frame_e, e) -> float:
    """URDF pitch of a frame at elevation ``e`` seen from a frame at elevation ``frame_e``."""
    return -(e - frame_e)


def _inertial(t, link, frame) -> str:
    b = getattr(t.masses, link)
    if b is None:
        return ""
    c = _local(frame, b.com)
    Ry = np.array([[math.cos(-frame[1]), 0, math.sin(-frame[1])], [0, 1, 0], [-math.sin(-frame[1]), 0,
                                                                              math.cos(-frame[1])]])
    I = Ry.T @ (inertia_matrix(b.inertia) if b.inertia is not None else np.zeros((3, 3))) @ Ry
    scale = 1e-12 * (1e-300 + abs(np.trace(I)))

    def g(x):  # the fewest digits within 1e-12 of the tensor's trace (frame angles carry ~1e-13 rad)
        if abs(x) < scale:
            return "0"
        return next(s for s in (f"{x:.{p}g}" for p in range(6, 18)) if abs(float(s) - x) <= scale)
    return (f"    <inertial>\n      {_origin((c[0], 0, c[1]))}\n      <mass value=\"{_f(b.mass)}\"/>\n"
            f'      <inertia ixx="{g(I[0, 0])}" ixy="{g(I[0, 1])}" ixz="{g(I[0, 2])}" iyy="{g(I[1, 1])}" '
            f'iyz="{g(I[1, 2])}" izz="{g(I[2, 2])}"/>\n    </inertial>\n')


def _shape(name, geo, xyz, pitch, axis, material) -> str:
    """A visual; lengths rounded to 1 µm, angles to 1e-10 rad (drawing only)."""
    roll, pitch = (math.pi / 2, pitch) if axis == "y" else (0.0, pitch + math.pi / 2) if axis == "x" else (0.0, pitch)
    r = lambda *xs: " ".join(_f(round(float(x), 6)) for x in xs)  # noqa: E731
    g = f'<box size="{r(*geo)}"/>' if len(geo) == 3 else f'<cylinder radius="{r(geo[0])}" length="{r(geo[1])}"/>'
    a = " ".join(_f(round(float(x), 10)) for x in (roll, _wrap(pitch), 0.0))
    o = f'<origin xyz="{r(*xyz)}" rpy="{a}"/>'
    return (f'    <visual name="{xml_attr(name)}">\n      {o}\n      <geometry>{g}</geometry>\n'
            f'      <material name="{xml_attr(material)}"/>\n    </visual>\n')


def _table_visuals(t, link, frame) -> str:
    out = ""
    for v in t.visuals[link]:
        p = _local(frame, (v.xyz[0], v.xyz[2]))
        out += _shape(v.name, v.box or v.cylinder, (p[0], v.xyz[1], p[1]), _pitch(frame[1], math.radians(v.elevation)),
                      v.axis if v.cylinder else "z", v.material or "body")
    return out


def _auto_visuals(t, link, frame) -> str:
    """Simple shapes between the pins of a link the table gives no visuals for (boxes along pin-to-pin
    segments, cylinders at the pins, tubes for the cylinders), sized from the boom's length."""
    w = 0.06 * float(np.linalg.norm(t.pin("boom_nose") - t.pin("boom_foot")))
    P = t.pin
    segs = {"boom": ("boom_foot", "boom_cylinder_eye", "boom_nose", "stick_cylinder_base", "boom_foot"),
            "stick": ("stick_cylinder_eye", "boom_nose", "bucket_cylinder_base", "side_link_pivot", "bucket_pivot",
                      "boom_nose"),
            "bucket": ("bucket_pivot", "h_link_pin", "tip", "bucket_pivot"),
            "side_link": ("side_link_pivot", "bucket_cylinder_eye"), "h_link": ("bucket_cylinder_eye", "h_link_pin")}
    out = ""
    if link in segs:
        names = segs[link]
        for i, (a, b) in enumerate(zip(names[:-1], names[1:])):
            pa, pb = _local(frame, P(a)), _local(frame, P(b))
            m = (pa + pb) / 2
            out += _shape(f"{link}_{i}", (float(np.linalg.norm(pb - pa)) + w, w, w), (m[0], 0, m[1]),
                          -_elev(pb - pa), "z", "body")
        for a in sorted(set(names)):
            p = _local(frame, P(a))
            out += _shape(f"{a}_pin", (w / 3, 1.6 * w), (p[0], 0, p[1]), 0.0, "y", "pin")
    elif link == "house":
        for a in ("boom_foot", "boom_cylinder_base"):
            p = _local(frame, P(a))
            out += _shape(f"{a}_bracket", (w, 2 * w, w), (p[0] / 2, 0, p[1] / 2), -_elev(p), "z", "body")
    elif link == "undercarriage":
        out += _shape("swing_axis", (w, max(t.swing.height, w)), (0, 0, max(t.swing.height, w) / 2), 0.0, "z", "body")
    else:
        key, part = link.split("_cyl_")
        c = getattr(t.cylinders, key)
        n, tube = c.count, c.tube_outer or 1.2 * c.bore
        ys = [(i - (n - 1) / 2) * c.spacing for i in range(n)]
        for i, y in enumerate(ys):
            sfx = "" if n == 1 else f"_{i}"
            if part == "barrel":
                Lb = 0.9 * c.min_length
                out += _shape(f"barrel{sfx}", (tube / 2, Lb), (Lb / 2, y, 0), 0.0, "x", "body")
                out += _shape(f"base_eye{sfx}", (tube / 2, tube), (0, y, 0), 0.0, "y", "pin")
            else:
                Lr = c.rod_length or (c.max_length - 0.9 * c.min_length)
                out += _shape(f"rod{sfx}", (c.rod / 2, Lr), (-Lr / 2, y, 0), 0.0, "x", "rod")
                out += _shape(f"rod_eye{sfx}", (0.7 * c.rod, tube), (0, y, 0), 0.0, "y", "pin")
    return out


def _joint(name, jtype, parent, child, origin, axis, limit=None) -> str:
    s = (f'  <joint name="{name}" type="{jtype}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
         f"    {origin}\n")
    if jtype != "fixed":
        s += f'    <axis xyz="{_v(*axis)}"/>\n'
    if limit:
        s += "    <limit " + " ".join(f'{k}="{_f(v)}"' for k, v in limit.items()) + "/>\n"
    return s + "  </joint>\n"


def _rel(fr, parent, child) -> str:
    """origin of ``child``'s frame in ``parent``'s frame (planar, about y)."""
    p = _local(fr[parent], fr[child][0])
    return _origin((p[0], 0, p[1]), _pitch(fr[parent][1], fr[child][1]))


def _header(t, fr, rng) -> str:
    deg = lambda k: f"{math.degrees(rng[k][0]):+.1f} .. {math.degrees(rng[k][1]):+.1f} deg"  # noqa: E731
    src = t.source.replace("\\", "/").rsplit("/", 1)[-1]
    lines = [f"  {t.name}: generated from the side-view pin table {src} by `urdf-dyn excavator` (urdf_dyn.machines.",
             "  excavator_builder): edit the table, not this file. SI units, REP-103 (x forward, y left, z up); the root",
             "  link `undercarriage` stands on the ground under the swing axis; every pin axis is y. Loops close the",
             "  three cylinders and the bucket four-bar (urdf_dyn <loop>; stock URDF tools see the spanning tree):",
             "    undercarriage -swing(z)-> house -boom-> boom -stick-> stick -bucket-> bucket",
             "    house -boom_cyl_pin-> boom_cyl_barrel -boom_cyl (prismatic)-> boom_cyl_rod ==loop==> boom",
             "    boom -stick_cyl_pin-> stick_cyl_barrel -stick_cyl (prismatic)-> stick_cyl_rod ==loop==> stick",
             "    stick -bucket_cyl_pin-> bucket_cyl_barrel -bucket_cyl (prismatic)-> bucket_cyl_rod ==loop==> side_link",
             "    stick -side_link_pin-> side_link -h_link_pin-> h_link ==loop==> bucket",
             "  Mobility 12 - rank(K) 8 = 4 (swing and three cylinders, the <transmission>s). A prismatic q is the change",
             "  of its cylinder's pin-to-pin length from the table's; a revolute q > 0 turns clockwise seen from the",
             "  left (lowers the boom, crowds the stick, curls the bucket).", ""]
    lines += ["  " + ln if ln else "" for ln in t.description.rstrip().splitlines()]
    lines += ["", "  Derived from the table (pin-to-pin lengths at the table's pose = <initial_configuration>, q = 0):"]
    for c, (base, eye, _, _) in _CYL.items():
        cy = getattr(t.cylinders, c)
        L0 = float(np.linalg.norm(t.pin(eye) - t.pin(base)))
        joint = {"boom": "boom", "stick": "stick", "bucket": "bucket"}[c]
        lim = ""
        if t.hydraulics is not None:
            lim = f"; push {cy.count * t.hydraulics.relief * math.pi / 4 * cy.bore ** 2:.0f} N at {t.hydraulics.relief:g} Pa"
        lines.append(f"    {c:<6} cylinder {L0:.6f} m (stroke {cy.min_length:.3f} .. {cy.max_length:.3f} m) -> "
                     f"{joint} joint {deg(joint)}{lim}")
    return "<?xml version=\"1.0\"?>\n<!--\n" + xml_comment("\n".join(lines)) + "\n-->\n"



def excavator_urdf(table) -> str:
    """The URDF text (str) of the excavator a pin table describes (module docstring: links, frames, joints,
    loops, limits). ``table``: a PinTable, a mapping of one, or a path to a YAML file. Raises ModelError
    naming the table's file and key for bad input, a linkage that cannot close included."""
    from urdf_dyn.machines.pin_table import pin_table_from_dict
    t = table if isinstance(table, PinTable) else (pin_table_from_dict(table) if isinstance(table, dict)
                                                   else load_pin_table(table))
    fr = link_frames(t)
    rng = stroke_ranges(t)
    mats = dict(_DEFAULT_MATERIALS, **t.materials)
    for link, vs in t.visuals.items():
        for i, v in enumerate(vs):
            if (v.material or "body") not in mats:
                raise t.err(f"visuals.{link}[{i}].material", f"{v.material!r} is not in materials: "
                                                             f"{', '.join(sorted(mats))}")
    body = ""
    for link in _LINKS:
        vis = _table_visuals(t, link, fr[link]) if link in t.visuals else _auto_visuals(t, link, fr[link])
        body += f'  <link name="{link}">\n' + _inertial(t, link, fr[link]) + vis + "  </link>\n"
    s = _header(t, fr, rng) + f'<robot name="{xml_attr(t.name)}">\n'
    s += "".join(f'  <material name="{xml_attr(k)}"><color rgba="{_v(*rgba)}"/></material>\n'
                 for k, rgba in mats.items() if f'<material name="{xml_attr(k)}"/>' in body) + "\n" + body
    marks = [("bucket_tip", "tip")] + ([("bucket_lip", "lip")] if t.pins.lip is not None else [])
    marks = marks if t.marker_links else []
    s += "".join(f'  <link name="{n}"/>\n' for n, _ in marks) + "\n"
    lim = lambda k: dict(lower=rng[k][0] - RANGE_MARGIN, upper=rng[k][1] + RANGE_MARGIN, effort=0, velocity=10)  # noqa: E731
    sw = {k: v for k, v in (("effort", t.swing.torque), ("velocity", t.swing.speed)) if v is not None}
    s += _joint("swing", "continuous", "undercarriage", "house", _rel(fr, "undercarriage", "house"), (0, 0, 1), sw)
    tree = [("boom", "house", "boom"), ("boom_cyl_pin", "house", "boom_cyl_barrel"), ("boom_cyl", None, "boom"),
            ("stick", "boom", "stick"), ("stick_cyl_pin", "boom", "stick_cyl_barrel"), ("stick_cyl", None, "stick"),
            ("bucket", "stick", "bucket"), ("side_link_pin", "stick", "side_link"), ("h_link_pin", "side_link", "h_link"),
            ("bucket_cyl_pin", "stick", "bucket_cyl_barrel"), ("bucket_cyl", None, "bucket")]
    for name, parent, child in tree:
        if parent is not None:
            s += _joint(name, "revolute", parent, child, _rel(fr, parent, child), (0, 1, 0), lim(name))
            continue
        c = getattr(t.cylinders, child)
        base, eye = _CYL[child][:2]
        L0 = float(np.linalg.norm(t.pin(eye) - t.pin(base)))
        cap = c.count * math.pi / 4 * c.bore ** 2
        limit = dict(lower=rng[name][0], upper=rng[name][1])
        if t.hydraulics is not None:
            limit["effort"] = t.hydraulics.relief * cap
        if c.flow is not None:
            limit["velocity"] = c.flow / cap
        s += _joint(name, "prismatic", f"{child}_cyl_barrel", f"{child}_cyl_rod", _origin((L0, 0, 0)), (1, 0, 0), limit)
    for n, pin in marks:
        p = _local(fr["bucket"], t.pin(pin))
        s += _joint(f"{n}_joint", "fixed", "bucket", n, _origin((p[0], 0, p[1])), None)
    s += "\n  <!-- loop closures (urdf_dyn <loop>): Fp = predecessor/origin, Fs = successor/origin coincide at q = 0 -->\n"
    loops = [(f"{c}_cylinder_eye", f"{c}_cyl_rod", np.zeros(2), 0.0, succ, t.pin(_CYL[c][1]), fr[f"{c}_cyl_rod"][1])
             for c, (_, _, _, succ) in _CYL.items()]
    D = t.pin("h_link_pin")
    loops.append(("h_link_bucket_pin", "h_link", _local(fr["h_link"], D), 0.0, "bucket", D, fr["h_link"][1]))
    for name, pred, p_loc, p_pitch, succ, P, e in loops:
        q = _local(fr[succ], P)
        s += (f'  <loop name="{name}" type="revolute">\n'
              f'    <predecessor link="{pred}">{_origin((p_loc[0], 0, p_loc[1]), p_pitch)}</predecessor>\n'
              f'    <successor link="{succ}">{_origin((q[0], 0, q[1]), _pitch(fr[succ][1], e))}</successor>\n'
              f'    <axis xyz="0 1 0"/>\n  </loop>\n')
    s += '\n  <initial_configuration name="assembled">\n'
    s += "".join(f'    <joint_position joint="{j}" value="0"/>\n' for j in ["swing"] + [n for n, _, _ in tree])
    s += "  </initial_configuration>\n\n"
    for j in ("swing", "boom_cyl", "stick_cyl", "bucket_cyl"):
        hw = "<hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface>"
        s += (f'  <transmission name="{j}_transmission">\n    <type>transmission_interface/SimpleTransmission</type>\n'
              f'    <joint name="{j}">\n      {hw}\n    </joint>\n    <actuator name="{j}_actuator">\n      {hw}\n'
              f"      <mechanicalReduction>1</mechanicalReduction>\n    </actuator>\n  </transmission>\n")
    return s + "</robot>\n"


def write_excavator_urdf(pins_path, out_path) -> str:
    """Read the pin table ``pins_path``, write its URDF to ``out_path`` (atomically) and return the text.
    Raises ModelError for bad input (module docstring)."""
    from urdf_dyn.io.files import atomic_path
    from urdf_dyn.loading import load
    text = excavator_urdf(load_pin_table(pins_path))
    load(text)                    # the text is loaded before it is written: a file that does not load is not written
    with atomic_path(out_path, inputs=(pins_path,)) as tmp:
        tmp.write_text(text)
    return text


assert set(_LINKS) == set(BODY_NAMES + CYLINDER_PARTS)
