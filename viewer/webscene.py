"""The robot, its loops, the ground, the dig bench and the force arrows as a viser scene, posed at one
sample of a motion. What ``urdf-dyn view --web`` serves (``webapp``) and what a recording stores
(``recording``): the same scene as the window viewer (``window.RobotViewer``).

Scene tree (viser names): ``/robot/b<i>`` one frame per body i, moved by its pose (``RobotScene.body_T``),
holding that body's visuals as fixed children (so a sample costs one pose per body, not one per visual);
``/ground`` the grid at z = 0 (REP-103: z up); ``/bench`` the dig bench, a slab whose top is the soil
surface ``soil.ground.height``; ``/loops/*`` the triads of the loop frames Fp (long) and Fs (short) and the segment between their origins,
coloured by ‖δ‖ against the tolerance (green closed → yellow → red at the tolerance, ``residual_rgb``);
``/arrows/<kind>`` one batched arrows node per kind (actuator, pin, soil, payload: one message per kind and
sample), lengths proportional to the value, at a fixed scale per kind for the whole motion (``scales``, so
lengths compare between samples);
``/payload`` a sphere at the cut soil's centroid;
``/balancers/segments`` one pink segment per balancer between its pins (``balancers.balancer_states``, from
the same body poses) and ``/balancers/label_<i>`` its name and force [N] at its middle (only for a model
with balancers).
"""
from __future__ import annotations

import math

import numpy as np

from .balancers import balancer_label
from .overlay import ARROW_RGB, BALANCER_RGB, bench_box, residual_rgb

__all__ = ["WebScene", "wxyz_of", "set_vector"]

BENCH_RGB = (150, 110, 70)
PAYLOAD_RGB = (120, 80, 40)
TRIAD_RGB = np.array([(217, 77, 64), (77, 179, 77), (64, 89, 230)], np.uint8)  # x, y, z: the window viewer's


def wxyz_of(R):
    """Unit quaternion (w, x, y, z) of rotation matrices R (..., 3, 3) (Shepperd's method, sign w ≥ 0)."""
    R = np.asarray(R, float)
    w = np.sqrt(np.clip(1.0 + R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2], 0.0, None)) / 2
    x = np.sqrt(np.clip(1.0 + R[..., 0, 0] - R[..., 1, 1] - R[..., 2, 2], 0.0, None)) / 2
    y = np.sqrt(np.clip(1.0 - R[..., 0, 0] + R[..., 1, 1] - R[..., 2, 2], 0.0, None)) / 2
    z = np.sqrt(np.clip(1.0 - R[..., 0, 0] - R[..., 1, 1] + R[..., 2, 2], 0.0, None)) / 2
    x = np.copysign(x, R[..., 2, 1] - R[..., 1, 2])
    y = np.copysign(y, R[..., 0, 2] - R[..., 2, 0])
    z = np.copysign(z, R[..., 1, 0] - R[..., 0, 1])
    q = np.stack([w, x, y, z], -1)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def set_vector(handle, attr, value):
    """``handle.<attr> = value`` for ``attr`` "wxyz" (4,) or "position" (3,) of a viser scene handle, by
    viser's own rule and message — a value within ``np.allclose`` of the node's current one sends nothing,
    another one a SetOrientationMessage / SetPositionMessage — without the ~0.1 ms of argument handling and
    ``np.allclose`` a call of viser's setter costs (most of a recording's time per frame: 14 000 calls).
    A viser whose handles do not keep their state this way gets the public setter."""
    i = getattr(handle, "_impl", None)
    cur = getattr(i, attr, None)
    _messages = _viser_messages()
    if _messages is None or cur is None or getattr(i, "removed", True) or not hasattr(i, "api"):
        setattr(handle, attr, value)
        return
    v = tuple(map(float, value))
    if len(v) != len(cur):
        raise ValueError(f"{attr}: expected {len(cur)} values, got {len(v)}")
    if _allclose(v, cur):
        return
    cur[:] = v
    msg = _messages.SetOrientationMessage if attr == "wxyz" else _messages.SetPositionMessage
    i.api._queue_scene_message(msg(i.name, v))


