"""No oracle comparison sits on a boundary: each is repeated at its state perturbed by
±1e-9 — in the configuration guessed before assembly, and in the assembled configuration — and its verdict
(pass or fail) must not change.

A state on a joint limit, at a singular pose or on a tie broken by round-off passes or fails depending on
the last bits of a computation, and so on the CPU (OpenBLAS picks its kernels by CPU: the Stewart platform's
home pose put its pistons at ±1e-16 of their lower stroke, and MuJoCo's limit acted on some CPUs only). A
shift of 1e-9 is far above any round-off and far below what moves an honest comparison: where the verdict
flips, the comparison sits on a boundary, on every CPU. The BLAS settings (``OPENBLAS_CORETYPE``) are left
as the machine sets them.

Covered: the MuJoCo closed-loop accelerations and its mass matrix / bias forces (tests/io/test_mjcf.py),
Pinocchio's constraintDynamics (tests/constraints/test_closed_loop.py), the mobility counts of the loop robots
(and of the PUMA with each loop type, tests/constraints/test_loop_types.py; the Stewart platform's),
the tree dynamics against Pinocchio on shared robots (tests/algorithms/test_tree_pinocchio.py) and the Stewart
platform's hand statics (tests/constraints/test_hexapod.py)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT, needs_shared

EPS = 1e-9
SHIFTS = (0.0, EPS, -EPS)


def _shifted(q, model, s):
    """q + s on every 1-dof coordinate (a floating joint's quaternion is left normalised)."""
    q = np.array(q, float)
    qi, _ = model.one_dof_indices
    q[list(qi)] += s
    return q


def _verdicts(fn, states):
    """{shift: fn(state) for each state} — fn returns a bool (the comparison passes)."""
    return {s: [bool(fn(x, s)) for x in states] for s in SHIFTS}


def _same(verdicts, what):
    base = verdicts[0.0]
    assert all(base), f"{what}: the comparison fails at its own state: {base}"
    for s, v in verdicts.items():
        assert v == base, f"{what}: the verdict changes when the state moves by {s:+g}: {base} -> {v}"


# ---------------------------------------------------------------------------------------------------------
# MuJoCo (tests/io/test_mjcf.py)
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["four_bar.urdf", "excavator.urdf", "stewart.sdf"])
def test_mujoco_closed_loop_verdict_is_stable(name):
    pytest.importorskip("mujoco")
    from test_mjcf import limit_clearance, mj_closed_loop_state, mj_qacc_errors, mj_verdict, oracle_q
    model = ud.load(ROOT / "robots" / name)
    q, qd, tau = mj_closed_loop_state(model)

    def assembled(_, s):  # shifted before assembly (the pistons' holds shift too)
        qa = oracle_q(model, _shifted(model.q_initial(), model, s))
        errs, nl = mj_qacc_errors(model, qa, ud.project_velocity(model, qa, qd), tau)
        return nl == 0 and limit_clearance(model, qa) > 0.01 and mj_verdict(errs)

    def after(_, s):  # the assembled state shifted
        errs, nl = mj_qacc_errors(model, _shifted(q, model, s), qd, tau)
        return nl == 0 and mj_verdict(errs)

    _same(_verdicts(assembled, [None]), f"{name}: q guess ±1e-9")
    _same(_verdicts(after, [None]), f"{name}: assembled q ±1e-9")


@pytest.mark.parametrize("name", ["puma560.urdf", "crank_slider.urdf", "four_bar.urdf", "four_bar_spherical.urdf",
                                  "excavator.urdf", "rbda_fig8_3.urdf", "stewart.sdf"])
