"""ISO 10567 lift capacity: the tipping load against a hand moment balance of a rigid body on an edge
(written here from the URDF's masses and centres of mass), the hydraulic capacity against virtual work
(potential energy and nose height by finite differences over assembled poses), and the rating rule."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.lift_chart import LiftChart, LiftChartOptions, lift_chart, lift_point, without_links
from urdf_dyn.machines.stability import tipping_polygon, zmp_margin
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.constraints.assembly import assemble

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
G = 9.81
POLY = tipping_polygon(3.65, 2.38)   # CAT 320 roller-rail tipping lines (cat320_datasheet.md S5/S6)


def opts(**kw):
    base = dict(radii=(4.5, 6.0, 7.5), heights=(3.0, 0.0, -1.5), footprint=POLY, lift_pressure=38e6)
    base.update(kw)
    return LiftChartOptions(**base)

BLOCK = """<robot name="block_on_edge">
  <link name="base"><inertial><origin xyz="-0.4 0.1 0.5"/><mass value="1000"/>
    <inertia ixx="10" iyy="10" izz="10" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="1.0 0 0"/><mass value="100"/>
    <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0.2 0 1.0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1e9" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("theta", [0.0, 0.4, -0.3])
def test_tipping_load_of_a_rigid_body_on_an_edge(theta):
    """A 1000 kg block (COM x = −0.4 m) carrying a 100 kg arm; load at 3 m along the arm; tipping edge
    x = 1.0 m. Moment balance about the edge: W (x_L − e) = g Σ mᵢ (e − xᵢ)."""
    model = ud.load(BLOCK)
    e = 1.0
    c = np.cos(theta)  # rotation about +y: x -> (cos, 0, -sin)
    x_arm, x_load = 0.2 + 1.0 * c, 0.2 + 3.0 * c
    W_hand = G * (1000 * (e - (-0.4)) + 100 * (e - x_arm)) / (x_load - e)
    edge = np.array([[e, -5.0], [e, 5.0], [-5.0, 5.0], [-5.0, -5.0]])     # front edge at x = e
    lp = lift_point(model, np.array([theta]), {}, load=("arm", (3.0, 0, 0)), polygon=edge)
    assert abs(lp.tipping_N - W_hand) <= 1e-9 * W_hand
    assert lp.hydraulic_N == np.inf and not lp.hydraulic_limited
    assert abs(lp.rated_kg - 0.75 * W_hand / G) <= 1e-9 * W_hand


def urdf_masses(path, skip=("bucket",)):
    """{link: (mass, COM (3,) in the link frame)} read straight from the URDF's <inertial> elements."""
    out = {}
    for ln in ET.parse(path).getroot().iter("link"):
        inn = ln.find("inertial")
        if inn is None or ln.get("name") in skip:
            continue
        o = inn.find("origin")
        xyz = np.array([float(v) for v in o.get("xyz").split()]) if o is not None else np.zeros(3)
        out[ln.get("name")] = (float(inn.find("mass").get("value")), xyz)
    return out


def hand_tipping(model, q, load_link, p, side, edge):
    """Moment balance of the whole machine (URDF masses, link poses) about the tipping line."""
    fk = ud.forward_kinematics(model, q)
    k = 0 if side == "front" else 1
    M = 0.0
    for ln, (m, c) in urdf_masses(EXC).items():
        x = (fk[ln] @ np.r_[c, 1.0])[k]
        M += m * G * (edge - x)
    xl = (fk[load_link] @ np.r_[p, 1.0])[k]
    return M / (xl - edge)


@pytest.fixture(scope="module")
def exc():
    return ud.load(EXC)


@pytest.fixture(scope="module")
def chart(exc):
    return lift_chart(exc, CYL, opts())


def test_excavator_tipping_load_by_hand(exc, chart):
    """Each reachable cell, over front and over side, against the hand moment balance (without bucket)."""
    nose = np.array([2.9, 0.0, 0.0])
    n = 0
    for i in range(len(chart.heights)):
        for j in range(len(chart.radii)):
            q = chart.poses[i, j]
            if np.isnan(q).any():
                continue
            n += 1
            Wf = hand_tipping(exc, q, "stick", nose, "front", chart.x_tip)
            assert abs(chart.tipping_front_N[i, j] - Wf) <= 1e-7 * Wf
            qs = q.copy()
            qs[exc.joint_index("swing")] = np.pi / 2
            Ws = hand_tipping(exc, qs, "stick", nose, "side", chart.y_tip)
            assert abs(chart.tipping_side_N[i, j] - Ws) <= 1e-7 * Ws
            # the load point is where the chart says
            P = ud.forward_kinematics(exc, q)["stick"] @ np.r_[nose, 1.0]
            assert abs(P[0] - chart.radii[j]) < 0.01 and abs(P[2] - chart.heights[i]) < 0.01
    assert n >= 6


