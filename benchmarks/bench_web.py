"""Browser viewer speed: how soon the page is interactive after ``urdf-dyn view RUN_DIR --web``,
and how fast the main job's 2 111 samples scrub in headless Chromium.

    .venv/bin/python benchmarks/bench_web.py RUN_DIR [--repeat 3] [--steps 300] [--tree BEFORE_TREE]

RUN_DIR: the main job's output folder (``urdf-dyn run scenarios/excavator_dig.scenario.yaml``), with its
view.json (and soil.csv when the soil job writes it).

Measured:
- *URL*: from starting the command to its line with the URL on stdout (urdf_dyn's CLI and viser imported,
  the server started: the robot, the run and the scene are loaded after it, while the page loads);
- *interactive*: from starting the command to the page showing the State panel (the scene and the controls
  drawn; the slider answers) in headless Chromium (Debian's, launched by playwright);
- *scrub*: the timeline slider focused in the page and moved one sample per ArrowRight key press,
  ``--steps`` presses as fast as the browser takes them; the rate is the presses divided by the time until
  the page shows the last sample's time (each sample: the slider's value to the server, the scene posed,
  the arrows, the panel and the plot's cursor sent back, the page redrawn); and the page's own frame
  rate (requestAnimationFrame callbacks per second) while it scrubs;
- *playing*: after the Play button, the page's frame rate over 5 s and the samples it advanced per second
  (×1: 100 samples a second of motion at the main job's 0.01 s steps).

With ``--tree`` the rows alternate between that tree ("before") and this one ("now"), with the load average
before each. On a shared machine these are not verdicts: the targets need a quiet run (load < 1.5).
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]

FRAME_RATE = """() => { window.__frames = 0; const f = () => { window.__frames++; requestAnimationFrame(f); };
                       requestAnimationFrame(f); }"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(browser, run_dir, steps, tree=None):
    port = free_port()
    env = None
    if tree:   # another tree of urdf_dyn (bench_first_minute.export: its sitecustomize sets the install's aside)
        env = dict(os.environ, PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "urdf_dyn.cli", "view", str(run_dir), "--web", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tempfile.gettempdir())
    try:
        line = proc.stdout.readline()
        t_url = time.perf_counter() - t0
        if "http://" not in line:
            raise SystemExit(f"no URL: {line!r} {proc.stderr.read()}")
        page = browser.new_page()
        page.goto(f"http://localhost:{port}")
        page.wait_for_function("document.body.innerText.includes(' · sample 1 of ')", timeout=120000)
        t_ready = time.perf_counter() - t0
        page.wait_for_timeout(3000)
        slider = page.get_by_role("slider").first
        slider.focus()
        page.evaluate(FRAME_RATE)
        t1 = time.perf_counter()
        for _ in range(steps):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.innerText.includes('sample {steps + 1} of')", timeout=300000)
        dt = time.perf_counter() - t1
        frames = page.evaluate("window.__frames")
        # playing (the Play button: the server advances the time, 30 scene updates a second at most)
        sample = "parseInt(document.body.innerText.match(/sample (\\d+) of/)[1])"
        k0 = page.evaluate(sample)
        page.get_by_role("button", name="Play").click()
        page.evaluate(FRAME_RATE)
        t2 = time.perf_counter()
        page.wait_for_timeout(5000)
        play_fps = page.evaluate("window.__frames") / (time.perf_counter() - t2)
        advanced = page.evaluate(sample) - k0
        page.close()
        return t_url, t_ready, steps / dt, frames / dt, play_fps, advanced / 5.0
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--tree", help="also run the viewer of this exported tree of urdf_dyn (bench_first_minute."
                    "export), in turn with this one: the 'before' column")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    trees = ([("before", a.tree)] if a.tree else []) + [("now", None)]
    profile = tempfile.mkdtemp(prefix="bench_web_")
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(profile, executable_path=a.chromium, headless=True,
                                                        args=CHROME_ARGS, viewport={"width": 1280, "height": 720})
        try:
            for k in range(a.repeat):
                for name, tree in trees:        # in turn: the machine's load falls on both alike
                    la = os.getloadavg()[0]
                    rows.append((k + 1, name, la, *one_run(browser, a.run_dir, a.steps, tree)))
        finally:
            browser.close()
            shutil.rmtree(profile, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (each row: the load before it)")
    print("run  tree    load  URL [s]  interactive [s]  scrub [samples/s]  page frames/s  playing: page frames/s  samples/s")
    for k, name, la, u, r, s, f, pf, ps in rows:
        print(f"{k:3d}  {name:6s}  {la:4.1f}  {u:7.2f}  {r:15.2f}  {s:17.1f}  {f:13.1f}  {pf:22.1f}  {ps:9.1f}")


if __name__ == "__main__":
    main()