def test_mujoco_mass_matrix_verdict_is_stable(name):
    mujoco = pytest.importorskip("mujoco")
    from test_mjcf import _mj_state, oracle_q
    model = ud.load(ROOT / "robots" / name)
    q0 = oracle_q(model) if model.loops else np.random.default_rng(0).normal(size=model.nv)
    qd = np.random.default_rng(1).normal(size=model.nv)
    tol = 1e-8 if name == "stewart.sdf" else 1e-12

    def ok(_, s):
        q = _shifted(q0, model, s)
        m, d = _mj_state(model, q, qd)
        H = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(m, d, H)
        Hu, C = ud.mass_matrix(model, q), ud.bias_force(model, q, qd)
        return (np.abs(H - Hu).max() <= tol * np.abs(Hu).max()
                and np.abs(d.qfrc_bias - C).max() <= tol * max(1.0, np.abs(C).max()) and d.nl == 0)

    _same(_verdicts(ok, [None]), name)


# ---------------------------------------------------------------------------------------------------------
# Pinocchio's constraintDynamics (tests/constraints/test_closed_loop.py) and the mobility counts
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["crank_slider", "four_bar", "four_bar_spherical", "rbda_fig8_3", "excavator",
                                  "urdfplus_four_bar"])
def test_pinocchio_closed_loop_verdict_is_stable(name):
    pytest.importorskip("pinocchio")
    from reference import PinLoops
    from test_closed_loop import ROBOTS, random_consistent_states
    model = ud.load(ROBOTS[name])
    ref = PinLoops(ROBOTS[name], model.joint_names)
    states = random_consistent_states(model, 2, seed=7 + len(name))
    BOUND = 1e-10  # the test's own

    def ok(x, s):
        q, qd, tau = x
        q = _shifted(q, model, s)
        qdd_ref, _ = ref.accelerations(q, qd, tau)
        got = ud.constrained_forward_dynamics(model, q, qd, tau, passive=False).qdd
        # the shifted assembled state leaves the loops open by ~|s|: Pinocchio's point contacts and our cut
        # joints then answer slightly different problems, apart by O(|s|) (slopes up to ~60 seen); a boundary
        # moves the answer by O(1) (4.1 relative on the Stewart platform at its stroke end)
        return np.linalg.norm(got - qdd_ref) / (np.linalg.norm(qdd_ref) + 1e-3) <= BOUND + 1e3 * abs(s)

    _same(_verdicts(ok, states), f"{name}: assembled q ±1e-9")

    def ok_guess(x, s):  # shifted before assembly: a closed state again, the test's own bound
        q, qd, tau = x
        qa = ud.assemble(model, _shifted(q, model, s))
        qda = ud.project_velocity(model, qa, qd)
        qdd_ref, _ = ref.accelerations(qa, qda, tau)
        got = ud.constrained_forward_dynamics(model, qa, qda, tau, passive=False).qdd
        return np.linalg.norm(got - qdd_ref) / (np.linalg.norm(qdd_ref) + 1e-3) <= BOUND

    _same(_verdicts(ok_guess, states), f"{name}: q guess ±1e-9")


@pytest.mark.parametrize("name, expect", [
    ("crank_slider", (3, 5, 2, 1)), ("four_bar", (3, 5, 2, 1)), ("four_bar_spherical", (3, 3, 2, 1)),
    ("rbda_fig8_3", (4, 5, 2, 2))])
def test_mobility_counts_are_stable(name, expect):
    from test_closed_loop import ROBOTS
    model = ud.load(ROBOTS[name])

    def ok(_, s):
        mb = ud.mobility(model, _shifted(model.q_initial(), model, s))
        return (mb.n, mb.nc, mb.rank, mb.dof) == expect

    _same(_verdicts(ok, [None]), name)


def test_stewart_hand_statics_are_stable():
    from test_hexapod import LEGS, SDF, _hand_statics, _massless_legs
    model = _massless_legs(ud.load(SDF))
    q0 = model.q_initial()

    def ok(_, s):
        q = ud.assemble(model, _shifted(q0, model, s), hold=LEGS)
        fk = ud.forward_kinematics(model, q)
        w = np.r_[np.cross(fk["platform_link"][:3, 3], model.gravity), model.gravity]
        u_hand = _hand_statics(fk, 0.9645598999351264, w)
        af = ud.actuator_forces(model, q, np.zeros(model.nv), np.zeros(model.nv), actuated=LEGS)
        return af.case == "properly actuated" and \
            np.abs(np.asarray(af.u) - u_hand).max() <= 1e-8 * max(1.0, np.abs(u_hand).max())

    _same(_verdicts(ok, [None]), "stewart statics at home")


