"""The out-of-plane load cases (urdf_dyn.machines.lateral_cases) against an independent oracle: a hand-written
3-D free-body statics of the whole upper structure (per body ΣF = 0 and ΣM = 0, every pin reaction an unknown,
solved with numpy) for the statically determinate idealisation of the module docstring — tree pins carry a
force and the moments across their axis, the prismatic joints and the swing a full wrench, the loop pins
only their in-plane force. Masses, centres of mass and the loop pins' places are read from the URDF with
lxml, not from the model; the link poses come from forward kinematics. Then the directions: the wall pushes
the bucket away from the wall and the ring's torque is the swing relief's, the pins balance the corner
offset's moment −b ŷ × F, and the FE export of every new case is in equilibrium."""
import numpy as np
import pytest
from lxml import etree

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.machines import lateral_cases as lc
from urdf_dyn.machines.fe_export import free_bodies
from urdf_dyn.machines.pins import pin_loads
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.machines.stability import tipping_polygon
from urdf_dyn.machines.stall import stall_envelopes

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
LINE = {"boom_cyl": {"head": 41e6, "rod": 38e6}, "stick_cyl": {"head": 38e6, "rod": 41e6},
        "bucket_cyl": {"head": 38e6, "rod": 38e6}}
LIP = np.array([1.461061, 0.0, 0.183701])
HALF = 0.65
FOOT = tipping_polygon(3.65, 2.38)
PINS = {"boom_foot": "boom", "boom_nose": "stick", "bucket_pivot": "bucket", "side_link_pivot": "side_link_pin",
        "h_link_pin": "h_link_bucket_pin", "boom_cylinder_eye": "boom_cylinder_eye"}
T_SWING = 74e3 / 26.8e6 * 25.5e6


@pytest.fixture(scope="module")
def model():
    return ud.load(EXC)


@pytest.fixture(scope="module")
def env(model):
    return stall_envelopes(model, CYL, 38e6, ("bucket", lc.corner_point(LIP, HALF)), holding_relief=LINE,
                           footprint=FOOT, n=(3, 4, 4), n_fan=8)


def _urdf():
    root = etree.parse(str(EXC)).getroot()
    mass, com = {}, {}
    for ln in root.findall("link"):
        i = ln.find("inertial")
        if i is not None:
            mass[ln.get("name")] = float(i.find("mass").get("value"))
            com[ln.get("name")] = np.array([float(x) for x in i.find("origin").get("xyz").split()])
    loops = {}
    for lp in root.findall("loop"):
        s = lp.find("successor")
        loops[lp.get("name")] = (lp.find("predecessor").get("link"), s.get("link"),
                                 np.array([float(x) for x in s.find("origin").get("xyz").split()]))
    joints = {j.get("name"): (j.get("type"), j.find("parent").get("link"), j.find("child").get("link"))
              for j in root.findall("joint")}
    return mass, com, loops, joints


def _perp(a):
    e1 = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 0, 1.0])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(a, e1)


