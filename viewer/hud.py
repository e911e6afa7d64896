"""The heads-up text of the window/GIF viewer (``window.RobotViewer``): the time, speed and state, the joint
values asked for (and actuator forces when shown), per loop its residual, per balancer its pin length and
force; and the labels of the arrows, balancers and open loops placed at their projected points. Functions of
the viewer ``v``.

Needs a current OpenGL context (pyglet) to draw.
"""
from __future__ import annotations

import math

import numpy as np
from pyglet import gl

from .overlay import BALANCER_RGB, residual_rgb

__all__ = ["hud_lines", "project", "draw_text", "TEXT_RGBA", "LINE_H", "FONT_SIZE", "FONT_NAMES"]

TEXT_RGBA = (20, 20, 30, 255)
LINE_H = 13
FONT_SIZE = 9
FONT_NAMES = ("DejaVu Sans Mono", "Courier New", "monospace")


def hud_lines(v):
    """The heads-up text, as (text, rgba) lines."""
    pb, m = v.playback, v.model
    state = "paused" if pb.paused else "playing"
    if len(pb.motion) < 2:
        lines = [(f"{m.name}   pose", TEXT_RGBA)]
    else:
        lines = [(f"{m.name}   t = {pb.time:7.3f} s / {pb.t1:.3f} s   x{pb.speed:g}   {state}"
                  + ("   repeat" if pb.repeat else ""), TEXT_RGBA)]
    acts = {}
    if v.forces is not None and v.flags["actuators"]:
        acts = v.forces.values(pb.index, pins=False)[0]
    q = v.robot.q
    units = {a.name: a.unit for a in (v.forces.actuators if v.forces is not None else ())}
    for name in v.show:
        if name in m.q_names:                 # a position coordinate (a floating base's x … qw included)
            i = m.q_names.index(name)
            s = f"{name:>16s}  q = {q[i]:+9.4f} {m.q_units[i]}"
            if name in acts:
                s += f"   u = {acts[name]:+.4g} {units.get(name, '')}"
            lines.append((s, TEXT_RGBA))
        elif name in acts:
            lines.append((f"{name:>16s}  u = {acts[name]:+.4g} {units.get(name, '')}", TEXT_RGBA))
    if v.flags["actuators"]:
        for name, u in acts.items():
            if name not in v.show:
                lines.append((f"{name:>16s}  u = {u:+.4g} {units.get(name, '')}", TEXT_RGBA))
    if m.loops:
        res = getattr(v, "_residuals", None) or v.robot.loop_residuals()
        lines.append((f"loops: |δ| [m, rad], tolerance {v.loop_tol:g}", TEXT_RGBA))
        for lp in m.loops:
            r = res[lp.name]
            ok = r <= v.loop_tol
            rgb = residual_rgb(r, v.loop_tol)
            col = tuple(int(255 * c * 0.75) for c in rgb) + (255,)
            lines.append((f"{lp.name:>22s}  {r:9.2e}  {'closed' if ok else 'OPEN'}", col))
    if m.balancers and v.flags.get("balancers"):
        lines.append(("balancers: pin length [m], force [N] (+ pushes the pins apart)", TEXT_RGBA))
        col = tuple(int(255 * c * 0.75) for c in BALANCER_RGB) + (255,)
        for s in v.robot.balancers():
            lines.append((f"{s.name:>22s}  L = {s.length:.4f}  F = {s.force:+.4g}", col))
    return lines

def project(v, p):
    """Window pixel coordinates (x, y) of a base-frame point, or None behind the camera."""
    cam = v.scene.camera
    V = v.view_matrix()
    pc = V[:3, :3] @ p + V[:3, 3]
    if pc[2] >= -1e-9:
        return None
    f = 1.0 / math.tan(math.radians(cam.fov[1]) / 2)
    w, h = v.width, v.height
    x = (f * h / w) * pc[0] / -pc[2]
    y = f * pc[1] / -pc[2]
    return (0.5 * (x + 1) * w, 0.5 * (y + 1) * h)

def draw_text(v):
    w, h = v.width, v.height
    placed, boxes = [], []
    cw = 0.62 * 1.3333 * FONT_SIZE
    for p, text, rgba in v._world_labels:
        s = v.project(p)
        if s is None:
            continue
        x, y = int(s[0]) + 6, int(s[1]) + 4
        bw = cw * len(text)
        for _ in range(len(boxes) + 1):  # move down past the labels already placed that it would overlap
            hit = [b for b in boxes if x < b[0] + b[2] and b[0] < x + bw and y < b[1] + LINE_H and b[1] < y + LINE_H]
            if not hit:
                break
            y = min(b[1] for b in hit) - LINE_H
        x = int(max(0, min(x, w - bw)))
        boxes.append((x, y, bw))
        placed.append((x, y, text, rgba))
    lines = v.hud_lines() if v.flags["hud"] else []
    gl.glMatrixMode(gl.GL_PROJECTION)
    gl.glPushMatrix()
    gl.glLoadIdentity()
    gl.glOrtho(0, w, 0, h, -1, 1)
    gl.glMatrixMode(gl.GL_MODELVIEW)
    gl.glPushMatrix()
    gl.glLoadIdentity()
    gl.glPushAttrib(gl.GL_POLYGON_BIT)  # text and its panel stay filled in wireframe mode (key w)
    gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
    gl.glDisable(gl.GL_CULL_FACE)
    if lines:
        line_h = LINE_H
        width = 12 + int(0.62 * 1.3333 * FONT_SIZE * max(len(t) for t, _ in lines))
        gl.glColor4f(1.0, 1.0, 1.0, 0.6)
        gl.glRecti(0, h, min(w, width), h - line_h * len(lines) - 8)
        for k, (text, rgba) in enumerate(lines):
            v.text.add(text, 6, h - 4 - k * line_h, rgba)
    for x, y, text, rgba in placed:
        v.text.add(text, x, y, rgba, anchor_y="bottom")
    v.text.draw()
    gl.glPopAttrib()
    gl.glPopMatrix()
    gl.glMatrixMode(gl.GL_PROJECTION)
    gl.glPopMatrix()
    gl.glMatrixMode(gl.GL_MODELVIEW)

# -- pixels ------------------------------------------------------------------------------------------
