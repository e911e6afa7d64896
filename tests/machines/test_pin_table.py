"""An excavator from its side-view pin table: ``urdf_dyn.machines.excavator_builder``.

Oracles, none of them the builder's own output:
- the table itself: the built model, assembled at its initial configuration and at other strokes, puts
  the pins where plane geometry says (the table's pins at q = 0; at other strokes, every body keeps its
  pins' distances and each cylinder's pin-to-pin length is its table length + q);
- the URDF the earlier generator wrote (``data/excavator_generator_6bfaa15.urdf``, the committed
  ``robots/excavator.urdf`` before the pin table), against what the builder makes of the table that was
  read off it (``data/excavator_pins_6bfaa15.yaml``, robots/excavator_pins.yaml before its calibration):
  same joints, frames, masses, inertias, loops, and the same tree inverse dynamics and actuator forces at
  assembled states away from the stroke ends (1e-9 relative);
- the closed-loop assembly solver: the revolute ranges the builder finds by following the linkage are
  those the assembled model sweeps when each cylinder runs over its stroke.
"""

import numpy as np
import pytest
import yaml

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms.kinematics import link_pose
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.motion import CoordinateMotion, consistent_motion
from urdf_dyn.errors import ModelError
from urdf_dyn.machines.excavator_builder import RANGE_MARGIN, excavator_urdf
from urdf_dyn.machines.pin_table import load_pin_table, pin_table_from_dict

PINS = ROOT / "robots" / "excavator_pins.yaml"
URDF = ROOT / "robots" / "excavator.urdf"
OLD = ROOT / "tests" / "machines" / "data" / "excavator_generator_6bfaa15.urdf"
#: robots/excavator_pins.yaml as it was read off the generator's URDF, before its calibration
OLD_PINS = ROOT / "tests" / "machines" / "data" / "excavator_pins_6bfaa15.yaml"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
#: where each pin is in the built model: (link, point in the link frame) or (loop, "p"/"s")
PIN_AT = {"boom_foot": "boom", "boom_cylinder_base": "boom_cyl_barrel", "boom_cylinder_eye": "boom_cyl_rod",
          "stick_cylinder_base": "stick_cyl_barrel", "boom_nose": "stick", "stick_cylinder_eye": "stick_cyl_rod",
          "bucket_cylinder_base": "bucket_cyl_barrel", "side_link_pivot": "side_link", "bucket_pivot": "bucket",
          "bucket_cylinder_eye": "h_link", "tip": "bucket_tip"}
#: pins that ride on one rigid body
BODIES = {"boom": ("boom_foot", "boom_cylinder_eye", "stick_cylinder_base", "boom_nose"),
          "stick": ("boom_nose", "stick_cylinder_eye", "bucket_cylinder_base", "side_link_pivot", "bucket_pivot"),
          "bucket": ("bucket_pivot", "h_link_pin", "tip"), "side_link": ("side_link_pivot", "bucket_cylinder_eye"),
          "h_link": ("bucket_cylinder_eye", "h_link_pin")}
CYLS = {"boom_cyl": ("boom_cylinder_base", "boom_cylinder_eye"),
        "stick_cyl": ("stick_cylinder_base", "stick_cylinder_eye"),
        "bucket_cyl": ("bucket_cylinder_base", "bucket_cylinder_eye")}


@pytest.fixture(scope="module")
def table():
    return load_pin_table(PINS)


@pytest.fixture(scope="module")
def model():
    return ud.load(URDF)


@pytest.fixture(scope="module")
def old():
    return ud.load(OLD)


@pytest.fixture(scope="module")
def old_built():
    """The builder's model of the table read off the generator's URDF (before the calibration)."""
    return ud.load(excavator_urdf(OLD_PINS))


def pin_positions(model, q):
    """{pin: (x, z)} of the assembled model at q, from forward kinematics."""
    out = {}
    for pin, link in PIN_AT.items():
        if link in model.links:
            out[pin] = link_pose(model, q, link)[[0, 2], 3]
    lp = next(lp for lp in model.loops if lp.name == "h_link_bucket_pin")
    out["h_link_pin"] = (link_pose(model, q, lp.predecessor) @ lp.T_P)[[0, 2], 3]
    for lp in model.loops:  # both frames of every loop at the same point
        a = link_pose(model, q, lp.predecessor) @ lp.T_P
        b = link_pose(model, q, lp.successor) @ lp.T_S
        assert np.allclose(a[:3, 3], b[:3, 3], atol=1e-9), lp.name
    return out


