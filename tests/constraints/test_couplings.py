"""URDF+ ``<coupling>`` and ``<mimic>`` as constraint rows, against independent oracles.

Oracles:
- the coupling relations written here by hand from the files (a rotor turns N times its link, measured from
  the two links' common ancestor, generalized_rbda's "rolling" coupling), not read by urdf_dyn's parser;
- Pinocchio's mass matrix H and bias C of the same file's spanning tree (``pin.buildModelFromUrdf``; it
  ignores ``<coupling>``): with the constant G of the hand-written relations (q = G y), the coupled
  dynamics are  q̈ = G (GᵀHG)⁻¹ Gᵀ(τ − C)  and the generalised force on y is  Gᵀ RNEA(q, q̇, G ÿ);
- energy conservation in a passive simulation (gravity only, no damping).
The fixed-base URDF+ files are used; Mini Cheetah and Cassie with floating bases are not used here.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn as ud

pin = pytest.importorskip("pinocchio")

from conftest import SHARED  # noqa: E402
RBDA = SHARED / "generalized_rbda" / "robot-models"
pytestmark = pytest.mark.skipif(not RBDA.is_dir(), reason="../shared/data/generalized_rbda is absent")

# dependent joint -> {independent joint: coefficient}, read off each file by hand
HAND = {
    "revolute_rotor_chain.urdf": {"joint1r": {"joint1": 6.0}, "joint2r": {"joint2": 6.0},
                                  "joint3r": {"joint3": 6.0}},
    "mini_cheetah_leg.urdf": {"base_to_abduct_rotor": {"base_to_abduct": 6.0},
                              "abduct_to_hip_rotor_j": {"abduct_to_thigh_j": 6.0},
                              "thigh_to_knee_rotor_j": {"thigh_to_knee_j": 9.0}},
    # the ankle rotor sits on the thigh (hip_ry_link) and drives the ankle through the knee (a belt):
    # its angle is 12 × (knee + ankle), both measured from the thigh
    "mit_humanoid_leg.urdf": {"base_to_hipz_rotor": {"base_to_hipz_link": 6.0},
                              "hipz_to_hipx_rotor": {"hipz_to_hipx_link": 6.0},
                              "hipx_to_hipy_rotor": {"hipx_to_hipy_link": 6.0},
                              "hipy_to_knee_rotor": {"hipy_to_knee_link": 12.0},
                              "hipy_to_ankle_rotor": {"hipy_to_knee_link": 12.0, "knee_to_ankle": 12.0}},
}


def _load(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)  # CAD inertias violating the triangle inequality
        return ud.load(RBDA / name)


def _hand_G(model, rel):
    indep = [j for j in model.joint_names if j not in rel]
    G = np.zeros((model.nv, len(indep)))
    for c, j in enumerate(indep):
        G[model.joint_index(j), c] = 1.0
    for dep, lead in rel.items():
        for j, coef in lead.items():
            G[model.joint_index(dep), indep.index(j)] = coef
    return G, indep


class _Pin:
    """Pinocchio's H and C of the same file, in urdf_dyn's joint order (continuous joints are cos/sin)."""

    def __init__(self, model, path):
        self.pm = pin.buildModelFromUrdf(str(path))
        self.pd = self.pm.createData()
        jid = [self.pm.getJointId(n) for n in model.joint_names]
        self.iq = np.array([self.pm.idx_qs[j] for j in jid])
        self.iv = np.array([self.pm.idx_vs[j] for j in jid])
        self.nq = np.array([self.pm.nqs[j] for j in jid])

    def q(self, q):
        qp = np.zeros(self.pm.nq)
        one = self.nq == 1
        qp[self.iq[one]] = q[one]
        qp[self.iq[~one]], qp[self.iq[~one] + 1] = np.cos(q[~one]), np.sin(q[~one])
        return qp

    def v(self, v):
        out = np.zeros(self.pm.nv)
        out[self.iv] = v
        return out

    def H(self, q):
        M = pin.crba(self.pm, self.pd, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.iv, self.iv)]

    def rnea(self, q, v, a):
        return np.asarray(pin.rnea(self.pm, self.pd, self.q(q), self.v(v), self.v(a)))[self.iv]


@pytest.mark.parametrize("name", list(HAND))
def test_coupling_rows_match_hand_relations(name):
    """K's coupling rows span the same constraint as the hand-written relations (K G_hand = 0, same rank)."""
    model = _load(name)
    assert len(model.couplings) == len(HAND[name])
    G, _ = _hand_G(model, HAND[name])
    K, k = ud.loop_constraints(model, np.zeros(model.nv), np.zeros(model.nv))
    assert K.shape == (len(HAND[name]), model.nv)
    assert np.abs(K @ G).max() < 1e-12
    assert np.linalg.matrix_rank(K) == len(HAND[name])
    assert ud.mobility(model, model.q_initial()).dof == model.nv - len(HAND[name])


