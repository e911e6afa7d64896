"""Constrained accelerations by Gauss's principle: the Udwadia–Kalaba minimiser
q̈ = a + M^-½ (J M^-½)⁺ (γ − J a), the KKT system, and seed 001's closed form (16) for comparison
(docs/gauss.md: why the paper's eq. 16 is not the minimiser).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.constraints.solve import baumgarte, gauss_accelerations, kkt_accelerations
from urdf_dyn.gauss.system import METHODS
from urdf_dyn._checks import renamed_keywords

__all__ = ["GaussAccel", "gauss_function", "accelerations", "eq16_gap", "stabilised_gamma", "solve_accelerations"]


@dataclass
class GaussAccel:
    """Constrained accelerations at one state.

    qdd (n,); lam (m,): multipliers with Q_c = Jᵀ λ (for a ``revolute`` pair: the joint force on body a);
    Qc (n,): the generalised constraint force M (q̈ − a); a (n,): unconstrained accelerations M⁻¹ Q;
    J, gamma: the constraint rows used (with Baumgarte terms if asked); residual: ‖J q̈ − γ‖;
    G: Gauss's function ½ (q̈ − a)ᵀ M (q̈ − a); rank: numerical rank of J; diagnostics: for
    ``paper16``, ``tangential_force`` = ‖Q_c − Jᵀλ‖, the part of Q_c that is not a constraint force."""
    qdd: np.ndarray
    lam: np.ndarray
    Qc: np.ndarray
    a: np.ndarray
    J: np.ndarray
    gamma: np.ndarray
    residual: float
    G: float
    rank: int
    solver: str
    diagnostics: dict = field(default_factory=dict)


def gauss_function(system, q, qd, qdd, t=0.0) -> float:
    """Gauss's constraint G = ½ (M q̈ − Q)ᵀ M⁻¹ (M q̈ − Q) (seed 001 eq. (1), f = 0: Q holds every force)."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    r = num["M"] @ np.asarray(qdd, float) - num["dyn"](q, qd, t)[0]
    return float(0.5 * r @ num["Minv"] @ r)


def stabilised_gamma(gamma, phid, psi, phi, t_stab):
    """γ − [2α φ̇ + α² φ; α ψ], α = 1/t_stab [1/s]: Baumgarte on the holonomic rows (φ, φ̇) and first-order
    on the nonholonomic ones (ψ), through ``constraints.solve.baumgarte`` (RBDA eqs. 8.21–8.22). γ unchanged
    for ``t_stab=None``."""
    return baumgarte(gamma, np.concatenate([phid, 0.5 * psi]), np.concatenate([phi, np.zeros(len(psi))]), t_stab)


def solve_accelerations(num, Q, J, gamma, method, rank_rtol):
    """(q̈, a, rank, λ or None) at one state of a descriptor system (``num``: its numeric M, M⁻¹): the
    methods of ``accelerations``. "gauss" and "kkt" are the shared solves of ``constraints.solve``
    (Udwadia–Kalaba; the KKT system); "paper16" is seed 001's eq. (16), kept here because it belongs to
    the paper's comparison only."""
    M = num["M"]
    if method not in METHODS:
        raise ValueError(f"unknown Gauss solver {method!r} (choose from {', '.join(METHODS)})")
    if len(gamma) == 0:
        a = num["Minv"] @ Q
        return a.copy(), a, 0, None
    if method == "gauss":
        qdd, a, rank = gauss_accelerations(M, Q, J, gamma, rank_rtol)
        return qdd, a, rank, None
    a = num["Minv"] @ Q
    if method == "kkt":
        qdd, lam, rank = kkt_accelerations(M, Q, J, gamma, rank_rtol)
        return qdd, a, rank, lam
    # paper16: seed 001 eq. (16) with f = 0: q̈ = J⁺γ − (I − J⁺J)(I − J⁺J)⁺ (J⁺γ − M⁻¹Q) — NOT the minimiser
    sv = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(sv > rank_rtol * sv[0])) if sv[0] > 0 else 0
    Jp = np.linalg.pinv(J, rcond=rank_rtol)
    P = np.eye(len(Q)) - Jp @ J
    return Jp @ gamma - P @ np.linalg.pinv(P, rcond=rank_rtol) @ (Jp @ gamma - a), a, rank, None


@renamed_keywords(rtol="rank_rtol")
def accelerations(system, q, qd=None, t=0.0, solver="gauss", t_stab=None, rank_rtol=1e-10) -> GaussAccel:
    """Constrained accelerations of ``system`` at (q, q̇, t).

    solver: ``"gauss"`` — the M-weighted least-squares minimiser q̈ = a + M^-½ (J M^-½)⁺ (γ − J a)
    (Udwadia–Kalaba); ``"kkt"`` — the Lagrange-multiplier system [M Jᵀ; J 0][q̈; −λ] = [Q; γ] (solved by
    LU, or by SVD least squares when J is rank deficient); ``"paper16"`` — seed 001's eq. (16), which is
    NOT Gauss's minimiser unless M ∝ I (kept to show the error). t_stab [s]: Baumgarte terms (None: none).
    rank_rtol: relative singular-value cut-off of the pseudo-inverses."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    Q, _, _, J, gamma, phid, psi, phi = num["all"](q, qd, t)
    gamma = stabilised_gamma(gamma, phid, psi, phi, t_stab)
    qdd, a, rank, lam = solve_accelerations(num, Q, J, gamma, solver, rank_rtol)
    Qc = num["M"] @ (qdd - a)
    diag = {}
    if len(gamma):
        if lam is None:
            lam = np.linalg.lstsq(J.T, Qc, rcond=rank_rtol)[0]
        diag["tangential_force"] = float(np.linalg.norm(Qc - J.T @ lam))
        residual = float(np.linalg.norm(J @ qdd - gamma))
    else:
        lam, residual = np.zeros(0), 0.0
    d = qdd - a
    return GaussAccel(qdd, lam, Qc, a, J, gamma, residual, float(0.5 * d @ num["M"] @ d), rank, solver, diag)


def eq16_gap(system, q, qd, t=0.0):
    """(relative gap ‖q̈₁₆ − q̈‖/‖q̈‖, crank-rate ratio θ̈1₁₆/θ̈1 if a crank exists, both results)."""
    g = accelerations(system, q, qd, t, solver="gauss")
    p = accelerations(system, q, qd, t, solver="paper16")
    rel = float(np.linalg.norm(p.qdd - g.qdd) / np.linalg.norm(g.qdd))
    ratio = None
    if "crank.theta" in system.names:
        i = system.index("crank.theta")
        ratio = float(p.qdd[i] / g.qdd[i]) if g.qdd[i] else math.inf
    return rel, ratio, g, p
