"""The compiled closed-loop path (constraints._path) against its readable references, on every robot with
loops: consistent motion (Newton assembly, q̇ = G ẏ, q̈ = G ÿ + g), closed-loop ID and actuator forces
(eqs. 8.62–8.63) with loop forces and per-sample external wrenches, ≤ 1e-9 relative. Independent
oracles: the loop residual δ and K q̇, K q̈ − k at every sample; the previous least-squares assembly
(scipy) at sampled states; virtual work (Gᵀ(τ_ID − B u) = residual) for the actuator forces; the
branch kept through a full excavator stroke (no jump in q, the initial configuration's branch)."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints.inverse import ActuationWarning
from urdf_dyn.constraints import _linalg
from urdf_dyn.constraints.explicit import complete_pivot_lu, explicit_from_set, lu_partial, lu_solve
from urdf_dyn.constraints.loops import LoopState

from _robots import SHARED

from conftest import ROOT
ROBOTS = sorted(p for p in (ROOT / "robots").glob("*.urdf") if "<loop" in p.read_text())
SHARED_EXC = SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_loops.urdf"
CASES = [pytest.param(p, id=p.stem) for p in ROBOTS] + [pytest.param(SHARED_EXC, id="shared_excavator", marks=[
    pytest.mark.skipif(not SHARED_EXC.is_file(), reason="../shared/data is absent (a user's clone)")])]


def rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0)))


def _motion(model, seconds=1.0, dt=0.01, amp=0.05):
    """A smooth motion of the default independent coordinates about the initial configuration."""
    q0 = ud.assemble(model, model.q_initial())
    names = ud.explicit_constraint(model, q0, np.zeros(model.nv)).independent
    y0 = np.array([q0[model.joint_index(j)] for j in names])
    way = [y0, y0 + amp, y0 - amp, y0]
    return q0, ud.spline_motion(names, way, [seconds / 3] * 3, dt=dt, kind="quintic")


@pytest.mark.parametrize("path", CASES)
def test_motion_compiled_equals_reference(path):
    model = ud.load(path)
    q0, mo = _motion(model)
    A = ud.consistent_motion(model, mo, q_start=q0)
    B = ud.consistent_motion(model, mo, q_start=q0, compiled=False)
    for a, b in zip(A, B):
        assert rel(a, b) <= 1e-9
    Q, QD, QDD = A
    for i in range(0, len(mo.t), 7):        # oracle: the loops hold at every sampled state
        K, k = ud.loop_constraints(model, Q[i], QD[i])
        assert np.abs(LoopState(model, Q[i]).deltas()).max() < 1e-8
        assert np.abs(K @ QD[i]).max() < 1e-8 * (1 + np.abs(QD[i]).max())
        assert np.abs(K @ QDD[i] - k).max() < 1e-7 * (1 + np.abs(QDD[i]).max()) ** 2


@pytest.mark.parametrize("path", CASES)
def test_actuator_forces_compiled_equals_reference(path):
    model = ud.load(path)
    q0, mo = _motion(model, dt=0.02)
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    link = model.body_names[-1]
    rng = np.random.default_rng(1)
    fx = {link: rng.normal(scale=50.0, size=(len(Q), 6))}      # a wrench per sample
    from urdf_dyn.constraints.inverse import actuators_of
    acts = [a.name for a in actuators_of(model)]
    # default actuators; every tree joint (redundant); one actuator only (under-actuated when dof > 1)
    for actuated in (None, list(model.joint_names), acts[:1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ActuationWarning)
            a = ud.actuator_forces(model, Q, QD, QDD, actuated=actuated, f_ext=fx)
            b = ud.actuator_forces(model, Q, QD, QDD, actuated=actuated, f_ext=fx, compiled=False)
        assert a.case == b.case and a.rank_Gu == b.rank_Gu and a.dof == b.dof
        scale = max(1.0, np.abs(b.tau_ID).max())
        assert np.abs(a.u - b.u).max() <= 1e-9 * scale
        assert np.abs(a.tau_ID - b.tau_ID).max() <= 1e-9 * scale
        assert np.abs(a.residual - b.residual).max(initial=0.0) <= 1e-9 * scale
        for k in b.loop_forces:
            assert np.abs(a.loop_forces[k] - b.loop_forces[k]).max() <= 1e-9 * scale
        # oracle, virtual work: Gᵀ(τ_ID − B u) is the reported residual, zero when properly actuated
        from urdf_dyn.constraints.inverse import actuation_matrix, actuators_of
        acts_i = actuators_of(model, actuated)
        i = 0               # the first state picks the independent set, as explicit_constraint does here
        G = ud.explicit_constraint(model, Q[i], QD[i]).G
        tau = ud.inverse_dynamics(model, Q[i], QD[i], QDD[i], f_ext={link: fx[link][i]}) \
            - ud.passive_forces(model, Q[i], QD[i])
        r = G.T @ (tau - actuation_matrix(model, Q[i], acts_i) @ a.u[i])
        assert np.abs(r - a.residual[i]).max() <= 1e-8 * scale
        if "under" not in a.case:
            assert np.abs(a.residual).max() <= 1e-8 * scale


def test_single_state_and_loop_actuator():
    """One state through the compiled path; an actuated loop joint (B's column from the loop Jacobian)."""
    model = ud.load(ROOT / "robots" / "crank_slider.urdf")
    q = ud.assemble(model, model.q_initial())
    qd = ud.explicit_constraint(model, q, np.zeros(3)).G @ np.array([0.7])
    ec = ud.explicit_constraint(model, q, qd)
    qdd = ec.G @ np.array([-1.3]) + ec.g
    for actuated in (None, ["crank", "slider"], ["crank"]):
        a = ud.actuator_forces(model, q, qd, qdd, actuated=actuated)
        b = ud.actuator_forces(model, q, qd, qdd, actuated=actuated, compiled=False)
        assert a.u.shape == b.u.shape and rel(a.u, b.u) <= 1e-9
    loops = [lp.name for lp in model.loops if lp.S.shape[1] == 1]
    if loops:
        a = ud.actuator_forces(model, q, qd, qdd, actuated=loops[:1])
        b = ud.actuator_forces(model, q, qd, qdd, actuated=loops[:1], compiled=False)
        assert rel(a.u, b.u) <= 1e-9


def test_kernels_equal_their_references():
    """complete pivoting, LU with partial pivoting and G, g: compiled copies against the numpy references."""
    rng = np.random.default_rng(3)
    for m, n, rank in ((5, 8, 5), (20, 12, 8), (6, 6, 3)):
        K = rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n))
        k = rng.normal(size=m)
        r, dep, free, rows = complete_pivot_lu(K)
        pr, pc, fr = np.empty(min(m, n), np.int64), np.empty(min(m, n), np.int64), np.empty(n, np.int64)
        r2 = _linalg._cp_lu(K.copy(), np.zeros(n, np.bool_), 1e-6, pr, pc, fr)
        assert (r, list(dep), list(free), list(rows)) == (r2, list(pc[:r2]), list(fr[:n - r2]), list(pr[:r2]))
        LU, perm, dmin = lu_partial(K[np.ix_(rows, dep)])
        A2, perm2 = K[np.ix_(rows, dep)].copy(), np.empty(r, np.int64)
        assert _linalg._lu(A2, perm2) == dmin and np.array_equal(perm, perm2) and np.abs(A2 - LU).max() < 1e-14
        b = rng.normal(size=r)
        x = np.empty(r)
        _linalg._lu_solve(A2, perm2, b, x)
        assert rel(x, lu_solve(LU, perm, b)) < 1e-12
        k = K @ rng.normal(size=n)                  # consistent right side
        G, g = explicit_from_set(K, k, rows, dep, free)
        G2, g2 = np.zeros((n, n - r)), np.zeros(n)
        rows64 = rows.astype(np.int64)
        assert _linalg._explicit(K, k, rows64, dep.astype(np.int64), free.astype(np.int64),
                                 _linalg._complement(rows64, m), 1e-6, G2, g2, np.empty((r, r)),
                                 np.empty(r, np.int64), np.empty((r + 1, n - r + 1)), -1.0)
        assert rel(G2, G) < 1e-12 and rel(g2, g) < 1e-12
        assert np.abs(K @ G).max() < 1e-9 * np.abs(K).max() * np.abs(G).max()   # oracle: K G = 0


