"""The mechanism limits of the adopted pin table (robots/excavator_pins.yaml), and a calibration where a limit
binds (``urdf_dyn.machines.calibration``, ``urdf_dyn.machines.linkage_limits``).

Oracle: plain vector geometry written here, not the calibration's helpers. Each body is turned about its
pivot, from the table's pose, by a root finder (scipy's brentq on the pin-to-pin length) following the
stroke continuously, instead of the cosine rule and circle intersections the library uses; angles come
from dot products, levers from cross products.
"""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from _robots import ROOT
from urdf_dyn.machines.pin_table import load_pin_table

PINS = ROOT / "robots" / "excavator_pins.yaml"


@pytest.fixture(scope="module")
def table():
    return load_pin_table(PINS)


def rot(p, c, a):
    """p turned by a [rad] counter-clockwise about c."""
    d = np.asarray(p, float) - c
    return c + np.array([math.cos(a) * d[0] - math.sin(a) * d[1], math.sin(a) * d[0] + math.cos(a) * d[1]])


def follow(moving, pivot, base, lengths):
    """Turns [rad] of the body carrying ``moving`` about ``pivot`` at which it is each of ``lengths`` from
    ``base``: walked from the table's pose (turn 0) in small steps, each length's root bracketed where the
    distance crosses it (so on the table's assembly branch)."""
    dist = lambda a: float(np.linalg.norm(rot(moving, pivot, a) - base))  # noqa: E731
    out = []
    for L in lengths:
        d0 = dist(0.0)
        if abs(d0 - L) < 1e-12:
            out.append(0.0)
            continue
        step = 2e-3 if dist(2e-3) - d0 > 0 else -2e-3
        if L < d0:
            step = -step
        a = 0.0
        while (dist(a + step) - L) * (dist(a) - L) > 0:
            a += step
            assert abs(a) < 2 * math.pi, "the stroke cannot be reached"
        out.append(brentq(lambda x: dist(x) - L, min(a, a + step), max(a, a + step), xtol=1e-13))
    return np.array(out)


def angle(u, v):
    """Angle [deg] between u and v, from the nearer of 0 and 180 deg."""
    c = float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))
    g = math.degrees(math.acos(max(-1.0, min(1.0, c))))
    return min(g, 180.0 - g)


def lever(pivot, a, b):
    """Distance [m] of ``pivot`` from the line a-b."""
    u, w = b - a, pivot - a
    return abs(u[0] * w[1] - u[1] * w[0]) / float(np.linalg.norm(u))


def ends(c):
    return (c.min_length, c.max_length)


def test_boom_transmission_angle_and_lever_at_both_stroke_ends(table):
    F, A, E = table.pin("boom_foot"), table.pin("boom_cylinder_base"), table.pin("boom_cylinder_eye")
    lim = table.limits
    for phi in follow(E, F, A, ends(table.cylinders.boom)):
        Ew = rot(E, F, phi)
        assert angle(Ew - A, Ew - F) >= lim.boom_transmission_angle_min - 1e-6
        assert lever(F, A, Ew) >= lim.boom_lever_min - 1e-6
    assert lim.boom_transmission_angle_min == 12.0 and lim.boom_lever_min == 0.45


def test_stick_lever_stays_above_half_its_peak(table):
    T, S, E = table.pin("boom_nose"), table.pin("stick_cylinder_base"), table.pin("stick_cylinder_eye")
    Ls = np.linspace(*ends(table.cylinders.stick), 61)
    levers = [lever(T, S, rot(E, T, a)) for a in follow(E, T, S, Ls)]
    assert min(levers) >= table.limits.stick_lever_ratio_min * max(levers) - 1e-6
    assert table.limits.stick_lever_ratio_min == 0.5


def four_bar(table, Lk):
    """[(G, D, bucket turn [rad])] of the bucket linkage at bucket cylinder lengths Lk, in the stick's
    table-pose coordinates: the side link turns about its pivot until G is L from the cylinder base, then
    the bucket turns about its pivot until the H-link's length closes."""
    K, C3, B = (table.pin(n) for n in ("side_link_pivot", "bucket_cylinder_base", "bucket_pivot"))
    G0, D0 = table.pin("bucket_cylinder_eye"), table.pin("h_link_pin")
    h = float(np.linalg.norm(D0 - G0))
    out, beta = [], 0.0
    for th in follow(G0, K, C3, Lk):
        G = rot(G0, K, th)
        beta = beta + follow(rot(D0, B, beta), B, G, [h])[0]      # continued from the last sample's turn
        out.append((G, rot(D0, B, beta), beta))
    return out


def test_bucket_linkage_never_toggles_and_turns_165_to_180_degrees(table):
    K, B = table.pin("side_link_pivot"), table.pin("bucket_pivot")
    Lk = np.linspace(*ends(table.cylinders.bucket), 61)
    fb = four_bar(table, Lk)
    lim = table.limits
    at_G = [angle(K - G, D - G) for G, D, _ in fb]
    at_D = [angle(G - D, B - D) for G, D, _ in fb]
    assert min(at_G) >= lim.bucket_link_angle_min - 1e-6 and min(at_D) >= lim.bucket_link_angle_min - 1e-6
    turn = math.degrees(max(b for *_, b in fb) - min(b for *_, b in fb))
    assert lim.bucket_rotation[0] - 1e-6 <= turn <= lim.bucket_rotation[1] + 1e-6
    assert tuple(lim.bucket_rotation) == (165.0, 180.0)


