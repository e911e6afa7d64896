"""What every viewer draws over the robot, without OpenGL: the colours of the layers, the loop
segment's colour by residual, and the camera fit (shared by the window/GIF viewer, ``window``, and the
browser viewer, ``webscene``).

Colours (RGB, 0..1): actuator forces orange, pin (loop-joint) loads cyan, the soil's force on the cutting
edge purple, the payload's weight dark green; balancers (the springs between two pins) pink; loop segments
green (closed) → yellow (half the tolerance) → red (at or over the tolerance).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["residual_rgb", "view_rotation", "look_at_fit", "nice_step", "ARROW_RGB", "ACTUATOR_RGB", "PIN_RGB",
           "SOIL_RGB", "PAYLOAD_RGB", "BALANCER_RGB", "BENCH_RGBA", "GREEN", "YELLOW", "RED", "bench_box"]

GREEN = np.array([0.0, 0.80, 0.0])
YELLOW = np.array([1.0, 0.85, 0.0])
RED = np.array([1.0, 0.0, 0.0])
ACTUATOR_RGB = (1.0, 0.45, 0.0)
PIN_RGB = (0.0, 0.65, 0.85)
SOIL_RGB = (0.45, 0.15, 0.85)
PAYLOAD_RGB = (0.10, 0.50, 0.20)
BALANCER_RGB = (0.90, 0.10, 0.55)
BENCH_RGBA = (0.59, 0.43, 0.27, 0.55)
ARROW_RGB = {"actuator": ACTUATOR_RGB, "pin": PIN_RGB, "soil": SOIL_RGB, "payload": PAYLOAD_RGB}


def residual_rgb(residual, tol):
    """Colour (3,) of a loop segment: green at 0, yellow at tol/2, red at and over tol. (Clipped by
    Python's min/max, which give np.clip's value for a number, NaN included, in 0.3 µs instead of 3 µs: the
    GIF and the recording ask it 16 times a frame.)"""
    f = min(max(float(residual / tol), 0.0), 1.0) if tol > 0 else 1.0
    if f < 0.5:
        return GREEN + (YELLOW - GREEN) * (2 * f)
    return YELLOW + (RED - YELLOW) * (2 * f - 1)


def view_rotation(azimuth=-60.0, elevation=20.0):
    """Camera rotation (4x4) looking at the origin from ``azimuth`` (deg, about z from +x) and
    ``elevation`` (deg above the x-y plane), z up (REP-103)."""
    a, e = math.radians(azimuth), math.radians(elevation)
    back = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])  # camera +z
    x = np.cross([0.0, 0.0, 1.0], back)
    x /= np.linalg.norm(x)
    y = np.cross(back, x)
    R = np.eye(4)
    R[:3, 0], R[:3, 1], R[:3, 2] = x, y, back
    return R


def look_at_fit(points, fov_deg, rotation, pad=1.05, top=0.0):
    """Camera pose (4x4) with ``rotation`` that keeps every point in view (trimesh's look_at), in the part
    of the image below its top fraction ``top`` (left free for text)."""
    from trimesh.scene.cameras import look_at
    fx, fy = fov_deg
    ty = math.tan(math.radians(fy) / 2)
    fy_fit = math.degrees(2 * math.atan(ty * (1.0 - top)))
    T = look_at(points, (fx, fy_fit), rotation=rotation, pad=pad)
    # distance from the camera to the centre of the points, along the view direction
    c = 0.5 * (points.min(axis=0) + points.max(axis=0))
    d = float(np.dot(T[:3, 3] - c, T[:3, 2]))
    T[:3, 3] += T[:3, 1] * d * ty * top  # move the camera up: the points move down by `top` (NDC units / 2)
    # the shift above is exact only at the centre's depth: points nearer the camera move further and can
    # leave the picture at the bottom; step back along the view axis until every point is inside
    tx = math.tan(math.radians(fx) / 2)
    for _ in range(40):
        pc = (points - T[:3, 3]) @ T[:3, :3]           # camera frame: x right, y up, -z forward
        z = np.maximum(-pc[:, 2], 1e-9)
        x, y = pc[:, 0] / (z * tx), pc[:, 1] / (z * ty)
        if np.all(np.abs(x) <= 1.0) and np.all(y >= -1.0) and np.all(y <= 1.0 - 2.0 * top):
            break
        T[:3, 3] += T[:3, 2] * 0.05 * d
    return T


def nice_step(span):
    """A round grid step (1, 2 or 5 × 10^k) giving about 8 cells over ``span``."""
    raw = span / 8.0
    p = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 5, 10):
        if raw <= m * p:
            return m * p
    return 10 * p


def bench_box(height, points, edge_points=None):
    """(centre (3,), extents (3,)) of the dig bench drawn under the digging: a 1 m slab whose top is at
    ``height`` [m], under the cutting edge's positions ``edge_points`` (n, 3) while it cuts (else under
    every point of the motion ``points`` in front of the machine, x > 0), 2 m of margin around them."""
    P = np.asarray(edge_points if edge_points is not None and len(edge_points) else points, float)
    if edge_points is None or not len(edge_points):
        P = P[P[:, 0] > 0] if np.any(P[:, 0] > 0) else P
    lo, hi = P[:, :2].min(axis=0) - 2.0, P[:, :2].max(axis=0) + 2.0
    c = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, height - 0.5])
    return c, np.array([hi[0] - lo[0], hi[1] - lo[1], 1.0])
