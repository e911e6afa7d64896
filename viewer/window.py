"""The player window: trimesh's pyglet SceneViewer with urdf_dyn's poses, the loop-closure overlay, force
arrows and a heads-up text. The same class renders offscreen (EGL) for export.

Import this module only after ``urdf_dyn_viewer.backend.select`` (pyglet fixes its backend at import).

Overlay, drawn over the shaded robot (no depth test: debugging marks stay visible):
- per loop joint, triads of Fp (long, solid) and Fs (short), dots at both origins, and a segment between
  the origins coloured by the residual ‖δ‖: green (closed) → yellow (half the tolerance) → red (at or
  over ``loop_tol``); open loops get a label with their residual next to the segment;
- actuator force arrows (orange; a moment is drawn with a double head) and pin-force arrows (cyan),
  lengths proportional to the largest value seen so far of the same unit, labelled with their value;
- the heads-up text: time, speed, state, the joint values asked for (and actuator forces when shown), and
  per loop its residual.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
import pyglet
from pyglet import gl
from trimesh.viewer.windowed import SceneViewer

from .meshes import BodyMeshes, gl_matrices
from .overlay import (ACTUATOR_RGB, ARROW_RGB, BENCH_RGBA, PIN_RGB, look_at_fit, nice_step,  # noqa: F401
                      residual_rgb, view_rotation)
from .scene import RobotScene
from .text import GlyphText

__all__ = ["RobotViewer", "KEYS_HELP", "residual_rgb", "look_at_fit", "play"]

BACKGROUND = (0.93, 0.94, 0.96, 1.0)
TEXT_RGBA = (20, 20, 30, 255)
LINE_H = 13
FONT_SIZE = 9
FONT_NAMES = ("DejaVu Sans Mono", "Courier New", "monospace")

KEYS_HELP = """keys:
  space      play / pause            right/left  step one sample (pauses)
  ] / [      +1 s / -1 s             home/end    start / end
  0 .. 9     jump to 0 % .. 90 %     + / -       speed x2 / /2
  r          repeat on/off           l           loop frames and residuals on/off
  t          actuator-force arrows   p           pin (constraint) force arrows
  j          heads-up text on/off    z           reset the camera
  mouse      drag rotate, right-drag zoom, middle-drag pan, wheel zoom
  w c g a    wireframe, culling, grid, axes (trimesh)     q / esc  quit
  h          print this help"""



class RobotViewer(SceneViewer):
    """A pyglet window (or EGL pbuffer) showing a RobotScene posed along a Playback.

    Args:
        robot: RobotScene.  playback: Playback.  forces: ForceSource or None.
        size: (width, height) [px].  visible: open a visible window.
        show: joint / actuator names whose values the text lists (default: the independent or actuated
            coordinates of a closed-loop model, else the joints; at most 7).
        loops, actuator_arrows, pin_arrows, hud: initial state of the toggles.
        loop_tol: residual [m, rad] at which a loop segment is fully red.
        camera_points: points (n, 3) the camera is fitted to (default: the visuals over the motion).
    """

    def __init__(self, robot: RobotScene, playback, forces=None, size=(640, 480), visible=True, show=None,
                 loops=True, actuator_arrows=False, pin_arrows=False, hud=True, loop_tol=1e-3,
                 camera_points=None, azimuth=-60.0, elevation=20.0, caption=None, samples=0):
        self.robot = robot
        self.model = robot.model
        self.playback = playback
        self.forces = forces
        self.loop_tol = float(loop_tol)
        self.flags = {"loops": bool(loops), "actuators": bool(actuator_arrows), "pins": bool(pin_arrows),
                      "hud": bool(hud)}
        m = self.model
        if show:
            self.show = list(show)
        else:
            from .playback import demo_coordinates
            self.show = list(demo_coordinates(m))[:7]
        self.frames_drawn = 0
        self.max_frames = None   # play(): close after this many frames (tests), saving `screenshot` first
        self.screenshot = None
        self._world_labels = []
        self._fmax = {}
        w, h = int(size[0]), int(size[1])
        scene = robot.scene
        scene.lights = []  # lighting is set in init_gl (eye-space key and fill lights)
        fov_y = 40.0
        fov_x = math.degrees(2 * math.atan(math.tan(math.radians(fov_y) / 2) * w / h))
        scene.camera.fov = (fov_x, fov_y)
        scene.camera.resolution = (w, h)
        pts = camera_points if camera_points is not None else robot.points(playback.motion.q[:: max(1, len(playback.motion) // 40)])
        self._points = np.asarray(pts, float)
        lo, hi = self._points.min(axis=0), self._points.max(axis=0)
        self.extent = float(np.linalg.norm(hi - lo)) or 1.0
        self.ground_z = 0.0  # the ground grid lies in the base frame's z = 0 plane (REP-103: z up)
        ground = np.array([[lo[0], lo[1], self.ground_z], [hi[0], hi[1], self.ground_z]])
        # keep the robot out from under the heads-up text: fit it into the part of the image below the text
        n_lines = 1 + len(self.show) + (1 + len(m.loops) if m.loops else 0)
        top = min(0.4, (LINE_H * n_lines + 8) / h) if hud else 0.0
        scene.camera_transform = look_at_fit(np.vstack([self._points, ground]), (fov_x, fov_y), view_rotation(azimuth, elevation),
                                             top=top)
        scene.camera.z_near = self.extent * 1e-3
        scene.camera.z_far = self.extent * 100
        cfg = [gl.Config(double_buffer=True, depth_size=24, red_size=8, green_size=8, blue_size=8, alpha_size=8,
                         sample_buffers=1, samples=int(samples))] if samples else []
        cfg.append(gl.Config(double_buffer=True, depth_size=24, red_size=8, green_size=8, blue_size=8, alpha_size=8))
        cfg.append(gl.Config(double_buffer=True, depth_size=16))
        err = None
        for conf in cfg:
            try:
                super().__init__(scene, smooth=False, visible=visible, resolution=(w, h), start_loop=False,
                                 window_conf=conf, background=BACKGROUND, caption=caption or f"urdf-dyn view: {m.name}",
                                 offset_lines=False, line_settings={"line_width": 2, "point_size": 4},
                                 flags={"cull": False})
                err = None
                break
            except pyglet.window.NoSuchConfigException as e:
                err = e
        if err is not None:
            raise err
        self.switch_to()
        textured = {k: (self.vertex_list[v.name], self.textures.get(v.name)) for k, v in enumerate(robot.visuals)
                    if v.name in self.vertex_list}
        self.meshes = BodyMeshes(robot, textured)
        self.text = GlyphText(FONT_NAMES, FONT_SIZE)
        self._ground = self._ground_lines()
        self.on_resize(w, h)  # headless windows never receive on_resize: set the perspective ourselves
        self.set_time(playback.time)

    # -- GL state --------------------------------------------------------------------------------------
    def add_geometry(self, name, geometry, **kwargs):
        """trimesh's upload of one geometry, kept for textured meshes only: ``BodyMeshes`` holds the rest."""
        if getattr(getattr(geometry, "visual", None), "kind", None) == "texture":
            super().add_geometry(name, geometry, **kwargs)

    def init_gl(self):
        super().init_gl()
        gl.glEnable(gl.GL_NORMALIZE)  # scaled nodes otherwise render white (DESIGN §6)
        gl.glLightModeli(gl.GL_LIGHT_MODEL_TWO_SIDE, gl.GL_TRUE)
        gl.glLightModelfv(gl.GL_LIGHT_MODEL_AMBIENT, (gl.GLfloat * 4)(0.25, 0.25, 0.25, 1.0))
        gl.glMaterialfv(gl.GL_FRONT_AND_BACK, gl.GL_SPECULAR, (gl.GLfloat * 4)(0.15, 0.15, 0.15, 1.0))
        gl.glMaterialf(gl.GL_FRONT_AND_BACK, gl.GL_SHININESS, 20.0)
        gl.glMatrixMode(gl.GL_MODELVIEW)
        gl.glPushMatrix()
        gl.glLoadIdentity()  # light positions in eye space: a key light above right, a fill from the left
        for n, (pos, diff) in enumerate((((0.4, 0.6, 1.0, 0.0), 0.75), ((-0.8, -0.2, 0.5, 0.0), 0.30))):
            L = gl.GL_LIGHT0 + n
            gl.glEnable(L)
            gl.glLightfv(L, gl.GL_POSITION, (gl.GLfloat * 4)(*pos))
            gl.glLightfv(L, gl.GL_DIFFUSE, (gl.GLfloat * 4)(diff, diff, diff, 1.0))
            gl.glLightfv(L, gl.GL_SPECULAR, (gl.GLfloat * 4)(0.3 * diff, 0.3 * diff, 0.3 * diff, 1.0))
            gl.glLightfv(L, gl.GL_AMBIENT, (gl.GLfloat * 4)(0.0, 0.0, 0.0, 1.0))
        gl.glPopMatrix()

    # -- state -----------------------------------------------------------------------------------------
    def set_time(self, time=None):
        """Pose the robot at the playback's time (or ``time`` [s])."""
        if time is not None:
            self.playback.seek(time)
        self.robot.set_q(self.playback.q)

    def reset_scales(self):
        """Forget the largest force seen so far (arrow lengths are scaled by it)."""
        self._fmax = {}

    def tick(self, dt):
        """Advance the clock by wall-clock ``dt`` [s] and pose the robot (the player's scheduled call)."""
        self.playback.advance(dt)
        self.robot.set_q(self.playback.q)

    # -- drawing -----------------------------------------------------------------------------------------
    def on_draw(self):
        self._draw_scene()
        self._world_labels = []
        gl.glDisable(gl.GL_LIGHTING)
        gl.glDisable(gl.GL_TEXTURE_2D)
        self._draw_ground()
        gl.glDisable(gl.GL_DEPTH_TEST)
        if self.flags["loops"] and self.model.loops:
            self._draw_loops()
        if self.forces is not None and (self.flags["actuators"] or self.flags["pins"]):
            self._draw_forces()
        if self.flags["hud"] or self._world_labels:
            self._draw_text()
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glEnable(gl.GL_LIGHTING)
        gl.glLineWidth(self.line_settings["line_width"])
        self.frames_drawn += 1
        if self.max_frames is not None and self.frames_drawn == self.max_frames:
            if self.screenshot is not None:  # the back buffer, before the event loop flips it
                import imageio.v2 as imageio
                imageio.imwrite(self.screenshot, self.read_pixels())
            pyglet.clock.schedule_once(lambda dt: self.close(), 0.0)

    def _draw_scene(self):
        """The robot (what trimesh's SceneViewer.on_draw draws, from static buffers: ``BodyMeshes``),
        trimesh's world axis and grid when toggled on."""
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glLoadIdentity()
        gl.glMultMatrixf((gl.GLfloat * 16)(*gl_matrices(np.linalg.inv(self.scene.camera_transform)[None])[0]))
        if self._axis and not self.view["axis"] == "without_world":
            self._axis.draw(mode=gl.GL_TRIANGLES)
        if self._grid:
            self._grid.draw(mode=gl.GL_LINES)
        robot = self.robot
        self.meshes.draw(robot.body_T, robot.visual_T, cull=bool(self.view.get("cull")))
        if self._axis and self.view["axis"] in ("all", "without_world"):
            for T in gl_matrices(robot.visual_T):
                gl.glPushMatrix()
                gl.glMultMatrixf((gl.GLfloat * 16)(*T))
                self._axis.draw(mode=gl.GL_TRIANGLES)
                gl.glPopMatrix()

    def _ground_lines(self):
        """Vertices (n, 3) float32 of the ground grid's lines: z = 0 of the base frame, under the motion."""
        lo, hi = self._points.min(axis=0), self._points.max(axis=0)
        c = 0.5 * (lo + hi)
        half = 0.75 * max(hi[0] - lo[0], hi[1] - lo[1], 0.5 * self.extent)
        step = nice_step(2 * half)
        n = int(math.ceil(half / step))
        x0, y0 = round(c[0] / step) * step, round(c[1] / step) * step
        z = self.ground_z - 1e-4 * self.extent
        k = np.arange(-n, n + 1) * step
        one = np.ones_like(k)
        segs = [np.stack([x0 + k, y0 - n * step * one, z * one], -1), np.stack([x0 + k, y0 + n * step * one, z * one], -1),
                np.stack([x0 - n * step * one, y0 + k, z * one], -1), np.stack([x0 + n * step * one, y0 + k, z * one], -1)]
        return np.ascontiguousarray(np.stack(segs, 1).reshape(-1, 3), dtype=np.float32)

    def _draw_ground(self):
        gl.glLineWidth(1.0)
        gl.glColor4f(0.70, 0.72, 0.76, 1.0)
        _lines(self._ground, gl.GL_LINES)

    def _draw_loops(self):
        res = self.robot.loop_residuals()
        self._residuals = res
        L = 0.06 * self.extent
        frames = self.robot.loop_frames()
        axes_rgb = np.array([(0.85, 0.30, 0.25, 1.0), (0.30, 0.70, 0.30, 1.0), (0.25, 0.35, 0.90, 1.0)], np.float32)
        for which, (length, width) in enumerate(((L, 2.5), (0.6 * L, 1.5))):  # triads of Fp (long), Fs (short)
            T = np.array([f[1 + which] for f in frames])                      # (n, 4, 4)
            o = T[:, None, :3, 3]
            tips = o + length * T[:, :3, :3].transpose(0, 2, 1)               # (n, 3 axes, 3)
            v = np.stack([np.broadcast_to(o, tips.shape), tips], 2).reshape(-1, 3)
            gl.glLineWidth(width)
            _lines(v, gl.GL_LINES, np.repeat(np.tile(axes_rgb, (len(frames), 1)), 2, axis=0))
        ends = np.array([(Fp[:3, 3], Fs[:3, 3]) for _, Fp, Fs in frames]).reshape(-1, 3)
        rgb = np.array([(*residual_rgb(res[lp.name], self.loop_tol), 1.0) for lp, _, _ in frames], np.float32)
        rgb = np.repeat(rgb, 2, axis=0)
        gl.glLineWidth(4.0)
        _lines(ends, gl.GL_LINES, rgb)
        gl.glPointSize(9.0)
        _lines(ends, gl.GL_POINTS, rgb)
        for lp, Fp, Fs in frames:
            if res[lp.name] > self.loop_tol:
                mid = 0.5 * (Fp[:3, 3] + Fs[:3, 3])
                self._world_labels.append((mid, f"{lp.name}: |δ| = {res[lp.name]:.3g}", (200, 0, 0, 255)))

    def _draw_forces(self):
        k = self.playback.index
        arrows = self.forces.arrows(k, self.robot.body_T)
        L = 0.25 * self.extent
        for a in arrows:
            if a.kind == "actuator" and not self.flags["actuators"]:
                continue
            if a.kind == "pin" and not self.flags["pins"]:
                continue
            key = (a.kind, a.unit)
            self._fmax[key] = max(self._fmax.get(key, 0.0), abs(a.value))
            ref = self._fmax[key]
            if ref <= 0 or abs(a.value) < 1e-9 * ref:
                continue
            length = L * abs(a.value) / ref
            rgb = ACTUATOR_RGB if a.kind == "actuator" else PIN_RGB
            tip = a.origin + length * a.direction
            self._arrow(a.origin, tip, rgb, double=a.torque)
            unit = a.unit.replace(" ", "\u00b7")
            self._world_labels.append((tip, f"{a.label} {a.value:.3g} {unit}",
                                       tuple(int(255 * c * 0.8) for c in rgb) + (255,)))

    def _arrow(self, p0, p1, rgb, double=False):
        d = p1 - p0
        n = np.linalg.norm(d)
        if n <= 0:
            return
        u = d / n
        t = np.cross(u, [0.0, 0.0, 1.0])
        if np.linalg.norm(t) < 1e-6:
            t = np.cross(u, [1.0, 0.0, 0.0])
        t /= np.linalg.norm(t)
        head = min(0.25 * n, 0.03 * self.extent)
        gl.glLineWidth(3.0)
        gl.glColor4f(*rgb, 1.0)
        gl.glBegin(gl.GL_LINES)
        gl.glVertex3f(*p0)
        gl.glVertex3f(*p1)
        for back in ((head,) if not double else (head, 2 * head)):
            b = p1 - back * u
            for s in (1, -1):
                gl.glVertex3f(*(p1 - (back - head) * u))
                gl.glVertex3f(*(b + s * 0.5 * head * t))
        gl.glEnd()

    # -- text --------------------------------------------------------------------------------------------
    def hud_lines(self):
        """The heads-up text, as (text, rgba) lines."""
        pb, m = self.playback, self.model
        state = "paused" if pb.paused else "playing"
        if len(pb.motion) < 2:
            lines = [(f"{m.name}   pose", TEXT_RGBA)]
        else:
            lines = [(f"{m.name}   t = {pb.time:7.3f} s / {pb.t1:.3f} s   x{pb.speed:g}   {state}"
                      + ("   repeat" if pb.repeat else ""), TEXT_RGBA)]
        acts = {}
        if self.forces is not None and self.flags["actuators"]:
            acts = self.forces.values(pb.index)[0]
        q = self.robot.q
        units = {a.name: a.unit for a in (self.forces.actuators if self.forces is not None else ())}
        for name in self.show:
            if name in m.joint_names:
                i = m.joint_index(name)
                u = "m" if m.joint_types[i] == "prismatic" else "rad"
                s = f"{name:>16s}  q = {q[i]:+9.4f} {u}"
                if name in acts:
                    s += f"   u = {acts[name]:+.4g} {units.get(name, '')}"
                lines.append((s, TEXT_RGBA))
            elif name in acts:
                lines.append((f"{name:>16s}  u = {acts[name]:+.4g} {units.get(name, '')}", TEXT_RGBA))
        if self.flags["actuators"]:
            for name, u in acts.items():
                if name not in self.show:
                    lines.append((f"{name:>16s}  u = {u:+.4g} {units.get(name, '')}", TEXT_RGBA))
        if m.loops:
            res = getattr(self, "_residuals", None) or self.robot.loop_residuals()
            lines.append((f"loops: |δ| [m, rad], tolerance {self.loop_tol:g}", TEXT_RGBA))
            for lp in m.loops:
                r = res[lp.name]
                ok = r <= self.loop_tol
                rgb = residual_rgb(r, self.loop_tol)
                col = tuple(int(255 * c * 0.75) for c in rgb) + (255,)
                lines.append((f"{lp.name:>22s}  {r:9.2e}  {'closed' if ok else 'OPEN'}", col))
        return lines

    def project(self, p):
        """Window pixel coordinates (x, y) of a base-frame point, or None behind the camera."""
        cam = self.scene.camera
        V = np.linalg.inv(self.scene.camera_transform)
        pc = V[:3, :3] @ p + V[:3, 3]
        if pc[2] >= -1e-9:
            return None
        f = 1.0 / math.tan(math.radians(cam.fov[1]) / 2)
        w, h = self.width, self.height
        x = (f * h / w) * pc[0] / -pc[2]
        y = f * pc[1] / -pc[2]
        return (0.5 * (x + 1) * w, 0.5 * (y + 1) * h)

    def _draw_text(self):
        w, h = self.width, self.height
        placed, boxes = [], []
        cw = 0.62 * 1.3333 * FONT_SIZE
        for p, text, rgba in self._world_labels:
            s = self.project(p)
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
        lines = self.hud_lines() if self.flags["hud"] else []
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
                self.text.add(text, 6, h - 4 - k * line_h, rgba)
        for x, y, text, rgba in placed:
            self.text.add(text, x, y, rgba, anchor_y="bottom")
        self.text.draw()
        gl.glPopAttrib()
        gl.glPopMatrix()
        gl.glMatrixMode(gl.GL_PROJECTION)
        gl.glPopMatrix()
        gl.glMatrixMode(gl.GL_MODELVIEW)

    # -- pixels ------------------------------------------------------------------------------------------
    def render(self):
        """Draw one frame and return its pixels (height, width, 3) uint8, top row first."""
        self.switch_to()
        self.on_draw()
        return self.read_pixels()

    def read_pixels(self):
        """The frame's pixels (height, width, 3) uint8 RGB, top row first."""
        w, h = self.get_framebuffer_size() if hasattr(self, "get_framebuffer_size") else (self.width, self.height)
        out = np.empty((h, w, 3), np.uint8)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        gl.glBindBuffer(gl.GL_PIXEL_PACK_BUFFER, 0)
        gl.glReadPixels(0, 0, w, h, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, out.ctypes.data_as(ctypes.c_void_p))
        return out[::-1].copy()

    def read_bgra(self):
        """The frame's pixels (height, width, 4) uint8 in OpenGL's order (bottom row first) and in B, G, R, A
        order: the framebuffer's own layout, read without conversion (4× faster than RGB on llvmpipe)."""
        w, h = self.get_framebuffer_size() if hasattr(self, "get_framebuffer_size") else (self.width, self.height)
        out = np.empty((h, w, 4), np.uint8)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 4)
        gl.glBindBuffer(gl.GL_PIXEL_PACK_BUFFER, 0)
        gl.glReadPixels(0, 0, w, h, gl.GL_BGRA, gl.GL_UNSIGNED_BYTE, out.ctypes.data_as(ctypes.c_void_p))
        return out

    # -- keys ----------------------------------------------------------------------------------------------
    def on_key_press(self, symbol, modifiers):
        k = pyglet.window.key
        pb = self.playback
        if symbol == k.SPACE:
            pb.toggle_pause()
        elif symbol == k.RIGHT:
            pb.step(+1)
        elif symbol == k.LEFT:
            pb.step(-1)
        elif symbol == k.BRACKETRIGHT:
            pb.seek(pb.time + 1.0)
        elif symbol == k.BRACKETLEFT:
            pb.seek(pb.time - 1.0)
        elif symbol == k.HOME:
            pb.seek(pb.t0)
        elif symbol == k.END:
            pb.seek(pb.t1)
        elif k._0 <= symbol <= k._9:
            pb.seek_fraction((symbol - k._0) / 10.0)
        elif symbol in (k.PLUS, k.EQUAL, k.NUM_ADD):
            pb.scale_speed(2.0)
        elif symbol in (k.MINUS, k.NUM_SUBTRACT):
            pb.scale_speed(0.5)
        elif symbol == k.R:
            pb.repeat = not pb.repeat
        elif symbol == k.L:
            self.flags["loops"] = not self.flags["loops"]
        elif symbol == k.T:
            self.flags["actuators"] = not self.flags["actuators"]
        elif symbol == k.P:
            self.flags["pins"] = not self.flags["pins"]
        elif symbol == k.J:
            self.flags["hud"] = not self.flags["hud"]
        elif symbol == k.H:
            print(KEYS_HELP)
        elif symbol == k.ESCAPE:
            self.on_close()
            return pyglet.event.EVENT_HANDLED
        elif symbol in (k.UP, k.DOWN):
            return super().on_key_press(symbol, modifiers)
        else:
            return super().on_key_press(symbol, modifiers)
        self.robot.set_q(pb.q)
        return pyglet.event.EVENT_HANDLED