def oracle(model, q, f_world, point_world, g=9.81):
    """{joint or loop: (force (3,), moment (3,) about the pin centre)} in world axes on the child / successor:
    the 3-D statics of every body above the undercarriage (module docstring), one lateral case."""
    mass, com, loops, joints = _urdf()
    T = ud.forward_kinematics(model, q)
    bodies = [b for b in mass if b != "undercarriage"]
    cols, unk = [], []                       # each unknown: (name, child, parent, point, basis vector, is_moment)
    for name, (typ, parent, child) in joints.items():
        o = T[child][:3, 3]
        a = T[child][:3, :3] @ [0.0, 1.0, 0.0]
        full = typ in ("prismatic", "continuous")             # actuated: the whole wrench is unknown
        for e in np.eye(3):
            unk.append((name, child, parent, o, e, False))
        for e in (np.eye(3) if full else _perp(a)):
            unk.append((name, child, parent, o, e, True))
    for name, (pred, succ, xyz) in loops.items():
        o = (T[succ] @ np.r_[xyz, 1.0])[:3]
        a = T[succ][:3, :3] @ [0.0, 1.0, 0.0]
        for e in _perp(a):
            unk.append((name, succ, pred, o, e, False))
    A = np.zeros((6 * len(bodies), len(unk)))
    b = np.zeros(6 * len(bodies))
    for k, (name, child, parent, o, e, mom) in enumerate(unk):
        for body, s in ((child, 1.0), (parent, -1.0)):
            if body in bodies:
                i = 6 * bodies.index(body)
                if mom:
                    A[i:i + 3, k] += s * e
                else:
                    A[i:i + 3, k] += s * np.cross(o, e)
                    A[i + 3:i + 6, k] += s * e
    for body in bodies:
        i = 6 * bodies.index(body)
        c = (T[body] @ np.r_[com[body], 1.0])[:3]
        w = np.array([0.0, 0.0, -g * mass[body]])
        b[i:i + 3] -= np.cross(c, w)
        b[i + 3:i + 6] -= w
    i = 6 * bodies.index("bucket")
    b[i:i + 3] -= np.cross(point_world, f_world)
    b[i + 3:i + 6] -= f_world
    assert np.linalg.matrix_rank(A) == len(unk) == A.shape[0]       # statically determinate
    x = np.linalg.solve(A, b)
    out = {}
    for k, (name, _, _, o, e, mom) in enumerate(unk):
        F, M = out.setdefault(name, (np.zeros(3), np.zeros(3)))
        (M if mom else F)[:] += x[k] * e
    return out


@pytest.fixture(scope="module")
def state(model):
    q = model.q_initial()
    for c, x in (("boom_cyl", -0.30), ("stick_cyl", -0.55), ("bucket_cyl", -0.10)):
        q[model.joint_index(c)] = x
    return assemble(model, q, hold=ACTS, residual_tol=1e-12)


def test_pin_loads_match_the_hand_3d_statics(model, state):
    """An eccentric tooth load (digging force at the corner plus a side force) at a pose away from every
    stroke end: every tree pin's force and moment and every loop pin's force agree with the oracle to 1e-9 of
    the largest force (moments to 1e-9 of the largest force times 1 m)."""
    q = state
    Tb = ud.link_pose(model, q, "bucket")
    corner = lc.corner_point(LIP, HALF)
    f = np.array([-180e3, -25e3, 90e3])
    pw = (Tb @ np.r_[corner, 1.0])[:3]
    fl = Tb[:3, :3].T @ f
    z = np.zeros((1, model.nv))
    pl = pin_loads(model, [0.0], q[None], z, z, None, f_ext={"bucket": np.r_[np.cross(corner, fl), fl][None]})
    ref = oracle(model, q, f, pw)
    T = ud.forward_kinematics(model, q)
    scale = max(np.linalg.norm(F) for F, _ in ref.values())
    for name in model.joint_names:
        if name not in pl.wrench:
            continue
        R = T[_child(name)][:3, :3]
        w = pl.wrench[name][0]
        F, M = ref[name]
        assert np.linalg.norm(R @ w[3:] - F) <= 1e-9 * scale, name
        assert np.linalg.norm(R @ w[:3] - M) <= 1e-9 * scale, name
    for lp in model.loops:
        w = pl.wrench[lp.name][0]
        Rp = (T[lp_pred(lp.name)] @ _fp_pose(lp.name))[:3, :3]
        assert np.linalg.norm(Rp @ w[3:] - ref[lp.name][0]) <= 1e-9 * scale, lp.name
        assert np.allclose(w[:3], 0.0, atol=1e-9 * scale)                  # a pin: no moment
    # the side force reaches the ring through the main chain: the ring's side force is the tooth's
    assert np.isclose(ref["swing"][0][1], -f[1], rtol=1e-9)


def _child(name):
    return {j: c for j, (_, _, c) in _urdf()[3].items()}[name]


def lp_pred(name):
    return _urdf()[2][name][0]


