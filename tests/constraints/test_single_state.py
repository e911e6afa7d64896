"""One state through the public closed-loop calls takes the compiled single-state path on a ``Data``
workspace: ``actuator_forces`` (an ``ActuationPlan`` kept in the Data) and
``constrained_forward_dynamics`` (``constraints._sample.forward_one``, RBDA §8.5 method 3). Held to the
readable reference on every robot with loops, and to independent oracles: the loop forces by virtual work
(Kᵀλ = H q̈ + C − τ), q̈ by the loop constraints (K q̈ = k)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints.inverse import ActuationWarning
from urdf_dyn.model import default_data

from test_compiled_path import CASES, _motion


def _states(model, every=9):
    q0, mo = _motion(model, dt=0.02)
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0, progress=False)
    return [(Q[i].copy(), QD[i].copy(), QDD[i].copy()) for i in range(1, len(Q), every)]


def _scale(x):
    return max(1.0, float(np.abs(x).max(initial=0.0)))


@pytest.mark.parametrize("path", CASES)
def test_actuator_forces_one_state_equals_the_reference(path):
    model = ud.load(path)
    data = ud.Data(model)
    for q, qd, qdd in _states(model):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ActuationWarning)
            a = ud.actuator_forces(model, q, qd, qdd, data=data)
            b = ud.actuator_forces(model, q, qd, qdd, compiled=False)
            c = ud.actuator_forces(model, q[None], qd[None], qdd[None])     # the compiled batch of one
        s = _scale(b.tau_ID)
        assert a.case == b.case and a.rank_Gu == b.rank_Gu and a.dof == b.dof and a.names == b.names
        assert np.abs(a.u - b.u).max(initial=0.0) <= 1e-12 * s
        assert np.abs(a.tau_ID - b.tau_ID).max() <= 1e-12 * s
        assert np.abs(a.residual - b.residual).max(initial=0.0) <= 1e-12 * s
        assert np.array_equal(a.u, c.u[0]) and np.array_equal(a.tau_ID, c.tau_ID[0])
        for k in b.loop_forces:
            # λ: the reference's SVD truncates below rtol·σ_max, the compiled path drops the redundant rows;
            # both are minimum-norm, and agree to the constraints' rounding (4e-9 seen on the excavator)
            assert np.abs(a.loop_forces[k] - b.loop_forces[k]).max() <= 1e-8 * s
            # the same λ; the wrench T λ summed in the kernel's order, not the batch's matrix product
            assert np.abs(a.loop_forces[k] - c.loop_forces[k][0]).max() <= 1e-12 * _scale(c.loop_forces[k][0])
    if model.loop_pack is not None and not model.mimic and not model.couplings:
        assert any(k[0] == "actuation" for k in data.workspaces)   # the fast path ran on the Data


@pytest.mark.parametrize("path", CASES)
@pytest.mark.parametrize("t_stab", [None, 0.05])
def test_constrained_forward_dynamics_one_state_equals_the_reference(path, t_stab):
    model = ud.load(path)
    rng = np.random.default_rng(3)
    for q, qd, _ in _states(model, every=13):
        tau = rng.normal(scale=20.0, size=model.nv)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ud.ConstraintWarning)   # none near a change of mobility here
            a = ud.constrained_forward_dynamics(model, q, qd, tau, t_stab=t_stab)
            b = ud.constrained_forward_dynamics(model, q.tolist(), qd.tolist(), tau.tolist(), t_stab=t_stab)
        assert np.abs(a.qdd - b.qdd).max() <= 1e-12 * _scale(b.qdd)
        assert a.rank == b.rank and a.method == b.method == "nullspace"
        assert a.diagnostics == b.diagnostics
        assert abs(a.residual - b.residual) <= 1e-9 * (1 + np.abs(b.qdd).max())
        # oracles: K q̈ = k, and virtual work Kᵀλ = H q̈ + C − τ_total
        K, k = ud.loop_constraints(model, q, qd, t_stab)
        res = np.linalg.norm(K @ a.qdd - k)     # redundant rows of a file-rounded loop keep a small residual
        assert abs(res - a.residual) <= 1e-9 * (1 + res)
        assert res <= 1e-6 * max(1.0, np.linalg.norm(k), np.linalg.norm(K, ord=np.inf) * np.linalg.norm(a.qdd))
        f = (ud.mass_matrix(model, q) @ a.qdd + ud.bias_force(model, q, qd) - tau
             - ud.passive_forces(model, q, qd))
        assert np.abs(K.T @ a.lam - f).max() <= 1e-7 * _scale(f)
        for name in b.loop_forces:
            assert np.abs(a.loop_forces[name] - b.loop_forces[name]).max() <= 1e-7 * _scale(f)
    if model.loop_pack is not None and not (model.mimic or model.couplings) and model.is_fixed_base \
            and not any(lp.damping > 0 for lp in model.loops):
        assert default_data(model).workspaces.get("forward") is not None


def test_a_batch_or_bad_input_still_takes_the_checking_path():
    model = ud.load(CASES[0].values[0])
    q = model.q_initial()
    with pytest.raises(ud.StateError):
        ud.constrained_forward_dynamics(model, np.vstack([q, q]), np.zeros((2, model.nv)), np.zeros((2, model.nv)))
    with pytest.raises(ud.StateError):
        ud.constrained_forward_dynamics(model, q[:-1], np.zeros(model.nv - 1), np.zeros(model.nv - 1))
    with pytest.raises(ud.StateError):
        ud.constrained_forward_dynamics(model, np.full(model.nv, np.nan), np.zeros(model.nv), np.zeros(model.nv))


@pytest.mark.parametrize("path", CASES)
def test_constrained_inverse_dynamics_one_state_equals_the_reference(path):
    model = ud.load(path)
    data = ud.Data(model)
    for q, qd, qdd in _states(model):
        tau, G = ud.constrained_inverse_dynamics(model, q, qd, qdd, data=data)
        tau_r, G_r = ud.constrained_inverse_dynamics(model, q.tolist(), qd.tolist(), qdd.tolist())
        assert np.abs(tau - tau_r).max() <= 1e-12 * _scale(tau_r)
        assert G.shape == G_r.shape and np.abs(G - G_r).max() <= 1e-12 * _scale(G_r)
        # oracle: K G = 0 (G spans the loops' motions, RBDA §8.8) to the rank tolerance rtol = 1e-6, which the
        # redundant rows of a file-rounded loop need (K G ≈ 1e-8 there on the shared excavator)
        K, _ = ud.loop_constraints(model, q, qd)
        assert np.abs(K @ G).max() <= 1e-6 * _scale(K) * _scale(G)
    if model.loop_pack is not None and not (model.mimic or model.couplings) and model.is_fixed_base \
            and not any(lp.damping > 0 for lp in model.loops):
        assert data.workspaces.get(("inverse", True)) is not None


def test_one_state_results_are_their_own_and_behave_as_actuator_forces():
    """The single-state result reads views of its own copy of the kernel's buffer: a later call on the same
    Data leaves it unchanged, and it behaves as an ``ActuatorForces`` (replace, equality of fields)."""
    import dataclasses
    path = next(c.values[0] for c in CASES if "crank" in c.id)
    model = ud.load(path)
    data = ud.Data(model)
    (q1, qd1, qdd1), (q2, qd2, qdd2) = _states(model)[:2]
    a = ud.actuator_forces(model, q1, qd1, qdd1, data=data)
    u1, lf1 = a.u.copy(), {k: v.copy() for k, v in a.loop_forces.items()}
    b = ud.actuator_forces(model, q2, qd2, qdd2, data=data)
    assert not np.array_equal(b.u, u1)                      # a different state, a different answer
    assert np.array_equal(a.u, u1) and all(np.array_equal(a.loop_forces[k], lf1[k]) for k in lf1)
    r = ud.actuator_forces(model, q1, qd1, qdd1, compiled=False)
    assert np.abs(a.u - r.u).max() <= 1e-12 * _scale(r.tau_ID)
    c = dataclasses.replace(a, case="checked")
    from urdf_dyn.constraints.actuators import ActuatorForces
    assert isinstance(c, ActuatorForces) and c.case == "checked" and np.array_equal(c.u, a.u)
    assert np.array_equal(c.tau_ID, a.tau_ID) and c.residual.shape == a.residual.shape == (a.dof,)
    assert a.limits.flags.writeable is False        # shared by every result of the Data: read-only


def test_a_kept_set_near_a_change_of_mobility_leaves_the_answer_to_the_readable_path():
    """The Data keeps the independent set chosen at an open pose of the four-bar; close to the folded pose
    (RBDA §8.10) the compiled path cannot certify the set's rank (``_sample._certified``), so the readable
    path answers and warns, as it does on a fresh Data; back at the open pose the compiled path answers again."""
    from urdf_dyn.constraints.forward import ConstrainedAccel, OneStateAccel
    from urdf_dyn.constraints.loops import ConstraintWarning
    from conftest import ROOT
    model = ud.load(ROOT / "robots" / "generalized_rbda" / "four_bar.urdf")
    data = ud.Data(model)
    z, tau = np.zeros(3), np.array([1.0, 0.0, 0.0])
    q_open = ud.assemble(model, np.array([0.6, 0.3, 0.2]), hold=["joint1"])
    a = ud.constrained_forward_dynamics(model, q_open, z, tau, passive=False, data=data)
    assert isinstance(a, OneStateAccel)
    q = ud.assemble(model, np.array([2e-5, -4e-5, 2e-5]), hold=["joint1"])
    with pytest.warns(ConstraintWarning, match="near-singular"):
        r = ud.constrained_forward_dynamics(model, q, z, tau, passive=False, data=data)
    assert type(r) is ConstrainedAccel and np.all(np.isfinite(r.qdd))
    b = ud.constrained_forward_dynamics(model, q_open, z, tau, passive=False, data=data)
    ref = ud.constrained_forward_dynamics(model, q_open.tolist(), z.tolist(), tau.tolist(), passive=False)
    assert isinstance(b, OneStateAccel) and np.abs(b.qdd - ref.qdd).max() <= 1e-12 * _scale(ref.qdd)
    assert b.rank == ref.rank and b.diagnostics == ref.diagnostics


def test_strided_and_read_only_states_take_the_compiled_path():
    """A row of a Fortran-ordered array (strided) or a read-only array is passed to the kernels as it is (their
    state arguments have layout 'A') and gives the same answer as a contiguous copy, bit for bit."""
    from urdf_dyn.constraints.forward import OneStateAccel
    from urdf_dyn.constraints.actuators import OneStateForces
    path = next(c.values[0] for c in CASES if "crank" in c.id)
    model = ud.load(path)
    q, qd, qdd = _states(model)[1]
    S = np.asfortranarray(np.array([q, qd, qdd]))
    assert not S[0].flags.c_contiguous
    ro = [x.copy() for x in (q, qd, qdd)]
    for x in ro:
        x.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActuationWarning)
        a = ud.actuator_forces(model, q, qd, qdd)
        for args in ((S[0], S[1], S[2]), ro):
            b = ud.actuator_forces(model, *args)
            assert isinstance(b, OneStateForces) and np.array_equal(a.u, b.u) and np.array_equal(a.tau_ID, b.tau_ID)
    tau = np.linspace(-1.0, 1.0, model.nv)
    c = ud.constrained_forward_dynamics(model, q, qd, tau)
    T = np.asfortranarray(np.array([q, qd, tau]))
    d = ud.constrained_forward_dynamics(model, T[0], T[1], T[2])
    assert isinstance(d, OneStateAccel) and np.array_equal(c.qdd, d.qdd) and np.array_equal(c.lam, d.lam)
    plan = ud.ActuationPlan(model)
    assert np.array_equal(plan.forces(S[0], S[1], S[2]), plan.forces(q, qd, qdd))


def test_bad_single_states_still_give_a_one_line_error():
    """The single-state fast paths refuse nothing silently: a wrong length, a non-finite entry, a wrong
    dimension or non-numbers reach the checking path, which raises StateError with one line."""
    path = next(c.values[0] for c in CASES if "crank" in c.id)
    model = ud.load(path)
    q, qd, qdd = _states(model)[1]
    n = model.nv
    nan = q.copy()
    nan[0] = np.nan
    for bad in (q[:-1], nan, np.zeros((2, 2, n)), np.full(n, np.inf)):
        with pytest.raises(ud.StateError) as e:
            ud.actuator_forces(model, bad, qd, qdd)
        assert "\n" not in str(e.value)
        with pytest.raises(ud.StateError) as e:
            ud.constrained_forward_dynamics(model, bad, qd, qdd)
        assert "\n" not in str(e.value)
    with pytest.raises(ud.StateError):
        ud.actuator_forces(model, ["a"] * n, qd, qdd)


def test_former_keyword_names_without_the_wrapper():
    """``rtol=`` is the former name of ``rank_rtol=`` in the single-state functions, handled inside them
    (no ``renamed_keywords`` wrapper around the fast path): a FutureWarning and the same answer; both names,
    or an unknown keyword, a TypeError; the documented signature shows neither."""
    import inspect
    path = next(c.values[0] for c in CASES if "crank" in c.id)
    model = ud.load(path)
    q, qd, qdd = _states(model)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActuationWarning)
        with pytest.warns(FutureWarning, match=r"actuator_forces\(\): the keyword rtol= is now rank_rtol="):
            a = ud.actuator_forces(model, q, qd, qdd, rtol=1e-6)
        assert np.array_equal(a.u, ud.actuator_forces(model, q, qd, qdd).u)
        with pytest.raises(TypeError, match="both rtol= and its new name rank_rtol="):
            ud.actuator_forces(model, q, qd, qdd, rtol=1e-6, rank_rtol=1e-6)
        with pytest.raises(TypeError, match="unexpected keyword argument 'rtoll'"):
            ud.actuator_forces(model, q, qd, qdd, rtoll=1e-6)
    with pytest.warns(FutureWarning, match=r"constrained_forward_dynamics\(\): the keyword rtol= is now"):
        b = ud.constrained_forward_dynamics(model, q, qd, qdd, rtol=1e-6)
    assert np.array_equal(b.qdd, ud.constrained_forward_dynamics(model, q, qd, qdd).qdd)
    with pytest.raises(TypeError, match="both rtol="):
        ud.constrained_forward_dynamics(model, q, qd, qdd, rtol=1e-6, rank_rtol=1e-5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tstab'"):
        ud.constrained_forward_dynamics(model, q, qd, qdd, tstab=0.1)
    for f in (ud.actuator_forces, ud.constrained_forward_dynamics):
        ps = inspect.signature(f).parameters
        assert "former" not in ps and ps["rank_rtol"].default == 1e-6 and repr(ps["rank_rtol"].default) == "1e-06"


def test_one_state_results_pickle_copy_and_replace_as_their_base_class():
    """The single-state results' classes are made per plan (their fixed fields are class attributes): a
    result still pickles, copies and replaces as an ``ActuatorForces`` / ``ConstrainedAccel`` with equal fields,
    and its own fields (details, diagnostics) are its own."""
    import copy
    import dataclasses
    import pickle
    from urdf_dyn.constraints.actuators import ActuatorForces
    from urdf_dyn.constraints.forward import ConstrainedAccel
    path = next(c.values[0] for c in CASES if "crank" in c.id)
    model = ud.load(path)
    q, qd, qdd = _states(model)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActuationWarning)
        a = ud.actuator_forces(model, q, qd, qdd)
        a2 = ud.actuator_forces(model, q, qd, qdd)
    f = ud.constrained_forward_dynamics(model, q, qd, qdd)
    f2 = ud.constrained_forward_dynamics(model, q, qd, qdd)
    for x, base in ((a, ActuatorForces), (f, ConstrainedAccel)):
        for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), dataclasses.replace(x)):
            assert isinstance(y, base)
            for fl in dataclasses.fields(base):
                u, v = getattr(x, fl.name), getattr(y, fl.name)
                if isinstance(u, dict):
                    assert u.keys() == v.keys() and all(np.array_equal(u[k], v[k]) for k in u)
                else:
                    assert np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v
        assert base.__name__ in repr(x) or type(x).__name__ in repr(x)
    a.details["mine"] = 1
    f.diagnostics["mine"] = 1
    assert "mine" not in a2.details and "mine" not in f2.diagnostics
    assert f.diagnostics["independent"] == f2.diagnostics["independent"] and f.rank == f2.rank
