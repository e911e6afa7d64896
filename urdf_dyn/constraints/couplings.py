"""Linear joint couplings: URDF ``<mimic>`` and URDF+ ``<coupling>`` as constraint rows A q = b.

Both are explicit constraints of RBDA eq. 3.11 with a constant matrix, written here in implicit form so
that they join the loop constraints in K q̈ = k (RBDA eqs. 8.14–8.17):

- ``<mimic joint=l multiplier=m offset=o>`` on joint f:  q_f − m q_l = o;
- URDF+ ``<coupling>`` (generalized_rbda, type "rolling", ``<ratio value=N>``):
  N Σ_{NCA→predecessor} q_j − Σ_{NCA→successor} q_j = 0 (``urdf_dyn.model.Coupling``); type "linear":
  Σ c_j q_j = offset.

Because A is constant, the acceleration row is A q̈ = 0 (k = 0), the velocity row A q̇ and the position
error δ = A q − b. A mimic with polynomial terms (MuJoCo's joint equality ``polycoef``, ``Mimic.poly``) is
the one nonlinear row: q_f = p(q_l), Jacobian e_f − p'(q_l) e_l, k = p''(q_l) q̇_l² (``coupling_rows`` at a
state). Rows come in a fixed order: one per mimic (model order), then one per coupling.

Which functions enforce them: every function that takes the model's constraints (``loop_constraints``,
``mobility``, ``assemble``, ``constrained_forward_dynamics``, ``constrained_inverse_dynamics``,
``actuator_forces``, ``consistent_motion``, ``simulate``). The tree functions (``inverse_dynamics``,
``forward_dynamics``, ``mass_matrix``, ...) treat every joint as an independent coordinate, as Pinocchio's
URDF parser does by default (``mimic=False``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CouplingRows", "coupling_rows"]


@dataclass(frozen=True)
class CouplingRows:
    """A (m × nv), b (m,) and the row labels (``"mimic:<joint>"``, ``"coupling:<name>"``) of A q = b; with a
    state, A is the rows' Jacobian there, ``k`` (m,) their K q̈ = k terms and ``delta`` (m,) their residual."""
    A: np.ndarray
    b: np.ndarray
    labels: tuple
    k: np.ndarray = None
    delta: np.ndarray = None

    def __len__(self):
        return len(self.labels)


def coupling_rows(model, q=None, qd=None) -> CouplingRows:
    """The mimic and coupling rows of ``model`` (see the module docstring); m = 0 gives a (0, nv) A.

    A mimic with polynomial terms (``Mimic.poly`` = (c2, c3, c4)) is the nonlinear row
    φ = q_f − p(q_l), p(x) = o + m x + c2 x² + c3 x³ + c4 x⁴: its Jacobian e_f − p'(q_l) e_l at the 1-dof joint
    positions ``q`` (nv,) (``algorithms.configuration.joint_positions``; q_l = 0 when None), and, with ``qd``,
    k = p''(q_l) q̇_l² (φ̈ = 0). Linear rows have k = 0. ``delta`` (given q): φ, or A q − b."""
    rows, b, labels, k, delta = [], [], [], [], []
    for mi in model.mimic:
        f, ld = model.joint_index(mi.joint), model.joint_index(mi.leader)
        x = 0.0 if q is None else float(q[ld])
        c = (mi.offset, mi.multiplier) + tuple(mi.poly)
        p = sum(ci * x ** i for i, ci in enumerate(c))
        dp = sum(i * ci * x ** (i - 1) for i, ci in enumerate(c) if i)
        ddp = sum(i * (i - 1) * ci * x ** (i - 2) for i, ci in enumerate(c) if i > 1)
        row = np.zeros(model.nv)
        row[f] += 1.0
        row[ld] -= dp
        rows.append(row)
        b.append(mi.offset)
        labels.append(f"mimic:{mi.joint}")
        k.append(0.0 if qd is None else ddp * float(qd[ld]) ** 2)
        delta.append(0.0 if q is None else float(q[f]) - p)
    for cp in model.couplings:
        row = np.zeros(model.nv)
        for j, coef in cp.coefficients:
            row[model.joint_index(j)] += coef
        rows.append(row)
        b.append(cp.offset)
        labels.append(f"coupling:{cp.name}")
        k.append(0.0)
        delta.append(0.0 if q is None else float(row @ q) - cp.offset)
    A = np.array(rows, float).reshape(len(rows), model.nv)
    return CouplingRows(A, np.array(b, float), tuple(labels), np.array(k, float),
                        None if q is None else np.array(delta, float))
