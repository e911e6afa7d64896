"""The overlay of the window/GIF viewer (``window.RobotViewer``), drawn with OpenGL over the shaded robot:
the ground grid, the dig bench, the loop frames and residual segments, the balancers (a line between each
one's pins, labelled with its force), the force arrows (actuator, pin, soil, payload) and the payload's
centroid. Functions of the viewer ``v``; the colours and the loop colouring
are ``overlay``'s, shared with the browser viewer.

Needs a current OpenGL context (pyglet).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
from pyglet import gl

from .balancers import balancer_label
from .overlay import ARROW_RGB, BALANCER_RGB, BENCH_RGBA, PAYLOAD_RGB, nice_step, residual_rgb

__all__ = ["ground_lines", "draw_ground", "draw_bench", "draw_loops", "draw_balancers", "draw_forces", "arrow", "lines",
           "FLAG_OF"]


def ground_lines(v):
    """Vertices (n, 3) float32 of the ground grid's lines: z = 0 of the base frame, under the motion."""
    lo, hi = v._points.min(axis=0), v._points.max(axis=0)
    c = 0.5 * (lo + hi)
    half = 0.75 * max(hi[0] - lo[0], hi[1] - lo[1], 0.5 * v.extent)
    step = nice_step(2 * half)
    n = int(math.ceil(half / step))
    x0, y0 = round(c[0] / step) * step, round(c[1] / step) * step
    z = v.ground_z - 1e-4 * v.extent
    k = np.arange(-n, n + 1) * step
    one = np.ones_like(k)
    segs = [np.stack([x0 + k, y0 - n * step * one, z * one], -1), np.stack([x0 + k, y0 + n * step * one, z * one], -1),
            np.stack([x0 - n * step * one, y0 + k, z * one], -1), np.stack([x0 + n * step * one, y0 + k, z * one], -1)]
    return np.ascontiguousarray(np.stack(segs, 1).reshape(-1, 3), dtype=np.float32)


def draw_ground(v):
    gl.glLineWidth(1.0)
    gl.glColor4f(0.70, 0.72, 0.76, 1.0)
    lines(v._ground, gl.GL_LINES)


