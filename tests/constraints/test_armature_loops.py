"""Joint armature (H + diag(armature)) in the closed-loop algorithms: constrained forward dynamics (every
method, the compiled single-state path and the simulator's ``fast_qdd``), actuator forces (compiled and
readable), and simulation.

Oracles: Pinocchio's H and C with the same ``model.armature`` (it ignores ``<loop>``; the joint matching of
``test_couplings._Pin``): with G, g of the
explicit constraint (RBDA §8.8), q̈ = G (GᵀHG)⁻¹ Gᵀ(τ − C − H g) + g, and τ_ID = RNEA(q, q̇, q̈); the
armature changes the answer (the comparison is not vacuous); energy conservation of a passive, undamped
four-bar whose joints carry armature (the kinetic energy ½ q̇ᵀ(H + diag(armature))q̇)."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints.forward import METHODS, constrained_forward_dynamics, fast_qdd
from urdf_dyn.constraints.inverse import actuator_forces
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.model import frozen
from urdf_dyn.simulation.simulate import simulate

from conftest import ROOT
from test_couplings import _Pin as _PinTree

pin = pytest.importorskip("pinocchio")
EXCAVATOR = ROOT / "robots" / "excavator.urdf"


def _with_armature(model, seed=0):
    rng = np.random.default_rng(seed)
    arm = np.where(model.is_linear, rng.uniform(50.0, 500.0, model.nv), rng.uniform(5.0, 80.0, model.nv))
    return dataclasses.replace(model, armature=frozen(arm))


def _state(model):
    q0 = ud.assemble(model, model.q_initial())
    names = ud.explicit_constraint(model, q0, np.zeros(model.nv)).independent
    y0 = np.array([q0[model.joint_index(j)] for j in names])
    mo = ud.spline_motion(names, [y0, y0 + 0.06, y0], [0.2, 0.2], dt=0.01, kind="quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    return Q, QD, QDD


class _Pin(_PinTree):
    """Pinocchio's H and RNEA of the model's tree (its URDF file; <loop> is ignored), armature included."""

    def __init__(self, model, path):
        super().__init__(model, path)
        arm = np.zeros(self.pm.nv)
        arm[self.iv] = model.armature
        self.pm.armature = arm


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(b)))


@pytest.fixture(scope="module")
def excavator():
    model = _with_armature(ud.load(EXCAVATOR))
    return model, _state(model)


def test_constrained_forward_dynamics_with_armature(excavator):
    """Every method, the compiled single-state path and ``fast_qdd`` equal the explicit-constraint formula on
    Pinocchio's H and C (armature included) to ≤ 1e-9 relative, and differ from the model without armature."""
    model, (Q, QD, QDD) = excavator
    ref = _Pin(model, EXCAVATOR)
    bare = dataclasses.replace(model, armature=None)
    rng = np.random.default_rng(1)
    worst = 0.0
    for i in (3, 11, 30):
        q, qd = Q[i], QD[i]
        tau = rng.uniform(-2e4, 2e4, model.nv)
        ec = ud.explicit_constraint(model, q, qd)
        H, C = ref.H(q), ref.rnea(q, qd, np.zeros(model.nv))
        G, g = ec.G, ec.g
        oracle = G @ np.linalg.solve(G.T @ H @ G, G.T @ (tau - C - H @ g)) + g
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the sparse method's redundant rows, near-singular warnings
            for method in METHODS:
                got = constrained_forward_dynamics(model, q, qd, tau, loop_solver=method, passive=False).qdd
                worst = max(worst, rel(got, oracle))
            one = constrained_forward_dynamics(model, q, qd, tau, passive=False)
            data = ud.Data(model)
            for _ in range(2):                  # the second call runs the compiled kernel (rows kept)
                fq = fast_qdd(model, q, qd, tau, passive=False, data=data)
        worst = max(worst, rel(one.qdd, oracle), rel(fq, oracle))
        assert rel(constrained_forward_dynamics(bare, q, qd, tau, passive=False).qdd, oracle) > 1e-3
    assert worst <= 1e-9, worst


def test_actuator_forces_with_armature(excavator):
    """τ_ID of the compiled and the readable path is Pinocchio's RNEA with armature minus the passive forces
    (≤ 1e-9 relative); u and the pin loads of the two paths agree."""
    model, (Q, QD, QDD) = excavator
    ref = _Pin(model, EXCAVATOR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ActuationWarning)
        fast = actuator_forces(model, Q, QD, QDD)
        slow = actuator_forces(model, Q[:8], QD[:8], QDD[:8], compiled=False)
        one = actuator_forces(model, Q[5], QD[5], QDD[5])
    oracle = np.array([ref.rnea(q, qd, qdd) for q, qd, qdd in zip(Q, QD, QDD)]) - passive_forces(model, Q, QD)
    assert rel(fast.tau_ID, oracle) <= 1e-9
    assert rel(slow.tau_ID, oracle[:8]) <= 1e-9
    assert rel(one.tau_ID, oracle[5]) <= 1e-9
    assert rel(slow.u, fast.u[:8]) <= 1e-9 and rel(one.u, fast.u[5]) <= 1e-9
    bare = actuator_forces(dataclasses.replace(model, armature=None), Q, QD, QDD, warn=False)
    assert rel(bare.tau_ID, oracle) > 1e-4


def test_four_bar_with_armature_conserves_energy():
    model = _with_armature(ud.load(ROOT / "robots" / "four_bar.urdf"), seed=2)
    model = dataclasses.replace(model, armature=frozen(np.asarray(model.armature) * 1e-3))
    tr = simulate(model, model.q_initial(), None, 3.0, options=ud.SimulateOptions(passive=False, rtol=1e-11, atol=1e-12, t_stab=0.1, dt_out=0.01))
    E = tr.energy
    swing = np.ptp(ud.potential_energy(model, tr.q))
    assert swing > 0.05                         # it moved
    assert np.max(np.abs(E - E[0])) <= 1e-6 * swing
    K = ud.kinetic_energy(model, tr.q, tr.qd)
    bare = dataclasses.replace(model, armature=None)
    assert np.max(np.abs(K - ud.kinetic_energy(bare, tr.q, tr.qd))) > 1e-4 * swing   # armature's share