@pytest.mark.parametrize("name", list(HAND))
def test_coupled_dynamics_vs_pinocchio(name):
    """Closed-loop FD (every loop_solver that handles couplings) and closed-loop ID equal Pinocchio's tree
    dynamics projected by the hand-written G, at random coupled states."""
    model = _load(name)
    P = _Pin(model, RBDA / name)
    G, _ = _hand_G(model, HAND[name])
    rng = np.random.default_rng(16)
    worst = 0.0
    for _ in range(4):
        y, yd, ydd = (rng.uniform(-1, 1, G.shape[1]) for _ in range(3))
        q, qd, qdd = G @ y, G @ yd, G @ ydd
        tau = rng.standard_normal(model.nv)
        H = P.H(q)
        C = P.rnea(q, qd, np.zeros(model.nv))
        want = G @ np.linalg.solve(G.T @ H @ G, G.T @ (tau - C))
        for solver in ("nullspace", "direct", "lambda"):
            got = ud.constrained_forward_dynamics(model, q, qd, tau, loop_solver=solver, passive=False).qdd
            err = np.linalg.norm(got - want) / max(1.0, np.linalg.norm(want))
            worst = max(worst, err)
            assert err < 1e-9, f"{name} {solver}: relative error {err:.2e}"
        tau_id, Gud = ud.constrained_inverse_dynamics(model, q, qd, qdd, passive=False)
        rn = P.rnea(q, qd, qdd)
        assert np.allclose(Gud.T @ tau_id, Gud.T @ rn, rtol=1e-9, atol=1e-9)
        # urdf_dyn's G spans the hand-written one (same motion freedom)
        coef = np.linalg.lstsq(Gud, G, rcond=None)[0]
        assert Gud.shape[1] == G.shape[1] and np.allclose(Gud @ coef, G, atol=1e-10)
    print(f"{name}: largest relative error of coupled FD vs Pinocchio {worst:.1e}")


def test_reflected_rotor_inertia_is_kept():
    """The Mini Cheetah knee's effective inertia includes N² J_rotor: GᵀHG at the knee minus the link's own
    H entry is N² H_rotor + 2N H_link,rotor (Pinocchio's H), and is much larger than the link's share."""
    name = "mini_cheetah_leg.urdf"
    model = _load(name)
    P = _Pin(model, RBDA / name)
    G, indep = _hand_G(model, HAND[name])
    q = np.zeros(model.nv)
    _, Gud = ud.constrained_inverse_dynamics(model, q, q, q, passive=False)
    H = ud.mass_matrix(model, q)
    kl, kr = model.joint_index("thigh_to_knee_j"), model.joint_index("thigh_to_knee_rotor_j")
    Hp = P.H(q)
    c = indep.index("thigh_to_knee_j")
    reduced = (G.T @ H @ G)[c, c]
    assert reduced == pytest.approx(Hp[kl, kl] + 81 * Hp[kr, kr] + 18 * Hp[kl, kr], rel=1e-12)
    assert reduced > 10 * Hp[kl, kl]


def test_coupled_passive_fall_conserves_energy():
    """Mini Cheetah leg (fixed hip), couplings enforced, gravity only: energy drift ≤ 1e-6 of the swing."""
    model = _load("mini_cheetah_leg.urdf")
    G, _ = _hand_G(model, HAND["mini_cheetah_leg.urdf"])
    q0 = G @ np.array([0.3, -0.6, 1.2])
    traj = ud.simulate(model, q0, None, 0.5, options=ud.SimulateOptions(passive=False, rtol=1e-10, atol=1e-12))
    K = ud.loop_constraints(model, q0, np.zeros(model.nv))[0]
    swing = np.ptp(ud.potential_energy(model, traj.q)) if hasattr(ud, "potential_energy") else 1.0
    drift = np.abs(traj.energy - traj.energy[0]).max()
    assert swing > 1e-3
    assert drift < 1e-6 * swing + 1e-9, f"energy drift {drift:.2e} J over a swing of {swing:.3g} J"
    assert np.abs(traj.q @ K.T).max() < 1e-6  # couplings held along the motion


