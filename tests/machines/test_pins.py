"""Every pin's force (urdf_dyn.machines.pins), checked against independent computations:

- per body, in world coordinates, Newton–Euler: the sum of every pin wrench that acts on the body (its own
  tree joint, minus its children's, ± the loop-closure wrenches), its weight at its centre of mass and the
  tip load equals its rate of change of momentum I⁰a⁰ + v⁰ ×* I⁰v⁰, with v⁰, a⁰ from a world-frame
  recursion of the joint axes (Ṡ⁰ = v⁰ × S⁰) and I⁰ rebuilt from mass, centre of mass and rotational inertia
  (not from the RNEA's body-frame pass that produced the pin forces);
- the swing bearing's tilting moment against the hand moment of every weight above it and the tip load
  about the bearing centre, in the bearing's axes (direction as well as size);
- ``joint_wrenches_repeated`` / ``pin_loads_repeated`` (load sets on shared poses) against the plain calls on
  the poses repeated, bit for bit.
"""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms.joints import motion_subspace
from urdf_dyn.algorithms.spatial import mcI, pose_to_plux
from urdf_dyn.machines.loads import point_positions, point_wrench
from urdf_dyn.machines.pins import PinSpec, joint_wrenches, joint_wrenches_repeated, pin_loads, pin_loads_repeated
from urdf_dyn.machines.poses import body_poses

EXC = ROOT / "robots" / "excavator.urdf"
Y = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
TIP = (1.47, 0.0, 0.0)                               # tooth tip in the bucket frame [m]
F_TIP = np.array([-30e3, 4e3, -40e3])                 # world tip load [N]: back, a little sideways, down