def test_committed_urdf_is_built_from_the_table():
    """robots/excavator.urdf is exactly what the builder makes of robots/excavator_pins.yaml."""
    assert excavator_urdf(PINS) == URDF.read_text()


def test_assembled_table_pose_gives_the_pins_back(table, model):
    q = assemble(model)
    assert np.abs(q).max() < 1e-9  # the table's pose is the initial configuration, every joint 0
    got = pin_positions(model, q)
    # robots/excavator_pins.yaml asks for no marker links (see its comment): the tip on the bucket's x axis
    assert "bucket_tip" not in model.links and not table.marker_links
    r = np.linalg.norm(table.pin("tip") - table.pin("bucket_pivot"))
    got["tip"] = (link_pose(model, q, "bucket") @ [r, 0, 0, 1])[[0, 2]]
    assert sorted(got) == sorted(list(PIN_AT) + ["h_link_pin"])
    for pin, p in got.items():
        np.testing.assert_allclose(p, table.pin(pin), atol=1e-9, err_msg=pin)
    # the swing axis carries the house; the tip frame is a fixed link on the bucket
    assert np.allclose(link_pose(model, q, "house")[:3, 3], [0, 0, table.swing.height])


@pytest.mark.parametrize("y", [(0.4, -0.5, -0.9, 0.3), (-1.0, 0.2, 0.15, -0.45), (2.0, -0.8, -0.3, 0.45)])
def test_other_strokes_keep_the_geometry(table, model, y):
    """Away from the table's pose: bodies keep their pins' distances, cylinder length = table length + q, and
    the swing turns the side view about z."""
    q = model.q_initial()
    for j, v in zip(ACTS, y):
        q[model.joint_index(j)] = v
    q = assemble(model, q, hold=ACTS, residual_tol=1e-9)
    world = {}
    r = np.linalg.norm(table.pin("tip") - table.pin("bucket_pivot"))
    for pin, link in PIN_AT.items():
        world[pin] = (link_pose(model, q, link)[:3, 3] if link in model.links else
                      (link_pose(model, q, "bucket") @ [r, 0, 0, 1])[:3])
    lp = next(lp for lp in model.loops if lp.name == "h_link_bucket_pin")
    world["h_link_pin"] = (link_pose(model, q, lp.predecessor) @ lp.T_P)[:3, 3]
    d = lambda a, b: np.linalg.norm(table.pin(a) - table.pin(b))  # noqa: E731
    for body, pins in BODIES.items():
        for i, a in enumerate(pins):
            for b in pins[i + 1:]:
                assert np.linalg.norm(world[a] - world[b]) == pytest.approx(d(a, b), abs=1e-9), (body, a, b)
    for cyl, (a, b) in CYLS.items():
        L = np.linalg.norm(world[a] - world[b])
        assert L == pytest.approx(d(a, b) + q[model.joint_index(cyl)], abs=1e-9), cyl
    # every pin lies in the vertical plane through the swing axis at the swing angle
    n = np.array([-np.sin(y[0]), np.cos(y[0]), 0.0])
    assert max(abs(p @ n) for p in world.values()) < 1e-9
    assert world["boom_foot"][2] == pytest.approx(table.pin("boom_foot")[1], abs=1e-12)


def test_same_joints_frames_masses_and_loops_as_the_generator(old_built, old):
    model = old_built
    assert model.joint_names == old.joint_names and model.joint_types == old.joint_types
    assert model.body_names == old.body_names and list(model.parent) == list(old.parent)
    np.testing.assert_allclose(model.axis, old.axis, atol=1e-12)
    np.testing.assert_allclose(model.T_tree, old.T_tree, atol=1e-9)
    for i in range(1, len(model.I)):
        np.testing.assert_allclose(model.I[i], old.I[i], atol=1e-9 * np.abs(old.I[i]).max(), err_msg=model.body_names[i])
    np.testing.assert_allclose(model.lower, old.lower, atol=1e-9)
    np.testing.assert_allclose(model.upper, old.upper, atol=1e-9)
    # the generator rounded the effort limits to 1 N and the cylinder speeds to 1 mm/s
    np.testing.assert_allclose(model.effort_limit, old.effort_limit, atol=0.5)
    np.testing.assert_allclose(model.velocity_limit, old.velocity_limit, atol=5e-4)
    assert [lp.name for lp in model.loops] == [lp.name for lp in old.loops]
    for a, b in zip(model.loops, old.loops):
        assert (a.predecessor, a.successor, a.type) == (b.predecessor, b.successor, b.type)
        np.testing.assert_allclose(a.T_P, b.T_P, atol=1e-9)
        np.testing.assert_allclose(a.T_S, b.T_S, atol=1e-9)
    assert [t.joints for t in model.transmissions] == [t.joints for t in old.transmissions]
    assert dict(model.link_masses) == dict(old.link_masses)


