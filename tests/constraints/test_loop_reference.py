"""The readable Python reference of the loop terms (``LoopState(compiled=False)``: K, k, Tᵀv_J, δ by the
formulas of RBDA eqs. 8.14–8.17, 8.23) is independent of the compiled kernel ``_kernels.loop_terms``, and
the two agree on every robot with loops (≤ 1e-12 relative) at states off the assembled configuration."""
from __future__ import annotations

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints import _kernels as _LK
from urdf_dyn.constraints.loops import LoopState, constraint_terms

from conftest import ROOT, SHARED

ROBOTS = sorted(p for p in (ROOT / "robots").glob("*.urdf") if "<loop" in p.read_text())
SHARED_EXC = SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_loops.urdf"
CASES = [pytest.param(p, id=p.stem) for p in ROBOTS] + [pytest.param(SHARED_EXC, id="shared_excavator", marks=[
    pytest.mark.skipif(not SHARED_EXC.is_file(), reason="../shared/data is absent (a user's clone)")])]


def _states(model, n=4, seed=0):
    """Assembled configuration plus random offsets (never exactly assembled: δ ≠ 0 is compared too)."""
    rng = np.random.default_rng(seed)
    q0 = ud.assemble(model, model.q_initial())
    for _ in range(n):
        yield q0 + 0.05 * rng.standard_normal(model.nq), rng.standard_normal(model.nv)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0)))


@pytest.mark.parametrize("path", CASES)
def test_python_reference_equals_the_compiled_kernel(path):
    model = ud.load(path)
    if model.loop_pack is None:
        pytest.skip(f"{path.name}: a universal loop, which only the Python reference evaluates")
    for q, qd in _states(model):
        fast, ref = LoopState(model, q, qd), LoopState(model, q, qd, compiled=False)
        assert fast._compiled() is not None and ref._compiled() is None   # two different code paths
        Kf, kf, vf, lf = fast.K_k()
        Kr, kr, vr, lr = ref.K_k()
        assert list(lf) == list(lr)
        assert _rel(Kf, Kr) <= 1e-12 and _rel(kf, kr) <= 1e-12 and _rel(vf, vr) <= 1e-12
        assert _rel(fast.deltas(), ref.deltas()) <= 1e-12
        assert np.abs(ref.deltas()).max() > 1e-4      # off the assembled pose: δ itself is compared
        for a, b in zip(fast.loop_deltas(), ref.loop_deltas()):
            assert _rel(a, b) <= 1e-12


def test_the_reference_never_calls_the_kernel(monkeypatch):
    """compiled=False runs Python only: with the kernel made to fail, the reference still answers (the
    excavator: four loops, the compiled kernel applies to it)."""
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q, qd = next(_states(model))
    expected = constraint_terms(model, q, qd)[1:]
    q0 = ud.assemble(model, model.q_initial())
    names = ud.explicit_constraint(model, q0, np.zeros(model.nv)).independent
    y0 = np.array([q0[model.joint_index(j)] for j in names])
    motion = ud.spline_motion(names, [y0, y0 + 0.02], [0.2], dt=0.05, kind="quintic")
    Q_fast = ud.consistent_motion(model, motion, q_start=q0)[0]

    def boom(*a, **k):
        raise AssertionError("the compiled loop kernel ran")
    monkeypatch.setattr(_LK, "loop_terms", boom)
    K, k = constraint_terms(model, q, qd, compiled=False)[1:]
    assert _rel(K, expected[0]) <= 1e-12 and _rel(k, expected[1]) <= 1e-12
    with pytest.raises(AssertionError, match="compiled loop kernel ran"):
        constraint_terms(model, q, qd)     # the check above can fail: the default path does use the kernel
    Q = ud.consistent_motion(model, motion, q_start=q0, compiled=False)[0]   # the reference motion, kernel-free
    assert Q.shape == Q_fast.shape and _rel(Q, Q_fast) <= 1e-9
