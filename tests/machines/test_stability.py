"""Base reaction, ZMP and tipping margin: the base wrench against Pinocchio's RNEA on a free-flyer model of
the same URDF (loops stripped: they carry internal forces only), the ZMP of a static pose against the
centre of mass computed by hand from the URDF, and the polygon margin against hand geometry."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT, SHARED
from urdf_dyn.machines.stability import (StabilityWarning, base_reaction, center_of_pressure, polygon_margin,
                                             tipping_polygon, tipping_load, zmp_margin)

POLY = tipping_polygon(3.65, 2.38)   # CAT 320 roller-rail tipping lines (cat320_datasheet.md S5/S6)
EXC = ROOT / "robots" / "excavator.urdf"
KUKA = SHARED / "kuka_experimental" / "kuka_kr16_support" / "urdf" / "kr16_2.urdf"


def tree_copy(path, tmp_path):
    """The URDF without urdf_dyn's <loop> and <initial_configuration> elements, for Pinocchio."""
    tree = ET.parse(path)
    root = tree.getroot()
    for e in list(root):
        if e.tag in ("loop", "initial_configuration"):
            root.remove(e)
    out = tmp_path / "tree.urdf"
    tree.write(out)
    return out


def pin_base_wrench(pin, pm, pd, model, q, qd, qdd, f_ext=None):
    Q = np.zeros(pm.nq)
    Q[6] = 1.0
    V, A = np.zeros(pm.nv), np.zeros(pm.nv)
    for j, name in enumerate(model.joint_names):
        jid = pm.getJointId(name)
        iq = pm.idx_qs[jid]
        if pm.nqs[jid] == 2:  # continuous joint: (cos, sin)
            Q[iq:iq + 2] = np.cos(q[j]), np.sin(q[j])
        else:
            Q[iq] = q[j]
        V[pm.idx_vs[jid]], A[pm.idx_vs[jid]] = qd[j], qdd[j]
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for link, w in (f_ext or {}).items():
        fr = pm.frames[pm.getFrameId(link)]
        fext[fr.parentJoint] += fr.placement.act(pin.Force(w[3:], w[:3]))
    tau = pin.rnea(pm, pd, Q, V, A, fext)
    return np.r_[tau[3:6], tau[:3]]  # Pinocchio [f; n] -> Featherstone [n; f]


@pytest.mark.parametrize("path", [EXC, KUKA], ids=["excavator", "kuka_kr16"])
def test_base_reaction_matches_pinocchio(path, tmp_path):
    pin = pytest.importorskip("pinocchio")
    if not path.exists():
        pytest.skip(f"{path} is not available (needs ../shared)")
    model = ud.load(path)
    pm = pin.buildModelFromUrdf(str(tree_copy(path, tmp_path)), pin.JointModelFreeFlyer())
    pd = pm.createData()
    rng = np.random.default_rng(1)
    link = model.link_names[-1]
    N = 5
    Q, QD, QDD = (rng.normal(size=(N, model.nv)) for _ in range(3))
    F = rng.normal(size=(N, 6)) * 1e3
    W = base_reaction(model, Q, QD, QDD, f_ext={link: F})
    for k in range(N):
        Wp = pin_base_wrench(pin, pm, pd, model, Q[k], QD[k], QDD[k], {link: F[k]})
        assert np.linalg.norm(W[k] - Wp) <= 1e-9 * max(1.0, np.linalg.norm(Wp))
    # one state without external forces, single-state shapes
    w1 = base_reaction(model, Q[0], QD[0], QDD[0])
    assert w1.shape == (6,)
    assert np.linalg.norm(w1 - pin_base_wrench(pin, pm, pd, model, Q[0], QD[0], QDD[0])) <= 1e-9 * np.linalg.norm(w1)


def test_static_zmp_is_the_centre_of_mass_by_hand():
    """At rest, the centre of pressure is below the centre of mass: Σ mᵢ xᵢ / Σ mᵢ from the URDF."""
    model = ud.load(EXC)
    masses = {}
    for ln in ET.parse(EXC).getroot().iter("link"):
        inn = ln.find("inertial")
        o = inn.find("origin")
        masses[ln.get("name")] = (float(inn.find("mass").get("value")),
                                  np.array([float(v) for v in o.get("xyz").split()]))
    for swing in (0.0, 1.1):
        q = model.q_initial()
        q[model.joint_index("swing")] = swing
        fk = ud.forward_kinematics(model, q)
        M = sum(m for m, _ in masses.values())
        c = sum(m * (fk[ln] @ np.r_[p, 1.0])[:3] for ln, (m, p) in masses.items()) / M
        W = base_reaction(model, q)
        assert abs(W[5] - M * 9.81) <= 1e-9 * M * 9.81
        zmp = center_of_pressure(W)
        assert np.allclose(zmp, c[:2], atol=1e-9)
        fp = tipping_polygon(3.65, 2.38)
        r = zmp_margin(model, fp, q=q[None])
        hand = min(fp[0, 0] - c[0], c[0] - fp[2, 0], fp[1, 1] - c[1], c[1] - fp[0, 1])
        assert abs(r.min_margin - hand) <= 1e-9


