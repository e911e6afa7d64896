"""Explicit constraints q̇ = G ẏ, q̈ = G ÿ + g (RBDA eqs. 3.11, 8.42): G and g from K by Gaussian elimination
with complete pivoting (§8.8), and user-supplied loop-closure functions γ(y) (§8.11)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.dynamics import bias_force, mass_matrix
from urdf_dyn.constraints.loops import loop_constraints, numerical_rank

__all__ = ["complete_pivot_lu", "ExplicitConstraint", "explicit_constraint", "UserLoopClosure"]


def complete_pivot_lu(K, rtol=1e-6, prefer_last=()):
    """Row-echelon reduction of K (m×n) with complete pivoting (RBDA §8.8).

    Returns (rank r, pivot columns (r,) — the dependent coordinates, free columns (n−r,) — independent,
    pivot rows (r,) — a maximal independent set of rows). Columns listed in ``prefer_last`` are chosen as
    pivots only when no other column has a pivot above the tolerance, so that they stay independent
    (URDF+'s ``independent="true"``)."""
    A = np.array(K, float)
    m, n = A.shape
    scale = np.abs(A).max() if A.size else 0.0
    tol = rtol * scale
    rows, cols = list(range(m)), list(range(n))
    piv_rows, piv_cols = [], []
    pref = set(prefer_last)
    R = A.copy()
    for _ in range(min(m, n)):
        sub_r = [i for i in rows if i not in piv_rows]
        best = None
        for group in ([c for c in cols if c not in piv_cols and c not in pref],
                      [c for c in cols if c not in piv_cols and c in pref]):
            if not group or not sub_r:
                continue
            blk = np.abs(R[np.ix_(sub_r, group)])
            i, j = np.unravel_index(np.argmax(blk), blk.shape)
            if blk[i, j] > tol:
                best = (sub_r[i], group[j])
                break
        if best is None:
            break
        pr, pc = best
        piv_rows.append(pr)
        piv_cols.append(pc)
        for i in sub_r:
            if i != pr:
                R[i] -= (R[i, pc] / R[pr, pc]) * R[pr]
    free = [c for c in cols if c not in piv_cols]
    return len(piv_cols), np.array(piv_cols, int), np.array(free, int), np.array(piv_rows, int)


@dataclass
class ExplicitConstraint:
    """q̇ = G ẏ and q̈ = G ÿ + g (RBDA eqs. 3.11, 8.42): G (nv × (nv−r)), g (nv,), and the names of the
    independent coordinates y (a subset of the joint names)."""
    G: np.ndarray
    g: np.ndarray
    independent: tuple
    rank: int


def explicit_constraint(model, q, qd, t_stab=None, rtol=1e-6, K=None, k=None, independent=None) -> ExplicitConstraint:
    """G, g with K G = 0 and K g = k (+ k_stab) from complete-pivot elimination (RBDA §8.8).

    ``independent``: joint names to use as the independent coordinates y (e.g. the actuated joints of a
    properly actuated machine); by default the elimination chooses them, preferring joints marked
    ``independent="true"``. Raises ValueError if the given set cannot parametrise the motion here (the
    other coordinates' columns of K are rank-deficient, or the count is not n − r)."""
    if K is None:
        K, k = loop_constraints(model, q, qd, t_stab)
    n = model.nv
    if independent is not None:
        free = np.array([model.joint_index(j) for j in independent], int)
        dep = np.array([i for i in range(n) if i not in set(free.tolist())], int)
        r, _, _ = numerical_rank(K, rtol)
        rd, piv_cols, _, prow = complete_pivot_lu(K[:, dep], rtol)
        if len(free) != n - r or rd != len(dep):
            raise ValueError(f"{model.name}: {', '.join(independent)} cannot serve as independent coordinates "
                             f"here (need {n - r} that leave the others determined; rank of the others' "
                             f"constraint columns {rd} of {len(dep)})")
        order = np.argsort(piv_cols)  # pivot rows matched to dep columns in dep order
        prow = prow[order] if len(prow) else prow
        dep = dep[np.sort(piv_cols)] if len(piv_cols) else dep
    else:
        pref = [model.joint_index(j) for j in model.independent]
        r, dep, free, prow = complete_pivot_lu(K, rtol, prefer_last=pref)
    Kd, Ki = K[np.ix_(prow, dep)], K[np.ix_(prow, free)]
    G = np.zeros((n, n - r))
    g = np.zeros(n)
    if r:
        G[dep] = -np.linalg.solve(Kd, Ki)
        g[dep] = np.linalg.solve(Kd, k[prow])
    G[free, np.arange(n - r)] = 1.0
    return ExplicitConstraint(G, g, tuple(model.joint_names[i] for i in free), r)


class UserLoopClosure:
    """A user-supplied loop-closure function (RBDA §8.11): ``gamma(y, yd) -> (q, G, g)`` with q = γ(y),
    G = ∂γ/∂y and g = Ġ ẏ, for independent coordinates ``independent`` (joint names). Forward dynamics
    then solves GᵀHG ÿ = Gᵀ(τ − C − H g) (eq. 8.45) without K."""

    def __init__(self, model, independent, gamma):
        self.model = model
        self.independent = tuple(independent)
        self.idx = [model.joint_index(j) for j in self.independent]
        self.gamma = gamma

    def state(self, y, yd):
        q, G, g = self.gamma(np.asarray(y, float), np.asarray(yd, float))
        q, G, g = np.asarray(q, float), np.asarray(G, float), np.asarray(g, float)
        return q, G @ yd, G, g

    def forward_dynamics(self, y, yd, tau):
        """(ÿ, q, q̇, q̈) from eq. 8.46 for tree joint forces τ (nv,)."""
        q, qd, G, g = self.state(y, yd)
        H = mass_matrix(self.model, q)
        C = bias_force(self.model, q, qd)
        ydd = np.linalg.solve(G.T @ H @ G, G.T @ (tau - C - H @ g))
        return ydd, q, qd, G @ ydd + g
