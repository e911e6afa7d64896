"""Test helpers for the browser viewer: the main job's run folder completed with a soil.csv computed from
the scenario's soil model (urdf_dyn.machines.soil, the layout the sizing job writes) and a view.json, a
viser app in this process, and headless Chromium (Debian's) driven by playwright.

In CI (env CI set) a missing Chromium or playwright fails; elsewhere it skips."""
from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

IN_CI = bool(os.environ.get("CI"))
CHROMIUM = os.environ.get("URDF_DYN_CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCENARIO_SOIL = dict(ground=-1.45, edge=("bucket", (1.47, 0.0, 0.0)), plate=(-1.0, 0.0, 0.0), width=1.3,
                     capacity=1.19, edge_thickness=0.02, com=(0.75, 0.0, 0.35))


def need(what, why):
    if IN_CI:
        pytest.fail(f"{what} is missing in CI: {why}")
    pytest.skip(f"{what} is missing: {why}")


def browser_or_skip():
    """(playwright context manager, browser): headless Chromium from the system's package manager."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need("playwright", "pip install playwright")
    if not Path(CHROMIUM).is_file():
        need("chromium", "apt-get install chromium (.ci/run installs it)")
    pw = sync_playwright().start()
    profile = tempfile.mkdtemp(prefix="urdf_dyn_chromium_")
    browser = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                    args=CHROME_ARGS, viewport={"width": 1280, "height": 720})
    return pw, browser, profile


def close_browser(pw, browser, profile):
    try:
        browser.close()
    finally:
        pw.stop()
        shutil.rmtree(profile, ignore_errors=True)


def write_soil(run_dir, model, motion, soil_preset="clay", dig_until=8.5, release=(13.3, 16.3), ground=None):
    """soil.csv for the excavator's run: the scenario's soil (SCENARIO_SOIL) cut along the motion by
    urdf_dyn.machines.soil.soil_cutting, columns t, depth, F_x..F_z [N], v_x..v_z, rake, volume, payload
    — and view.json. Returns (force (N, 3), payload mass (N,))."""
    from urdf_dyn.machines.loads import Frame, frame_poses
    from urdf_dyn.machines.soil import soil_cutting, soil_preset as preset
    s = SCENARIO_SOIL
    soil = preset(soil_preset)
    fr = Frame(s["edge"][0], s["edge"][1])
    T = frame_poses(model, motion.q, fr)
    plate = T[:, :3, :3] @ np.array(s["plate"])
    t = motion.t
    cut = soil_cutting(t, T[:, :3, 3], plate, soil, s["ground"] if ground is None else ground, s["width"],
                       s["capacity"], active=t <= dig_until, edge_thickness=s["edge_thickness"])
    x = np.clip((t - release[0]) / (release[1] - release[0]), 0.0, 1.0)
    held = getattr(cut, "payload", None)
    mass = (soil.density * cut.volume if held is None else np.asarray(held)) * (1.0 - x * x * (3 - 2 * x))
    v = np.gradient(T[:, :3, 3], t, axis=0)
    rows = np.column_stack([t, cut.depth, cut.force, v, np.degrees(cut.rake), cut.volume, mass])
    with open(Path(run_dir) / "soil.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t [s]", "depth [m]", "F_x [N]", "F_y [N]", "F_z [N]", "v_x [m/s]", "v_y [m/s]", "v_z [m/s]",
                    "rake [deg]", "volume [m³]", "payload [kg]"])
        w.writerows(rows.tolist())
    if not (Path(run_dir) / "view.json").is_file():
        write_view_json(run_dir, model)
    return cut.force, mass


def write_view_json(run_dir, model):
    s = SCENARIO_SOIL
    (Path(run_dir) / "view.json").write_text(json.dumps({
        "robot": str(model.source), "bench_height": s["ground"],
        "edge": {"link": s["edge"][0], "xyz": list(s["edge"][1]), "rpy": [0, 0, 0]},
        "payload": {"link": s["edge"][0], "com": list(s["com"])}, "loop_tol": 1e-3}))