def test_branch_through_a_full_excavator_stroke():
    """Every cylinder through its whole stroke at 1 ms: Newton from the previous sample stays on the
    initial configuration's branch (q continuous, equal to the least-squares assembly at sampled times)."""
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    names = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
    lo = np.array([model.lower[model.joint_index(j)] for j in names])
    hi = np.array([model.upper[model.joint_index(j)] for j in names])
    lo[0], hi[0] = -1.0, 1.0
    a, b = lo + 0.02 * (hi - lo), hi - 0.02 * (hi - lo)
    mo = ud.spline_motion(names, [a, b, a], [3.0, 3.0], dt=0.001, kind="quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo)
    step = np.abs(np.diff(Q, axis=0)).max()
    assert step < 5e-3                                         # no branch jump between 1 ms samples
    Qr = ud.consistent_motion(model, mo, compiled=False)[0]
    assert rel(Q, Qr) <= 1e-9
    for i in range(0, len(Q), 500):                            # oracle: scipy least squares from the branch
        q = Q[i].copy()
        q[[j for j in range(model.nv) if model.joint_names[j] not in names]] += 1e-3
        q = ud.assemble(model, q, hold=names)
        assert np.abs(q - Q[i]).max() < 1e-7


def test_size_motion_payload_groups_and_f_ext_equal_the_reference():
    """size_motion runs one compiled call per distinct model; per sample it must equal the readable
    reference with that sample's model (payload on or off) and external wrench."""
    from urdf_dyn.machines.sizing import size_motion
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    names = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
    mo = ud.spline_motion(names, [[0.0, -0.4, -0.85, -0.45], [0.3, -0.2, -0.4, 0.1]], [1.0], dt=0.02)
    Q, QD, QDD = ud.consistent_motion(model, mo)
    loaded = model.with_payload("bucket", 1800.0, [0.75, 0.0, 0.35])
    models = [loaded if 0.3 <= t <= 0.7 else model for t in mo.t]
    fx = {"bucket": np.random.default_rng(5).normal(scale=2e4, size=(len(Q), 6))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActuationWarning)
        res = size_motion(model, mo.t, Q, QD, QDD, models=models, f_ext=fx)
        for i in (0, 20, len(Q) - 1):
            ref = ud.actuator_forces(models[i], Q[i], QD[i], QDD[i], f_ext={"bucket": fx["bucket"][i]}, compiled=False)
            assert rel(res.u[i], ref.u) <= 1e-9
            for k, f in ref.loop_forces.items():
                assert abs(res.pin_force[k][i] - np.linalg.norm(f[3:])) <= 1e-9 * max(1.0, np.abs(ref.tau_ID).max())
    assert res.u.shape == (len(Q), 4) and abs(res.u[20] - res.u[0]).max() > 0


@pytest.mark.parametrize("path", CASES)
def test_fast_qdd_compiled_equals_reference(path):
    """The simulator's compiled step (``cl_qdd``: method 2 on the independent rows, Baumgarte terms, tree
    passive forces added in the kernel) against the reference method 2 (``loop_solver="lambda"``), at
    consistent states and at states opened by 1e-4 (where Baumgarte acts), with and without passive
    forces; the compiled branch must actually run (Data remembers the rows after the first call).
    Oracle: K q̈ = k_stab on every row, the dropped redundant ones included (to 1e-6 relative: the shared
    MJCF-derived excavator's out-of-plane rows carry ~1e-9 rounding and are not exactly consistent)."""
    from urdf_dyn.constraints.forward import constrained_forward_dynamics, fast_qdd
    from urdf_dyn.constraints.loops import constraint_terms
    import urdf_dyn.constraints._kernels as LK
    model = ud.load(path)
    q0, mo = _motion(model, dt=0.05)
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    rng = np.random.default_rng(4)
    data = ud.Data(model)
    calls = []
    orig = LK.cl_qdd

    def spy(*a):
        calls.append(orig(*a))
        return calls[-1]
    LK.cl_qdd = spy
    try:
        for i in range(0, len(Q), 5):
            for dq in (0.0, 1e-4):
                q, qd = Q[i] + dq, QD[i]
                tau = rng.normal(scale=100.0, size=model.nv)
                for passive in (True, False):
                    ref = constrained_forward_dynamics(model, q, qd, tau, loop_solver="lambda", t_stab=0.1,
                                                       passive=passive).qdd
                    fast = fast_qdd(model, q, qd, tau, t_stab=0.1, passive=passive, data=data)
                    assert np.linalg.norm(fast - ref) <= 1e-9 * max(1.0, np.linalg.norm(ref))
                    _, K, k = constraint_terms(model, q, qd, 0.1)
                    scale = np.linalg.norm(k) + np.linalg.norm(K) * np.linalg.norm(fast)
                    assert np.linalg.norm(K @ fast - k) <= 1e-6 * scale
    finally:
        LK.cl_qdd = orig
    assert calls and calls.count(0) >= len(calls) - 2       # the compiled branch ran (and succeeded)


def _fast_qdd_recorded(model, q, qd, tau, data):
    """fast_qdd(…, t_stab=0.1, data) and the statuses of the compiled cl_qdd calls it made (0 = it answered)."""
    from urdf_dyn.constraints.forward import fast_qdd
    import urdf_dyn.constraints._kernels as LK
    calls, orig = [], LK.cl_qdd
    LK.cl_qdd = lambda *a: calls.append(orig(*a)) or calls[-1]
    try:
        return fast_qdd(model, q, qd, tau, t_stab=0.1, data=data), calls
    finally:
        LK.cl_qdd = orig


def test_fast_qdd_passive_forces_in_the_kernel():
    """Tree damping and joint springs added inside ``cl_qdd`` equal ``passive_forces`` added outside:
    a model with damping and springs (a copy of the four-bar with them set) against the reference."""
    import dataclasses
    from urdf_dyn.constraints.forward import constrained_forward_dynamics, fast_qdd
    base = ud.load(ROOT / "robots" / "crank_slider.urdf")
    n = base.nv
    rng = np.random.default_rng(6)
    model = dataclasses.replace(base, damping=rng.uniform(0.5, 2.0, n), spring_stiffness=rng.uniform(10, 50, n),
                                spring_reference=rng.uniform(-0.2, 0.2, n))
    q = ud.assemble(model, model.q_initial())
    ec = ud.explicit_constraint(model, q, np.zeros(n))
    qd = ec.G @ rng.normal(size=ec.G.shape[1])
    tau = rng.normal(size=n)
    data = ud.Data(model)
    fast_qdd(model, q, qd, tau, t_stab=0.1, data=data)           # first call: chooses the rows
    assert data.loop_rows is not None
    ref = constrained_forward_dynamics(model, q, qd, tau, loop_solver="lambda", t_stab=0.1).qdd
    fast, calls = _fast_qdd_recorded(model, q, qd, tau, data)
    assert calls == [0]                                          # the compiled branch ran
    assert np.linalg.norm(fast - ref) <= 1e-9 * max(1.0, np.linalg.norm(ref))
    off = constrained_forward_dynamics(model, q, qd, tau, loop_solver="lambda", t_stab=0.1, passive=False).qdd
    assert np.linalg.norm(off - ref) > 1e-3 * np.linalg.norm(ref)   # the passive forces matter here


@pytest.mark.parametrize("name, actuated", [("crank_slider", ["slider"]), ("excavator", ["boom", "boom_cyl_pin"])])
def test_rank_deficient_actuation_falls_back_to_the_reference(name, actuated):
    """Where A = Gᵀ B is not clearly of full rank the compiled path hands the sample (with its G) back to
    the reference's SVD: the results must still equal the reference, and the fallback must have run."""
    import urdf_dyn.constraints.inverse as act
    model = ud.load(ROOT / "robots" / f"{name}.urdf")
    q0, mo = _motion(model, dt=0.05)
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    calls, orig = [], act._solve_one
    act._solve_one = lambda *a, **k: calls.append(1) or orig(*a, **k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ActuationWarning)
            a = ud.actuator_forces(model, Q, QD, QDD, actuated=actuated)
    finally:
        act._solve_one = orig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActuationWarning)
        b = ud.actuator_forces(model, Q, QD, QDD, actuated=actuated, compiled=False)
    assert calls                                                # the fallback ran
    # (near the slider's dead point the pseudo-inverse gives u ~ 1e17 in both: compare relative to it)
    scale = max(1.0, np.abs(b.tau_ID).max(), np.abs(b.u).max())
    assert a.case == b.case and np.abs(a.u - b.u).max() <= 1e-9 * scale
    assert np.abs(a.residual - b.residual).max() <= 1e-9 * scale
    for k in b.loop_forces:
        assert np.abs(a.loop_forces[k] - b.loop_forces[k]).max() <= 1e-9 * scale