@pytest.fixture(scope="module")
def moving():
    model = ud.load(EXC)
    mo = ud.spline_motion(Y, [[0.1, -0.4, -0.85, -0.45], [1.2, -0.15, -0.05, 0.4]], [2.0], 0.01, "quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, progress=False)
    k = slice(37, 180, 31)                           # moving states away from the segment's ends
    return model, mo.t[k], Q[k], QD[k], QDD[k]


def _world_inertia(model, i, T):
    """I⁰ (6, 6) of body i about the world origin from m, c and I_c (RBDA eq. 2.63), in world axes."""
    I = np.asarray(model.I[i])
    m = I[5, 5]
    c = np.array([I[2, 4], I[0, 5], I[1, 3]]) / m        # I = [[Ic + m c×c×ᵀ, m c×], [m c×ᵀ, m 1]]
    C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    Ic = I[:3, :3] - m * C @ C.T
    R, p = T[:3, :3], T[:3, 3]
    return mcI(m, R @ c + p, R @ Ic @ R.T), m, R @ c + p


def test_pin_forces_balance_every_body(moving):
    """Σ pin wrenches + weight + tip load = ḣ for every moving body, at five moving states (1e-9 of the
    largest pin force)."""
    model, t, Q, QD, QDD = moving
    f_ext = {"bucket": point_wrench(model, Q, "bucket", F_TIP, point_positions(model, Q, "bucket", TIP), frame="world")}
    af = ud.actuator_forces(model, Q, QD, QDD, warn=False, f_ext=f_ext)
    Fj = joint_wrenches(model, Q, QD, QDD, af.loop_forces, f_ext)
    g = np.asarray(model.gravity)
    tip_w = point_positions(model, Q, "bucket", TIP)
    for n in range(len(Q)):
        T = ud.body_poses(model, Q[n:n + 1])[0]
        X0 = [pose_to_plux(np.ascontiguousarray(T[i])) for i in range(model.NB + 1)]   # ^iX_0
        V, A = np.zeros((model.NB + 1, 6)), np.zeros((model.NB + 1, 6))
        scale = np.abs(Fj[n]).max()
        for i in range(1, model.NB + 1):
            lam = model.parent[i]
            S0 = np.linalg.solve(X0[i], motion_subspace(model.jtype[i], model.axis[i]))   # ^0X_i S_i
            vJ = S0 * QD[n, i - 1]
            V[i] = V[lam] + vJ
            w, v = V[i][:3], V[i][3:]
            A[i] = A[lam] + S0 * QDD[n, i - 1] + np.concatenate([np.cross(w, vJ[:3]),
                                                                 np.cross(v, vJ[:3]) + np.cross(w, vJ[3:])])
        total = np.zeros((model.NB + 1, 6))
        for i in range(1, model.NB + 1):
            total[i] += X0[i].T @ Fj[n, i - 1]                    # f_i from λ(i), to world
            total[model.parent[i]] -= X0[i].T @ Fj[n, i - 1]       # its reaction on λ(i)
        for lp in model.loops:
            Fp = T[lp.p] @ np.asarray(lp.T_P)                     # loop frame in the world
            wl = pose_to_plux(np.ascontiguousarray(Fp)).T @ af.loop_forces[lp.name][n]
            total[lp.s] += wl
            total[lp.p] -= wl
        bucket = model.link("bucket").body
        total[bucket] += np.concatenate([np.cross(tip_w[n], F_TIP), F_TIP])
        for i in range(1, model.NB + 1):
            I0, m, c = _world_inertia(model, i, T[i])
            total[i] += np.concatenate([np.cross(c, m * g), m * g])
            w, v = V[i][:3], V[i][3:]
            h = I0 @ V[i]
            hdot = I0 @ A[i] + np.concatenate([np.cross(w, h[:3]) + np.cross(v, h[3:]), np.cross(w, h[3:])])
            assert np.abs(total[i] - hdot).max() <= 1e-9 * scale, (model.body_names[i], total[i] - hdot)
        assert np.abs(hdot).max() > 1.0                          # the state does move (not a static check)


def test_swing_bearing_moment_by_hand():
    """At rest, swing 0.4 rad: the bearing's tilting moment equals −Σ (c − o) × m g − (p_tip − o) × F about
    the bearing centre o, in the bearing axes; axial = weight above + F_z; torque = −(moment about z)."""
    model = ud.load(EXC)
    q = model.q_initial().copy()
    q[model.joint_index("swing")] = 0.4
    Q, Z = q[None], np.zeros((1, model.nv))
    f_ext = {"bucket": point_wrench(model, Q, "bucket", F_TIP, point_positions(model, Q, "bucket", TIP), frame="world")}
    pl = pin_loads(model, [0.0], Q, Z, Z, f_ext=f_ext, swing="swing",
                   pins={"boom_cylinder_eye": PinSpec("boom_cylinder_eye", 2), "boom_foot": "boom"})
    T = ud.body_poses(model, Q)[0]
    sw = model.joint_index("swing") + 1
    o, R = T[sw][:3, 3], T[sw][:3, :3]
    g = np.asarray(model.gravity)
    M, W = np.zeros(3), 0.0
    for i in range(1, model.NB + 1):
        if _above(model, i, sw):
            _, m, c = _world_inertia(model, i, T[i])
            M += np.cross(c - o, m * g)
            W += m
    M += np.cross(point_positions(model, Q, "bucket", TIP)[0] - o, F_TIP)
    n_hand = R.T @ (-M)                                            # the bearing holds the upper structure
    assert pl.swing.tilting[0] == pytest.approx(np.hypot(n_hand[0], n_hand[1]), rel=1e-10)
    f_sw = joint_wrenches(model, Q, Z, Z, ud.actuator_forces(model, Q, Z, Z, warn=False,
                                                              f_ext=f_ext).loop_forces, f_ext)[0, sw - 1]
    assert np.allclose(f_sw[:2], n_hand[:2], rtol=1e-10, atol=1e-6)  # direction, not only size
    assert pl.swing.axial[0] == pytest.approx(-W * g[2] - F_TIP[2], rel=1e-10)
    assert pl.swing.torque[0] == pytest.approx(n_hand[2], abs=1e-6 * abs(M).max())
    assert W > 13000 and abs(n_hand[1]) > 1e5                      # the front and the counterweight tilt it


def _above(model, i, sw):
    while i > 0:
        if i == sw:
            return True
        i = model.parent[i]
    return False


def test_pair_is_reported_per_pin_and_names_are_checked():
    """A ``count: 2`` pin carries half the loop's wrench; an unknown joint is a KeyError naming it."""
    model = ud.load(EXC)
    Q, Z = model.q_initial()[None], np.zeros((1, model.nv))
    pl = pin_loads(model, [0.0], Q, Z, Z, pins={"one": "boom_cylinder_eye",
                                                "per_pin": PinSpec("boom_cylinder_eye", 2)})
    assert np.allclose(pl.wrench["per_pin"], pl.wrench["one"] / 2)
    assert pl.kind == {"one": "loop", "per_pin": "loop"}
    assert pl.cycle_peak("one")[0] > 1e5                         # the boom pair holds the front: > 100 kN
    with pytest.raises(KeyError, match="boom_nose_pin"):
        pin_loads(model, [0.0], Q, Z, Z, pins={"x": "boom_nose_pin"})


def _sets(moving, S=3):
    """S load sets on the moving states: moving, at rest, faster and reversed; random loop forces and tip
    loads."""
    model, _, Q, QD, QDD = moving
    rng = np.random.default_rng(7)
    qd = np.concatenate([QD, np.zeros_like(QD), -2.0 * QD])
    qdd = np.concatenate([QDD, np.zeros_like(QDD), 4.0 * QDD])
    lf = {lp.name: rng.normal(size=(S * len(Q), 6)) * 1e4 for lp in model.loops}
    return model, Q, qd, qdd, lf, {"bucket": rng.normal(size=(S * len(Q), 6)) * 1e3}, S


def test_repeated_sets_are_the_plain_call_on_repeated_poses(moving):
    """joint_wrenches_repeated / pin_loads_repeated (S load sets on the same poses, the transforms computed
    once) against the plain calls on the poses repeated S times: the same numbers, bit for bit."""
    model, Q, qd, qdd, lf, fx, S = _sets(moving)
    Qs = np.concatenate([Q] * S)
    ref = joint_wrenches(model, Qs, qd, qdd, lf, fx)
    assert ref.shape == (S * len(Q), model.NB, 6) and np.abs(ref).max() > 1e3
    assert np.array_equal(joint_wrenches_repeated(model, Q, qd, qdd, lf, fx), ref)
    assert np.array_equal(joint_wrenches_repeated(model, Q, qd, qdd, lf, fx, body_poses(model, Q)), ref)
    pins = {"boom_foot": "boom", "pair": PinSpec("boom_cyl_pin", 2), "eye": "stick_cylinder_eye"}
    t = np.arange(S * len(Q)) * 0.01
    a = pin_loads(model, t, Qs, qd, qdd, pins, loop_forces=lf, f_ext=fx, swing="swing")
    b = pin_loads_repeated(model, t, Q, qd, qdd, pins, loop_forces=lf, f_ext=fx, swing="swing")
    assert a.names == b.names and a.kind == b.kind
    for n in a.names:
        assert np.array_equal(a.wrench[n], b.wrench[n])
    assert np.array_equal(a.swing.tilting, b.swing.tilting) and np.array_equal(a.swing.axial, b.swing.axial)


def test_repeated_sets_name_bad_rows(moving):
    model, Q, qd, qdd, lf, fx, S = _sets(moving)
    with pytest.raises(ValueError, match="multiple of q's"):
        joint_wrenches_repeated(model, Q, qd[:-1], qdd[:-1], lf, fx)
    with pytest.raises(ValueError, match="loop_forces"):
        pin_loads_repeated(model, np.zeros(len(qd)), Q, qd, qdd, {"boom_foot": "boom"})
