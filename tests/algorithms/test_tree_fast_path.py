"""The single-state fast path of the tree functions and the packed model's joint-axis frames.

Oracles: Pinocchio (``pin.rnea``, ``pin.crba``, ``pin.aba``) on the same state for arrays that take the fast
path and arrays that do not (strided views, other dtypes, lists, read-only arrays); the rotation matrices of
``_kernels._frame_z`` checked against their definition (orthonormal, det = +1, E a = z); the error messages
of the checking path (unchanged by the fast path).
"""
from __future__ import annotations

import numpy as np
import pytest

import urdf_dyn as ud  # before numba: urdf_dyn sets numba's cache folder (NUMBA_CACHE_DIR) on import
from urdf_dyn.algorithms import _calls, _kernels
from numba import njit  # noqa: E402  (after urdf_dyn, see above)

pin = pytest.importorskip("pinocchio")

ARM = """<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0.02 0.05" rpy="0.3 0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" ixz="0.002" iyz="0.003"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.2 0 0.01"/><mass value="1.5"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0 0.1 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l4"><inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
    <inertia ixx="0.002" iyy="0.003" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 -1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0" rpy="0.4 0 0"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0.1 0" rpy="0 0.5 0.2"/>
    <axis xyz="0.267261 0.534522 0.801784"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="j4" type="continuous"><parent link="l3"/><child link="l4"/><origin xyz="0 0.2 0"/>
    <axis xyz="1 0 0"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def arm():
    """A 4-dof arm with axes along −z, a tilted unit axis, a skew prismatic axis and x (every branch of
    ``_frame_z``), with Pinocchio's model of the same URDF."""
    model = ud.load(ARM)
    pm = pin.buildModelFromXML(model.urdf_xml)
    perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
    return model, pm, pm.createData(), perm


def _pin_q(pm, q, perm):
    """Pinocchio's q of ours (continuous joints are (cos, sin) there)."""
    out = []
    for k, i in enumerate(perm):
        j = pm.joints[k + 1]
        out += [np.cos(q[i]), np.sin(q[i])] if j.nq == 2 else [q[i]]
    return np.array(out)


@njit
def _frame_z(a, Ec):
    _kernels._frame_z(a, Ec)


def _state(seed, nv):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, (3, nv))


def test_frame_z_is_a_rotation_taking_the_axis_to_z():
    Ec = np.zeros((3, 3))
    rng = np.random.default_rng(3)
    axes = [np.array(a, float) for a in ((0, 0, 1), (0, 0, -1), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0.6, 0, 0.8))]
    axes += list(rng.normal(size=(50, 3)))
    for a in axes:
        _frame_z(a, Ec)
        assert np.allclose(Ec @ Ec.T, np.eye(3), atol=1e-14) and np.isclose(np.linalg.det(Ec), 1.0)
        assert np.allclose(Ec @ (a / np.linalg.norm(a)), [0, 0, 1], atol=1e-14)
    _frame_z(np.array([0.0, 0.0, 2.0]), Ec)
    assert np.array_equal(Ec, np.eye(3))  # +z keeps the link frame exactly


def test_packed_model_codes_and_sizes(arm):
    model = arm[0]
    ib, fb = model.kernel_pack
    n = model.NB + 1
    assert list(ib[n + 1:2 * n]) == [_kernels.REV_Z, _kernels.REV_Z, _kernels.PRIS_Z, _kernels.REV_Z]
    assert not ib.flags.writeable and not fb.flags.writeable
    assert list(model.jtype[1:]) == [0, 0, 1, 0]  # the Model's own codes are untouched


@pytest.mark.parametrize("seed", range(4))
def test_single_calls_equal_pinocchio(arm, seed):
    model, pm, pd, perm = arm
    q, qd, qdd = _state(seed, model.nv)
    qp = _pin_q(pm, q, perm)
    tau = ud.inverse_dynamics(model, q, qd, qdd)
    assert np.allclose(tau[perm], pin.rnea(pm, pd, qp, qd[perm], qdd[perm]), rtol=1e-11, atol=1e-11)
    H = ud.mass_matrix(model, q)
    Hp = pin.crba(pm, pd, qp)
    Hp = np.triu(Hp) + np.triu(Hp, 1).T
    assert np.allclose(H[np.ix_(perm, perm)], Hp, rtol=1e-11, atol=1e-11)
    a = ud.forward_dynamics(model, q, qd, tau)
    assert np.allclose(a, qdd, rtol=1e-10, atol=1e-10)
    assert np.allclose(a[perm], pin.aba(pm, pd, qp, qd[perm], tau[perm]), rtol=1e-10, atol=1e-10)


