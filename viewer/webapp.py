"""``urdf-dyn view ... --web``: the machine in a browser (viser), with its loads, forces, soil and the
actuator-force plot on one timeline.

The server (``viser.ViserServer``) serves the scene of ``webscene.WebScene`` and a control panel:

- *Timeline*: a time slider, play/pause, a step back/forward (one sample), the speed (×1/8 … ×8);
- *Layers*: a toggle per layer (loop frames and residuals, balancers, actuator forces, pin loads, soil
  force, payload, dig bench) and the arrows' scale (the legend: what 1 m of arrow means; the balancers'
  colour);
- *State*: the time and sample, the joint values, the loop residuals ‖δ‖ against the tolerance, the
  balancers' pin lengths and forces, the forces drawn;
- the actuator-force plot stands in the scene behind the machine (``plot.ForcePlot``) with a red cursor
  at the current time; a click on it moves the timeline to the time clicked.

Everything is posed from the same sample index k = motion.index(t) so the arrows, the panel and the
cursor always agree. A port already in use is replaced by the next free one (viser's own search), and
said on stdout.
"""
from __future__ import annotations

import contextlib
import html
import io
import threading
import time as _time

import numpy as np

from urdf_dyn.io.escape import md_text

from .backend import ViewerError
from .webscene import set_vector

__all__ = ["WebApp", "SPEEDS", "served_url", "start_server"]

FPS = 30.0   # scene updates per second at most (the drawing thread)
SLIDER_HZ = 10.0        # the slider's position a second while playing
PANEL_HZ = (10.0, 4.0)  # the State panel's updates a second: paused (scrubbing), playing
LATER_GRACE, LATER_AFTER = 0.3, 3.0   # [s] the pins' and plot's threads: after a page's panel, or without a page
SPEEDS = ("1/8", "1/4", "1/2", "1", "2", "4", "8")
LAYERS = (("loops", "loop frames and residuals"), ("balancers", "balancers (pink)"),
          ("actuator", "actuator forces (orange)"),
          ("pin", "pin loads (cyan)"), ("soil", "soil force (purple)"), ("payload", "payload (green)"),
          ("bench", "dig bench"))


