"""The player window: trimesh's pyglet SceneViewer with urdf_dyn's poses, the loop-closure overlay, force
arrows and a heads-up text. The same class renders offscreen (EGL) for export.

Import this module only after ``urdf_dyn_viewer.backend.select`` (pyglet fixes its backend at import).

Overlay, drawn over the shaded robot (no depth test: debugging marks stay visible):
- per loop joint, triads of Fp (long, solid) and Fs (short), dots at both origins, and a segment between
  the origins coloured by the residual ‖δ‖: green (closed) → yellow (half the tolerance) → red (at or
  over ``loop_tol``); open loops get a label with their residual next to the segment;
- actuator force arrows (orange; a moment is drawn with a double head) and pin-force arrows (cyan),
  lengths proportional to the largest value seen so far of the same unit, labelled with their value;
- per balancer (a model's gas or coil springs between two pins), a pink line between its pins labelled
  with its name and force [N] (+ pushes the pins apart);
- the heads-up text: time, speed, state, the joint values asked for (and actuator forces when shown),
  per loop its residual, and per balancer its pin length and force.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
import pyglet
from pyglet import gl
from trimesh.viewer.windowed import SceneViewer

from .meshes import BodyMeshes, gl_matrices
from .overlay import (ACTUATOR_RGB, PIN_RGB, bench_box, look_at_fit, nice_step, residual_rgb,  # noqa: F401
                      view_rotation)
from . import gloverlay
from . import hud as hudtext
from .hud import FONT_NAMES, FONT_SIZE, LINE_H, TEXT_RGBA  # noqa: F401
from .scene import RobotScene
from .text import GlyphText

__all__ = ["RobotViewer", "KEYS_HELP", "residual_rgb", "look_at_fit", "play"]

BACKGROUND = (0.93, 0.94, 0.96, 1.0)

KEYS_HELP = """keys:
  space      play / pause            right/left  step one sample (pauses)
  ] / [      +1 s / -1 s             home/end    start / end
  0 .. 9     jump to 0 % .. 90 %     + / -       speed x2 / /2
  r          repeat on/off           l           loop frames and residuals on/off
  t          actuator-force arrows   p           pin (constraint) force arrows
  j          heads-up text on/off    z           reset the camera
  o          soil force and payload  b           dig bench
  k          balancers (springs between two pins) on/off
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
        loops, actuator_arrows, pin_arrows, hud, balancers: initial state of the toggles (``balancers``: drawn
            only when the model has some, ``model.balancers``).
        loop_tol: residual [m, rad] at which a loop segment is fully red.
        bench: the dig bench's soil surface z [m] (a sizing run's ``soil.ground.height``) or None; a run's
            soil force and payload (``forces.run``) are drawn from the start (key o), the bench too (key b).
        camera_points: points (n, 3) the camera is fitted to (default: the visuals over the motion).
    """

    def __init__(self, robot: RobotScene, playback, forces=None, size=(640, 480), visible=True, show=None,
                 loops=True, actuator_arrows=False, pin_arrows=False, hud=True, loop_tol=1e-3,
                 camera_points=None, azimuth=-60.0, elevation=20.0, caption=None, samples=0, bench=None,
                 balancers=True):
        self.robot = robot
        self.model = robot.model
        self.playback = playback
        self.forces = forces
        self.loop_tol = float(loop_tol)
        run = getattr(forces, "run", None)
        self.flags = {"loops": bool(loops), "actuators": bool(actuator_arrows), "pins": bool(pin_arrows),
                      "hud": bool(hud), "loads": run is not None, "bench": bench is not None,
                      "balancers": bool(balancers) and bool(robot.model.balancers)}
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
        self.reset_scales()
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
        self.bench = None if bench is None else bench_box(bench, self._points, forces.edge_points_in_soil()
                                                          if forces is not None else None)
        if self.bench is not None:  # its top corners in the picture too
            c, e = self.bench
            ground = np.vstack([ground, c + 0.5 * e * np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])])
        # keep the robot out from under the heads-up text: fit it into the part of the image below the text
        n_lines = (1 + len(self.show) + (1 + len(m.loops) if m.loops else 0)
                   + (1 + len(m.balancers) if m.balancers else 0))
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
        gl.glEnable(gl.GL_NORMALIZE)  # scaled nodes otherwise render white (normals scaled with the vertices)
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
        """Forget the largest force seen so far (arrow lengths are scaled by it); a run's arrows keep one
        scale per kind for the whole motion (``ForceSource.maxima``, taken for a kind when it is first drawn:
        ``gloverlay.draw_forces``), as in the browser viewer."""
        self._fmax, self._scaled = {}, set()

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
        if self.bench is not None and self.flags["bench"]:
            gloverlay.draw_bench(self)
        gl.glDisable(gl.GL_DEPTH_TEST)
        if self.flags["loops"] and self.model.loops:
            self._draw_loops()
        if self.flags["balancers"]:
            gloverlay.draw_balancers(self)
        if self.forces is not None and (self.flags["actuators"] or self.flags["pins"] or self.flags["loads"]):
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
        gl.glMultMatrixf((gl.GLfloat * 16)(*gl_matrices(self.view_matrix()[None])[0]))
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

    def view_matrix(self):
        """The camera's view matrix (4, 4): the inverse of its pose, kept while the pose is unchanged (the
        scene, the labels' projection and every frame of an export ask for the same one)."""
        T = self.scene.camera_transform
        key = T.tobytes()
        if getattr(self, "_view_inv", (None,))[0] != key:
            self._view_inv = (key, np.linalg.inv(T))
        return self._view_inv[1]

    def _ground_lines(self):
        return gloverlay.ground_lines(self)

    def _draw_ground(self):
        gloverlay.draw_ground(self)

    def _draw_loops(self):
        gloverlay.draw_loops(self)

    def _draw_forces(self):
        gloverlay.draw_forces(self)

    # -- text --------------------------------------------------------------------------------------------
    def hud_lines(self):
        """The heads-up text, as (text, rgba) lines (``hud.hud_lines``)."""
        return hudtext.hud_lines(self)

    def project(self, p):
        """Window pixel coordinates (x, y) of a base-frame point, or None behind the camera."""
        return hudtext.project(self, p)

    def _draw_text(self):
        hudtext.draw_text(self)

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
        elif symbol == k.K:
            self.flags["balancers"] = not self.flags["balancers"] and bool(self.model.balancers)
        elif symbol in (k.O, k.B):
            key = "loads" if symbol == k.O else "bench"
            self.flags[key] = not self.flags[key]
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
