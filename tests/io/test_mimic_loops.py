"""The mimic → loops converter (``urdf_dyn.io.mimic_loops``) on ROS-Industrial arms: the converted model's
kinematics equal the original's for the same motor angles through the printed mapping (every link of the
serial chain and of the parallelogram, 1e-9 m, 100 random states), its actuator torques equal an independent
tree + constraint computation (Pinocchio's RNEA of the open tree and Lagrange multipliers of constraint rows
built from Pinocchio's Jacobians, solved with numpy), and the shipped robots/ file is what the converter makes."""
import re
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from conftest import ROOT, SHARED, needs_shared
from urdf_dyn.errors import ModelError
from urdf_dyn.io.mimic_loops import close_mimic_loops, parse_pin

M900IB = SHARED / "fanuc_m900ib"
M900IB_XACRO = M900IB / "fanuc_m900ib_support/urdf/m900ib700.xacro"
SHIPPED = ROOT / "robots/fanuc_m900ib700/fanuc_m900ib700_loops.urdf"
#: the second arms of the same pattern, when the shared folder holds them (ros-industrial/fanuc and /abb)
OTHERS = {"fanuc_m900ia": "fanuc_m900ia_support/urdf/m900ia260l.xacro",
          "abb_irb2400": "abb_irb2400_support/urdf/irb2400_12_155.xacro"}


def _load(path, dirs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)   # no inertials in the sources: kinematics only
        return ud.load(path, package_dirs=dirs)


def kinematics_gap(old, conv, n=100, seed=0):
    """Largest |pose difference| over n random states, for the links the mimics place exactly and for the
    balancer links (which the mimics only linearise); and the largest loop residual after assembly."""
    new = _load(conv.urdf, None)
    rng = np.random.default_rng(seed)
    followers = {m.joint: m for m in old.mimic}
    indep = [j for j in old.joint_names if j not in followers]
    balancer = {c.links[0] for c in conv.closures if c.kind == "balancer"} | \
               {c.links[1] for c in conv.closures if c.kind == "balancer"}
    exact = bal = resid = 0.0
    for _ in range(n):
        qo = {}
        for j in indep:
            i = old.joint_index(j)
            qo[j] = rng.uniform(max(old.lower[i], -3.0), min(old.upper[i], 3.0))
        q_old = old.neutral()
        for j, v in qo.items():
            q_old[old.q_index(j)] = v
        for f, m in followers.items():
            q_old[old.q_index(f)] = m.multiplier * qo[m.leader] + m.offset
        q_new = conv.to_new(qo)
        assert np.allclose([conv.to_old(q_new)[j] for j in indep], [qo[j] for j in indep], atol=1e-12)
        guess = new.neutral()
        for j in new.joint_names:
            guess[new.q_index(j)] = q_new[j] if j in q_new else q_old[old.q_index(j)]
        qa = ud.assemble(new, guess, hold=list(conv.motors))
        assert all(abs(qa[new.q_index(j)] - v) < 1e-15 for j, v in q_new.items())   # the motors held
        resid = max(resid, max(float(np.abs(d).max()) for d in ud.loop_residuals(new, qa).values()))
        Fo, Fn = ud.forward_kinematics(old, q_old), ud.forward_kinematics(new, qa)
        for link in Fo:
            d = float(np.abs(Fo[link] - Fn[link]).max())
            if link in balancer:
                bal = max(bal, d)
            else:
                exact = max(exact, d)
    return exact, bal, resid


@needs_shared
def test_m900ib_parallelogram_and_balancers_found_and_mapped():
    conv = close_mimic_loops(_load(M900IB_XACRO, [M900IB]))
    kinds = sorted((c.kind, c.loop) for c in conv.closures)
    assert kinds == [("balancer", "piston_left_balancer_left_slide"),
                     ("balancer", "piston_right_balancer_right_slide"),
                     ("parallelogram", "plink_2_plink_1_pin")]
    pin = next(c for c in conv.closures if c.kind == "parallelogram").pin
    assert np.allclose(pin, [0.41 - 0.75, 0.08, 0.94])          # the rod's pin 1.12 m below its top pin
    assert conv.motors == ("joint_1", "joint_2", "pjoint_1", "joint_4", "joint_5", "joint_6")
    assert conv.mapping["pjoint_1"] == {"joint_3": 1.0, "joint_2": -1.0}      # J3 measured from link_1
    assert set(conv.passive) == {"joint_3", "pjoint_2", "balancer_left_joint", "piston_left_joint",
                                 "balancer_right_joint", "piston_right_joint"}
    assert "<mimic" not in conv.urdf and conv.urdf.count("<transmission ") == 6
    assert 'effort="0"' in conv.urdf                                # unknown efforts kept as written
    assert any("joint_3 = pjoint_1 + joint_2" in line for line in conv.lines)
    assert any("exact rate at joint_2 = 0 is 1.266" in line for line in conv.lines)