def test_arrays_off_the_fast_path_give_the_same_results(arm):
    """Strided views and read-only arrays take the fast path, lists, int and (1, n) arrays the checking
    path: all agree with the plain call (and so with Pinocchio, above)."""
    model = arm[0]
    q, qd, qdd = _state(7, model.nv)
    want = (ud.inverse_dynamics(model, q, qd, qdd), ud.mass_matrix(model, q), ud.forward_dynamics(model, q, qd, qdd))
    S = np.zeros((model.nv, 6))
    S[:, 0], S[:, 2], S[:, 4] = q, qd, qdd
    ro = [x.copy() for x in (q, qd, qdd)]
    for x in ro:
        x.setflags(write=False)
    for args in ((S[:, 0], S[:, 2], S[:, 4]), tuple(ro), tuple(x.tolist() for x in (q, qd, qdd))):
        got = (ud.inverse_dynamics(model, *args), ud.mass_matrix(model, args[0]), ud.forward_dynamics(model, *args))
        for g, w in zip(got, want):
            assert g.shape == w.shape and np.allclose(g, w, rtol=1e-13, atol=1e-13)
    qi = np.round(q).astype(int)
    assert np.allclose(ud.inverse_dynamics(model, qi, qd, qdd), ud.inverse_dynamics(model, qi.astype(float), qd, qdd))
    row = ud.inverse_dynamics(model, q[None], qd[None], qdd[None])
    assert row.shape == (1, model.nv) and np.allclose(row[0], want[0], rtol=1e-14, atol=1e-14)


def test_results_are_fresh_arrays(arm):
    """A result is never a buffer that a later call overwrites."""
    model = arm[0]
    q, qd, qdd = _state(1, model.nv)
    t1, H1, a1 = ud.inverse_dynamics(model, q, qd, qdd), ud.mass_matrix(model, q), ud.forward_dynamics(model, q, qd, qdd)
    keep = t1.copy(), H1.copy(), a1.copy()
    ud.inverse_dynamics(model, -q, qd, qdd), ud.mass_matrix(model, -q), ud.forward_dynamics(model, -q, qd, qdd)
    assert all(np.array_equal(x, y) for x, y in zip((t1, H1, a1), keep))


def test_models_of_different_size_called_in_turn(arm):
    """Interleaved calls on models of different size (each Model packs its own arrays) equal Pinocchio."""
    model, pm, pd, perm = arm
    text = ARM[:ARM.index('  <link name="l4">')] + ARM[ARM.index('  <joint name="j1"'):ARM.index('  <joint name="j4"')]
    small = ud.load(text + "</robot>")
    assert small.nv == 3
    for seed in range(3):
        q, qd, qdd = _state(seed, model.nv)
        tau = ud.inverse_dynamics(model, q, qd, qdd)
        ud.inverse_dynamics(small, q[:3], qd[:3], qdd[:3])
        assert np.allclose(tau[perm], pin.rnea(pm, pd, _pin_q(pm, q, perm), qd[perm], qdd[perm]), atol=1e-11)


def test_bad_states_keep_their_messages(arm):
    model = arm[0]
    q, qd, qdd = _state(2, model.nv)
    with pytest.raises(ud.StateError, match=r"q must have shape \(4,\) or \(N, 4\); got \(3,\)"):
        ud.inverse_dynamics(model, q[:3], qd, qdd)
    with pytest.raises(ud.StateError, match=r"qd must have shape \(4,\) or \(N, 4\); got \(5,\)"):
        ud.forward_dynamics(model, q, np.zeros(5), qdd)
    with pytest.raises(ud.StateError, match=r"q must have shape"):
        ud.mass_matrix(model, np.zeros((2, 2, 4)))
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(ud.StateError, match=r"q holds a non-finite value at index \(0, 2\)"):
        ud.inverse_dynamics(model, bad, qd, qdd)
    with pytest.raises(ud.StateError, match=r"qdd holds a non-finite value"):
        ud.inverse_dynamics(model, q, qd, np.full(4, np.inf))
    with pytest.raises(ud.StateError, match="not finite"):  # overflow inside the kernel, after finite inputs
        ud.inverse_dynamics(model, q, np.full(4, 1e200), qdd)
    with pytest.raises(ud.StateError, match=r"q must be an array of numbers"):
        ud.mass_matrix(model, "abc")