def _lines(v, mode, rgba=None):
    """Draw vertices v (n, 3) as ``mode`` (GL_LINES, GL_POINTS) from client memory, in one colour (the current
    one) or one per vertex (``rgba`` (n, 4) float)."""
    v = np.ascontiguousarray(v, dtype=np.float32)
    gl.glPushClientAttrib(gl.GL_CLIENT_VERTEX_ARRAY_BIT)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
    gl.glEnableClientState(gl.GL_VERTEX_ARRAY)
    gl.glVertexPointer(3, gl.GL_FLOAT, 0, v.ctypes.data_as(ctypes.c_void_p))
    if rgba is not None:
        rgba = np.ascontiguousarray(rgba, dtype=np.float32)
        gl.glEnableClientState(gl.GL_COLOR_ARRAY)
        gl.glColorPointer(4, gl.GL_FLOAT, 0, rgba.ctypes.data_as(ctypes.c_void_p))
    gl.glDrawArrays(mode, 0, len(v))
    gl.glPopClientAttrib()
    if rgba is not None:  # a colour array leaves the current colour undefined
        gl.glColor4f(1.0, 1.0, 1.0, 1.0)


def play(viewer, fps=30.0, max_frames=None, screenshot=None):
    """Run the player: redraw ``fps`` times per second, advancing the playback by the wall-clock time,
    until the window is closed (or after ``max_frames`` frames, saving the last one to ``screenshot``)."""
    viewer.max_frames = max_frames
    viewer.screenshot = screenshot
    viewer.set_visible(True)
    pyglet.clock.schedule_interval(viewer.tick, 1.0 / float(fps))
    try:
        pyglet.app.run()
    finally:
        pyglet.clock.unschedule(viewer.tick)
    return viewer.frames_drawn