def test_stroke_ratio(table):
    for c in (table.cylinders.boom, table.cylinders.stick, table.cylinders.bucket):
        assert c.max_length / c.min_length <= table.limits.stroke_ratio_max + 1e-12
    assert table.limits.stroke_ratio_max == 1.7


def box_points(v, n=5):
    """Points along the outline of a box visual (x, z) at the table's pose, n per edge."""
    lx, lz = v.box[0] / 2, v.box[2] / 2
    s = np.linspace(-1, 1, n)
    loc = np.concatenate([np.c_[s * lx, -lz + 0 * s], np.c_[s * lx, lz + 0 * s], np.c_[-lx + 0 * s, s * lz],
                          np.c_[lx + 0 * s, s * lz]])
    e = math.radians(v.elevation)
    return np.array([v.xyz[0], v.xyz[2]]) + loc @ np.array([[math.cos(e), math.sin(e)], [-math.sin(e), math.cos(e)]])


def inside_margin(p, centre, half, e):
    """Signed distance [m] of p from a rectangle (negative inside)."""
    d = rot(p, centre, -e) - centre
    q = np.abs(d) - half
    return float(np.linalg.norm(np.maximum(q, 0))) if (q > 0).any() else float(q.max())


def test_bucket_clears_boom_cab_and_tracks(table):
    """Over a 7 x 7 x 7 grid of the strokes (not the calibration's 9-point one), the bucket's outline stays
    clear of the boom's boxes, the cab, and the tracks and car body as the front sees them over the side
    (tracks out to |y| + width/2 from the swing axis) and over the front (the car body)."""
    F, T, B = table.pin("boom_foot"), table.pin("boom_nose"), table.pin("bucket_pivot")
    c = table.cylinders
    boom_phi = follow(table.pin("boom_cylinder_eye"), F, table.pin("boom_cylinder_base"), np.linspace(*ends(c.boom), 7))
    stick_psi = follow(table.pin("stick_cylinder_eye"), T, table.pin("stick_cylinder_base"), np.linspace(*ends(c.stick), 7))
    betas = [b for *_, b in four_bar(table, np.linspace(*ends(c.bucket), 7))]
    vis = {body: {v.name: v for v in table.visuals[body]} for body in table.visuals}
    bucket = np.concatenate([box_points(v) for v in table.visuals["bucket"] if v.box is not None] +
                            [[table.pin("tip"), table.pin("h_link_pin"), B]])
    uc = vis["undercarriage"]
    fixed = [(np.array([0.0, uc[n].xyz[2]]) + [sgn * abs(uc[n].xyz[1]), 0], np.array([uc[n].box[1], uc[n].box[2]]) / 2, 0.0)
             for n in ("track_right", "track_left") for sgn in (-1, 1)]
    cb = uc["carbody"]
    fixed.append((np.array([cb.xyz[0], cb.xyz[2]]), np.array([cb.box[0], cb.box[2]]) / 2, 0.0))
    fixed.append((np.array([cb.xyz[1], cb.xyz[2]]), np.array([cb.box[1], cb.box[2]]) / 2, 0.0))
    cab = vis["house"]["cab"]
    fixed.append((np.array([cab.xyz[0], cab.xyz[2]]), np.array([cab.box[0], cab.box[2]]) / 2, 0.0))
    least = np.inf
    for phi in boom_phi:
        booms = [(rot([vis["boom"][n].xyz[0], vis["boom"][n].xyz[2]], F, phi),
                  np.array([vis["boom"][n].box[0], vis["boom"][n].box[2]]) / 2,
                  math.radians(vis["boom"][n].elevation) + phi) for n in ("boom_rear", "boom_front")]
        for psi in stick_psi:
            for beta in betas:
                pts = [rot(rot(rot(p, B, beta), T, psi), F, phi) for p in bucket]
                least = min(least, min(inside_margin(p, *o) for p in pts for o in booms + fixed))
    assert least >= table.limits.clearance_min - 0.01, least