def test_mimic_is_enforced_by_constrained_functions_only():
    """The documented choice: tree functions treat a mimic joint as independent (Pinocchio's default);
    closed-loop functions enforce it."""
    xml = """<robot name="m"><link name="b"/>
      <joint name="a" type="revolute"><parent link="b"/><child link="l1"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
      <link name="l1"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
      <joint name="f" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
        <limit lower="-3" upper="3" effort="1" velocity="1"/><mimic joint="a" multiplier="2" offset="0.1"/></joint>
      <link name="l2"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link></robot>"""
    model = ud.load(xml)
    q = np.array([0.2, 0.5])
    qd = np.array([0.3, 0.6])
    tau = np.array([0.4, 0.0])
    # tree FD: f is free (its acceleration is not 2 × a's)
    qdd_tree = ud.forward_dynamics(model, q, qd, tau)
    assert abs(qdd_tree[1] - 2 * qdd_tree[0]) > 1e-3
    res = ud.constrained_forward_dynamics(model, q, qd, tau, passive=False)
    assert res.qdd[1] == pytest.approx(2 * res.qdd[0], abs=1e-12)
    assert ud.loop_residuals(model, np.array([0.2, 0.5]))["mimic:f"][0] == pytest.approx(0.5 - 0.4 - 0.1)


def test_coupling_errors_are_located():
    base = """<robot name="r"><link name="b"/>
      <joint name="j" type="continuous"><parent link="b"/><child link="l"/></joint><link name="l"/>
      <joint name="jr" type="continuous"><parent link="b"/><child link="r"/></joint><link name="r"/>
      <joint name="p" type="prismatic"><parent link="b"/><child link="s"/><limit lower="0" upper="1" effort="1"
        velocity="1"/></joint><link name="s"/>
      {c}</robot>"""
    cases = {
        '<coupling name="c"><predecessor link="l"/><successor link="nope"/></coupling>': "unknown link 'nope'",
        '<coupling name="c"><predecessor link="l"/><successor link="b"/></coupling>': "ancestor",
        '<coupling name="c" type="gear"><predecessor link="l"/><successor link="r"/></coupling>': "type 'gear'",
        '<coupling name="c"><predecessor link="l"/><successor link="s"/></coupling>': "non-revolute",
        '<coupling name="c"><predecessor link="l"/><successor link="r"/><ratio value="x"/></coupling>': "not a number",
    }
    for c, msg in cases.items():
        with pytest.raises(ud.ModelError, match=msg) as ei:
            ud.load(base.format(c=c))
        assert "<coupling" in str(ei.value) and str(ei.value).startswith("<string>:6: ")


def _fixed_torso_copy(name):
    """TEST-ONLY transformed copy: the file's ``floating`` root joint replaced by ``fixed`` (torso held in
    space); kept as a regression oracle beside the floating model (tests/test_floating_base.py). Everything
    else is the file's text."""
    xml = (RBDA / name).read_text()
    assert xml.count('type="floating"') == 1
    return xml.replace('type="floating"', 'type="fixed"')


def _hand_relations_from_text(xml):
    """{rotor joint: {link joint: ratio}} read with regexes: the joint whose child is the coupling's successor
    turns ``ratio`` times the joint whose child is its predecessor (both hang on the same parent here)."""
    child_joint = {c: j for j, c in re.findall(r'<joint[^>]*name="([^"]+)"[^>]*>.*?<child link="([^"]+)"', xml,
                                               flags=re.S)}
    parent_of = {c: p for p, c in re.findall(r'<parent link="([^"]+)"/>\s*<child link="([^"]+)"', xml)}
    rel = {}
    for p, s, r in re.findall(r'<coupling[^>]*>\s*<predecessor link="([^"]+)"/>\s*<successor link="([^"]+)"/>'
                              r'\s*<ratio value="([^"]+)"/>', xml):
        assert parent_of[p] == parent_of[s]
        rel[child_joint[s]] = {child_joint[p]: float(r)}
    return rel


