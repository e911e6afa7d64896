"""The balancers drawn by the viewers (``urdf_dyn_viewer.balancers``): each one's segment ends are its pins
as forward kinematics places them, its force is the element's own law; the window/GIF overlay draws them in
pink (and nothing changes for a model without balancers); the browser scene has their nodes. In CI (env CI
set) nothing here may skip."""
import warnings

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from urdf_dyn.algorithms.force_elements import balancer_generalized_forces, balancers_from
from viewerkit import EXCAVATOR, IN_CI, RobotScene, gl  # noqa: F401 - gl: the fixture
from _robots import ROOT

FANUC = ROOT / "robots" / "fanuc_m900ib700" / "fanuc_m900ib700_loops.urdf"
PALLETIZER = ROOT / "scenarios" / "palletizer_cycle.scenario.yaml"
# a third balancer, a coil spring whose pins sit off every axis, on links three joints apart: rotations matter
COIL = {"name": "test_coil", "type": "coil_spring", "action": "push", "link_a": "link_1", "xyz_a": [0.12, 0.21, 0.33],
        "link_b": "link_4", "xyz_b": [0.05, -0.14, 0.22], "rate": 2.0e5, "free_length": 2.0, "preload": 1.0e3}
PINK = np.array([230, 26, 140])   # overlay.BALANCER_RGB in 8 bits


def pink(img):
    return np.abs(img.astype(int) - PINK).max(axis=-1) <= 12


@pytest.fixture(scope="module")
def fanuc():
    """The FANUC M-900iB/700 with the palletizer scenario's two J2 gas springs and the coil spring COIL."""
    specs = yaml.safe_load(PALLETIZER.read_text())["robot"]["balancers"] + [COIL]
    with warnings.catch_warnings():            # the ROS-Industrial file's effort="0"
        warnings.simplefilter("ignore")
        m = ud.load(FANUC)
    return balancers_from(m, specs), specs


def random_q(m, seed=3):
    """A random state: each coordinate moved by up to ±0.6 from the initial one, kept 0.05 inside its limits
    (a generic pose: no pin on a joint axis, no two segments aligned)."""
    rng = np.random.default_rng(seed)
    q = m.q_initial() + rng.uniform(-0.6, 0.6, m.nq)
    return np.clip(q, m.lower + 0.05, m.upper - 0.05)


def test_segments_end_at_the_pins_and_carry_the_element_force(fanuc):
    """At a random state: each balancer's ends are link_pose(link) · xyz of its two pins, computed here from
    the links' own poses; its length and force are those of force_elements (F(L), + pushing apart)."""
    m, specs = fanuc
    q = random_q(m)
    robot = RobotScene(m, visuals=[])
    robot.set_q(q, graph=False)
    states = robot.balancers()
    assert [s.name for s in states] == [s["name"] for s in specs]
    _, info = balancer_generalized_forces(m, q, detail=True)
    for s, spec in zip(states, specs):
        for end, link, xyz in ((s.a, spec["link_a"], spec["xyz_a"]), (s.b, spec["link_b"], spec["xyz_b"])):
            T = ud.link_pose(m, q, link)
            np.testing.assert_allclose(end, T[:3, :3] @ np.asarray(xyz) + T[:3, 3], atol=1e-12)
        L, F = info[s.name]
        assert s.length == pytest.approx(float(np.linalg.norm(s.b - s.a)), abs=1e-12)
        assert s.length == pytest.approx(float(L[0]), abs=1e-12) and s.force == pytest.approx(float(F[0]), rel=1e-12)
        assert np.isfinite(s.force) and s.force != 0
    assert states[0].force < 0 < states[2].force      # the gas springs pull, the coil pushes
    assert robot.balancers() is states                 # kept for the pose; a new pose, new pins
    robot.set_q(m.q_initial(), graph=False)
    assert not np.allclose(robot.balancers()[2].a, states[2].a)


def test_no_balancer_layer_without_balancers():
    m = ud.load(EXCAVATOR)
    assert m.balancers == () and RobotScene(m, visuals=[]).balancers() == []


def test_the_window_overlay_draws_them_in_pink_with_their_force(fanuc, gl, tmp_path):
    """An offscreen frame of the FANUC at a random pose: pink pixels along each projected segment, the HUD
    listing them; none with the layer off (key k), and an excavator viewer has the layer off."""
    import imageio.v2 as imageio
    from viewerkit import viewer
    m, _ = fanuc
    v = viewer(m, random_q(m), size=(480, 360))
    try:
        img = v.render()
        imageio.imwrite(tmp_path / "fanuc_balancers.png", img)
        assert v.flags["balancers"]
        for s in v.robot.balancers():
            (xa, ya), (xb, yb) = v.project(s.a), v.project(s.b)
            hits = 0
            for f in np.linspace(0.1, 0.9, 9):       # the line's pixels (GL rows counted from the bottom)
                x, y = int(round(xa + f * (xb - xa))), img.shape[0] - 1 - int(round(ya + f * (yb - ya)))
                hits += bool(pink(img[max(0, y - 2):y + 3, max(0, x - 2):x + 3]).any())
            assert hits >= 7, (s.name, hits)
        hud = [t for t, _ in v.hud_lines()]
        assert any(t.startswith("balancers:") for t in hud) and any("test_coil" in t and "F = +" in t for t in hud)
        assert pink(img).sum() > 100
        v.flags["balancers"] = False
        assert pink(v.render()).sum() == 0
    finally:
        v.close()
    e = ud.load(EXCAVATOR)
    v = viewer(e, e.q_initial(), size=(160, 120))
    try:
        assert v.flags["balancers"] is False
    finally:
        v.close()


def test_the_web_scene_has_the_balancer_nodes(fanuc):
    """The browser scene: one segments node whose ends are the pins at the sample shown, a label per
    balancer with its force; hidden with the layer off; no such node for a model without balancers."""
    if not IN_CI:
        pytest.importorskip("viser", reason="pip install viser")
    from urdf_dyn_viewer.balancers import balancer_label
    from urdf_dyn_viewer.webapp import start_server
    from urdf_dyn_viewer.webscene import WebScene
    m, specs = fanuc
    q = random_q(m, seed=5)
    server = start_server(port=0)
    try:
        sc = WebScene(server, RobotScene(m, visuals=[]), points=np.zeros((2, 3)) + [[0, 0, 0], [3, 3, 3]])
        assert sc.balancers._impl.name == "/balancers/segments"
        assert [h._impl.name for h in sc.balancer_labels] == [f"/balancers/label_{i}" for i in range(len(specs))]
        sc.show(0, q)
        states = sc.robot.balancers()
        np.testing.assert_allclose(np.asarray(sc.balancers.points), [(s.a, s.b) for s in states], atol=1e-6)
        assert [h.text for h in sc.balancer_labels] == [balancer_label(s) for s in states]
        assert sc.balancers.visible and all(h.visible for h in sc.balancer_labels)
        sc.show(0, q, layers=("loops",))
        assert not sc.balancers.visible and not any(h.visible for h in sc.balancer_labels)
        e = ud.load(EXCAVATOR)
        ex = WebScene(server, RobotScene(e, visuals=[]), points=np.zeros((2, 3)) + [[0, 0, 0], [3, 3, 3]])
        assert ex.balancers is None and ex.balancer_labels == []
    finally:
        server.stop()
