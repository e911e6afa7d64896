"""Explicit constraints q̇ = G ẏ, q̈ = G ÿ + g (RBDA eqs. 3.11, 8.42): G and g from K by Gaussian elimination
with complete pivoting (§8.8), and user-supplied loop-closure functions γ(y) (§8.11)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.dynamics import bias_force, mass_matrix
from urdf_dyn.constraints.loops import loop_constraints, numerical_rank
from urdf_dyn._checks import renamed_keywords

__all__ = ["complete_pivot_lu", "lu_partial", "lu_solve", "explicit_from_set", "choose_independent",
           "ExplicitConstraint", "explicit_constraint", "UserLoopClosure"]


@renamed_keywords(rtol="rank_rtol")
def complete_pivot_lu(K, rank_rtol=1e-6, prefer_last=()):
    """Row-echelon reduction of K (m×n) with complete pivoting (RBDA §8.8).

    Returns (rank r, pivot columns (r,) — the dependent coordinates, free columns (n−r,) — independent,
    pivot rows (r,) — a maximal independent set of rows). Columns listed in ``prefer_last`` are chosen as
    pivots only when no other column has a pivot above the tolerance, so that they stay independent
    (URDF+'s ``independent="true"``)."""
    A = np.array(K, float)
    m, n = A.shape
    scale = np.abs(A).max() if A.size else 0.0
    tol = rank_rtol * scale
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


def lu_partial(A):
    """LU factorisation P A = L U of a small square matrix with partial (row) pivoting, Doolittle order.
    Returns (LU (r×r, L below the unit diagonal, U on and above), perm (r,), smallest |U_ii|). The same
    arithmetic as ``constraints._path._lu`` (the compiled copy); used for Kd in §8.8."""
    LU = np.array(A, float)
    r = LU.shape[0]
    perm = np.arange(r)
    dmin = np.inf
    for j in range(r):
        p = j + int(np.argmax(np.abs(LU[j:, j])))
        if p != j:
            LU[[j, p]] = LU[[p, j]]
            perm[[j, p]] = perm[[p, j]]
        piv = LU[j, j]
        dmin = min(dmin, abs(piv))
        if piv == 0.0:
            return LU, perm, 0.0
        LU[j + 1:, j] /= piv
        LU[j + 1:, j + 1:] -= np.outer(LU[j + 1:, j], LU[j, j + 1:])
    return LU, perm, dmin


def lu_solve(LU, perm, B):
    """Solve A X = B (B (r,) or (r, m)) from ``lu_partial``'s factors."""
    X = np.array(B, float)[perm]
    r = LU.shape[0]
    for i in range(r):
        X[i] -= LU[i, :i] @ X[:i]
    for i in range(r - 1, -1, -1):
        X[i] = (X[i] - LU[i, i + 1:] @ X[i + 1:]) / LU[i, i]
    return X


@renamed_keywords(rtol="rank_rtol")
def explicit_from_set(K, k, rows, dep, free, rank_rtol=1e-6, check=True):
    """G (n × len(free)), g (n,) of RBDA §8.8 for a given independent set: the rows ``rows`` of K with the
    dependent columns ``dep`` (matched in order) form the r×r block K_d, the ``free`` columns K_i, and

        G[dep] = −K_d⁻¹ K_i,   G[free] = 1,   g[dep] = K_d⁻¹ k[rows],   g[free] = 0.

    With ``check``, returns None when the set no longer serves here: a pivot of K_d at or below
    rank_rtol·max|K| (near-singular), or a row of K not satisfied, max|K G| > rank_rtol·max|K|·max(1, max|G|) (the
    rank of K grew). The compiled copy is ``constraints._path._explicit``."""
    n = K.shape[1]
    rows, dep, free = np.asarray(rows, int), np.asarray(dep, int), np.asarray(free, int)
    G = np.zeros((n, len(free)))
    g = np.zeros(n)
    G[free, np.arange(len(free))] = 1.0
    kmax = np.abs(K).max(initial=0.0)
    if len(rows):
        LU, perm, dmin = lu_partial(K[np.ix_(rows, dep)])
        if check and not dmin > rank_rtol * kmax:
            return None
        X = lu_solve(LU, perm, np.column_stack([-K[np.ix_(rows, free)], k[rows]]))
        G[dep] = X[:, :-1]
        g[dep] = X[:, -1]
    if check and K.size and np.abs(K @ G).max(initial=0.0) > rank_rtol * kmax * max(1.0, np.abs(G).max(initial=0.0)):
        return None
    return G, g


@renamed_keywords(rtol="rank_rtol")
def choose_independent(model, K, rank_rtol=1e-6, independent=None):
    """(rows, dep, free): a maximal independent set of constraint rows, the dependent coordinates matched
    to them, and the independent coordinates y, by complete pivoting of K (RBDA §8.8), preferring joints
    marked ``independent="true"`` as y; or, with ``independent`` (joint names), those as y and the rows by
    complete pivoting of the other columns. Raises ValueError if the given names cannot serve."""
    n = model.nv
    if independent is None:
        pref = [model.joint_index(j) for j in model.independent]
        _, dep, free, rows = complete_pivot_lu(K, rank_rtol, prefer_last=pref)
        return rows, dep, free
    free = np.array([model.joint_index(j) for j in independent], int)
    dep = np.array([i for i in range(n) if i not in set(free.tolist())], int)
    r, _, _ = numerical_rank(K, rank_rtol)
    rd, piv_cols, _, prow = complete_pivot_lu(K[:, dep], rank_rtol)
    if len(free) != n - r or rd != len(dep):
        raise ValueError(f"{model.name}: {', '.join(independent)} cannot serve as independent coordinates "
                         f"here (need {n - r} that leave the others determined; rank of the others' "
                         f"constraint columns {rd} of {len(dep)})")
    order = np.argsort(piv_cols)  # pivot rows matched to dep columns in dep order
    return (prow[order] if len(prow) else prow), dep, free


@renamed_keywords(rtol="rank_rtol")
def explicit_constraint(model, q, qd, t_stab=None, rank_rtol=1e-6, K=None, k=None, independent=None,
                        data=None) -> ExplicitConstraint:
    """G, g with K G = 0 and K g = k (+ k_stab) from complete-pivot elimination (RBDA §8.8).

    ``independent``: joint names to use as the independent coordinates y (e.g. the actuated joints of a
    properly actuated machine); by default the elimination chooses them, preferring joints marked
    ``independent="true"``. ``data`` (a ``urdf_dyn.Data``): the independent set is chosen once, at the
    first state, and re-checked at every later one (``explicit_from_set``); it is chosen again only where
    it no longer serves. Raises ValueError if the given set cannot parametrise the motion here (the
    other coordinates' columns of K are rank-deficient, or the count is not n − r)."""
    if K is None:
        K, k = loop_constraints(model, q, qd, t_stab)
    key = None if independent is None else tuple(independent)
    known = None if data is None else data.independent_sets.get(key)
    out = explicit_from_set(K, k, *known, rank_rtol) if known is not None else None
    if out is None:
        known = choose_independent(model, K, rank_rtol, independent)
        out = explicit_from_set(K, k, *known, rank_rtol, check=False)
        if data is not None:
            data.independent_sets[key] = known
    G, g = out
    return ExplicitConstraint(G, g, tuple(model.joint_names[i] for i in known[2]), len(known[0]))


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
