"""The slewing ring at the tipping limit (urdf_dyn.machines.slewing_ring) and the end-stop impact
(urdf_dyn.machines.end_stop): the ring's wrench without the loop forces equals the full closed-loop statics';
at the tipping state the ring's axial force and tilting moment equal a hand sum over the upper structure's
masses (read from the URDF) and the load, and the centre of pressure is on the tipping edge; the end stop's
reflected mass is twice the kinetic energy over the speed squared, the cylinder's force change opposes the
motion, and the impact state's free bodies balance with d'Alembert's inertia."""
import numpy as np
import pytest
from lxml import etree

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.machines.end_stop import effective_masses, end_stop_impacts, phi7
from urdf_dyn.machines.fe_export import free_bodies
from urdf_dyn.machines.pins import pin_loads
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.machines.slewing_ring import ring_at_tipping_limit, ring_wrench, rollix_equivalent_axial
from urdf_dyn.machines.stability import base_reaction, center_of_pressure, polygon_margin, tipping_polygon
from urdf_dyn.machines.stall import stall_envelopes

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
LIP = np.array([1.461061, 0.0, 0.183701])
FOOT = tipping_polygon(3.65, 2.38)


@pytest.fixture(scope="module")
def model():
    return ud.load(EXC)


def _pose(model, b, s, k):
    q = model.q_initial()
    for c, x in (("boom_cyl", b), ("stick_cyl", s), ("bucket_cyl", k)):
        q[model.joint_index(c)] = x
    return assemble(model, q, hold=ACTS, residual_tol=1e-12)


def test_ring_wrench_needs_no_loop_forces(model):
    q = _pose(model, -0.3, -0.55, -0.1)
    R = ud.link_pose(model, q, "bucket")[:3, :3]
    f = R.T @ np.array([-120e3, 15e3, 60e3])
    w = np.r_[np.cross(LIP, f), f]
    z = np.zeros((1, model.nv))
    full = pin_loads(model, [0.0], q[None], z, z, {"r": "swing"}, f_ext={"bucket": w[None]}).wrench["r"][0]
    assert np.allclose(ring_wrench(model, q, "swing", {"bucket": w})[0], full, rtol=0, atol=1e-9 * 1e5)


def test_ring_at_the_tipping_limit_by_hand(model):
    """Axial force = (upper structure's mass) g + L and tilting moment = |Σ (c − o) × m g + (p − o) × L| about
    the ring centre o, horizontal part, from the URDF's masses; the ZMP on the polygon's edge; L within the
    hydraulics' hold."""
    env = stall_envelopes(model, CYL, 38e6, ("bucket", LIP), holding_relief=38e6, n=(3, 4, 4), fan_deg=[270.0])
    hold = np.max([env.fan[c]["all_N"][:, 0] for c in env.working], axis=0)
    r = ring_at_tipping_limit(model, env.Q, ("bucket", LIP), FOOT, hold)
    q, L = r["q"], r["load_N"]
    assert 0 < L <= hold[r["pose_index"]]
    root = etree.parse(str(EXC)).getroot()
    T = ud.forward_kinematics(model, q)
    m_up, mom = 0.0, np.zeros(3)
    o = T["house"][:3, 3]
    for ln in root.findall("link"):
        if ln.get("name") == "undercarriage":
            continue
        i = ln.find("inertial")
        m = float(i.find("mass").get("value"))
        c = (T[ln.get("name")] @ np.r_[[float(x) for x in i.find("origin").get("xyz").split()], 1.0])[:3]
        m_up += m
        mom += np.cross(c - o, [0, 0, -9.81 * m])
    p = (T["bucket"] @ np.r_[LIP, 1.0])[:3]
    mom += np.cross(p - o, [0, 0, -L])
    assert r["axial_N"] == pytest.approx(m_up * 9.81 + L, rel=1e-9)
    assert r["tilting_moment_Nm"] == pytest.approx(np.hypot(mom[0], mom[1]), rel=1e-9)
    lf = model.link("bucket")
    Rb = T["bucket"][:3, :3]
    fd = Rb.T @ [0, 0, -L]
    W = base_reaction(model, q, f_ext={"bucket": np.r_[np.cross(LIP, fd), fd]})
    assert abs(polygon_margin(center_of_pressure(W)[None], FOOT)[0]) <= 1e-9
    assert lf is not None and r["equivalent_axial_N"] == pytest.approx(rollix_equivalent_axial(r["axial_N"],
                                                                                               r["radial_N"]))
    assert rollix_equivalent_axial(100.0, 10.0) == 105.0 and rollix_equivalent_axial(100.0, 50.0) == 175.0
    assert rollix_equivalent_axial(100.0, 200.0) == 580.0


