"""ISO 6015 tool forces against independent oracles: virtual work by finite differences (the cylinder force
times the stroke per unit of lip arc, the arc measured between poses assembled a small stroke apart:
``assemble`` + ``forward_kinematics`` only), virtual work with every cylinder locked (u = Gᵀ J_lipᵀ f from
``explicit_constraint`` and ``link_jacobian``, against ``digging_forces_at``'s closed-loop inverse dynamics),
a hand free-body solution of a two-link arm with two cylinders, and the published figures."""
import numpy as np
import pytest

import urdf_dyn as ud
import urdf_dyn.machines as um
from _robots import ROOT
from urdf_dyn.machines.iso6015 import digging_forces, digging_forces_at
from urdf_dyn.machines.sizing import Cylinder
from urdf_dyn.constraints.assembly import assemble

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
TIP = np.array([1.47, 0.0, 0.0, 1.0])  # bucket tip radius along the bucket frame's x axis
P = 35e6
LIP = ("bucket", (1.47, 0.0, 0.0))   # the tests' force point (at the tooth tip radius, as before)
#: CAT 320 published ISO 6015 figures (cat320_datasheet.md S3: 31 586 / 23 987 lbf)
PUBLISHED = {"bucket_N": 140.5e3, "arm_N": 106.7e3, "source": "S3"}


@pytest.fixture(scope="module")
def model():
    return ud.load(EXC)


@pytest.fixture(scope="module")
def res(model):
    return digging_forces(model, CYL, P, LIP, n=(5, 7, 9), reference=PUBLISHED)


def tip_at(model, q, cyl, ds):
    qq = q.copy()
    qq[model.joint_index(cyl)] += ds
    qq = assemble(model, qq, hold=ACTS, residual_tol=1e-10)
    return (ud.forward_kinematics(model, qq)["bucket"] @ TIP)[:3], qq


def fd_force(model, q, cyl, h=1e-5):
    """Virtual work: F · d(arc) = p A · d(stroke), central differences over assembled poses."""
    pp, _ = tip_at(model, q, cyl, h)
    pm, _ = tip_at(model, q, cyl, -h)
    return P * CYL[cyl].cap_area * 2 * h / np.linalg.norm(pp - pm), pp - pm


def test_bucket_force_is_virtual_work(model, res):
    F, d = fd_force(model, res.bucket_pose, "bucket_cyl")
    assert abs(res.bucket_N - F) <= 1e-5 * F
    # the tip moves on the arc about the bucket pivot: tangential, at the tip radius
    pivot = ud.forward_kinematics(model, res.bucket_pose)["bucket"][:3, 3]
    r = res.bucket_tip - pivot
    assert abs(np.linalg.norm(r) - 1.47) < 1e-9
    assert abs(r @ d) <= 1e-6 * np.linalg.norm(d)


def test_arm_force_is_virtual_work_about_the_stick_pivot(model, res):
    F, d = fd_force(model, res.arm_pose, "stick_cyl")
    assert abs(res.arm_N - F) <= 1e-5 * F
    pivot = ud.forward_kinematics(model, res.arm_pose)["stick"][:3, 3]
    assert abs((res.arm_tip - pivot) @ d) <= 1e-6 * np.linalg.norm(d)


@pytest.mark.parametrize("cyl,attr", [("bucket_cyl", "bucket"), ("stick_cyl", "arm")])
def test_iso_position_is_the_maximum(model, res, cyl, attr):
    """ISO 6015 / SAE J1179: the position of the largest force. Neighbouring strokes (by finite
    differences again) give no more."""
    q = getattr(res, f"{attr}_pose")
    F0 = getattr(res, f"{attr}_N")
    for ds in (-0.04, 0.04):
        _, qq = tip_at(model, q, cyl, ds)
        assert fd_force(model, qq, cyl)[0] <= F0 * (1 + 1e-6)


