"""Linear joint couplings: URDF ``<mimic>`` and URDF+ ``<coupling>`` as constraint rows A q = b.

Both are explicit constraints of RBDA eq. 3.11 with a constant matrix, written here in implicit form so
that they join the loop constraints in K q̈ = k (RBDA eqs. 8.14–8.17):

- ``<mimic joint=l multiplier=m offset=o>`` on joint f:  q_f − m q_l = o;
- URDF+ ``<coupling>`` (generalized_rbda, type "rolling", ``<ratio value=N>``):
  N Σ_{NCA→predecessor} q_j − Σ_{NCA→successor} q_j = 0 (``urdf_dyn.model.Coupling``); type "linear":
  Σ c_j q_j = offset.

Because A is constant, the acceleration row is A q̈ = 0 (k = 0), the velocity row A q̇ and the position
error δ = A q − b. Rows come in a fixed order: one per mimic (model order), then one per coupling.

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
    """A (m × nv), b (m,) and the row labels (``"mimic:<joint>"``, ``"coupling:<name>"``) of A q = b."""
    A: np.ndarray
    b: np.ndarray
    labels: tuple

    def __len__(self):
        return len(self.labels)


def coupling_rows(model) -> CouplingRows:
    """The mimic and coupling rows of ``model`` (see the module docstring); m = 0 gives a (0, nv) A."""
    rows, b, labels = [], [], []
    for mi in model.mimic:
        row = np.zeros(model.nv)
        row[model.joint_index(mi.joint)] += 1.0
        row[model.joint_index(mi.leader)] -= mi.multiplier
        rows.append(row)
        b.append(mi.offset)
        labels.append(f"mimic:{mi.joint}")
    for c in model.couplings:
        row = np.zeros(model.nv)
        for j, coef in c.coefficients:
            row[model.joint_index(j)] += coef
        rows.append(row)
        b.append(c.offset)
        labels.append(f"coupling:{c.name}")
    A = np.array(rows, float).reshape(len(rows), model.nv)
    return CouplingRows(A, np.array(b, float), tuple(labels))