def test_same_dynamics_as_the_generator(old_built, old):
    """Tree inverse dynamics and closed-loop actuator forces (RBDA eq. 8.63) at assembled states away from
    the stroke ends, each model assembling its own state from the same independent coordinates."""
    model = old_built
    rng = np.random.default_rng(25)
    y = np.array([[0.3, -0.4, -0.6, -0.2], [1.2, 0.1, -0.2, 0.3], [-0.7, -0.7, 0.1, -0.4]])
    yd = rng.uniform(-0.3, 0.3, y.shape)
    ydd = rng.uniform(-1.0, 1.0, y.shape)
    for k in range(len(y)):
        mo = CoordinateMotion(ACTS, np.zeros(1), y[k:k + 1], yd[k:k + 1], ydd[k:k + 1])
        Qn, QDn, QDDn = consistent_motion(model, mo)
        Qo, QDo, QDDo = consistent_motion(old, mo)
        np.testing.assert_allclose(Qn, Qo, atol=1e-9)
        np.testing.assert_allclose(QDn, QDo, atol=1e-9)
        tau_n = ud.inverse_dynamics(model, Qn[0], QDn[0], QDDn[0])
        tau_o = ud.inverse_dynamics(old, Qo[0], QDo[0], QDDo[0])
        np.testing.assert_allclose(tau_n, tau_o, rtol=0, atol=1e-9 * np.abs(tau_o).max())
        un = ud.actuator_forces(model, Qn[0], QDn[0], QDDn[0], actuated=ACTS)
        uo = ud.actuator_forces(old, Qo[0], QDo[0], QDDo[0], actuated=ACTS)
        np.testing.assert_allclose(un.u, uo.u, rtol=1e-9, atol=1e-9 * np.abs(uo.u).max())


def _moved(pin, dz, tmp_path, source=PINS):
    """The table ``source`` with one pin moved up by dz [m], built and loaded."""
    data = yaml.safe_load(source.read_text())
    data["pins"][pin][1] += dz
    f = tmp_path / "moved.urdf"
    f.write_text(excavator_urdf(data))
    return ud.load(f)


@pytest.mark.parametrize("case", ["committed", "wide bucket"])
def test_revolute_ranges_are_those_the_strokes_sweep(case, model, tmp_path):
    """The limits (found by the builder by plane geometry) against the closed-loop assembly solver: each
    cylinder run over its whole stroke with the others held, the passive joints' extremes. "wide bucket":
    the bucket cylinder's base 0.1 m lower on the table before its calibration turns the bucket through more
    than 180°."""
    if case == "wide bucket":
        model = _moved("bucket_cylinder_base", -0.10, tmp_path, OLD_PINS)
        k = model.joint_index("bucket")
        assert model.upper[k] - model.lower[k] > np.pi + 2 * RANGE_MARGIN
    sweeps = {"boom_cyl": ("boom", "boom_cyl_pin"), "stick_cyl": ("stick", "stick_cyl_pin"),
              "bucket_cyl": ("bucket", "side_link_pin", "h_link_pin", "bucket_cyl_pin")}
    for cyl, joints in sweeps.items():
        j = model.joint_index(cyl)
        Q = []
        for end in (model.lower[j], model.upper[j]):  # from the table's pose (q = 0) to either stroke end
            y = np.zeros((401, 4))
            y[:, ACTS.index(cyl)] = np.linspace(0.0, end, 401)
            t = np.linspace(0, 1, 401)
            Q.append(consistent_motion(model, CoordinateMotion(ACTS, t, y, np.zeros_like(y), np.zeros_like(y)))[0])
        Q = np.vstack(Q)
        for name in joints:
            k = model.joint_index(name)
            assert Q[:, k].min() == pytest.approx(model.lower[k] + RANGE_MARGIN, abs=2e-5), name
            assert Q[:, k].max() == pytest.approx(model.upper[k] - RANGE_MARGIN, abs=2e-5), name