_MESSAGES = []


def _viser_messages():
    """viser's message module (imported on the first pose set, not with the viewer, then kept), or None."""
    if not _MESSAGES:
        try:
            from viser import _messages
        except ImportError:  # pragma: no cover - without viser there is no scene handle either
            return None
        _MESSAGES.append(_messages)
    return _MESSAGES[0]


def _allclose(v, cur):
    """``np.allclose(v, cur)`` (rtol 1e-5, atol 1e-8, relative to cur) of a few floats, in Python."""
    for a, b in zip(v, cur):
        b = float(b)
        if not abs(a - b) <= 1e-8 + 1e-5 * abs(b):
            if math.isfinite(a) and math.isfinite(b):
                return False
            return bool(np.allclose(np.asarray(v, float), cur))   # numpy's rule for inf and nan
    return True


class WebScene:
    """A RobotScene (``scene.RobotScene``) and its ForceSource drawn into a viser server's scene.

    Args:
        server: viser.ViserServer.  robot: scene.RobotScene.  forces: forces.ForceSource or None.
        loop_tol: residual [m, rad] at which a loop segment is fully red.  bench: soil surface z [m] or None.
        extent: size [m] of the scene (arrow scale: the largest value of a kind is 0.25 extent long).
    """

    def __init__(self, server, robot, forces=None, loop_tol=1e-3, bench=None, extent=None, points=None):
        self.server, self.robot, self.forces = server, robot, forces
        self.model = m = robot.model
        self.loop_tol = float(loop_tol)
        sc = server.scene
        # no shadows, no image-based lighting: a software-rendered browser (headless, a VM, a cluster node)
        # spent ~25 s prefiltering the environment map and drew at half the frame rate with shadow maps
        sc.configure_default_lights(True, cast_shadow=False)
        sc.configure_environment_map(None)
        sc.add_light_hemisphere("/light/sky", sky_color=(255, 255, 255), ground_color=(110, 105, 100), intensity=1.6)
        P = np.asarray(points if points is not None else robot.points(robot.q[None]), float)
        lo, hi = P.min(axis=0), P.max(axis=0)
        self.extent = float(extent or np.linalg.norm(hi - lo) or 1.0)
        self.bodies = {}
        for k, v in enumerate(robot.visuals):
            b = int(robot._body[k])
            if b not in self.bodies:
                self.bodies[b] = sc.add_frame(f"/robot/b{b}", show_axes=False)
            M = robot._M[k]
            mesh = v.mesh
            rgba = np.asarray(mesh.visual.face_colors)[0] if hasattr(mesh.visual, "face_colors") else (180, 180, 184, 255)
            sc.add_mesh_simple(f"/robot/b{b}/v{k}", np.asarray(mesh.vertices, np.float32), np.asarray(mesh.faces, np.uint32),
                               color=tuple(int(c) for c in rgba[:3]), opacity=None if rgba[3] >= 255 else rgba[3] / 255,
                               flat_shading=True, side="double", position=M[:3, 3], wxyz=wxyz_of(M[:3, :3]),
                               cast_shadow=False, receive_shadow=False)
        size = 2 * max(hi[0] - lo[0], hi[1] - lo[1], 0.5 * self.extent)
        self.ground = sc.add_grid("/ground", width=size, height=size, plane="xy",
                                  position=(0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.0),
                                  cell_size=max(0.1, round(size / 16, 1)), shadow_opacity=0.0)
        self.bench = None
        if bench is not None:
            edge = forces.edge_points_in_soil() if forces is not None else None
            c, ext = bench_box(bench, P, edge)
            self.bench = sc.add_box("/bench", color=BENCH_RGB, dimensions=tuple(ext), position=tuple(c), opacity=0.55,
                                    cast_shadow=False, receive_shadow=False)
        self.loops = None
        self.triads = []
        if m.loops:   # triads fixed to their bodies (no update per sample); the segments move
            L = 0.06 * self.extent
            for lp in m.loops:
                for b, T, length, th, w in ((lp.p, lp.T_P, L, 2.5, "Fp"), (lp.s, lp.T_S, 0.6 * L, 1.5, "Fs")):
                    if b not in self.bodies:
                        self.bodies[b] = sc.add_frame(f"/robot/b{b}", show_axes=False)
                    T = np.asarray(T)
                    pts = np.stack([np.broadcast_to(T[:3, 3], (3, 3)), T[:3, 3] + length * T[:3, :3].T], 1)
                    self.triads.append(sc.add_line_segments(
                        f"/robot/b{b}/{w}_{lp.name}", pts.astype(np.float32), np.repeat(TRIAD_RGB[:, None], 2, axis=1),
                        thickness=th, thickness_units="screen"))
            self.loops = sc.add_line_segments("/loops/segments", np.zeros((len(m.loops), 2, 3), np.float32),
                                              np.zeros((len(m.loops), 2, 3), np.uint8), thickness=4.0,
                                              thickness_units="screen")
        self.loops_on = True
        self.balancers, self.balancer_labels = None, []
        if m.balancers:   # one segments node for all, moved per sample; a label per balancer, above the meshes
            n = len(m.balancers)
            rgb = np.broadcast_to(np.array([int(255 * c) for c in BALANCER_RGB], np.uint8), (n, 2, 3))
            self.balancers = sc.add_line_segments("/balancers/segments", np.zeros((n, 2, 3), np.float32),
                                                  np.ascontiguousarray(rgb), thickness=5.0, thickness_units="screen")
            self.balancer_labels = [sc.add_label(f"/balancers/label_{i}", b.name, anchor="bottom-left")
                                    for i, b in enumerate(m.balancers)]
        self.arrows = {}      # kind -> ONE batched arrows node (viser ``add_arrows``), its points set per sample
        self.segments = {}    # (kind, label) -> (start, end) [m] of the arrow drawn at the shown sample
        self.scale = {}
        if forces is not None:
            self.scale = forces.maxima()
        self.payload = None
        if forces is not None and forces.payload is not None:
            self.payload = sc.add_icosphere("/payload", radius=0.02 * self.extent, color=PAYLOAD_RGB, visible=False)
        self.shown = {}
        self.residuals = {}
        self.gap_label = {}   # loop name -> viser label of its gap (``_show_gap_labels``)
        self.values = ({}, {})

    def arrow_length(self, arrow):
        """Length [m] of an arrow: 0.25 extent × |value| / the largest value of its kind and unit."""
        ref = self.scale.get((arrow.kind, arrow.unit), 0.0)
        return 0.0 if ref <= 0 else 0.25 * self.extent * abs(arrow.value) / ref

    def legend(self):
        """{kind: text}: what 1 m of arrow means for each kind drawn."""
        out = {}
        for (kind, unit), ref in self.scale.items():
            if ref > 0:
                per_m = ref / (0.25 * self.extent)
                s = f"1 m = {per_m / 1e3:.3g} k{unit.replace(' ', '·')}"
                out[kind] = (out[kind] + "; " + s) if kind in out else s
        return out

    def show(self, k, q=None, layers=("loops", "balancers", "actuator", "pin", "soil", "payload")):
        """Pose everything at sample k (q (nv,) defaults to the motion's sample), drawing ``layers``."""
        robot = self.robot
        robot.set_q(q if q is not None else (self.forces.motion.q[k] if self.forces is not None else robot.q), graph=False)
        T = robot.body_T
        with self.server.atomic():
            ids = list(self.bodies)
            quats, pos = wxyz_of(T[ids, :3, :3]).tolist(), T[ids, :3, 3].tolist()   # floats, as set_vector sends
            for h, wq, p in zip(self.bodies.values(), quats, pos):
                set_vector(h, "wxyz", wq)
                set_vector(h, "position", p)
            if self.loops is not None:
                self._show_loops("loops" in layers)
            if self.balancers is not None:
                self._show_balancers("balancers" in layers)
            if self.forces is not None:
                self._show_arrows(k, T, layers)

    def _show_loops(self, on):
        res = self.residuals = self.robot.loop_residuals()
        frames = self.robot.loop_frames()
        if on != self.loops_on:
            for h in self.triads:
                h.visible = on
            self.loops_on = on
        pts = np.array([(Fp[:3, 3], Fs[:3, 3]) for _, Fp, Fs in frames], np.float32)
        rgb = np.array([residual_rgb(res[lp.name], self.loop_tol) for lp, _, _ in frames]) * 255
        self.loops.points = pts
        self.loops.colors = np.repeat(rgb[:, None, :], 2, axis=1).astype(np.uint8)
        self.loops.visible = on
        self._show_gap_labels(frames, on)

    def _show_balancers(self, on):
        """The balancers' segments between their pins at the pose shown and their labels (name, force [N]);
        hidden, and not updated, while the layer is off."""
        self.balancers.visible = on
        for h in self.balancer_labels:
            h.visible = on
        if not on:
            return
        states = self.robot.balancers()
        self.balancers.points = np.array([(s.a, s.b) for s in states], np.float32)
        for h, s in zip(self.balancer_labels, states):
            text = balancer_label(s)
            if h.text != text:
                h.text = text
            set_vector(h, "position", 0.5 * (s.a + s.b))

    def _show_gap_labels(self, frames, on):
        """A label at the middle of each open loop's gap: its size and the nearest fix of its origins
        (``RobotScene.gap_labels``); hidden while the loop is closed or the layer is off."""
        gaps = self.robot.gap_labels(self.loop_tol) if on else {}
        labels = self.gap_label
        for k, (lp, Fp, Fs) in enumerate(frames):
            h = labels.get(lp.name)
            if lp.name in gaps:
                mid = tuple(float(x) for x in 0.5 * (Fp[:3, 3] + Fs[:3, 3]))
                if h is None:
                    labels[lp.name] = self.server.scene.add_label(f"/loops/gap_{k}", gaps[lp.name], position=mid,
                                                                  anchor="top-right")
                else:
                    h.text, h.position, h.visible = gaps[lp.name], mid, True
            elif h is not None:
                h.visible = False

    def _batch(self, kind, points):
        """The kind's arrows node showing ``points`` (N, 2, 3) [m]: made on first use, else its points set
        only when they changed (one message for the kind's arrows of a sample, not four per arrow)."""
        h = self.arrows.get(kind)
        if h is None:
            r = 0.006 * self.extent
            self.arrows[kind] = self.server.scene.add_arrows(
                f"/arrows/{kind}", points, tuple(int(255 * c) for c in ARROW_RGB[kind]), shaft_radius=r,
                head_radius=2.5 * r, head_length=0.035 * self.extent)
            return
        cur = np.asarray(h.points)
        if cur.shape != points.shape or not np.allclose(cur, points, rtol=1e-5, atol=1e-8):
            h.points = points
        if not h.visible:
            h.visible = True

    def _show_arrows(self, k, T, layers):
        f = self.forces
        self.values = f.values(k)
        self.shown = {}
        self.segments = {}
        per_kind = {}
        for a in f.arrows(k, T):
            n = self.arrow_length(a)
            self.shown[(a.kind, a.label)] = (a.value, a.unit, n)
            if n <= 0 or a.kind not in layers:
                continue
            start = np.asarray(a.origin, float)
            end = start + n * np.asarray(a.direction, float)
            self.segments[(a.kind, a.label)] = (start, end)
            per_kind.setdefault(a.kind, []).append((start, end))
        for kind, segs in per_kind.items():
            self._batch(kind, np.asarray(segs, np.float32))
        for kind, h in self.arrows.items():
            if kind not in per_kind and h.visible:
                h.visible = False
        if self.payload is not None:
            c = f.payload_point(T)
            on = "payload" in layers and float(f.run.payload_mass[k]) > 0
            set_vector(self.payload, "position", c)
            self.payload.visible = on