# ---------------------------------------------------------------------------------------------------------
# tree dynamics against Pinocchio on shared robots (tests/algorithms/test_tree_pinocchio.py)
# ---------------------------------------------------------------------------------------------------------
@needs_shared
@pytest.mark.parametrize("name", ["ur5e", "kuka_kr16", "erd_panda", "erd_kinova_jaco", "erd_baxter"])
def test_tree_pinocchio_verdict_is_stable(name):
    import zlib
    pin = pytest.importorskip("pinocchio")
    import test_tree_pinocchio as T
    src = T.ROBOTS[name]
    if not src.path.is_file():
        pytest.skip(f"{name}: {src.path} not found")
    model, pm = T._load(src)
    pd = pm.createData()
    jid = [int(pm.getJointId(n)) for n in model.joint_names]
    iq = np.array([pm.idx_qs[j] for j in jid])
    iv = np.array([pm.idx_vs[j] for j in jid])
    two = np.array([pm.nqs[j] == 2 for j in jid])

    def pin_q(q):
        qp = np.zeros(pm.nq)
        qp[iq[~two]] = q[~two]
        qp[iq[two]], qp[iq[two] + 1] = np.cos(q[two]), np.sin(q[two])
        return qp

    def pv(v):
        out = np.zeros(pm.nv)
        out[iv] = v
        return out

    def rel(a, b):
        return np.linalg.norm(a - b) / max(1.0, np.linalg.norm(b))

    q, qd, qdd, tau = T._states(model, np.random.default_rng(zlib.crc32(name.encode())), 3)

    def ok(k, s):
        x = q[k] + s
        rn = np.asarray(pin.rnea(pm, pd, pin_q(x), pv(qd[k]), pv(qdd[k])))[iv]
        H = np.array(pin.crba(pm, pd, pin_q(x)))
        H = (np.triu(H) + np.triu(H, 1).T)[np.ix_(iv, iv)]
        fd = np.asarray(pin.aba(pm, pd, pin_q(x), pv(qd[k]), pv(tau[k])))[iv]
        return (rel(ud.inverse_dynamics(model, x, qd[k], qdd[k]), rn) <= T.TOL
                and rel(ud.mass_matrix(model, x), H) <= T.TOL
                and rel(ud.forward_dynamics(model, x, qd[k], tau[k]), fd) <= T.TOL)

    _same(_verdicts(ok, range(len(q))), name)


@pytest.mark.parametrize("ltype", ["cylindrical", "fixed", "planar", "prismatic", "revolute", "spherical", "universal"])
def test_loop_type_mobility_is_stable(ltype):
    """tests/constraints/test_loop_types.py: the PUMA with one loop of each type at its initial configuration."""
    from test_loop_types import LOOP_TYPES, puma_with_loop
    model = puma_with_loop(ltype)
    nc = LOOP_TYPES[ltype]

    def ok(_, s):
        mb = ud.mobility(model, _shifted(model.q_initial(), model, s))
        return (mb.nc, mb.rank, mb.dof) == (nc, nc, 6 - nc)

    _same(_verdicts(ok, [None]), ltype)


def test_stewart_mobility_is_stable():
    """tests/constraints/test_hexapod.py: mobility 6 and properly actuated at the home pose."""
    from test_hexapod import LEGS, SDF
    model = ud.load(SDF)

    def ok(_, s):
        q = _shifted(model.q_initial(), model, s)
        mb = ud.mobility(model, q)
        af = ud.actuator_forces(model, q, np.zeros(model.nv), np.zeros(model.nv), actuated=LEGS)
        return (mb.n, mb.nc, mb.rank, mb.dof) == (21, 15, 15, 6) and af.case == "properly actuated"

    _same(_verdicts(ok, [None]), "stewart mobility")
