"""The browser viewer: a sizing job's run folder read for the viewers, the pin loads the viewer
draws checked against the job's own pin_loads.csv, bad input, and the page itself in a real browser
(Debian's headless Chromium driven by playwright): no console errors, frames that differ between the
start and the dig's peak, a red segment for an opened loop, arrow lengths that follow the force, and a
click on the plot that moves the timeline. In CI (env CI set) nothing here may skip (.ci/run installs
Chromium)."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from webrun import IN_CI, browser_or_skip, close_browser, write_soil, write_view_json

viser = pytest.importorskip("viser", reason="pip install viser") if not IN_CI else __import__("viser")

from urdf_dyn_viewer.playback import motion_from_pose  # noqa: E402

EXCAVATOR = ROOT / "robots" / "excavator.urdf"
FOUR_BAR = ROOT / "robots" / "four_bar.urdf"
SHOTS = os.environ.get("URDF_DYN_SHOTS")  # a folder to keep the screenshots in (docs), else tmp


@pytest.fixture(scope="module")
def excavator_run(tmp_path_factory):
    """The main job (scenarios/excavator_dig.scenario.yaml) at 0.05 s steps, with the soil.csv the soil
    model gives along its motion."""
    import yaml
    from urdf_dyn.launch import run_scenario
    d = tmp_path_factory.mktemp("excavator_run")
    data = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(EXCAVATOR)
    data["motion"]["dt"] = 0.05
    data["outputs"] = {"directory": str(d / "run"), "recording": "dig_cycle.html", "animation_fps": 5}
    f = d / "dig.scenario.yaml"
    f.write_text(yaml.safe_dump(data))
    run_scenario(f, progress=False, echo=lambda *a: None)
    m = ud.load(EXCAVATOR)
    from urdf_dyn_viewer.playback import motion_from_trajectory
    mo = motion_from_trajectory(m, ud.Trajectory.load(d / "run" / "motion.npz"))
    if not (d / "run" / "view.json").is_file():
        write_view_json(d / "run", m)
    if (d / "run" / "soil.csv").is_file():   # the sizing job's own soil.csv
        from urdf_dyn_viewer.rundata import read_run
        run = read_run(d / "run", m)
        return d / "run", m, run.soil_force, run.payload_mass
    force, mass = write_soil(d / "run", m, mo)
    return d / "run", m, force, mass


# -- the run folder ------------------------------------------------------------------------------------------
def test_run_folder_columns_are_matched_by_name(tmp_path):
    from urdf_dyn_viewer.rundata import read_run
    m = ud.load(FOUR_BAR)
    t = np.linspace(0.0, 1.0, 11)
    q = np.repeat(m.q_initial()[None], 11, axis=0)
    ud.Trajectory(t, q, 0 * q, 0 * q, 0 * q, np.zeros(11), m.joint_names).save(tmp_path / "motion.npz")
    # soil.csv on other times and with other names and units than the sizing job's
    ts = np.linspace(0.0, 1.0, 6)
    rows = ["time [s],Depth [m],Fx [kN],force_y [kN],FZ [kN],rake [deg],Payload mass [kg]"]
    rows += [f"{a},{0.1 * a},{2 * a},{-a},{3.0},{45},{100 * a}" for a in ts]
    (tmp_path / "soil.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "actuator_forces.csv").write_text("t [s],u[crank_joint] [kN·m],s[crank_joint] [rad]\n"
                                                  + "".join(f"{a},{5 * a},0\n" for a in t))
    run = read_run(tmp_path, m)
    assert run.soil_force.shape == (11, 3)
    assert np.allclose(run.soil_force[:, 0], 2e3 * t) and np.allclose(run.soil_force[:, 2], 3e3)  # kN → N
    assert np.allclose(run.payload_mass, 100 * t) and np.allclose(run.soil_depth, 0.1 * t)
    assert np.allclose(run.actuators["crank_joint"], 5e3 * t) and run.bench_height is None


@pytest.mark.parametrize("setup, msg", [
    ("nothing", "motion.npz: not found"),
    ("other_robot", "motion.npz: no column for joint"),
    ("bad_soil", "soil.csv: no three force columns"),
])
def test_bad_run_folders_are_one_line_errors_naming_the_file(setup, msg, tmp_path, capsys):
    from urdf_dyn.cli.main import main
    if setup != "nothing":
        p = ud.load(ROOT / "robots" / "puma560.urdf")
        tr = ud.Trajectory(np.zeros(2), np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)),
                           np.zeros(2), p.joint_names)
        if setup == "bad_soil":
            m = ud.load(FOUR_BAR)
            tr = ud.Trajectory(np.zeros(2) + [0, 1], np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)),
                               np.zeros((2, 3)), np.zeros(2), m.joint_names)
            (tmp_path / "soil.csv").write_text("t [s],depth [m],volume [m3]\n0,0,0\n1,0,0\n")
        tr.save(tmp_path / "motion.npz")
    assert main(["view", str(FOUR_BAR), str(tmp_path), "--web", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1, err


def test_pin_loads_drawn_are_the_sizing_jobs(excavator_run):
    """The viewer recomputes the pin wrenches (directions for the arrows) by closed-loop inverse dynamics
    under the run's soil force and payload (read back from soil.csv and view.json); their magnitudes must be
    the job's pin_loads.csv, which the job computed with its own loads."""
    from urdf_dyn_viewer.forces import ForceSource
    from urdf_dyn_viewer.rundata import read_run
    folder, m, force, mass = excavator_run
    run = read_run(folder, m)
    assert run.bench_height == -1.45 and np.allclose(run.soil_force, force) and mass.max() > 500
    src = ForceSource(m, run=run)
    pins = src._run_pins()
    assert set(pins) == set(run.pin_force)
    per_side = {"boom_cylinder_eye": 2}   # the scenario's boom_cyl: count 2; pin_loads.csv gives the force per pin
    for name, w in pins.items():
        mag = np.linalg.norm(w[:, 3:], axis=1)
        assert np.allclose(mag, per_side.get(name, 1) * run.pin_force[name], rtol=1e-6, atol=1e-6 * mag.max()), name
    k = int(np.argmax(np.linalg.norm(force, axis=1)))
    from urdf_dyn_viewer.scene import RobotScene
    arrows = src.arrows(k, RobotScene(m).set_q(run.motion.q[k]).body_T)
    soil = [a for a in arrows if a.kind == "soil"][0]
    assert soil.value == pytest.approx(np.linalg.norm(force[k])) and np.allclose(soil.direction * soil.value, force[k])
    pay = [a for a in arrows if a.kind == "payload"]
    assert (not pay and mass[k] == 0) or pay[0].direction[2] == pytest.approx(-1.0)  # the weight points down