def test_hydraulic_capacity_is_virtual_work(exc, chart):
    """Where the boom cylinder limits: p·A_cap = ∂V/∂s + L ∂z_nose/∂s (potential energy V of the machine
    without bucket and nose height z, both by central differences over assembled poses)."""
    m = without_links(exc, ("bucket",))
    ib = exc.joint_index("boom_cyl")
    checked = 0
    for i in range(len(chart.heights)):
        for j in range(len(chart.radii)):
            q = chart.poses[i, j]
            if np.isnan(q).any() or chart.limiting[i, j] != "boom_cyl":
                continue
            h = 1e-5
            V, Z = [], []
            for ds in (h, -h):
                qq = q.copy()
                qq[ib] += ds
                qq = assemble(m, qq, hold=ACTS, residual_tol=1e-10)
                V.append(ud.potential_energy(m, qq))
                Z.append((ud.forward_kinematics(m, qq)["stick"] @ np.array([2.9, 0, 0, 1.0]))[2])
            dV, dz = (V[0] - V[1]) / (2 * h), (Z[0] - Z[1]) / (2 * h)
            L = (38e6 * CYL["boom_cyl"].cap_area - dV) / dz
            assert abs(chart.hydraulic_N[i, j] - L) <= 1e-4 * L
            checked += 1
    assert checked >= 3


def test_rating_rule_and_table(chart, tmp_path):
    ok = ~np.isnan(chart.front)
    rated = np.minimum(0.75 * chart.tipping_front_N, 0.87 * chart.hydraulic_N) / G
    assert np.allclose(chart.front[ok], rated[ok], rtol=1e-12)
    assert np.all(chart.side[ok] <= chart.front[ok] + 1e-9)  # narrower base over the side
    md = chart.to_markdown()
    assert md.count("\n|") == len(chart.heights) + 1 and "front" in md and "side" in md
    assert len(chart.grid()) == chart.front.size
    from urdf_dyn.reports.check_plots import plot_lift_chart
    plot_lift_chart(chart, tmp_path / "lift.png")
    assert (tmp_path / "lift.png").stat().st_size > 10_000


def test_out_of_reach_cells_are_empty(exc):
    c = lift_chart(exc, CYL, opts(radii=(20.0,), heights=(0.0,)))
    assert isinstance(c, LiftChart) and np.isnan(c.front[0, 0]) and "–" in c.to_markdown()


def test_bad_input(exc):
    with pytest.raises(ValueError, match="boom_cyl"):
        lift_chart(exc, {}, opts())
    with pytest.raises(ValueError, match="lift_pressure"):
        lift_chart(exc, CYL, opts(lift_pressure=0.0))
    with pytest.raises(KeyError, match="no link"):
        without_links(exc, ("shovel",))


def test_max_reach_column(exc, chart):
    """Cat's max-reach column: no reachable cell lies further out than it, and a
    point 0.1 m beyond it is out of reach; a polygon footprint gives the same tipping lines as its edges."""
    for i, h in enumerate(chart.heights):
        r = chart.max_reach_m[i]
        assert np.isfinite(r) and np.all(chart.radii[~np.isnan(chart.front[i])] <= r + 1e-6)
        assert chart.max_front[i] > 0 and chart.max_side[i] > 0
    far = lift_chart(exc, CYL, opts(radii=(chart.max_reach_m[1] + 0.1,), heights=(chart.heights[1],)))
    assert np.isnan(far.front[0, 0]) and far.x_tip == 1.825 and far.y_tip == 1.19
    assert abs(far.max_reach_m[0] - chart.max_reach_m[1]) < 1e-3


@pytest.mark.parametrize("side", ["front", "side"])
def test_lift_chart_and_zmp_share_the_tipping_line(exc, chart, side):
    """One tipping line: the ZMP check (stability.zmp_margin) with the same polygon puts the
    centre of pressure just inside at 99 % of the chart's tipping load and just outside at 101 %, over the
    front and over the side, at every reachable cell (the load hung at the stick nose, without bucket)."""
    m = without_links(exc, ("bucket",))
    nose = np.array([2.9, 0.0, 0.0])
    n = 0
    for i in range(len(chart.heights)):
        for j in range(len(chart.radii)):
            q = chart.poses[i, j].copy()
            if np.isnan(q).any():
                continue
            q[exc.joint_index("swing")] = 0.0 if side == "front" else np.pi / 2
            Lt = (chart.tipping_front_N if side == "front" else chart.tipping_side_N)[i, j]
            R = ud.forward_kinematics(m, q)["stick"][:3, :3]
            margins = []
            for f in (0.99, 1.01):
                fl = R.T @ np.array([0.0, 0.0, -f * Lt])
                w = np.r_[np.cross(nose, fl), fl]
                margins.append(zmp_margin(m, POLY, q=q[None], f_ext={"stick": w[None]}, warn=False).min_margin)
            assert margins[0] > 0 > margins[1], (i, j, margins)
            n += 1
    assert n >= 6