@needs_shared
def test_m900ib_kinematics_equal_the_original():
    old = _load(M900IB_XACRO, [M900IB])
    exact, bal, resid = kinematics_gap(old, close_mimic_loops(old))
    assert exact < 1e-9
    assert 0.01 < bal < 0.2        # the balancers' mimics are a linearisation: the loop is the real geometry
    assert resid < 1e-9


@needs_shared
@pytest.mark.parametrize("folder", sorted(OTHERS))
def test_second_arm_of_the_same_pattern(folder):
    root = SHARED / folder
    if not root.is_dir():
        pytest.skip(f"{root} is absent: the {folder} description (ros-industrial, {OTHERS[folder]}) is not in "
                    "the shared folder")
    old = _load(root / OTHERS[folder], [root])
    conv = close_mimic_loops(old)
    assert [c.kind for c in conv.closures] == ["parallelogram"]
    crank = next(j for j in conv.mapping if j not in old.joint_names or len(conv.mapping[j]) > 1)
    assert set(conv.mapping[crank]) == {"joint_3", "joint_2"}
    exact, _, resid = kinematics_gap(old, conv)
    assert exact < 1e-9 and resid < 1e-9


@pytest.mark.filterwarnings("ignore::urdf_dyn.ModelWarning")
def test_refusals_are_located(tmp_path):
    plain = tmp_path / "plain.urdf"
    plain.write_text('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                     '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    with pytest.raises(ModelError, match="no <mimic> joint"):
        close_mimic_loops(plain)
    odd = tmp_path / "odd.urdf"       # a follower that is neither a crank, a tie rod nor a balancer end
    odd.write_text('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
                   '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
                   '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n'
                   '<joint name="f" type="continuous"><origin xyz="0 0 1"/><parent link="b"/><child link="c"/>'
                   '<axis xyz="0 1 0"/><mimic joint="j" multiplier="0.5"/></joint></robot>')
    with pytest.raises(ModelError, match=r"odd.urdf:3: joint f: cannot decide where mimic follower link 'c' .*"
                                         r"--pin c:LINK=x,y,z"):
        close_mimic_loops(odd)
    with pytest.raises(ModelError, match="no link 'nope'"):
        close_mimic_loops(odd, pins=["c:nope=0,0,0"])
    with pytest.raises(ModelError, match="move apart there by"):      # a pin that does not close
        close_mimic_loops(odd, pins=["c:a=0,0,0"])
    with pytest.raises(ModelError, match="expected LINK_A:LINK_B=x,y,z"):
        parse_pin("c:a=0,0")


@needs_shared
@pytest.mark.filterwarnings("ignore::urdf_dyn.ModelWarning")
def test_shipped_file_is_what_the_converter_makes(tmp_path):
    from urdf_dyn.io.mesh_inertials import add_estimated_inertials, estimate_inertials
    from urdf_dyn.io.mimic_loops_write import save_converted
    conv = close_mimic_loops(M900IB_XACRO, package_dirs=[M900IB])
    est, rho = estimate_inertials(conv.urdf, 2800.0, package_dirs=[M900IB], source=str(M900IB_XACRO))
    assert all(e.watertight for e in est.values())
    assert abs(sum(e.mass for e in est.values()) - 2800.0) < 1e-6
    import dataclasses
    conv = dataclasses.replace(conv, urdf=add_estimated_inertials(conv.urdf, est))
    out = tmp_path / "fanuc_m900ib700_loops.urdf"
    text = save_converted(conv, out, source=M900IB_XACRO, mesh_dir="meshes", package_dirs=[M900IB])
    # equal up to the last digits of the mesh integrals (another trimesh or numpy may round differently)
    num = r"-?\d+\.?\d*(?:e-?\d+)?"
    made, shipped = re.split(num, text), re.split(num, SHIPPED.read_text())
    assert made == shipped
    a, b = (np.array(re.findall(num, t), float) for t in (text, SHIPPED.read_text()))
    assert a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12)
    assert sorted(p.name for p in (tmp_path / "meshes").iterdir()) == \
        sorted(p.name for p in (SHIPPED.parent / "meshes").iterdir())
    with pytest.raises(ModelError, match="the output is the input"):
        save_converted(conv, out, source=out)


