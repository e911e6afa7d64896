"""Gauss's principle of least constraint for planar multibody systems in descriptor coordinates
(seed 001, Yuan & Ge 2016; Udwadia & Kalaba 1992/1993; docs/gauss.md).

Each body has up to three descriptor coordinates, its centroid position x, y and its absolute angle θ
(coordinates a body does not move in are held fixed, e.g. a slider with x only). Then

    M q̈ = Q(q, q̇, t) + Q_c,        M = diag(m, m, I_c, ...) constant,

where Q collects gravity, springs, dampers, forces and torques, and Q_c is the force of the constraints

    φ(q, t) = 0          (holonomic, e.g. pin joints)         seed 001 eq. (4)
    ψ(q, q̇, t) = 0       (non-holonomic, e.g. a knife edge)   seed 001 eq. (5)

Differentiating φ twice and ψ once gives the acceleration-level form J q̈ = γ (seed 001 eq. (6)); here
J and γ are derived by sympy from φ and ψ, never typed per mechanism: with v = [φ̇; ψ](q, q̇, t),
J = ∂v/∂q̇ and γ = −(∂v/∂q q̇ + ∂v/∂t).

Gauss's principle: of all accelerations with J q̈ = γ, the true one minimises

    G(q̈) = ½ (M q̈ − Q)ᵀ M⁻¹ (M q̈ − Q) = ½ (q̈ − a)ᵀ M (q̈ − a),      a = M⁻¹ Q.

Its minimiser (Udwadia–Kalaba) is  q̈ = a + M^-½ (J M^-½)⁺ (γ − J a),  with ⁺ the Moore–Penrose
pseudo-inverse, so redundant and even inconsistent constraints are handled (least squares). The same q̈
solves the Lagrange-multiplier (KKT) system [M Jᵀ; J 0][q̈; −λ] = [Q; γ], and Q_c = M (q̈ − a) = Jᵀ λ.

Seed 001's closed form (16), q̈ = J⁺γ − (I − J⁺J)(I − J⁺J)⁺ {J⁺γ + M⁻¹(f − Q)}, rests on
(AB)⁺ = B⁺A⁺, false in general: it reduces to q̈ = J⁺γ + (I − J⁺J) a, the projection of a in the
identity metric instead of M's. It satisfies J q̈ = γ but is Gauss's minimiser only when M is a multiple
of the identity (docs/gauss.md gives the numbers). ``method="paper16"`` evaluates it, for comparison only.

Stabilisation during integration: Baumgarte (γ − 2α v_φ − α² φ for holonomic rows, γ − α ψ for
non-holonomic rows, α = 1/t_stab, as ``loops.loop_constraints``) or projection of (q, q̇) onto the
constraints after every output interval (M-weighted minimum-norm corrections).

sympy is imported when a system is built (it is listed in the ``test`` extra; the core needs it for this
module only).
"""
from urdf_dyn.gauss.examples import chaplygin_sleigh, crank_slider
from urdf_dyn.gauss.simulate import GaussTrajectory, project, simulate
from urdf_dyn.gauss.solvers import GaussAccel, accelerations, eq16_gap, gauss_function
from urdf_dyn.gauss.system import CRANK_SLIDER_PAPER, METHODS, PAPER_Q0, Body, PlanarSystem

__all__ = ["PlanarSystem", "Body", "GaussAccel", "GaussTrajectory", "accelerations", "gauss_function",
           "simulate", "project", "crank_slider", "chaplygin_sleigh", "eq16_gap", "METHODS",
           "CRANK_SLIDER_PAPER", "PAPER_Q0"]