def _fp_pose(name):
    root = etree.parse(str(EXC)).getroot()
    lp = [x for x in root.findall("loop") if x.get("name") == name][0]
    o = lp.find("predecessor").find("origin")
    T = np.eye(4)
    T[:3, 3] = [float(x) for x in o.get("xyz").split()]
    r, p, y = (float(x) for x in o.get("rpy").split())
    assert abs(r) < 1e-12 and abs(y) < 1e-12
    T[:3, :3] = [[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]]
    return T


def test_swing_stall_pushes_the_right_way(model, env):
    """Swing stall against a wall: at every state the swing relief (not tipping) limits, the ring's torque is
    T = D p exactly; the governing state's side force at each main pin is T / r, and its direction: the wall
    on the left (+y) pushes the bucket towards −y, so the house pushes the boom (and the undercarriage the
    house) towards +y, and the motor's torque is counter-clockwise (+z)."""
    case = lc.swing_stall_case(model, env, PINS, T_SWING, FOOT)
    assert case.ring["torque_Nm"] == pytest.approx(T_SWING, rel=1e-9)
    e = np.array([0.0, 1.0, 0.0])
    xb = np.array([1.0, 0.0, 0.0])
    k = int(np.argmax(env.lip @ xb > FOOT[:, 0].max()))                    # a pose with the tooth ahead of the tracks
    r = env.lip[k] @ xb
    F = -T_SWING / r * e                                                    # the wall on the left
    Tb = ud.link_pose(model, env.Q[k], "bucket")
    fl = Tb[:3, :3].T @ F
    z = np.zeros((1, model.nv))
    pl = pin_loads(model, [0.0], env.Q[k][None], z, z, {"boom_foot": "boom", "ring": "swing"},
                   f_ext={"bucket": np.r_[np.cross(env.tip[1], fl), fl][None]})
    Tf = ud.forward_kinematics(model, env.Q[k])
    assert (Tf["boom"][:3, :3] @ pl.wrench["boom_foot"][0, 3:])[1] == pytest.approx(T_SWING / r, rel=1e-9)
    assert (Tf["house"][:3, :3] @ pl.wrench["ring"][0, 3:])[1] == pytest.approx(T_SWING / r, rel=1e-9)
    assert pl.wrench["ring"][0, 2] == pytest.approx(T_SWING, rel=1e-9)     # +z: counter-clockwise
    assert max(case.pins[p]["side_N"] for p in ("boom_foot", "boom_nose", "bucket_pivot")) == pytest.approx(
        T_SWING / (env.lip @ xb)[env.lip @ xb > FOOT[:, 0].max()].min(), rel=1e-9)
    for p in ("side_link_pivot", "h_link_pin", "boom_cylinder_eye"):      # the linkage carries no side load
        assert case.pins[p]["moment_Nm"] == 0.0 and case.pins[p]["side_N"] == 0.0