def draw_bench(v):
    """The dig bench (``v.bench``: centre (3,), extents (3,)): its top, the soil surface, as a translucent
    brown face with its outline, and its front edges down to its base (depth-tested, so the bucket below
    the surface is hidden as it would be in the ground)."""
    geom = getattr(v, "_bench_geom", None)
    if geom is None or geom[0] is not v.bench:           # the bench's vertices, made once per bench
        c, e = v.bench
        x0, x1, y0, y1 = c[0] - e[0] / 2, c[0] + e[0] / 2, c[1] - e[1] / 2, c[1] + e[1] / 2
        top, base = c[2] + e[2] / 2, c[2] - e[2] / 2
        quad = np.array([(x0, y0, top), (x1, y0, top), (x1, y1, top), (x0, y1, top)], np.float32)
        edges = np.array([(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (top, base)], np.float32)
        geom = v._bench_geom = (v.bench, quad, edges, tuple(float(x) for x in 0.7 * np.array(BENCH_RGBA[:3])))
    _, quad, edges, outline = geom
    gl.glEnable(gl.GL_BLEND)
    gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
    gl.glColor4f(*BENCH_RGBA)
    lines(quad, gl.GL_QUADS)
    gl.glColor4f(*outline, 1.0)
    gl.glLineWidth(1.5)
    lines(quad, gl.GL_LINE_LOOP)
    lines(edges, gl.GL_LINES)


_AXES_RGBA = np.array([(0.85, 0.30, 0.25, 1.0), (0.30, 0.70, 0.30, 1.0), (0.25, 0.35, 0.90, 1.0)], np.float32)


def draw_loops(v):
    res = v.robot.loop_residuals()
    v._residuals = res
    L = 0.06 * v.extent
    frames = v.robot.loop_frames()
    axes = getattr(v, "_axes_rgba", None)
    if axes is None or len(axes) != 6 * len(frames):      # per vertex: x, y, z axis colours, each line twice
        axes = v._axes_rgba = np.repeat(np.tile(_AXES_RGBA, (len(frames), 1)), 2, axis=0)
    for which, (length, width) in enumerate(((L, 2.5), (0.6 * L, 1.5))):  # triads of Fp (long), Fs (short)
        T = np.array([f[1 + which] for f in frames])                      # (n, 4, 4)
        o = T[:, None, :3, 3]
        tips = o + length * T[:, :3, :3].transpose(0, 2, 1)               # (n, 3 axes, 3)
        verts = np.stack([np.broadcast_to(o, tips.shape), tips], 2).reshape(-1, 3)
        gl.glLineWidth(width)
        lines(verts, gl.GL_LINES, axes)
    ends = np.array([(Fp[:3, 3], Fs[:3, 3]) for _, Fp, Fs in frames]).reshape(-1, 3)
    rgb = np.array([(*residual_rgb(res[lp.name], v.loop_tol), 1.0) for lp, _, _ in frames], np.float32)
    rgb = np.repeat(rgb, 2, axis=0)
    gl.glLineWidth(4.0)
    lines(ends, gl.GL_LINES, rgb)
    gl.glPointSize(9.0)
    lines(ends, gl.GL_POINTS, rgb)
    gaps = v.robot.gap_labels(v.loop_tol)     # each open loop: its gap [m, rad] and the nearest fix of its origins
    for lp, Fp, Fs in frames:
        if lp.name in gaps:
            mid = 0.5 * (Fp[:3, 3] + Fs[:3, 3])
            for part in gaps[lp.name].split("; "):      # the size, then the fix: one line each
                v._world_labels.append((mid, part, (200, 0, 0, 255)))


BALANCER_LABEL_RGBA = tuple(int(255 * c * 0.8) for c in BALANCER_RGB) + (255,)


def draw_balancers(v):
    """Each balancer of the model (``v.robot.balancers()``, posed from the scene's body poses) as a pink
    line between its pins with a dot at each pin, labelled at its middle with its name and force [N]
    (+ pushes the pins apart), as the arrows are labelled."""
    states = v.robot.balancers()
    if not states:
        return
    ends = np.array([(s.a, s.b) for s in states], np.float32).reshape(-1, 3)
    gl.glColor4f(*BALANCER_RGB, 1.0)
    gl.glLineWidth(5.0)
    lines(ends, gl.GL_LINES)
    gl.glPointSize(10.0)
    lines(ends, gl.GL_POINTS)
    for s in states:
        v._world_labels.append((0.5 * (s.a + s.b), balancer_label(s), BALANCER_LABEL_RGBA))


FLAG_OF = {"actuator": "actuators", "pin": "pins", "soil": "loads", "payload": "loads"}


def draw_forces(v):
    """The arrows of the kinds switched on (``v.flags``: actuators, pins, loads = soil and payload), each
    0.25 extent long at the largest value of its kind (``v._fmax``: fixed for a run, else the largest seen so
    far), labelled with its value; the payload's centroid as a dot."""
    k = v.playback.index
    T = v.robot.body_T
    L = 0.25 * v.extent
    kinds = tuple(kind for kind, flag in FLAG_OF.items() if v.flags.get(flag))
    if getattr(v.forces, "run", None) is not None and not v._scaled.issuperset(kinds):
        new = [kind for kind in kinds if kind not in v._scaled]       # a run: its scales of the kinds drawn
        v._fmax.update(v.forces.maxima(kinds=new))
        v._scaled.update(new)
    for a in v.forces.arrows(k, T, kinds):
        if not v.flags.get(FLAG_OF[a.kind]):
            continue
        key = (a.kind, a.unit)
        v._fmax[key] = max(v._fmax.get(key, 0.0), abs(a.value))
        ref = v._fmax[key]
        if ref <= 0 or abs(a.value) < 1e-9 * ref:
            continue
        rgb = ARROW_RGB[a.kind]
        tip = a.origin + L * abs(a.value) / ref * a.direction
        arrow(v, a.origin, tip, rgb, double=a.torque)
        unit = a.unit.replace(" ", "\u00b7")
        v._world_labels.append((tip, f"{a.label} {a.value:.3g} {unit}", tuple(int(255 * c * 0.8) for c in rgb) + (255,)))
    p = v.forces.payload_point(T) if v.flags.get("loads") else None
    if p is not None and float(v.forces.run.payload_mass[k]) > 0:
        gl.glPointSize(12.0)
        gl.glColor4f(*PAYLOAD_RGB, 1.0)
        lines(p[None], gl.GL_POINTS)


def arrow(v, p0, p1, rgb, double=False):
    """A line arrow from p0 to p1 (3,) in colour ``rgb``; a moment vector gets a double head."""
    d = p1 - p0
    n = np.linalg.norm(d)
    if n <= 0:
        return
    u = d / n
    t = _cross(u, (0.0, 0.0, 1.0))
    if np.linalg.norm(t) < 1e-6:
        t = _cross(u, (1.0, 0.0, 0.0))
    t /= np.linalg.norm(t)
    head = min(0.25 * n, 0.03 * v.extent)
    gl.glLineWidth(3.0)
    gl.glColor4f(*rgb, 1.0)
    gl.glBegin(gl.GL_LINES)      # immediate mode: vertex arrays colour the wide lines' pixels differently (±1)
    gl.glVertex3f(*p0)
    gl.glVertex3f(*p1)
    for back in ((head,) if not double else (head, 2 * head)):
        b = p1 - back * u
        for s in (1, -1):
            gl.glVertex3f(*(p1 - (back - head) * u))
            gl.glVertex3f(*(b + s * 0.5 * head * t))
    gl.glEnd()


def _cross(a, b):
    """``np.cross(a, b)`` of two 3-vectors, the same products and differences in the same order (the same
    bits), without numpy's overhead for one pair."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def lines(verts, mode, rgba=None):
    """Draw vertices (n, 3) as ``mode`` (GL_LINES, GL_POINTS, ...) from client memory, in one colour (the
    current one) or one per vertex (``rgba`` (n, 4) float)."""
    verts = np.ascontiguousarray(verts, dtype=np.float32)
    gl.glPushClientAttrib(gl.GL_CLIENT_VERTEX_ARRAY_BIT)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
    gl.glEnableClientState(gl.GL_VERTEX_ARRAY)
    gl.glVertexPointer(3, gl.GL_FLOAT, 0, verts.ctypes.data_as(ctypes.c_void_p))
    if rgba is not None:
        rgba = np.ascontiguousarray(rgba, dtype=np.float32)
        gl.glEnableClientState(gl.GL_COLOR_ARRAY)
        gl.glColorPointer(4, gl.GL_FLOAT, 0, rgba.ctypes.data_as(ctypes.c_void_p))
    gl.glDrawArrays(mode, 0, len(verts))
    gl.glPopClientAttrib()
    if rgba is not None:  # a colour array leaves the current colour undefined
        gl.glColor4f(1.0, 1.0, 1.0, 1.0)