def test_port_in_use_takes_the_next_one(capsys):
    import argparse

    from urdf_dyn_viewer.cli import run_web
    m = ud.load(FOUR_BAR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        app = run_web(argparse.Namespace(port=port, host="127.0.0.1", loop_tol=None, speed=1.0), m, None,
                      motion_from_pose(m, m.q_initial()), block=False)
        try:
            assert app.port != port
            err = capsys.readouterr().err
            assert f"port {port} is in use: serving on port {app.port}" in err and err.count("\n") == 1
        finally:
            app.close()


# -- in a real browser -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    pw, br, profile = browser_or_skip()
    yield br
    close_browser(pw, br, profile)


def _open(browser, app, errors=None):
    page = browser.new_page()
    if errors is not None:
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(app.url)
    page.add_style_tag(content=".mantine-Notifications-root { display: none !important; }")
    page.wait_for_function("document.body.innerText.includes(' · sample ')", timeout=30000)
    _settle(page)
    return page


def _settle(page, timeout=30.0):
    """Wait until the scene stops changing (viser fades a new scene in over a second or two)."""
    import io

    import imageio.v2 as imageio
    last, t0 = None, time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        img = imageio.imread(io.BytesIO(page.screenshot()))[:, :930, :3].astype(int)
        if last is not None and np.mean(np.abs(img - last).sum(-1) > 10) < 1e-4:
            return
        last = img
        page.wait_for_timeout(300)


def _at(page, app, t):
    """Move the timeline to t (as the slider does) and wait until the browser shows it."""
    app.slider.value = float(t)
    page.wait_for_function(f"document.body.innerText.includes('t = {app.time:.3f} s')", timeout=10000)
    _settle(page)


def _shot(page, name, tmp_path):
    import imageio.v2 as imageio
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    return imageio.imread(path)[..., :3].astype(int)[:, :930]  # the scene, left of the control panel


def _purple(img):
    """Pixels of the soil force's arrow (overlay.SOIL_RGB, shaded): blue over red over green."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return (b > 130) & (r > g + 30) & (b > r + 20)


@pytest.fixture(scope="module")
def dig_app(excavator_run):
    from urdf_dyn_viewer.rundata import read_run
    from urdf_dyn_viewer.webapp import WebApp
    folder, m, _, _ = excavator_run
    app = WebApp(m, run=read_run(folder, m), port=0)
    assert app.plot_ready.wait(120) and app.plot is not None   # drawn after the server is up (live viewer)
    yield app
    app.close()


def test_page_loads_and_the_dig_peak_differs_from_the_start(browser, dig_app, excavator_run, tmp_path):
    errors = []
    page = _open(browser, dig_app, errors)
    try:
        first = _shot(page, "web_t0", tmp_path)
        force = excavator_run[2]
        t_peak = float(dig_app.motion.t[int(np.argmax(np.linalg.norm(force, axis=1)))])
        _at(page, dig_app, t_peak)
        peak = _shot(page, "web_dig_peak", tmp_path)
        assert np.mean(np.abs(first - peak).sum(-1) > 30) > 0.005
        dig_app.toggles["bench"].value = False   # the arrow starts at the edge, in the soil: the bench hides part
        try:
            _settle(page)
            purple = _purple(_shot(page, "web_dig_peak_no_bench", tmp_path))
        finally:
            dig_app.toggles["bench"].value = True
        assert purple.sum() > 60 and _purple(first).sum() < 0.1 * purple.sum()   # at the start: stray pixels only
        assert not errors, errors
    finally:
        page.close()


def test_arrow_length_follows_the_force(browser, dig_app, excavator_run, tmp_path):
    """The soil arrow's length in the scene is 0.25 extent × |F| / max |F|; on screen (only the soil layer
    drawn) the arrow at the peak covers more pixels than at a sample with about half the force."""
    force = np.linalg.norm(excavator_run[2], axis=1)
    kp = int(np.argmax(force))
    kh = int(np.argmin(np.abs(force[:kp] - 0.45 * force[kp])))
    page = _open(browser, dig_app)
    try:
        for key, box in dig_app.toggles.items():
            box.value = key == "soil"
        counts = []
        for k in (kh, kp):
            _at(page, dig_app, dig_app.motion.t[k])
            start, end = dig_app.scene.segments[("soil", "soil")]  # one row of the soil kind's batched node
            length = float(np.linalg.norm(end - start))
            assert length == pytest.approx(0.25 * dig_app.scene.extent * force[k] / force.max(), rel=1e-5)
            node = np.asarray(dig_app.scene.arrows["soil"].points)
            assert node.shape == (1, 2, 3) and np.allclose(node[0], (start, end), atol=1e-6)
            counts.append(_purple(_shot(page, f"web_soil_arrow_{k}", tmp_path)).sum())
        assert counts[1] > 1.3 * counts[0] > 0, counts
    finally:
        for box in dig_app.toggles.values():
            box.value = True
        page.close()


def test_clicking_the_plot_moves_the_timeline(browser, dig_app):
    page = _open(browser, dig_app)
    try:
        _at(page, dig_app, 0.0)
        cam = list(dig_app.server.get_clients().values())[-1].camera
        x0, y, z0, W, H = dig_app.plot_frame
        p = dig_app.plot
        t_want = 12.0
        P = np.array([x0 + W * p.fraction_at(t_want), y, z0 + H * 0.5 * (p.y0 + p.y1)])
        R = ud_quat_matrix(cam.wxyz)
        pc = R.T @ (P - cam.position)         # OpenCV camera axes: x right, y down, z forward
        f = 0.5 * cam.image_height / np.tan(0.5 * cam.fov)
        u, v = cam.image_width / 2 + f * pc[0] / pc[2], cam.image_height / 2 + f * pc[1] / pc[2]
        page.mouse.click(float(u), float(v))
        page.wait_for_function("!document.body.innerText.includes('t = 0.000 s')", timeout=10000)
        assert dig_app.time == pytest.approx(t_want, abs=0.02 * dig_app.motion.duration)
    finally:
        page.close()


def ud_quat_matrix(wxyz):
    from scipy.spatial.transform import Rotation
    w, x, y, z = wxyz
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def test_open_loop_shows_a_red_segment(browser, tmp_path):
    from urdf_dyn_viewer.webapp import WebApp
    m = ud.load(FOUR_BAR)
    q_open = m.q_initial()
    q_open[0] = 1.3   # the crank moved without the rest: the loop is open by ~0.17 m
    reds = []
    for name, q in (("closed", m.q_initial()), ("open", q_open)):
        app = WebApp(m, motion_from_pose(m, q), port=0)
        page = _open(browser, app)
        try:
            img = _shot(page, f"web_four_bar_{name}", tmp_path)
            img[600:, :100] = 255   # viser's axes gizmo (its x axis is red) in the corner
            reds.append(((img[..., 0] > 200) & (img[..., 1] < 50) & (img[..., 2] < 50)).sum())
            assert ("OPEN" in page.inner_text("body")) == (name == "open")
        finally:
            page.close()
            app.close()
    assert reds[0] < 20 and reds[1] > 100, reds


def test_open_loop_gap_is_labelled_with_its_size_and_fix(browser, tmp_path):
    """The browser viewer labels the gap of a loop with a sign error in its point with the gap's size and
    the nearest fix (as the window does), and draws the segment red."""
    from urdf_dyn_viewer.webapp import WebApp
    m = ud.load(ROOT / "tests" / "constraints" / "data" / "parallelogram_sign_error.urdf", check_loops=False)
    app = WebApp(m, motion_from_pose(m, m.q_initial()), port=0)
    page = _open(browser, app)
    try:
        label = "tie_rod_crank_pin: gap 2.24 m, 0 rad; closes if predecessor xyz z = -1.12 instead of +1.12"
        assert app.scene.gap_label["tie_rod_crank_pin"].text == label      # the label drawn in the scene
        page.wait_for_function("document.body.innerText.includes('instead of +1.12')", timeout=15000)
        assert label in page.inner_text("body")                             # and in the State panel
        img = _shot(page, "web_parallelogram_sign_error", tmp_path)
        img[600:, :100] = 255
        assert ((img[..., 0] > 200) & (img[..., 1] < 50) & (img[..., 2] < 50)).sum() > 100
    finally:
        page.close()
        app.close()


def test_cli_serves_a_run_folder(excavator_run, browser):
    """``urdf-dyn view RUN_DIR --web``: the robot from view.json, the URL on stdout, the page interactive."""
    folder = excavator_run[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "urdf_dyn.cli", "view", str(folder), "--web", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://localhost:{port}" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        page = browser.new_page()
        page.goto(f"http://localhost:{port}")
        page.wait_for_function("document.body.innerText.includes('sample 1 of')", timeout=60000)
        elapsed = time.perf_counter() - t0
        assert "soil force" in page.inner_text("body") and "dig bench" in page.inner_text("body")
        page.close()
        print(f"interactive {elapsed:.2f} s after the command")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_sizing_job_writes_a_recording_that_plays_offline(excavator_run, browser, tmp_path):
    """outputs.recording: one .html file with the client and the scene inside, opened from disk (file://,
    no server): no console errors, the excavator drawn (its yellow), and the scene moving (it plays)."""
    folder = excavator_run[0]
    html = folder / "dig_cycle.html"
    assert html.is_file() and html.stat().st_size > 100_000
    errors = []
    page = browser.new_page()
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(html.as_uri())
        page.add_style_tag(content=".mantine-Notifications-root { display: none !important; }")
        page.wait_for_timeout(4000)
        a = _shot(page, "recording_a", tmp_path)
        page.wait_for_timeout(2500)
        b = _shot(page, "recording_b", tmp_path)
        yellow = (a[..., 0] > 150) & (a[..., 1] > 100) & (a[..., 2] < 80)
        assert yellow.sum() > 500
        assert np.mean(np.abs(a - b).sum(-1) > 30) > 0.001   # the recording plays
        assert not errors, errors
    finally:
        page.close()


# -- the recording's fast paths -------------------------------------------------------------------
def _recorded(html):
    """[(time, message dict)] of a recording's page (viser's embedded, zstd-compressed msgpack)."""
    import base64
    import re

    import msgspec
    import zstandard
    b = base64.b64decode(re.search(r'__VISER_EMBED_DATA__="([^"]*)"', html).group(1))
    inner = zstandard.ZstdDecompressor().decompress(b[8:], max_output_size=int.from_bytes(b[:8], "little"))
    n = int.from_bytes(inner[:8], "little")
    return msgspec.msgpack.decode(inner[8:8 + n])["messages"]


def test_set_vector_sends_what_viser_s_own_setter_sends():
    """webscene.set_vector against viser's public setter (the oracle) on a second server: the same messages
    for new values, nothing for values within np.allclose of the current one, both attributes."""
    from urdf_dyn_viewer.webscene import set_vector
    rng = np.random.default_rng(3)
    servers = [viser.ViserServer(port=0, verbose=False) for _ in range(2)]
    try:
        recs, frames = [], []
        for s in servers:
            frames.append(s.scene.add_frame("/f", show_axes=False))
            recs.append(s.get_scene_serializer())
        p, w = rng.normal(size=3), rng.normal(size=4)
        values = []
        for k in range(40):
            if k % 4 == 1:
                p = p + 1e-9 * rng.normal(size=3)          # within allclose: no message
                w = w * (1 + 5e-6)                         # within rtol 1e-5: no message
            elif k % 4 == 2:
                w = w * (1 + 2e-5)                         # just outside rtol: a message
            else:
                p, w = rng.normal(size=3) * 10, rng.normal(size=4)
                w = w / np.linalg.norm(w)
            values.append((p.copy(), w.copy()))
        for pv, wv in values:
            frames[0].position, frames[0].wxyz = pv, wv
            set_vector(frames[1], "position", pv)
            set_vector(frames[1], "wxyz", wv)
        a, b = (_recorded(r.as_html()) for r in recs)
    finally:
        for s in servers:
            s.stop()
    assert len(a) == len(b) and a == b
    kinds = [m["type"] for _, m in a]
    assert 0 < kinds.count("SetPositionMessage") < 40 and 0 < kinds.count("SetOrientationMessage") < 40


def test_a_recording_is_the_same_file_twice_and_draws_the_pins_from_its_first_frame(excavator_run, tmp_path):
    """The pin loads are computed before the first frame (they used to arrive from a thread part-way
    through, at a time set by the machine's load): two recordings of one run are byte-identical, and the
    pin arrows are posed at t = 0."""
    from urdf_dyn_viewer.recording import write_recording
    from urdf_dyn_viewer.rundata import read_run
    run_dir, m, _, _ = excavator_run
    run = read_run(run_dir, m)
    paths = [write_recording(m, tmp_path / f"r{i}.html", run=run, fps=2)[0] for i in range(2)]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    recorded = _recorded(paths[0].read_text())
    first = [msg for t, msg in recorded if t == 0.0]
    assert any(msg.get("name", "") == "/arrows/pin" and len(msg["props"]["points"]) > 0 for msg in first
               if "props" in msg and "points" in msg["props"]), [m["type"] for m in first]
    # each sample sends at most one message per kind of arrow (one batched node each), not one per arrow
    times = sorted({t for t, _ in recorded})
    arrows = [(t, msg) for t, msg in recorded if str(msg.get("name", "")).startswith("/arrows")]
    per_sample = max(sum(1 for t, _ in arrows if t == u) for u in times)
    assert {msg["name"] for _, msg in arrows} <= {"/arrows", "/arrows/actuator", "/arrows/pin", "/arrows/soil", "/arrows/payload"}
    assert per_sample <= 2 * 4, per_sample


def test_the_jobs_recording_process_writes_what_the_job_itself_would(excavator_run, tmp_path, monkeypatch):
    """jobs.outputs.RecordingTask: the sizing job writes its recording in a forked process while it
    finishes the run. Its file is byte-identical to the one written in the job's own process; a child that dies
    without answering leaves the job to write the file itself; a recording the viewer cannot write is one
    warning line, as before."""
    import yaml
    from urdf_dyn.jobs.outputs import RecordingTask, write_recording
    from urdf_dyn.launch.document import Scenario, validate
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    import urdf_dyn.jobs.outputs as outputs
    run_dir, m, _, _ = excavator_run
    data = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    data["robot"]["file"] = str(EXCAVATOR)
    data["outputs"] = {"directory": str(run_dir), "recording": "rec.html", "animation_fps": 2}
    launch = Scenario(tmp_path / "x.yaml", data)
    validate(launch, SizeDocument, job="size")
    here, lines = {}, []
    write_recording(launch, m, run_dir, here, lines.append)
    ours = Path(here["recording"]).read_bytes()
    task = RecordingTask(launch, m, run_dir, lines.append)
    assert task._proc is not None                       # forked (pytest's main thread, Linux)
    out = {}
    task.finish(out)
    assert Path(out["recording"]).read_bytes() == ours and not lines
    Path(out["recording"]).unlink()
    monkeypatch.setattr(outputs.RecordingTask, "_child", lambda *a: os._exit(3))   # dies without a word
    out = {}
    RecordingTask(launch, m, run_dir, lines.append).finish(out)
    assert Path(out["recording"]).read_bytes() == ours and not lines
    monkeypatch.undo()
    import urdf_dyn_viewer.recording as rec
    monkeypatch.setattr(rec, "record_run", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no viser here")))
    out = {}
    RecordingTask(launch, m, run_dir, lines.append).finish(out)
    assert out == {} and lines == ["WARNING: outputs.recording rec.html not written: RuntimeError: no viser here"]


def test_a_run_folder_is_read_once_while_its_files_are_unchanged(excavator_run):
    """read_run returns the same RunData for the same folder and model until a file changes; the pin loads
    of two viewers of that run are computed once."""
    from urdf_dyn_viewer.forces import ForceSource
    from urdf_dyn_viewer.rundata import read_run
    run_dir, m, _, _ = excavator_run
    a = read_run(run_dir, m)
    assert read_run(run_dir, m) is a
    pins = ForceSource(m, run=a)._run_pins()
    assert pins and ForceSource(m, run=a)._run_pins() is pins
    view = run_dir / "view.json"
    st = view.stat()
    os.utime(view, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    b = read_run(run_dir, m)
    assert b is not a and b.pin_wrenches is None
    np.testing.assert_array_equal(b.motion.q, a.motion.q)
