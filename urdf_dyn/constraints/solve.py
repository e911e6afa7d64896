"""The constrained-acceleration solves shared by every closed-loop solver: Baumgarte's stabilised
right-hand side, the KKT (Lagrange-multiplier) system and Gauss's least-constraint minimiser
(Udwadia–Kalaba). They act on plain arrays — a joint-space inertia H (n×n, symmetric positive definite),
the free right-hand side rhs = τ − C (n,) and the acceleration constraint K q̈ = k (m×n, m) — so that the
spanning-tree closed-loop dynamics (``constraints.forward``, RBDA §8.3–8.5) and the descriptor-coordinate
systems of ``urdf_dyn.gauss`` (seed 001) run the same code. Units follow the caller's coordinates."""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["baumgarte", "kkt_accelerations", "gauss_accelerations"]


def baumgarte(k, velocity_error, position_error, t_stab):
    """k − 2α·velocity_error − α²·position_error with α = 1/t_stab [1/s] (RBDA eqs. 8.21–8.22, β = α):
    the acceleration constraint's right-hand side that drives a drift back with time constant ``t_stab``
    [s]; ``k`` unchanged for ``t_stab=None``. Arrays (m,). Raises ValueError for t_stab ≤ 0."""
    if t_stab is None:
        return k
    if not t_stab > 0:
        raise ValueError(f"t_stab must be > 0 s, got {t_stab}")
    alpha = 1.0 / t_stab
    return k - 2 * alpha * np.asarray(velocity_error) - alpha ** 2 * np.asarray(position_error)


def _rank(sv, rtol):
    return int(np.sum(sv > rtol * sv[0])) if sv.size and sv[0] > 0 else 0


def kkt_accelerations(H, rhs, K, k, rank_rtol=1e-10):
    """The Lagrange-multiplier system [H Kᵀ; K 0] [q̈; −λ] = [rhs; k] (RBDA eq. 8.36 in one block; seed 001
    eq. 4): H q̈ = rhs + Kᵀ λ. Solved by LU where K has full row rank, else by SVD least squares with the
    relative cut-off ``rank_rtol`` (the minimum-norm answer for redundant rows). Returns (q̈ (n,), λ (m,),
    rank of K)."""
    n, m = len(rhs), len(k)
    if m == 0:
        return np.linalg.solve(H, rhs), np.zeros(0), 0
    rank = _rank(np.linalg.svd(K, compute_uv=False), rank_rtol)
    A = np.block([[H, K.T], [K, np.zeros((m, m))]])
    b = np.concatenate([rhs, k])
    x = np.linalg.solve(A, b) if rank == m else np.linalg.lstsq(A, b, rcond=rank_rtol)[0]
    return x[:n], -x[n:], rank


def gauss_accelerations(H, rhs, K, k, rank_rtol=1e-10):
    """Gauss's principle of least constraint: q̈ minimises ½ (q̈ − a)ᵀ H (q̈ − a) subject to K q̈ = k,
    a = H⁻¹ rhs, in the closed form of Udwadia and Kalaba (1992): with H = L Lᵀ (Cholesky),
    q̈ = a + L⁻ᵀ (K L⁻ᵀ)⁺ (k − K a), the pseudo-inverse from one SVD with relative cut-off ``rank_rtol`` (any
    factor W with W Wᵀ = H⁻¹ gives the same minimiser; seed 001 uses the symmetric M^-½). Returns
    (q̈ (n,), a (n,), rank of K L⁻ᵀ)."""
    L = np.linalg.cholesky(H)
    a = sla.cho_solve((L, True), rhs, check_finite=False)
    if len(k) == 0:
        return a, a, 0
    B = sla.solve_triangular(L, K.T, lower=True, check_finite=False).T     # K L⁻ᵀ
    U, sv, Vt = np.linalg.svd(B, full_matrices=False)
    r = _rank(sv, rank_rtol)
    z = Vt[:r].T @ ((U[:, :r].T @ (k - K @ a)) / sv[:r])
    return a + sla.solve_triangular(L.T, z, lower=False, check_finite=False), a, r