def test_mini_cheetah_fixed_torso_copy():
    """Mini Cheetah (URDF+, 12 couplings) with its floating joint made fixed in a test-only copy: mobility
    12 = 24 − 12; coupled FD equals Pinocchio's projected tree dynamics; a passive fall of the legs
    conserves energy and keeps the couplings."""
    xml = _fixed_torso_copy("mini_cheetah.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        model = ud.load(xml)
    rel = _hand_relations_from_text(xml)
    assert len(rel) == len(model.couplings) == 12 and model.nv == 24
    assert ud.mobility(model, model.q_initial()).dof == 12
    G, _ = _hand_G(model, rel)
    pm = pin.buildModelFromXML(xml)
    P = _Pin.__new__(_Pin)
    P.pm, P.pd = pm, pm.createData()
    jid = [pm.getJointId(n) for n in model.joint_names]
    P.iq, P.iv = np.array([pm.idx_qs[j] for j in jid]), np.array([pm.idx_vs[j] for j in jid])
    P.nq = np.array([pm.nqs[j] for j in jid])
    rng = np.random.default_rng(12)
    y, yd = rng.uniform(-1, 1, (2, 12))
    q, qd, tau = G @ y, G @ yd, rng.standard_normal(24)
    H, C = P.H(q), P.rnea(q, qd, np.zeros(24))
    want = G @ np.linalg.solve(G.T @ H @ G, G.T @ (tau - C))
    got = ud.constrained_forward_dynamics(model, q, qd, tau, passive=False).qdd
    assert np.linalg.norm(got - want) <= 1e-9 * max(1.0, np.linalg.norm(want))
    traj = ud.simulate(model, model.q_initial(), None, 0.3, options=ud.SimulateOptions(passive=False, rtol=1e-10, atol=1e-12))
    swing = np.ptp(ud.potential_energy(model, traj.q))
    drift = np.abs(traj.energy - traj.energy[0]).max()
    print(f"mini_cheetah fixed-torso copy: mobility 12, fall energy drift {drift:.1e} J over {swing:.3g} J")
    assert swing > 0.5 and drift < 1e-6 * swing
    K = ud.loop_constraints(model, model.q_initial(), np.zeros(24))[0]
    assert np.abs(traj.q @ K.T).max() < 1e-6


def test_old_constraint_spelling_and_cassie_refusal():
    """Cassie v4 (generalized_rbda history) uses the older ``<constraint type="rolling">``: it is read as a
    coupling; the file is refused for its rotor inertia (ixz = −0.0117 with ixx ≈ iyy ≈ 2.3e-4 kg m²: an
    eigenvalue of −0.0115 kg m², no rigid body has it), a reason stated in the error."""
    path = RBDA.parent / "_history_30c0f5d" / "robot-models" / "cassie_v4.urdf"
    with pytest.raises(ud.ModelError, match=r'lefthippitchrotor.*not positive semi-definite'):
        ud.load(path)
    xml = """<robot name="r"><link name="b"/>
      <joint name="j" type="continuous"><parent link="b"/><child link="l"/></joint><link name="l"/>
      <joint name="jr" type="continuous"><parent link="b"/><child link="r"/></joint><link name="r"/>
      <constraint name="t" type="rolling"><predecessor link="l"/><successor link="r"/><ratio value="50"/>
      </constraint></robot>"""
    with pytest.warns(ud.ModelWarning, match="no mass"):
        (c,) = ud.load(xml).couplings
    assert dict(c.coefficients) == {"j": 50.0, "jr": -1.0}


URDF_PLUS = sorted(p.relative_to(RBDA.parent).as_posix() for p in RBDA.parent.rglob("*.urdf")) if RBDA.is_dir() else []
#: URDF+ files Pinocchio loads (as a tree) that urdf_dyn refuses, and the reason it states.
URDF_PLUS_REFUSED = {
    "_history_30c0f5d/robot-models/cassie_v4.urdf": "not positive semi-definite",  # ixz typo, see above
    # its <loop> is open by 0.3 m at q = 0 and the file has no <initial_configuration> (Pinocchio ignores
    # loops, so it does not need an assembled pose)
    "robot-models/six_bar.urdf": "cannot be assembled near the initial configuration",
}


@pytest.mark.parametrize("rel", URDF_PLUS)
def test_every_urdf_plus_file_loads_or_states_why(rel):
    path = RBDA.parent / rel
    pin.buildModelFromUrdf(str(path))  # Pinocchio loads every one of them (as a tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ModelWarning)
        try:
            model = ud.load(path)
        except ud.ModelError as e:
            assert rel in URDF_PLUS_REFUSED, f"{rel}: Pinocchio loads it, urdf_dyn refuses: {e}"
            assert URDF_PLUS_REFUSED[rel] in str(e), f"{rel}: refused for another reason: {e}"
            return
    assert rel not in URDF_PLUS_REFUSED
    assert len(model.couplings) == path.read_text().count("<coupling ")
    assert model.is_fixed_base == ('type="floating"' not in path.read_text())


@pytest.mark.parametrize("name", list(HAND))
def test_rotors_are_the_dependent_coordinates(name):
    """URDF+ ``independent="false"`` marks the rotors; a file without any ``independent=`` (the Mini Cheetah
    leg) gets the same choice: the coupling successors (and mimic followers) are dependent, so G is
    parametrised by the link joints, as in the hand-written relations."""
    model = _load(name)
    ec = ud.explicit_constraint(model, np.zeros(model.nv), np.zeros(model.nv))
    assert set(ec.independent) == set(_hand_G(model, HAND[name])[1])