def test_holding_forces_are_virtual_work(model, res):
    """The stick cylinder holds the bucket's reaction: u_stick = F · (tip motion per stick stroke) · d."""
    F = res.bucket_N
    _, d = fd_force(model, res.bucket_pose, "bucket_cyl")
    d = d / np.linalg.norm(d)
    pp, _ = tip_at(model, res.bucket_pose, "stick_cyl", 1e-5)
    pm, _ = tip_at(model, res.bucket_pose, "stick_cyl", -1e-5)
    u = F * (pp - pm) @ d / 2e-5
    bar = u / (CYL["stick_cyl"].cap_area if u > 0 else CYL["stick_cyl"].annulus_area) / 1e5
    assert abs(res.holding_bar["bucket"]["stick_cyl"] - bar) <= 1e-4 * abs(bar)


def test_envelope_contains_the_iso_figures(res):
    assert res.grid_tip.shape == (5 * 7 * 9, 3)
    assert np.all(res.grid_bucket_N > 0) and np.all(res.grid_arm_N > 0)
    # the bucket force depends on the bucket stroke only: the grid's best is at most the ISO maximum
    assert res.grid_bucket_N.max() <= res.bucket_N * (1 + 1e-9)


def test_against_the_cat320_data_sheet(res):
    """Within 15 % of the published ISO 6015 figures (cat320_datasheet.md S3), printed only when given."""
    assert abs(res.bucket_N - PUBLISHED["bucket_N"]) <= 0.15 * PUBLISHED["bucket_N"]
    assert abs(res.arm_N - PUBLISHED["arm_N"]) <= 0.15 * PUBLISHED["arm_N"]
    assert "bucket digging force" in res.table() and "140.5 kN" in res.table()
    bare = type(res)(**{**res.__dict__, "reference": {}})
    assert "published" not in bare.table() and "140.5" not in bare.table()


def test_plot_envelope(res, tmp_path):
    from urdf_dyn.reports.check_plots import plot_digging_envelope
    p = plot_digging_envelope(res, tmp_path / "dig.png")
    assert (tmp_path / "dig.png").stat().st_size > 10_000 and str(p).endswith("dig.png")


def test_missing_cylinder_is_named(model):
    with pytest.raises(KeyError, match="bucket_cyl"):
        digging_forces(model, {"stick_cyl": CYL["stick_cyl"]}, P, LIP)
    with pytest.raises(ValueError, match="holding_relief"):
        digging_forces_at(model, model.q_initial(), CYL, P, 0.0, LIP)


def test_holding_relief_limits_the_forces(model, res):
    """ISO 6015 §3.17/§4.5: with every holding cylinder limited to its port relief none exceeds it at the ISO
    positions, the working one is at most at its relief, no force grows, and the envelope is all holdable."""
    lim = digging_forces(model, CYL, P, LIP, holding_relief=35e6, n=(5, 7, 9))
    for case, work in (("bucket", "bucket_cyl"), ("arm", "stick_cyl")):
        assert all(abs(p) <= 350 * (1 + 1e-9) for p in lim.pressures_bar[case].values())
        assert lim.limited_by[case] in CYL
    assert lim.bucket_N <= res.bucket_N * (1 + 1e-9)
    assert lim.grid_arm_N.max() <= res.grid_arm_N.max() * (1 + 1e-9)
    # the grid (batched virtual work) and digging_forces_at (closed-loop inverse dynamics) agree at the ISO pose
    at = digging_forces_at(model, lim.bucket_pose, CYL, P, 35e6, LIP)
    assert abs(at["bucket"]["force_N"] - lim.bucket_N) <= 1e-9 * lim.bucket_N


def lip_jacobian(model, q, link, p):
    """Linear Jacobian (3, nv) of point p of ``link`` in root axes: v = v_origin + ω × r (public API only)."""
    T = ud.link_pose(model, q, link)
    J6 = ud.link_jacobian(model, q, link, frame="local_world_aligned")
    r = T[:3, :3] @ np.asarray(p, float)
    return J6[3:] + np.cross(J6[:3].T, r).T


def pressures_by_virtual_work(model, q, F, d, include_g=False):
    """Cylinder pressures [bar] with every actuator locked: u = Gᵀ (τ_g − J_lipᵀ f), f = −F d (RBDA eq. 8.42's
    G: q̇ = G ẏ, the actuated joints y independent; τ_g the tree's gravity forces at rest)."""
    G = ud.explicit_constraint(model, q, np.zeros(model.nv), independent=ACTS).G
    J = lip_jacobian(model, q, *LIP)
    tau = -J.T @ (-F * d)
    if include_g:
        tau = tau + ud.inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv))
    u = G.T @ tau
    return {c: (u[ACTS.index(c)] / (CYL[c].cap_area if u[ACTS.index(c)] > 0 else CYL[c].annulus_area)) / 1e5
            for c in CYL}, G, J