def test_compiled_entries_equal_the_dispatcher(arm):
    """The function ``Dispatcher.compile`` returns (called without the dispatcher's typing) and the
    dispatcher itself give the same numbers."""
    model = arm[0]
    ib, fb = model.kernel_pack
    q, qd, qdd = _state(4, model.nv)
    f = _calls.compiled("rnea1")
    assert callable(f)
    t1, t2 = np.empty(model.nv), np.empty(model.nv)
    assert f(ib, fb, q, qd, qdd, t1) == 0 and _calls._rnea1(ib, fb, q, qd, qdd, t2) == 0
    assert np.array_equal(t1, t2)
    H = _calls.compiled("_crba_n")(ib, fb, np.stack([q, -q]))
    assert np.array_equal(H[0], ud.mass_matrix(model, q))


def test_entries_check_sizes_and_take_multi_dof_joints(arm):
    """The single-state entries (which unbox without typing) check nq and nv themselves: status 3 for a
    wrong size, status 0 with nq ≠ nv (a floating base: q (nq,) = (p, quat, ...)), and the same numbers as
    the batch kernels, which allocate their work arrays instead of taking them from the stack."""
    fixed = arm[0]
    floating = ud.load(ARM.replace('<link name="base"/>', '<link name="base"><inertial><mass value="3"/><inertia '
                                   'ixx="0.05" iyy="0.06" izz="0.07" ixy="0" ixz="0" iyz="0"/></inertial></link>'),
                       floating_base=True)   # a massive base: with a massless one, its turn about j1's axis is j1's
    assert floating.nq == floating.nv + 1
    for model in (fixed, floating):
        ib, fb = model.kernel_pack
        rng = np.random.default_rng(5)
        q = rng.uniform(-1, 1, model.nq)
        qd, qdd = rng.uniform(-1, 1, (2, model.nv))
        t, a, H = np.empty(model.nv), np.empty(model.nv), np.zeros((model.nv, model.nv))
        assert _calls.compiled("rnea1")(ib, fb, q, qd, qdd, t) == 0
        assert _calls.compiled("aba1")(ib, fb, q, qd, t, a) == 0
        assert _calls.compiled("crba1")(ib, fb, q, H) == 0
        zero = np.zeros((0, model.NB + 1, 6))
        assert np.array_equal(t, _calls.rnea(ib, fb, q[None], qd[None], qdd[None], zero)[0])
        assert np.array_equal(a, _calls.aba(ib, fb, q[None], qd[None], t[None], zero)[0])
        assert np.array_equal(np.tril(H), np.tril(_calls.crba(ib, fb, q[None])[0]))
        assert np.allclose(a, qdd, rtol=1e-10, atol=1e-10)      # FD inverts ID
        out = np.empty(model.nv)
        assert _calls.compiled("rnea1")(ib, fb, q[:-1], qd, qdd, out) == 3
        assert _calls.compiled("rnea1")(ib, fb, q, qd[:-1], qdd, out) == 3
        assert _calls.compiled("aba1")(ib, fb, q, qd, np.zeros(model.nv + 1), out) == 3
        assert _calls.compiled("crba1")(ib, fb, np.zeros(model.nq + 1), np.zeros((model.nv, model.nv))) == 3


def test_inputs_the_entries_must_not_see_take_the_checking_path(arm):
    """float32, big-endian, 0-d and 2-D arrays, subclasses and lists never reach an entry that trusts the
    class, dtype and number of dimensions: they are converted (same numbers as the float64 call) or refused
    by the checking path with its message."""
    model = arm[0]
    q, qd, qdd = _state(8, model.nv)
    want = ud.inverse_dynamics(model, q, qd, qdd)
    f32 = [x.astype(np.float32) for x in (q, qd, qdd)]
    assert np.allclose(ud.inverse_dynamics(model, *f32), ud.inverse_dynamics(model, *[x.astype(float) for x in f32]),
                       rtol=1e-14, atol=1e-14)
    big = [x.astype(">f8") for x in (q, qd, qdd)]
    assert np.array_equal(ud.inverse_dynamics(model, *big), want)
    assert np.array_equal(ud.mass_matrix(model, big[0]), ud.mass_matrix(model, q))
    assert np.array_equal(ud.forward_dynamics(model, *big), ud.forward_dynamics(model, q, qd, qdd))
    rev = q[::-1].copy()[::-1]                                  # a negative-stride view: the fast path, 'A' layout
    assert np.array_equal(ud.mass_matrix(model, rev), ud.mass_matrix(model, q))
    with pytest.raises(ud.StateError, match="q must have shape"):
        ud.inverse_dynamics(model, np.array(1.0), qd, qdd)
    mixed = ud.inverse_dynamics(model, q[None], qd, qdd)          # a batch of one beside single states
    assert mixed.shape == (1, model.nv) and np.array_equal(mixed[0], want)
    with pytest.raises(ud.StateError, match="q must have shape"):
        ud.mass_matrix(model, np.zeros(model.nv + 1))
    with pytest.raises(ud.StateError, match="tau must have shape"):
        ud.forward_dynamics(model, q, qd, np.zeros(model.nv - 1))
    sub = [x.view(_Sub) for x in (q, qd, qdd)]
    assert np.array_equal(ud.inverse_dynamics(model, *sub), want)


