"""The numbers of docs/industrial_arms.md ("Mimic against loop"): the FANUC M-900iB/700 on a palletizing
cycle with 700 kg at 0.4 m from the flange, its J2 and J3 motor torques from the mimic file read as a plain
tree, from the mimic file with its mimic rows, and from the loop model; and the tie rod's force, which only
the loop model gives. Recomputed here and compared with the page, so that the page cannot drift."""
import re
import warnings

import numpy as np

import urdf_dyn as ud
from conftest import ROOT, SHARED, needs_shared

XACRO = SHARED / "fanuc_m900ib/fanuc_m900ib_support/urdf/m900ib700.xacro"
LOOPS = ROOT / "robots/fanuc_m900ib700/fanuc_m900ib700_loops.urdf"
DOC = ROOT / "docs/industrial_arms.md"
MOTORS = ["joint_1", "joint_2", "pjoint_1", "joint_4", "joint_5", "joint_6"]
_P = np.pi / 2
#: joint_1, joint_2, J3 (pjoint_1: the forearm's angle to the horizontal), joint_4, joint_5 (flange down),
#: joint_6 [rad]: pick, lift, turn 149°, place, return
CYCLE = np.array([[0.0, 0.40, -0.30, 0.0, -_P + 0.30, 0.0],
                  [0.0, 0.00, 0.10, 0.0, -_P - 0.10, 0.0],
                  [2.6, 0.00, 0.10, 0.0, -_P - 0.10, 2.6],
                  [2.6, 0.40, -0.30, 0.0, -_P + 0.30, 2.6],
                  [0.0, 0.40, -0.30, 0.0, -_P + 0.30, 0.0]])
DURATIONS = [1.2, 3.6, 1.2, 3.6]     # s; J1's peak speed 1.35 rad/s under its 1.396 limit


def study(dt=0.02):
    """{name: value}: the torques [N m] and the tie-rod force [N] of the page's table."""
    from urdf_dyn.io.mesh_inertials import add_estimated_inertials, estimate_inertials
    loop = ud.load(LOOPS).with_payload("link_6", 700.0, com=(0.4, 0.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        old = ud.load(XACRO, package_dirs=[XACRO.parents[3]])
    est, _ = estimate_inertials(old.urdf_xml, 2800.0, package_dirs=[XACRO.parents[3]], source=str(XACRO))
    mim = ud.load(add_estimated_inertials(old.urdf_xml, est), package_dirs=[XACRO.parents[3]])
    mim = mim.with_payload("link_6", 700.0, com=(0.4, 0.0, 0.0))
    Q, QD, QDD = ud.consistent_motion(loop, ud.spline_motion(MOTORS, CYCLE, DURATIONS, dt=dt, kind="quintic"))
    af = ud.actuator_forces(loop, Q, QD, QDD)
    W = CYCLE.copy()
    W[:, 2] = CYCLE[:, 2] + CYCLE[:, 1]               # joint_3 = pjoint_1 + joint_2 (the converter's mapping)
    names = ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6"]
    Qm, QDm, QDDm = ud.consistent_motion(mim, ud.spline_motion(names, W, DURATIONS, dt=dt, kind="quintic"))
    flange = np.abs(ud.forward_kinematics(loop, Q)["flange"] - ud.forward_kinematics(mim, Qm)["flange"]).max()
    tree = ud.inverse_dynamics(mim, Qm, QDm, QDDm)
    rows = ud.actuator_forces(mim, Qm, QDm, QDDm, actuated=names)
    u, um = dict(zip(af.names, af.u.T)), dict(zip(rows.names, rows.u.T))
    ref = {"J2": u["joint_2"], "J3": u["pjoint_1"]}
    other = {"plain": {"J2": tree[:, mim.joint_index("joint_2")], "J3": tree[:, mim.joint_index("joint_3")]},
             "rows": {"J2": um["joint_2"], "J3": um["joint_3"]}}
    out = {"flange": flange, "case": af.case}
    for j in ("J2", "J3"):
        out[f"{j} loop peak"] = np.abs(ref[j]).max()
        for kind, v in other.items():
            out[f"{j} {kind} peak"] = np.abs(v[j]).max()
            out[f"{j} {kind} error"] = np.abs(v[j] - ref[j]).max()
    f = af.loop_forces["plink_2_plink_1_pin"][:, 3:]      # on the crank, in the rod's frame (z along the rod)
    out["rod axial min"], out["rod axial max"] = f[:, 2].min(), f[:, 2].max()
    out["rod transverse"] = np.abs(f[:, :2]).max()
    return out


@needs_shared
def test_page_states_the_computed_numbers():
    s = study()
    assert s["flange"] < 1e-9 and s["case"] == "properly actuated"   # the same motion on both models
    text = DOC.read_text()
    table = text[text.index("| motor torque"):]
    table = table[:table.index("\n\n")]
    expect = []
    for j in ("J2", "J3"):
        peak = s[f"{j} loop peak"]
        expect.append(f"{peak / 1e3:.2f}")
        for kind in ("plain", "rows"):
            p, e = s[f"{j} {kind} peak"], s[f"{j} {kind} error"]
            expect += [f"{p / 1e3:.2f} ({(p - peak) / peak * 100:+.1f} %)", f"{e / 1e3:.2f} ({e / peak * 100:.1f} %)"]
    expect.append(f"{s['rod axial min'] / 1e3:.1f}–{s['rod axial max'] / 1e3:.1f} kN")
    missing = [e for e in expect if e.replace("+0.0", "0.0") not in table and e not in table]
    assert not missing, (missing, table)
    assert re.search(r"transverse .{0,40}%s N" % f"{s['rod transverse']:.2g}", text) or s["rod transverse"] < 1.0