def _constraint_rows(pmodel, pdata, new, q_pin):
    """The loops' velocity constraint rows J (15, nv_pin), from Pinocchio's frame Jacobians and the loop
    elements as written (the pin's or slide's points and axes), independent of urdf_dyn's K."""
    import pinocchio as pin
    pin.computeJointJacobians(pmodel, pdata, q_pin)
    pin.updateFramePlacements(pmodel, pdata)
    rows = []

    def J_point(link, p_world):
        fid = pmodel.getFrameId(link)
        J = pin.getFrameJacobian(pmodel, pdata, fid, pin.LOCAL_WORLD_ALIGNED)
        r = p_world - pdata.oMf[fid].translation
        return J[:3] - pin.skew(r) @ J[3:], J[3:]

    for lp in new.loops:
        pred, succ = lp.predecessor, lp.successor       # links with bodies of their own: T_P in the link frame
        Pp = pdata.oMf[pmodel.getFrameId(pred)]
        x = Pp.act(lp.T_P[:3, 3])
        a = Pp.rotation @ lp.T_P[:3, :3] @ lp.axis
        vA, wA = J_point(pred, x)
        vB, wB = J_point(succ, x)
        e = np.linalg.svd(a.reshape(1, 3))[2][1:]       # two unit vectors ⟂ the axis
        if lp.type == "revolute":
            rows += [vA - vB, e @ (wA - wB)]
        else:                                            # prismatic: no relative turn, slide along a only
            rows += [wA - wB, e @ (vA - vB)]
    return np.vstack(rows)


@needs_shared
def test_actuator_torques_equal_tree_plus_constraints():
    """Along a palletizing motion with 700 kg at 0.4 m from the flange: urdf_dyn's closed-loop actuator
    torques against Pinocchio's RNEA of the open tree + Lagrange multipliers (numpy least squares)."""
    pin = pytest.importorskip("pinocchio")
    new = ud.load(SHIPPED).with_payload("link_6", 700.0, com=(0.4, 0.0, 0.0))
    motion = ud.spline_motion(list(new.actuated_joints),
                              [[0.0, 0.1, -0.2, 0.0, -0.3, 0.0], [1.2, 0.35, 0.1, 0.2, -0.6, 0.4],
                               [2.6, 0.05, -0.1, -0.1, -0.2, 0.0]], [1.5, 1.5], dt=0.25, kind="quintic")
    Q, QD, QDD = ud.consistent_motion(new, motion)
    af = ud.actuator_forces(new, Q, QD, QDD)
    pmodel = pin.buildModelFromXML(SHIPPED.read_text())
    jid = pmodel.getJointId("joint_6")
    pmodel.inertias[jid] = pmodel.inertias[jid] + pin.Inertia(700.0, np.array([0.4, 0.0, 0.0]), np.zeros((3, 3)))
    pdata = pmodel.createData()
    perm = [new.joint_index(pmodel.names[k]) for k in range(1, pmodel.njoints)]   # pin order → ours
    act = [perm.index(new.joint_index(j)) for j in af.names]
    worst = 0.0
    for k in range(len(Q)):
        qv, qd, qdd = Q[k][perm], QD[k][perm], QDD[k][perm]
        q = np.zeros(pmodel.nq)                              # continuous joints are (cos, sin) in Pinocchio
        for i in range(1, pmodel.njoints):
            jm = pmodel.joints[i]
            q[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(qv[i - 1]), np.sin(qv[i - 1])] if jm.nq == 2 else qv[i - 1]
        tau = pin.rnea(pmodel, pdata, q, qd, qdd)
        J = _constraint_rows(pmodel, pdata, new, q)
        assert np.abs(J @ qd).max() < 1e-9                   # the state is consistent with these rows too
        S = np.zeros((len(act), pmodel.nv))
        S[range(len(act)), act] = 1.0
        A = np.hstack([S.T, J.T])                            # τ = Sᵀu + Jᵀλ
        sol = np.linalg.lstsq(A, tau, rcond=None)[0]
        assert np.abs(A @ sol - tau).max() < 1e-8 * np.abs(tau).max()
        u = sol[:len(act)]
        worst = max(worst, np.abs(u - af.u[k]).max() / np.abs(af.u[k]).max())
    print(f"largest relative difference of the actuator torques: {worst:.2g}")
    assert worst < 1e-9, worst


@needs_shared
def test_pin_overrides_the_parallelogram_pin_and_is_checked():
    old = _load(M900IB_XACRO, [M900IB])
    conv = close_mimic_loops(old, pins=["plink_2:plink_1=0,0.3,-1.12"])      # along the pin's axis: still a pin
    c = next(c for c in conv.closures if c.kind == "parallelogram")
    assert np.allclose(c.pin, [-0.34, 0.38, 0.94]) and np.allclose(c.spec[2][:3, 3], [0, 0.3, -1.12])
    assert kinematics_gap(old, conv, n=10)[0] < 1e-9
    with pytest.raises(ModelError, match=r"tie rod 'plink_2' and crank 'plink_1' .* moves apart by 0.\d+ m"):
        close_mimic_loops(old, pins=["plink_2:plink_1=0,0,-1.0"])            # a sign or a digit wrong