def test_table_without_visuals_or_cylinder_masses_builds_a_working_model(tmp_path):
    """The generic path: simple shapes between the pins, massless cylinders, a lip, no limits."""
    data = yaml.safe_load(PINS.read_text())
    data.pop("visuals"), data.pop("materials"), data.pop("hydraulics"), data.pop("swing")
    for part in ("boom", "stick", "bucket"):
        for end in ("barrel", "rod"):
            data["masses"].pop(f"{part}_cyl_{end}")
    tip, B = np.array(data["pins"]["tip"]), np.array(data["pins"]["bucket_pivot"])
    data["pins"]["lip"] = list(B + 0.9 * (tip - B))
    data.pop("marker_links")  # default: true
    f = tmp_path / "plain.urdf"
    f.write_text(excavator_urdf(data))
    m = ud.load(f)
    q = assemble(m)
    assert np.allclose(link_pose(m, q, "bucket_lip")[[0, 2], 3], data["pins"]["lip"], atol=1e-9)
    assert np.allclose(link_pose(m, q, "bucket_tip")[[0, 2], 3], tip, atol=1e-9)
    assert "<visual" in f.read_text() and m.link_masses["boom_cyl_rod"] == 0
    # swing.height defaults to 0: the house frame on the ground, pins unchanged
    got = pin_positions(m, q)
    assert np.allclose(got["tip"], tip, atol=1e-9)


def _bad(mutate):
    data = yaml.safe_load(PINS.read_text())
    mutate(data)
    with pytest.raises(ModelError) as e:
        excavator_urdf(pin_table_from_dict(data, "t.yaml"))
    return str(e.value)


@pytest.mark.parametrize("mutate, key, words", [
    (lambda d: d["pins"].pop("h_link_pin"), "pins.h_link_pin", "required"),
    (lambda d: d["pins"].update(stick_nose=[1, 2]), "pins.stick_nose", "unknown key"),
    (lambda d: d["cylinders"]["boom"].update(rod=0.12), "cylinders.boom.rod", "smaller than the bore"),
    (lambda d: d["masses"]["stick"].update(mass=-1000), "masses.stick.mass", "must be > 0"),
    (lambda d: d["pins"].update(lip=[3.2, 1.4]), "pins.lip", "farther out than the tip"),
    (lambda d: d["cylinders"]["stick"].update(min_length=0.5), "cylinders.stick.min_length", "cannot close"),
    (lambda d: d["cylinders"]["boom"].update(max_length=9.0), "cylinders.boom.max_length", "cannot close"),
    (lambda d: d["cylinders"]["bucket"].update(max_length=3.2), "cylinders.bucket.max_length", "cannot close"),
    (lambda d: d["cylinders"]["bucket"].update(min_length=2.4), "pins.bucket_cylinder_eye", "outside its stroke"),
    (lambda d: d["masses"]["boom"].update(inertia=[1, 1, 5, 0, 0, 0]), "masses.boom.inertia", "not those of a body"),
])
def test_bad_tables_name_the_file_and_key(mutate, key, words):
    msg = _bad(mutate)
    assert msg.startswith(f"t.yaml: {key}: ") and words in msg and "\n" not in msg, msg


def test_cli_writes_the_urdf(tmp_path, capsys):
    from urdf_dyn.cli.main import main
    out = tmp_path / "machine.urdf"
    assert main(["excavator", str(PINS), "-o", str(out)]) == 0
    assert out.read_text() == URDF.read_text()
    assert "4 loops" in capsys.readouterr().out
    bad = tmp_path / "bad.pins.yaml"
    data = yaml.safe_load(PINS.read_text())
    data["cylinders"]["bucket"]["rod"] = 0.2
    bad.write_text(yaml.safe_dump(data))
    assert main(["excavator", str(bad), "-o", str(tmp_path / "x.urdf")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.pins.yaml: cylinders.bucket.rod:" in err[0], err
    assert not (tmp_path / "x.urdf").exists()