@pytest.mark.parametrize("holding", [None, 30e6])
@pytest.mark.parametrize("include_weight", [False, True])
def test_digging_forces_at_is_virtual_work_with_the_cylinders_locked(model, holding, include_weight):
    """At a pose off every stroke end, both tool forces: the direction is the lip's motion when the working
    cylinder strokes alone (tangent to the arc about the bucket / arm pivot), every pressure is Gᵀ J_lipᵀ f
    (plus the weight share when included), and the force is the largest at which no cylinder is over its
    limit: the binding one is exactly at it."""
    strokes = {"boom_cyl": -0.30, "stick_cyl": -0.55, "bucket_cyl": -0.10}
    q = model.q_initial()
    for c, x in strokes.items():
        q[model.joint_index(c)] = x
    q = assemble(model, q, hold=ACTS, residual_tol=1e-12)
    out = digging_forces_at(model, q, CYL, P, holding, LIP, include_weight=include_weight)
    fk = ud.forward_kinematics(model, q)
    for case, work, pivot in (("bucket", "bucket_cyl", "bucket"), ("arm", "stick_cyl", "stick")):
        r = out[case]
        G = ud.explicit_constraint(model, q, np.zeros(model.nv), independent=ACTS).G
        Jy = lip_jacobian(model, q, *LIP) @ G
        d = Jy[:, ACTS.index(work)] / np.linalg.norm(Jy[:, ACTS.index(work)])
        assert np.allclose(r["direction"], d, atol=1e-9)
        lip = (fk["bucket"] @ np.r_[LIP[1], 1.0])[:3]
        assert abs((lip - fk[pivot][:3, 3]) @ d) <= 1e-9          # tangent to the arc about the pivot
        bar, _, _ = pressures_by_virtual_work(model, q, r["force_N"], d, include_weight)
        for c in CYL:
            assert abs(r["pressures_bar"][c] - bar[c]) <= 1e-6 * max(1.0, abs(bar[c])), (case, c)
        lim = {c: (P if c == work else (holding or np.inf)) / 1e5 for c in CYL}
        assert all(abs(bar[c]) <= lim[c] * (1 + 1e-9) for c in CYL)
        assert abs(abs(bar[r["limited_by"]]) - lim[r["limited_by"]]) <= 1e-6 * lim[r["limited_by"]]


ARM = """<robot name="two_link_arm">
  <link name="base"><inertial><mass value="1000"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="stick"><inertial><origin xyz="1 0 0"/><mass value="100"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="bucket"><inertial><origin xyz="0.5 0 0"/><mass value="50"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="sc_body"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="sc_rod"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="bc_body"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="bc_rod"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="stick" type="revolute"><parent link="base"/><child link="stick"/><origin xyz="0 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1e9" velocity="1"/></joint>
  <joint name="bucket" type="revolute"><parent link="stick"/><child link="bucket"/><origin xyz="2 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1e9" velocity="1"/></joint>
  <joint name="sc_pin" type="revolute"><parent link="base"/><child link="sc_body"/><origin xyz="0 0 -1" rpy="0 -0.785398163397448 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1e9" velocity="1"/></joint>
  <joint name="stick_cyl" type="prismatic"><parent link="sc_body"/><child link="sc_rod"/><origin xyz="1.414213562373095 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-0.4" upper="0.4" effort="1e9" velocity="1"/></joint>
  <joint name="bc_pin" type="revolute"><parent link="stick"/><child link="bc_body"/><origin xyz="1 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1e9" velocity="1"/></joint>
  <joint name="bucket_cyl" type="prismatic"><parent link="bc_body"/><child link="bc_rod"/><origin xyz="1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-0.4" upper="0.4" effort="1e9" velocity="1"/></joint>
  <loop name="stick_eye" type="revolute">
    <predecessor link="sc_rod"><origin xyz="0 0 0"/></predecessor>
    <successor link="stick"><origin xyz="1 0 0" rpy="0 -0.785398163397448 0"/></successor>
    <axis xyz="0 1 0"/></loop>
  <loop name="bucket_eye" type="revolute">
    <predecessor link="bc_rod"><origin xyz="0 0 0"/></predecessor>
    <successor link="bucket"><origin xyz="0 0 0.5"/></successor>
    <axis xyz="0 1 0"/></loop>
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type><joint name="stick_cyl"/>
    <actuator name="a1"/></transmission>
  <transmission name="t2"><type>transmission_interface/SimpleTransmission</type><joint name="bucket_cyl"/>
    <actuator name="a2"/></transmission>
</robot>"""