class WebApp:
    """The browser viewer of a Motion (or a run folder's ``run``) of ``model``.

    Args:
        model; motion: playback.Motion (ignored when ``run`` is given); run: rundata.RunData or None.
        port: the port asked for (the next free one is taken when it is in use); host: where to listen.
        loop_tol: residual [m, rad] at which a loop segment is fully red.  speed: initial playback speed.
        forces: draw force arrows (default: a run's, or when the motion has forces).
        live: serve a page (the default): a drawing thread plays the timeline; a run's pin loads are
            computed in a thread (their arrows appear when ready) and the force plot is drawn in another
            (``plot_ready`` is set when it is in the scene), both started once a page has its controls, or
            3 s after the scene was built without a page (``_start_later``); ``live=False`` (a recording, ``recording.write_recording``): the pin
            loads and the plot first, in this thread, and no drawing thread, so that every frame recorded
            has the same arrows whatever the machine's load.
        server: a running viser server (``start_server``) to build the scene in (default: one is started).
    Attributes: server, url, port, scene (webscene.WebScene), plot (plot.ForcePlot or None; None until
    ``plot_ready`` is set), time, k.
    Raises ViewerError when viser is not installed."""

    def __init__(self, model, motion=None, run=None, port=8080, host="127.0.0.1", loop_tol=1e-3, speed=1.0,
                 robot=None, live=True, server=None):
        if server is None:
            server = start_server(host, port)
        from .forces import ForceSource
        from .scene import RobotScene
        from .webscene import WebScene
        self.model = model
        self.run = run
        motion = run.motion if run is not None else motion
        self.motion = motion
        self.robot = robot or RobotScene(model)
        self.forces = ForceSource(model, motion, run=run)
        if run is not None and model.loops and live:
            self.forces._pending = True   # WebScene and the page do not wait for the pin loads
        self.server = server
        self.port = server.get_port()
        self.requested_port = int(port)
        self.url, self.exposed = served_url(host, self.port)
        loop_tol = float((run.view.get("loop_tol") if run is not None else None) or loop_tol)
        pts = self.robot.points(motion.q[:: max(1, len(motion) // 40)])
        self.layers = {key: True for key, _ in LAYERS}
        self.playing = False
        self.speed = float(speed)
        self.k = 0
        self.time = float(motion.t[0])
        self._panel_due = False
        self._want = None
        self._thread = None
        self._lock = threading.RLock()
        self.plot = None
        self.plot_ready = threading.Event()   # set once the force plot is in the scene (or there is none)
        self._stop = threading.Event()
        # one atomic block: the scene, the controls and the first pose wake viser's event loop once (not once
        # per message) and reach a page that connects meanwhile together
        with self.server.atomic():
            self.scene = WebScene(self.server, self.robot, self.forces, loop_tol=loop_tol,
                                  bench=run.bench_height if run is not None else None, points=pts)
            self._camera(pts)
            self._gui()
            if not live:    # a recording: every frame the same, so the plot is there from the first
                self._plot()
            self.show(self.time)
        self._later = []    # started by the drawing thread once a page has its controls (``_start_later``)
        if getattr(self.forces, "_pending", False):
            self._later.append(lambda: self.forces.pins_in_background(done=self._pins_ready))
        if live:    # matplotlib's import and the drawing (≈ 1 s, several under load) after the URL is out
            self._later.append(threading.Thread(target=self._plot, name="urdf-dyn-web-plot", daemon=True).start)
            self._born, self._page_at = _time.perf_counter(), None
            self._thread = threading.Thread(target=self._play_loop, name="urdf-dyn-web-play", daemon=True)
            self._thread.start()
        else:
            for start in self._later:
                start()

    # -- set-up --------------------------------------------------------------------------------------------
    def _camera(self, pts):
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        c = 0.5 * (lo + hi)
        d = float(np.linalg.norm(hi - lo)) or 1.0
        self.center, self.size = c, d
        cam = self.server.initial_camera
        cam.up = (0.0, 0.0, 1.0)
        cam.look_at = tuple(c + np.array([0.0, 0.15 * d, 0.1 * d]))
        cam.position = tuple(c + np.array([0.2 * d, -1.0 * d, 0.45 * d]))

    def _gui(self):
        gui, mo = self.server.gui, self.motion
        gui.configure_theme(control_width="medium", show_share_button=False)
        gui.set_panel_label(f"urdf-dyn · {html.escape(self.model.name)}")   # a label, not markdown: no \_
        dt = float(np.median(np.diff(mo.t))) if len(mo) > 1 else 1.0
        with gui.add_folder("Timeline"):
            t0, t1 = float(mo.t[0]), float(max(mo.t[-1], mo.t[0] + dt))
            self.slider = gui.add_slider("t [s]", min=t0, max=t1, step=dt, initial_value=t0,
                                         disabled=len(mo) < 2)
            self.play_button = gui.add_button("Play", disabled=len(mo) < 2)
            self.step_buttons = gui.add_button_group("Step", ("◀ sample", "sample ▶"))
            self.speed_box = gui.add_dropdown("Speed", SPEEDS, initial_value=_speed_label(self.speed))
        with gui.add_folder("Layers"):
            self.toggles = {key: gui.add_checkbox(label, initial_value=True) for key, label in LAYERS
                            if self._has_layer(key)}
            self.legend = gui.add_markdown(self._legend())
        with gui.add_folder("State"):
            self.panel = gui.add_markdown("")
        self.slider.on_update(lambda e: self.show(self.slider.value))
        self.play_button.on_click(lambda e: self.toggle_play())
        self.step_buttons.on_click(lambda e: self.step(-1 if e.target.value.startswith("◀") else 1))
        self.speed_box.on_update(lambda e: setattr(self, "speed", _speed_value(self.speed_box.value)))
        for key, box in self.toggles.items():
            box.on_update(lambda e, key=key: self.set_layer(key, e.target.value))

    def _pins_ready(self):
        """The run's pin loads are computed: their arrows' scale, the legend, and the current sample again."""
        with self._lock:
            self.scene.scale = self.forces.maxima()
            self.legend.content = self._legend()
        self.show(self.time)

    def _has_layer(self, key):
        f = self.forces
        if key == "loops":
            return bool(self.model.loops)
        if key == "bench":
            return self.scene.bench is not None
        if key == "soil":
            return f.edge is not None
        if key == "payload":
            return f.payload is not None
        if key == "pin":
            return bool(self.model.loops)
        if key == "balancers":
            return bool(self.model.balancers)
        return bool(f.actuators)

    def _legend(self):
        leg = self.scene.legend()
        bal = ("\n\nBalancers (pink): a line between the pins, labelled with the force [N], + pushing the "
               "pins apart." if self.model.balancers else "")
        if not leg:
            return "Arrows: none to draw." + bal
        names = {"actuator": "actuator", "pin": "pin loads", "soil": "soil on the edge", "payload": "payload weight"}
        return "Arrow scale: " + "; ".join(f"{names[k]}: {md_text(v)}" for k, v in leg.items()) + bal

    def _plot(self):
        """The actuator forces' plot as an image beside the machine, with a cursor at the current time; sets
        ``plot_ready`` when done (also when there is nothing to plot or it fails)."""
        try:
            self._draw_plot()
        finally:
            self.plot_ready.set()

    def _draw_plot(self):
        from .plot import ForcePlot, force_series
        if not self.forces.actuators or len(self.motion) < 2:
            return
        t, series = force_series(self.forces)
        if not series:
            return
        p = ForcePlot(t, series, title=f"{self.model.name}: actuator forces")
        if self._stop.is_set():     # closed while it was drawn
            return
        h, w = p.image.shape[:2]
        W = 1.3 * self.size
        H = W * h / w
        c = self.center
        y = float(self.scene_points_max_y()) + 0.15 * self.size
        self.plot_frame = (c[0] - W / 2, y, c[2] + 0.25 * self.size, W, H)   # left x, plane y, bottom z, W, H
        R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])   # image x → x, image y → z, normal → −y
        from .webscene import wxyz_of
        q = wxyz_of(R)
        sc = self.server.scene
        self.plot_image = sc.add_image("/plot/image", np.ascontiguousarray(p.image[::-1]),  # viser: row 0 at the bottom
                                       render_width=W, render_height=H, format="png",
                                       position=(c[0], y, c[2] + 0.25 * self.size + H / 2), wxyz=q,
                                       cast_shadow=False, receive_shadow=False)
        hz = (p.y1 - p.y0) * H
        self.cursor = sc.add_box("/plot/cursor", color=(230, 0, 0), dimensions=(0.004 * W, 0.002 * W, hz),
                                 position=(c[0], y - 0.01 * W, c[2] + 0.25 * self.size + H * (p.y0 + p.y1) / 2),
                                 cast_shadow=False, receive_shadow=False)
        self.plot_image.on_click(self._plot_clicked)
        with self._lock:
            self.plot = p       # last: the drawing thread moves the cursor once the plot is there
        self.show(self.time)

    def scene_points_max_y(self):
        pts = self.robot.points(self.motion.q[:: max(1, len(self.motion) // 40)])
        return pts[:, 1].max()

    def _plot_clicked(self, event):
        x0, y, _, W, _ = self.plot_frame
        o, d = np.asarray(event.ray_origin, float), np.asarray(event.ray_direction, float)
        if abs(d[1]) < 1e-12:
            return
        p = o + d * (y - o[1]) / d[1]
        self.pause()
        self.slider.value = self.plot.time_at((p[0] - x0) / W)

    # -- state ---------------------------------------------------------------------------------------------
    def show(self, time, now=False):
        """Ask for the scene, the panel and the plot's cursor at ``time`` [s]. The drawing thread applies the
        latest request at most FPS times a second (a slider dragged or keyed faster than the page draws
        skips the samples in between instead of queueing them); ``now``: pose before returning."""
        with self._lock:
            self._want = float(time)
            self.time = float(np.clip(time, self.motion.t[0], self.motion.t[-1]))
        if now or self._thread is None:
            self._apply()

    def _apply(self):
        with self._lock:
            if self._want is None:
                return
            time, self._want = self._want, None
            mo = self.motion
            self.time = float(np.clip(time, mo.t[0], mo.t[-1]))
            self.k = k = mo.index(self.time + 1e-9)
            layers = [key for key, on in self.layers.items() if on]
            with self.server.atomic():   # the pose, the arrows and the cursor: one message window
                self.scene.show(k, mo.q_at(self.time), layers)
                if self.plot is not None:
                    x0, y, _, W, _ = self.plot_frame
                    pos = np.array(self.cursor.position, float)
                    pos[0] = x0 + W * self.plot.fraction_at(self.time)
                    set_vector(self.cursor, "position", pos)
            self._panel_due = True   # the panel follows at ≤ 10 Hz (_play_loop): its markdown costs the page most

    def panel_text(self):
        """The State panel (markdown): time, sample, joint values, loop residuals, the forces drawn."""
        m, mo, sc = self.model, self.motion, self.scene
        lines = [f"**t = {self.time:.3f} s** / {mo.t[-1]:.3f} s · sample {self.k + 1} of {len(mo)}", "",
                 "| joint | q |", "|---|---:|"]
        q = self.robot.q
        for j, v, u in zip(m.q_names, q, m.q_units):   # q (nq,): one row per position coordinate
            lines.append(f"| {md_text(j)} | {v:+.4f} {u} |")
        if m.loops:
            lines += ["", f"| loop | ‖δ‖ (tol {sc.loop_tol:g}) |", "|---|---:|"]
            for lp in m.loops:
                r = sc.residuals.get(lp.name, float("nan"))
                lines.append(f"| {md_text(lp.name)} | {r:.2e} {'closed' if r <= sc.loop_tol else '**OPEN**'} |")
            gaps = self.robot.gap_labels(sc.loop_tol)       # each open loop's gap and the nearest fix, as drawn
            lines += [f"- {md_text(gaps[lp.name])}" for lp in m.loops if lp.name in gaps]
        if m.balancers:
            lines += ["", "| balancer | L | F (+ push) |", "|---|---:|---:|"]
            for b in self.robot.balancers():
                lines.append(f"| {md_text(b.name)} | {b.length:.4f} m | {b.force / 1e3:+.2f} kN |")
        if sc.shown:
            lines += ["", "| force | value |", "|---|---:|"]
            for (kind, label), (v, unit, _) in sc.shown.items():
                u = unit.replace(" ", "·")
                lines.append(f"| {kind}: {md_text(label)} | {v / 1e3:+.1f} k{u} |" if abs(v) >= 1e3 else f"| {kind}: {md_text(label)} | {v:+.3g} {u} |")
        return "\n".join(lines)

    def set_layer(self, key, on):
        self.layers[key] = bool(on)
        if key == "bench" and self.scene.bench is not None:
            self.scene.bench.visible = bool(on)
        self.show(self.time)

    def toggle_play(self):
        self.playing = not self.playing and len(self.motion) > 1
        self.play_button.label = "Pause" if self.playing else "Play"

    def pause(self):
        if self.playing:
            self.toggle_play()

    def step(self, n):
        self.pause()
        mo = self.motion
        k = int(np.clip(self.k + n, 0, len(mo) - 1))
        self.slider.value = float(mo.t[k])

    def _play_loop(self, fps=FPS):
        """The drawing thread: the latest pose asked for at ≤ ``fps`` a second, on a fixed schedule (a tick's
        own work does not stretch the period); while playing, the time advances by the clock × speed and the
        scene follows every tick, the slider and the State panel at SLIDER_HZ / PANEL_HZ[1] only (each of their
        updates re-renders the page's controls: fewer of them leave the page more of its frames)."""
        period = 1.0 / fps
        last = shown = slid = _time.perf_counter()
        due = last + period
        while not self._stop.wait(max(0.0, due - _time.perf_counter())):
            now = _time.perf_counter()
            due = max(due + period, now)     # a tick late under load is not made up twice
            if self.playing:
                mo = self.motion
                t = self.time + (now - last) * self.speed
                if t > mo.t[-1]:
                    t = mo.t[0] + (t - mo.t[-1]) % max(mo.duration, 1e-9)
                if now - slid >= 1.0 / SLIDER_HZ:
                    self.slider.value = float(t)
                    slid = now
                self.show(float(t))
            self._apply()
            if self._panel_due and now - shown >= 1.0 / PANEL_HZ[self.playing]:
                with self._lock:
                    self._panel_due = False
                    self.panel.content = self.panel_text()
                shown = now
            if self._later:
                self._start_later(now)
            last = now

    def _start_later(self, now):
        """Start the pin loads' and the force plot's threads (CPU-bound Python: they hold the GIL that viser's
        event loop needs to send a connecting page its scene and controls) once a page has been connected for
        LATER_GRACE s with its State panel written, or LATER_AFTER s after the scene was
        built without a page."""
        if self._page_at is None and self.server.get_clients():
            self._page_at = now
        page = self._page_at is not None and now - self._page_at >= LATER_GRACE and not self._panel_due
        if page or now - self._born >= LATER_AFTER:
            later, self._later = self._later, []
            for start in later:
                start()

    def close(self):
        self._stop.set()
        with contextlib.redirect_stdout(io.StringIO()):
            self.server.stop()


def start_server(host="127.0.0.1", port=8080):
    """A running viser server on ``host``:``port`` (the next free port when that one is in use), before any
    scene is in it: ``urdf-dyn view --web`` prints its URL at once and builds the scene in it while the
    browser loads the page. Raises ViewerError when viser is not installed."""
    try:
        import viser
    except ImportError as e:
        raise ViewerError(f"the browser viewer needs viser ({e}); pip install viser") from None
    with contextlib.redirect_stdout(io.StringIO()):   # viser's own banner: we print one line with the URL
        return viser.ViserServer(host=host, port=int(port), verbose=False)


def _speed_label(s):
    for lab in SPEEDS:
        if abs(_speed_value(lab) - s) < 1e-9:
            return lab
    return "1"


def _speed_value(label):
    a, _, b = str(label).partition("/")
    return float(a) / float(b) if b else float(a)


def served_url(host: str, port: int):
    """(the URL a browser opens, True when the server is reachable from other machines): loopback hosts
    ("127.0.0.1", "::1", "localhost") give ``http://localhost:PORT``; a wildcard ("0.0.0.0", "::") gives the
    machine's own address on the network (the one a colleague types), any other host itself."""
    import ipaddress
    import socket
    h = str(host).strip("[]")
    if h == "localhost":
        return f"http://localhost:{port}", False
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        try:
            ip = ipaddress.ip_address(socket.gethostbyname(h))
        except (OSError, ValueError):
            return f"http://{h}:{port}", True
    if ip.is_loopback:
        return f"http://localhost:{port}", False
    if ip.is_unspecified:
        addr = None
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect(("192.0.2.1", 9))        # TEST-NET-1 (RFC 5737): nothing is sent, the route names our address
                addr = s.getsockname()[0]
        except OSError:
            pass
        h = addr or socket.gethostname()
    return (f"http://[{h}]:{port}" if ":" in h else f"http://{h}:{port}"), True