def test_polygon_margin_by_hand():
    sq = np.array([[0, 0], [2, 0], [2, 1], [0, 1]], float)
    pts = np.array([[1.0, 0.5], [0.2, 0.5], [3.0, 0.5], [3.0, 2.0], [np.nan, 0.0]])
    m = polygon_margin(pts, sq)
    assert np.allclose(m[:4], [0.5, 0.2, -1.0, -np.sqrt(2.0)]) and m[4] == -np.inf
    assert np.allclose(polygon_margin(pts[:4], sq[::-1]), m[:4])  # clockwise is accepted
    with pytest.raises(ValueError, match="convex"):
        polygon_margin(pts, np.array([[0, 0], [2, 0], [1, 0.2], [2, 1], [0, 1]], float))


def test_zmp_leaving_the_footprint_warns():
    """A 30 t downward load 8 m ahead tips the machine: the ZMP leaves the polygon (warning, margin < 0)."""
    model = ud.load(EXC)
    q = model.q_initial()
    R = ud.link_pose(model, q, "stick")[:3, :3]
    ts = np.linspace(0.0, 1.0, 5)
    F = np.array([np.r_[0, 0, 0, R.T @ [0, 0, -s * 3e5]] for s in ts])
    with pytest.warns(StabilityWarning, match="leaves the support polygon"):
        r = zmp_margin(model, POLY, q=np.tile(q, (5, 1)), f_ext={"stick": F}, t=ts)
    assert r.margin[0] > 0 > r.margin[-1] and r.outside[-1] and r.t_min == 1.0
    assert np.all(np.diff(r.zmp[:, 0]) > 0)


def test_zmp_plot(tmp_path):
    model = ud.load(EXC)
    Q = np.tile(model.q_initial(), (20, 1))
    Q[:, model.joint_index("swing")] = np.linspace(0, np.pi, 20)
    r = zmp_margin(model, POLY, q=Q, t=np.linspace(0, 2, 20))
    from urdf_dyn.reports.check_plots import plot_zmp
    plot_zmp(r, tmp_path / "zmp.png")
    assert (tmp_path / "zmp.png").stat().st_size > 10_000


def test_tipping_load_by_hand_moment_balance():
    """A 1000 kg block with its centre of mass at (x, y) = (0.3, −0.2) on the polygon x ∈ [−1, 1], y ∈ [−0.5,
    0.5]; a vertical load L at (2.5, 0.1): the front edge x = 1 binds at L = m g (1 − 0.3) / (2.5 − 1) (moment
    balance about the edge); a load at (0.1, 1.5) over the side edge y = 0.5: L = m g (0.5 + 0.2) / (1.5 − 0.5).
    A missing polygon is refused."""
    m, g = 1000.0, 9.81
    poly = tipping_polygon(2.0, 1.0)

    def wrench(x, y, F):       # [n; f] about the origin of a downward force F at (x, y, 0): n = r × f
        return np.array([y * F, -x * F, 0.0, 0.0, 0.0, F])          # the ground pushes up by F
    W0 = wrench(0.3, -0.2, m * g)
    for (x, y), hand, edge in (((2.5, 0.1), m * g * 0.7 / 1.5, 0), ((0.1, 1.5), m * g * 0.7 / 1.0, 1)):
        L, j = tipping_load(W0, wrench(x, y, 1.0), poly)
        assert abs(L[0] - hand) <= 1e-9 * hand and j[0] == edge
    L, j = tipping_load(W0, wrench(0.0, 0.0, 1.0), poly)           # a load above the centre never tips it
    assert L[0] == np.inf and j[0] == -1
    with pytest.raises(ValueError, match="tipping polygon"):
        zmp_margin(W0[None])
    with pytest.raises(ValueError, match="gauge"):
        tipping_polygon(3.65, 0.0)