@pytest.mark.parametrize("holding,bucket_limit", [(100e6, "bucket_cyl"), (50e6, "stick_cyl")])
def test_two_link_arm_by_hand_free_body(holding, bucket_limit):
    """A stick (pivot O at the origin, 2 m along x) and a bucket (pivot E = (2, 0, 0), lip 1 m further), in the
    side view at q = 0: the stick cylinder pushes from A = (0, 0, −1) on the stick at B = (1, 0, 0) (line at
    45°), the bucket cylinder lies along x, 0.5 m above E. Moment balances (cylinders are two-force members,
    weights left out):
    bucket force — about E: F·1 = 0.5·u_b, the lip moves down (−z); the stick cylinder holds it, about O:
    3F + u_s/√2 = 0 → u_s = −3√2 F (rod side);
    arm force — about O: 3F = u_s/√2, the lip moves up (+z); the bucket cylinder holds it, about E:
    F + 0.5 u_b = 0 → u_b = −2F (rod side).
    The bucket force is the bucket cylinder's at relief until the stick cylinder's rod side reaches its
    holding relief: lowering holding_relief moves the binding limit from one cylinder to the other."""
    from urdf_dyn.machines.sizing import Cylinder
    model = ud.load(ARM)
    cyl = {"stick_cyl": Cylinder(0.10, 0.07), "bucket_cyl": Cylinder(0.08, 0.05)}
    Pw = 30e6
    q = model.q_initial()
    out = digging_forces_at(model, q, cyl, Pw, holding, ("bucket", (1.0, 0.0, 0.0)))
    As, Asr = cyl["stick_cyl"].cap_area, cyl["stick_cyl"].annulus_area
    Ab, Abr = cyl["bucket_cyl"].cap_area, cyl["bucket_cyl"].annulus_area
    Fb = min(0.5 * Pw * Ab, holding * Asr / (3 * np.sqrt(2)))
    b = out["bucket"]
    assert abs(b["force_N"] - Fb) <= 1e-8 * Fb and b["limited_by"] == bucket_limit
    assert b["at_limit"] == [bucket_limit]                     # the other is 20 % or more below its limit
    assert np.allclose(b["direction"], [0, 0, -1], atol=1e-12)
    assert abs(b["pressures_bar"]["bucket_cyl"] - 2 * Fb / Ab / 1e5) <= 1e-8 * Fb / Ab
    assert abs(b["pressures_bar"]["stick_cyl"] + 3 * np.sqrt(2) * Fb / Asr / 1e5) <= 1e-8 * Fb / Asr
    Fa = min(Pw * As / (3 * np.sqrt(2)), holding * Abr / 2)
    a = out["arm"]
    assert abs(a["force_N"] - Fa) <= 1e-8 * Fa and a["limited_by"] == "stick_cyl"
    assert np.allclose(a["direction"], [0, 0, 1], atol=1e-12)
    assert abs(a["pressures_bar"]["bucket_cyl"] + 2 * Fa / Abr / 1e5) <= 1e-8 * Fa / Abr


def strokes_pose(model, boom, stick, bucket):
    q = model.q_initial()
    for c, x in zip(("boom_cyl", "stick_cyl", "bucket_cyl"), (boom, stick, bucket)):
        q[model.joint_index(c)] = x
    return assemble(model, q, hold=ACTS, residual_tol=1e-12)