def test_recheck_decides_as_the_reference():
    """The re-check of an independent set (``_explicit`` with check, which tests K G only on the rows
    outside the set) accepts and rejects exactly where ``explicit_from_set`` (every row) does: K of rank r
    (serves), K whose redundant rows leave the row space by ε (the rank grew: rejected above the
    tolerance, accepted below it), K_d made near-singular (rejected)."""
    rng = np.random.default_rng(8)
    m, n, r = 9, 7, 4
    for trial in range(40):
        K = rng.normal(size=(m, r)) @ rng.normal(size=(r, n))
        k = rng.normal(size=m)
        _, dep, free, rows = complete_pivot_lu(K)
        kind = trial % 4
        if kind == 1:       # a redundant row leaves the row space
            red = [i for i in range(m) if i not in set(rows.tolist())]
            K[red[trial % len(red)]] += 10.0 ** rng.uniform(-9, -3) * rng.normal(size=n) * np.abs(K).max()
        elif kind == 2:     # K_d near-singular: a dependent column nearly equal to another
            K[:, dep[0]] = K[:, dep[1]] * (1 + 10.0 ** rng.uniform(-12, -4))
        elif kind == 3:     # scaled
            K *= 10.0 ** rng.uniform(-3, 3)
        ref = explicit_from_set(K, k, rows, dep, free, 1e-6, check=True)
        rows64 = rows.astype(np.int64)
        G2, g2 = np.zeros((n, n - r)), np.zeros(n)
        ok = _linalg._explicit(K, k, rows64, dep.astype(np.int64), free.astype(np.int64),
                               _linalg._complement(rows64, m), 1e-6, G2, g2, np.empty((r, r)),
                               np.empty(r, np.int64), np.empty((r + 1, n - r + 1)), -1.0)
        assert ok == (ref is not None), (trial, kind)
        if ok:
            assert rel(G2, ref[0]) < 1e-10 and rel(g2, ref[1]) < 1e-10