def test_a_limit_binds_where_a_target_asks_more():
    """Asked for 0.8 m more digging depth with the boom cylinder's closed length as the only parameter, the
    calibration stops where the boom's transmission angle at full retraction reaches its 12 degrees (the
    adopted table sits there already): the angle, measured here, is 12 degrees within 0.05 and not below,
    and the depth stays short. With the limit relaxed to 4 degrees (and the lever to 0.1 m) the same
    calibration goes past it and digs deeper: the limit, not the optimiser, is what stopped it."""
    from urdf_dyn.machines.calibration import Checks, calibrate, evaluate
    from urdf_dyn.machines.sizing import Cylinder
    table = load_pin_table(PINS)
    checks = Checks(cylinders={"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
                               "bucket_cyl": Cylinder(0.120, 0.085, 1)}, relief=35e6,
                    fast=dict(wr_n=5, iso_n=(5, 7, 9), iso_zoom=3), full=dict(wr_n=5, iso_n=(5, 7, 9), iso_zoom=3))
    key = "working_range.max_digging_depth_m"
    depth = evaluate(table, checks, (key,))[key]
    names = ["cylinders.boom.min_length"]

    def retracted_angle(t):
        F, A, E = t.pin("boom_foot"), t.pin("boom_cylinder_base"), t.pin("boom_cylinder_eye")
        Ew = rot(E, F, follow(E, F, A, [t.cylinders.boom.min_length])[0])
        return angle(Ew - A, Ew - F)

    held = calibrate(table, {key: depth + 0.8}, names, None, checks, tolerances={key: 0.01}, regularization=0.0,
                     max_evaluations=40)
    assert held.feasible
    assert 12.0 - 1e-6 <= retracted_angle(held.table) <= 12.05
    assert held.after[key] < depth + 0.1
    loose = table.model_copy(update={"limits": table.limits.model_copy(update={"boom_transmission_angle_min": 4.0,
                                                                               "boom_lever_min": 0.1})})
    free = calibrate(loose, {key: depth + 0.8}, names, None, checks, tolerances={key: 0.01}, regularization=0.0,
                     max_evaluations=40)
    assert retracted_angle(free.table) < 11.0
    assert free.after[key] > held.after[key] + 0.1


@pytest.mark.parametrize("frac", [(0.1, 0.9, 0.2), (0.8, 0.3, 0.7), (0.99, 0.99, 0.5)])
def test_plane_geometry_poses_the_front_as_the_closed_loop_model_does(table, frac):
    """The plane geometry the limits and the minimum loading height use (``linkage_limits.FrontPose``)
    against the URDF model built from the same table, assembled by its closed-loop solver (``StrokeMap``:
    Newton on the loop residuals) at the same cylinder lengths: the tip and the four-bar's common pin agree
    to 1e-7 m."""
    import urdf_dyn as ud
    from urdf_dyn.algorithms.kinematics import link_pose
    from urdf_dyn.machines.excavator_builder import excavator_urdf
    from urdf_dyn.machines.linkage_limits import FrontPose
    from urdf_dyn.machines.stroke_map import StrokeMap
    model = ud.load(excavator_urdf(table))
    c = table.cylinders
    specs = (("boom_cyl", c.boom, "boom_cylinder_base", "boom_cylinder_eye"),
             ("stick_cyl", c.stick, "stick_cylinder_base", "stick_cylinder_eye"),
             ("bucket_cyl", c.bucket, "bucket_cylinder_base", "bucket_cylinder_eye"))
    L = [s.min_length + f * (s.max_length - s.min_length) for f, (_, s, _, _) in zip(frac, specs)]
    L0 = [float(np.linalg.norm(table.pin(e) - table.pin(b))) for _, _, b, e in specs]
    sm = StrokeMap(model, model.q_initial(), [n for n, *_ in specs], ("swing",) + tuple(n for n, *_ in specs))
    q = sm.pose({n: Li - L0i for (n, *_), Li, L0i in zip(specs, L, L0)})
    r = float(np.linalg.norm(table.pin("tip") - table.pin("bucket_pivot")))
    tip_model = (link_pose(model, q, "bucket") @ np.array([r, 0.0, 0.0, 1.0]))[[0, 2]]
    eye_model = link_pose(model, q, "h_link")[[0, 2], 3]
    fp = FrontPose(table, *L)
    assert fp.place("bucket", table.pin("tip")[None])[0, 0] == pytest.approx(tip_model, abs=1e-7)
    assert fp.place("stick", fp.G)[0, 0] == pytest.approx(eye_model, abs=1e-7)


def test_with_tip_radius_scales_the_bucket_about_its_pivot(table):
    """The HD bucket's tip radius: the tip lands at the radius on its old line from the pivot; the bucket's
    centre of mass scales about the pivot by the same factor, its inertia by its square; the linkage pin
    (h_link_pin) and the mass stay; a radius <= 0 is refused naming pins.tip."""
    from urdf_dyn.errors import ModelError
    from urdf_dyn.machines.pin_table import with_tip_radius
    B = table.pin("bucket_pivot")
    r0 = float(np.linalg.norm(table.pin("tip") - B))
    big = with_tip_radius(table, 1.25 * r0)
    assert np.linalg.norm(big.pin("tip") - B) == pytest.approx(1.25 * r0, abs=1e-12)
    assert np.allclose((big.pin("tip") - B) / 1.25, table.pin("tip") - B, atol=1e-12)
    assert np.allclose(np.array(big.masses.bucket.com) - B, 1.25 * (np.array(table.masses.bucket.com) - B), atol=1e-12)
    assert np.allclose(big.masses.bucket.inertia, 1.5625 * np.array(table.masses.bucket.inertia), rtol=1e-12)
    assert np.allclose(big.pin("h_link_pin"), table.pin("h_link_pin")) and big.masses.bucket.mass == table.masses.bucket.mass
    with pytest.raises(ModelError, match="pins.tip"):
        with_tip_radius(table, 0.0)