def test_corner_tooth_moment_is_the_offset_times_the_force(model, env):
    """Corner tooth: at every main pin the moment across the pin is that of the tooth force about the boom
    plane, n_⊥ = −(b ŷ × F)'s reaction: the pin balances +b ŷ × F with −b ŷ × F (the weights and the in-plane
    offsets only give moments along the pin axis); the governing moment is b·max|F| of the stall states."""
    c = lc.corner_tooth_cases(model, env, PINS, spacing={"boom_foot": 0.7})[0]
    Fmax = np.linalg.norm(env.fan["boom_cyl"]["all_force"], axis=2).max()
    for p in ("boom_foot", "boom_nose", "bucket_pivot"):
        assert c.pins[p]["moment_Nm"] == pytest.approx(HALF * Fmax, rel=1e-9)
        assert c.pins[p]["side_N"] <= 1e-6 * c.pins[p]["force_N"]
    k, j = np.unravel_index(np.argmax(np.linalg.norm(env.fan["boom_cyl"]["all_force"], axis=2)),
                            env.fan["boom_cyl"]["all_N"].shape)
    F = env.fan["boom_cyl"]["all_force"][k, j]
    Tb = ud.link_pose(model, env.Q[k], "bucket")
    fl = Tb[:3, :3].T @ F
    z = np.zeros((1, model.nv))
    pl = pin_loads(model, [0.0], env.Q[k][None], z, z, {"bp": "bucket"},
                   f_ext={"bucket": np.r_[np.cross(env.tip[1], fl), fl][None]})
    n = Tb[:3, :3] @ pl.wrench["bp"][0, :3]
    yb = Tb[:3, :3] @ [0.0, 1.0, 0.0]
    n_perp = n - (n @ yb) * yb
    assert np.allclose(n_perp, -HALF * np.cross(yb, F), atol=1e-9 * np.linalg.norm(F))
    # the lug pair: a pure couple n = (10, 0, 70) N m across a pin along y with lugs 0.7 m apart, plus a
    # radial force (0, 0, 100) N: the two lug forces sum to the force and their moment is the couple
    F1, F2 = lc.lug_forces(np.array([10.0, 0.0, 70.0, 0.0, 0.0, 100.0]), [0, 1, 0], 0.7)
    assert np.allclose(F1 + F2, [0, 0, 100.0])
    assert np.allclose(np.cross([0, 0.35, 0], F1) + np.cross([0, -0.35, 0], F2), [10.0, 0, 70.0])


def test_eccentric_case_and_fe_export_balance(model, env):
    """The eccentric tooth load adds a side force of either sign to the corner stall states held to the swing
    relief: every main pin's moment is at least the corner case's (t ↦ |n + t v| is convex and the two signs
    bracket t = 0), the side forces within (T + |τ|) / r_min ≤ 2 T / r_min, and every body of every governing
    state exported for the FE analysis is in equilibrium to 1e-9 of its largest force."""
    corner = lc.corner_tooth_cases(model, env, PINS, torque=T_SWING)
    ecc = lc.eccentric_tooth_case(model, env, PINS, T_SWING, FOOT)
    xb = np.array([1.0, 0.0, 0.0])
    rmin = (env.lip @ xb)[env.lip @ xb > FOOT[:, 0].max()].min()
    for p in ("boom_foot", "boom_nose", "bucket_pivot"):
        assert ecc.pins[p]["moment_Nm"] >= max(c.pins[p]["moment_Nm"] for c in corner) * (1 - 1e-12)
        assert 0 < ecc.pins[p]["side_N"] <= 2 * T_SWING / rmin * (1 + 1e-9)
    assert ecc.torsion["boom"] > 0 and ecc.torsion["stick"] > 0
    for s in ecc.states + corner[0].states:
        Tb = ud.link_pose(model, s["q"], "bucket")
        fl = Tb[:3, :3].T @ s["force"]
        for fb in free_bodies(model, s["name"], s["q"], f_ext={"bucket": np.r_[np.cross(s["point"], fl), fl]},
                              points={"bucket": s["point"]}):
            assert np.abs(fb.residual).max() <= 1e-9 * fb.largest_force, (s["name"], fb.body)


def test_the_swing_relief_holds_the_torque_about_the_swing_axis(model, env):
    """With the swing relief's torque T, no corner-tooth state passes T about the swing axis (the ring's
    torque), some state is held by it (a corner force at 0.65 m makes more than 70 kN m), and the eccentric
    tooth load brings the ring's torque to T exactly."""
    free = lc.corner_tooth_cases(model, env, PINS)[0]
    held = lc.corner_tooth_cases(model, env, PINS, torque=T_SWING)[0]
    assert free.ring["torque_Nm"] > T_SWING >= held.ring["torque_Nm"] * (1 - 1e-12)
    assert held.ring["torque_Nm"] == pytest.approx(T_SWING, rel=1e-9)
    assert held.pins["bucket_pivot"]["moment_Nm"] < free.pins["bucket_pivot"]["moment_Nm"]
    ecc = lc.eccentric_tooth_case(model, env, PINS, T_SWING, FOOT)
    assert ecc.ring["torque_Nm"] == pytest.approx(T_SWING, rel=1e-9)