def test_errors_of_the_compiled_motion_equal_the_reference():
    """A stroke out of reach and coordinates that cannot serve: the compiled path raises what the
    reference raises, at the same time and with the same residual (the residual of Newton's last iterate,
    not of the last good sample)."""
    import re
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q0 = ud.assemble(model, model.q_initial())
    names = ["swing", "boom_cyl", "stick_cyl", "bucket_cyl"]
    y0 = [q0[model.joint_index(n)] for n in names]
    y1 = list(y0)
    y1[1] += 3.0                                   # 3 m beyond the boom cylinder's stroke
    mo = ud.spline_motion(names, [y0, y1], [1.0], dt=0.01)
    msgs = []
    for compiled in (True, False):
        with pytest.raises(ud.ModelError, match="cannot be closed") as e:
            ud.consistent_motion(model, mo, compiled=compiled)
        msgs.append(str(e.value))
    t, res = zip(*(re.search(r"t = ([\d.]+) s.*residual ([\d.e+-]+)", m).groups() for m in msgs))
    assert t[0] == t[1] and float(res[0]) > 1e-3 and abs(float(res[0]) - float(res[1])) <= 1e-3 * float(res[1])
    bad = ["boom", "boom_cyl", "stick_cyl", "bucket_cyl"]     # boom and its cylinder: swing is left without a row
    mo = ud.spline_motion(bad, [[q0[model.joint_index(n)] for n in bad]] * 2, [1.0], dt=0.1)
    for compiled in (True, False):
        with pytest.raises(ValueError, match="cannot serve as independent coordinates"):
            ud.consistent_motion(model, mo, compiled=compiled)