def test_phi7_of_en_1991_3():
    assert phi7(0.0) == phi7(0.5) == 1.25 and phi7(1.0) == pytest.approx(1.6)
    with pytest.raises(ValueError, match="xi"):
        phi7(1.2)


def test_end_stop_impact(model):
    """The boom cylinder retracting into its cushion: m_eff = 2 E / v², the cylinder's force change is
    m_eff ẍ plus the velocity terms (a few per cent here) and opposes the motion, the pin loads rise above the
    static ones, and every body of the impact state balances with its inertia."""
    from urdf_dyn.algorithms.dynamics import kinetic_energy
    from urdf_dyn.constraints.inverse import actuator_forces
    Q = np.array([_pose(model, -0.50, -0.4, 0.0), _pose(model, -0.50, -0.9, 0.2)])
    v, s, xi = -0.6, 0.05, 0.5
    (e,) = end_stop_impacts(model, {("boom_cyl", "retract"): Q}, {("boom_cyl", "retract"): v}, s, xi,
                            {"boom_foot": "boom", "bucket_pivot": "bucket"}, ACTS)
    st = e.states[0]
    q, qd, qdd = st["q"], st["qd"], st["qdd"]
    assert qd[model.joint_index("boom_cyl")] == pytest.approx(v)
    assert e.m_eff == pytest.approx(2 * kinetic_energy(model, q, qd) / v ** 2, rel=1e-9)
    xdd = qdd[model.joint_index("boom_cyl")]
    assert xdd == pytest.approx(1.25 * v * v / (2 * xi * s))                # decelerates: > 0 while retracting
    z = np.zeros((1, model.nv))
    a1, a0 = (actuator_forces(model, q[None], x, y, warn=False) for x, y in ((qd[None], qdd[None]), (z, z)))
    k = list(a1.names).index("boom_cyl")
    du = a1.u[0][k] - a0.u[0][k]
    assert du > 0 and du == pytest.approx(e.m_eff * xdd, rel=0.05)
    assert e.pins["boom_foot"]["dynamic_factor"] > 1
    for fb in free_bodies(model, st["name"], q, qd, qdd):
        assert np.abs(fb.residual).max() <= 1e-9 * fb.largest_force, fb.body


def test_effective_masses_equal_crba(model):
    """Gcᵀ H Gc from two batched RNEAs (effective_masses) equals the same product with H from the CRBA
    (mass_matrix, itself equal to Pinocchio's crba in tests/algorithms) for arbitrary columns at three poses."""
    from urdf_dyn.algorithms.dynamics import mass_matrix
    rng = np.random.default_rng(3)
    Q = np.array([_pose(model, -0.50, -0.4, 0.0), _pose(model, -0.3, -0.55, -0.1), _pose(model, -0.5, -0.9, 0.2)])
    G = rng.normal(size=Q.shape)
    want = np.array([g @ mass_matrix(model, q) @ g for q, g in zip(Q, G)])
    got = effective_masses(model, Q, G)
    assert got.shape == (3,) and np.all(want > 0)
    np.testing.assert_allclose(got, want, rtol=1e-10)