def test_binding_limit_moves_to_a_holding_cylinder(model):
    """At one pose, off every stroke end: with generous holding reliefs the working cylinders bind (at their
    relief); lowering holding_relief below what a holding cylinder needs makes that cylinder bind, at exactly
    its holding relief, and the force drops in proportion (the pressures are linear in the force)."""
    q = strokes_pose(model, -0.30, -0.55, -0.10)
    free = digging_forces_at(model, q, CYL, P, 80e6, LIP)
    for case, work in (("bucket", "bucket_cyl"), ("arm", "stick_cyl")):
        r = free[case]
        assert r["limited_by"] == work and abs(r["pressures_bar"][work] - 350.0) < 1e-6
        other, p = max(((c, v) for c, v in r["pressures_bar"].items() if c != work), key=lambda cv: abs(cv[1]))
        H = 0.8 * abs(p) * 1e5                          # 20 % below what that holding cylinder needs
        low = digging_forces_at(model, q, CYL, P, H, LIP)[case]
        assert low["limited_by"] == other
        assert abs(abs(low["pressures_bar"][other]) - H / 1e5) <= 1e-6 * H / 1e5
        assert abs(low["force_N"] - 0.8 * r["force_N"]) <= 1e-6 * r["force_N"]


def test_tipping_limit_against_the_zmp(model):
    """ISO 6015 §3.18: with a tipping polygon that the tool force can tip the machine over (a 0.5 m square
    about the machine's centre of pressure at rest), the force is limited by "tipping", below the hydraulic
    limit, and the ZMP check (stability.zmp_margin, the machine's weight plus −F·d at the lip) is inside the
    same polygon at 99 % of it and outside at 101 %."""
    from urdf_dyn.machines.stability import center_of_pressure, zmp_margin
    q = strokes_pose(model, -0.30, -0.55, -0.10)
    c = center_of_pressure(um.base_reaction(model, q))
    poly = np.array([[c[0] + 0.25, c[1] - 0.25], [c[0] + 0.25, c[1] + 0.25], [c[0] - 0.25, c[1] + 0.25],
                     [c[0] - 0.25, c[1] - 0.25]])
    hyd = digging_forces_at(model, q, CYL, P, None, LIP)
    tip = digging_forces_at(model, q, CYL, P, None, LIP, footprint=poly)
    R = ud.link_pose(model, q, "bucket")[:3, :3]
    for case in ("bucket", "arm"):
        r = tip[case]
        assert r["limited_by"] == "tipping" and r["force_N"] < hyd[case]["force_N"]
        m = []
        for s in (0.99, 1.01):
            f = R.T @ (-s * r["force_N"] * r["direction"])
            w = np.r_[np.cross(LIP[1], f), f]
            m.append(zmp_margin(model, poly, q=q[None], f_ext={"bucket": w[None]}, warn=False).min_margin)
        assert m[0] > 0 > m[1], (case, m)


def test_two_link_arm_per_side_line_reliefs_by_hand():
    """The same free body with a line relief per cylinder side (``reliefs.pressure_limits``): the holding
    cylinder's rod end carries the load in both cases (u_s = −3√2 F, u_b = −2F), so only the rod-end relief
    may bind: a head-end relief far below it changes nothing (the working cylinder works at ``relief``)."""
    from urdf_dyn.machines.sizing import Cylinder
    model = ud.load(ARM)
    cyl = {"stick_cyl": Cylinder(0.10, 0.07), "bucket_cyl": Cylinder(0.08, 0.05)}
    Pw = 30e6
    As, Asr = cyl["stick_cyl"].cap_area, cyl["stick_cyl"].annulus_area
    Ab, Abr = cyl["bucket_cyl"].cap_area, cyl["bucket_cyl"].annulus_area
    q = model.q_initial()
    # head ends far below anything: they must not matter (the holding cylinders' head ends are unloaded)
    line = {"stick_cyl": {"head": 1e6, "rod": 90e6}, "bucket_cyl": {"head": 1e6, "rod": 90e6}}
    out = digging_forces_at(model, q, cyl, Pw, line, ("bucket", (1.0, 0.0, 0.0)))
    Fb, Fa = 0.5 * Pw * Ab, Pw * As / (3 * np.sqrt(2))
    assert abs(out["bucket"]["force_N"] - Fb) <= 1e-8 * Fb and out["bucket"]["limited_by"] == "bucket_cyl"
    assert abs(out["arm"]["force_N"] - Fa) <= 1e-8 * Fa and out["arm"]["limited_by"] == "stick_cyl"
    # swap: head ends generous, rod ends binding the holding cylinder
    # (stick rod end: 47.2 kN < the bucket cylinder's 75.4 kN; bucket rod end: 45.9 kN < the stick's 55.5 kN)
    line = {"stick_cyl": {"head": 90e6, "rod": 50e6}, "bucket_cyl": {"head": 90e6, "rod": 30e6}}
    out = digging_forces_at(model, q, cyl, Pw, line, ("bucket", (1.0, 0.0, 0.0)))
    Fb = 50e6 * Asr / (3 * np.sqrt(2))
    Fa = 30e6 * Abr / 2
    assert Fb < 0.5 * Pw * Ab and Fa < Pw * As / (3 * np.sqrt(2))
    assert abs(out["bucket"]["force_N"] - Fb) <= 1e-8 * Fb and out["bucket"]["limited_by"] == "stick_cyl"
    assert abs(out["arm"]["force_N"] - Fa) <= 1e-8 * Fa and out["arm"]["limited_by"] == "bucket_cyl"
    # the pressure each side carries is within that side's relief, and the binding side is exactly at it
    for case, work in (("bucket", "bucket_cyl"), ("arm", "stick_cyl")):
        for c, b in out[case]["pressures_bar"].items():
            side = "head" if b > 0 else "rod"
            lim = Pw if c == work else line[c][side]
            assert abs(b) <= lim / 1e5 * (1 + 1e-9)
        lb = out[case]["limited_by"]
        b = out[case]["pressures_bar"][lb]
        side = "head" if b > 0 else "rod"
        assert abs(abs(b) - (Pw if lb == work else line[lb][side]) / 1e5) <= 1e-6 * abs(b)