def test_inconsistent_state_is_refused_by_both_paths():
    """A state that violates the loops (q̇ off K q̇ = 0) is refused with StateError by the compiled path, as
    by the reference, naming the same check."""
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q0, mo = _motion(model, dt=0.05)
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    QD = QD.copy()
    QD[7, 1] += 0.3
    msgs = []
    for compiled in (True, False):
        with pytest.raises(ud.StateError) as e:
            ud.actuator_forces(model, Q, QD, QDD, compiled=compiled, warn=False)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_fast_qdd_with_a_damped_loop_joint_uses_the_reference(tmp_path):
    """A damped loop joint is not handled inside ``cl_qdd``: fast_qdd must then take the reference path
    (passive_forces with the loop damper) even with the rows remembered, and still equal method 2."""
    from urdf_dyn.constraints.forward import constrained_forward_dynamics, fast_qdd
    text = (ROOT / "robots" / "crank_slider.urdf").read_text().replace(
        '<axis xyz="0 -1 0"/>\n  </loop>', '<axis xyz="0 -1 0"/>\n    <dynamics damping="0.3"/>\n  </loop>')
    f = tmp_path / "damped.urdf"
    f.write_text(text)
    model = ud.load(f)
    assert any(lp.damping > 0 for lp in model.loops)
    q = ud.assemble(model, model.q_initial())
    qd = ud.explicit_constraint(model, q, np.zeros(model.nv)).G @ np.array([2.0])
    tau = np.zeros(model.nv)
    data = ud.Data(model)
    fast_qdd(model, q, qd, tau, t_stab=0.1, data=data)
    assert data.loop_rows is not None
    fast, calls = _fast_qdd_recorded(model, q, qd, tau, data)
    ref = constrained_forward_dynamics(model, q, qd, tau, loop_solver="lambda", t_stab=0.1).qdd
    off = constrained_forward_dynamics(model, q, qd, tau, loop_solver="lambda", t_stab=0.1, passive=False).qdd
    assert calls == [] and np.linalg.norm(fast - ref) <= 1e-9 * max(1.0, np.linalg.norm(ref))
    assert np.linalg.norm(off - ref) > 1e-6 * np.linalg.norm(ref)          # the damper matters here