class _Sub(np.ndarray):
    """An ndarray subclass (not the class the fast path trusts)."""


def test_a_model_beyond_the_stack_bound_equals_pinocchio():
    """A chain of more than ``STACK_BODIES`` bodies takes the kernels' shells (heap work arrays) in a single
    call: equal to Pinocchio."""
    n = _calls.STACK_BODIES + 2
    links = ['<link name="base"/>'] + [
        f'<link name="l{i}"><inertial><origin xyz="0.05 0.01 0"/><mass value="0.3"/>'
        f'<inertia ixx="0.001" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in range(n)]
    joints = [f'<joint name="j{i}" type="{"prismatic" if i % 7 == 3 else "revolute"}"><parent '
              f'link="{"base" if i == 0 else f"l{i - 1}"}"/><child link="l{i}"/><origin xyz="0.1 0 0"/>'
              f'<axis xyz="{i % 2} {1 - i % 2} 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
              for i in range(n)]
    model = ud.load('<robot name="long">' + "".join(links + joints) + "</robot>")
    assert model.NB + 1 > _calls.STACK_BODIES
    pm = pin.buildModelFromXML(model.urdf_xml)
    pd = pm.createData()
    perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
    q, qd, qdd = np.random.default_rng(2).uniform(-0.3, 0.3, (3, model.nv))
    tau = ud.inverse_dynamics(model, q, qd, qdd)
    tp = pin.rnea(pm, pd, q[perm], qd[perm], qdd[perm])
    assert np.allclose(tau[perm], tp, rtol=1e-10, atol=1e-10 * np.abs(tp).max())
    H = ud.mass_matrix(model, q)
    Hp = pin.crba(pm, pd, q[perm])
    Hp = np.triu(Hp) + np.triu(Hp, 1).T
    assert np.allclose(H[np.ix_(perm, perm)], Hp, rtol=1e-10, atol=1e-10 * np.abs(Hp).max())
    a = ud.forward_dynamics(model, q, qd, tau)
    ap = pin.aba(pm, pd, q[perm], qd[perm], tau[perm])
    assert np.allclose(a[perm], ap, rtol=1e-6, atol=1e-6 * np.abs(ap).max())


def test_joint_pose_equals_scipy_rotations():
    """``joints.joint_pose`` (written out in scalars, ``pose_into``) against scipy's rotations: a revolute
    joint about random unit axes (rotation vector axis·q), FREE and BALL quaternions (x, y, z, w; normalised
    first), PLANAR (x, y, θ about z), PRISMATIC (axis·q) and a sub-body (identity)."""
    from scipy.spatial.transform import Rotation
    from urdf_dyn.algorithms import joints as J
    rng = np.random.default_rng(11)
    for _ in range(200):
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        th = rng.uniform(-4, 4)
        T = J.joint_pose(J.REVOLUTE, a, np.array([0.3, th]), 1)
        assert np.allclose(T[:3, :3], Rotation.from_rotvec(a * th).as_matrix(), rtol=0, atol=4e-16 * 8)
        assert np.array_equal(T[3], [0, 0, 0, 1]) and np.array_equal(T[:3, 3], np.zeros(3))
        quat = rng.normal(size=4) * 2.0
        p = rng.normal(size=3)
        T = J.joint_pose(J.FREE, a, np.r_[9.0, p, quat], 1)
        assert np.allclose(T[:3, :3], Rotation.from_quat(quat).as_matrix(), rtol=0, atol=1e-15)
        assert np.array_equal(T[:3, 3], p)
        T = J.joint_pose(J.BALL, a, quat, 0)
        assert np.allclose(T[:3, :3], Rotation.from_quat(quat).as_matrix(), rtol=0, atol=1e-15)
        T = J.joint_pose(J.PLANAR, a, np.r_[p[:2], th], 0)
        assert np.allclose(T[:3, :3], Rotation.from_euler("z", th).as_matrix(), rtol=0, atol=1e-15)
        assert np.array_equal(T[:3, 3], [p[0], p[1], 0.0])
        T = J.joint_pose(J.PRISMATIC, a, np.array([th]), 0)
        assert np.array_equal(T[:3, :3], np.eye(3)) and np.array_equal(T[:3, 3], a * th)
        assert np.array_equal(J.joint_pose(J.SUB_R, a, np.zeros(1), -1), np.eye(4))