@pytest.mark.parametrize("bad,match", [({"stick_cyl": {"head": 1e6}}, "both sides"),
                                       ({"stick_cyl": {"head": 1e6, "rod": -1.0}}, "stick_cyl.rod must be > 0"),
                                       ({"arm_cyl": 3e7}, "arm_cyl: no such cylinder")])
def test_bad_line_reliefs_are_named(model, bad, match):
    with pytest.raises(ValueError, match=match):
        digging_forces_at(model, model.q_initial(), CYL, P, bad, LIP)


def test_arm_force_positions_its_own_bucket(model):
    """The arm force's bucket stroke is the arm case's own (``arm_bucket="max_moment"``, SAE J1179 §3.3.1's
    position of the largest output moment of the bucket cylinder and linkage): the stroke where the lip moves
    least per metre of bucket stroke — by finite differences over assembled poses, its neighbours ±2 cm move
    the lip more — and the same whatever the holding reliefs (no plateau of the bucket case is inherited).
    ``"maximum"`` (the arm force's own maximum over every stroke, ISO 6015 §4.4) is never smaller, and
    ``"bucket_force"`` keeps the makers' convention (the bucket force's stroke)."""
    runs = {h: digging_forces(model, CYL, P, LIP, holding_relief=h, n=(5, 7, 9)) for h in (None, 35e6, 38e6)}
    x = {h: r.arm_pose[model.joint_index("bucket_cyl")] for h, r in runs.items()}
    assert max(x.values()) - min(x.values()) <= 1e-12, x

    def lip_per_stroke(q, ds=1e-5):
        pp, _ = tip_at(model, q, "bucket_cyl", ds)
        pm, _ = tip_at(model, q, "bucket_cyl", -ds)
        return np.linalg.norm(pp - pm) / (2 * ds)
    q = runs[35e6].arm_pose
    r0 = lip_per_stroke(q)
    for d in (-0.02, 0.02):
        _, qq = tip_at(model, q, "bucket_cyl", d)
        assert lip_per_stroke(qq) > r0
    own = digging_forces(model, CYL, P, LIP, holding_relief=35e6, n=(5, 7, 9), arm_bucket="maximum")
    assert own.arm_N >= runs[35e6].arm_N * (1 - 1e-9)
    mk = digging_forces(model, CYL, P, LIP, holding_relief=35e6, n=(5, 7, 9), arm_bucket="bucket_force")
    j = model.joint_index("bucket_cyl")
    assert abs(mk.arm_pose[j] - mk.bucket_pose[j]) <= 1e-12
    with pytest.raises(ValueError, match="arm_bucket"):
        digging_forces(model, CYL, P, LIP, arm_bucket="tip")
