"""Gauss's principle of least constraint for planar multibody systems in descriptor coordinates
(seed 001, Yuan & Ge 2016; Udwadia & Kalaba 1992/1993; DESIGN §4).

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
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._io import atomic_path
from .errors import ModelError, SimulationError, StateError

__all__ = ["PlanarSystem", "Body", "GaussAccel", "GaussTrajectory", "accelerations", "gauss_function",
           "simulate", "project", "crank_slider", "chaplygin_sleigh", "run_launch_job", "METHODS",
           "CRANK_SLIDER_PAPER", "PAPER_Q0"]

METHODS = ("gauss", "kkt", "paper16")
COORDS = ("x", "y", "theta")

#: seed 001's parameters (section 4) and initial state q0 = [x1, y1, θ1, x2, y2, θ2, x3]
CRANK_SLIDER_PAPER = dict(m1=0.37, m2=0.77, m3=0.1, l1=0.15, l2=0.56, tau=-0.5, k=5.0, c=1.0, g=9.81)
PAPER_Q0 = (0.075, 0.0, 0.0, 0.43, 0.0, 0.0, 0.71)


def _sympy():
    try:
        import sympy
    except ImportError as e:  # pragma: no cover - sympy is installed with the test extra
        raise ImportError("urdf_dyn.gauss needs sympy to differentiate the constraints: pip install sympy "
                          "(or pip install -e '.[test]')") from e
    return sympy


def _finite(x, what):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: {x!r} is not a number") from None
    if not math.isfinite(v):
        raise ModelError(f"{what}: {x!r} is not finite")
    return v


# ---------------------------------------------------------------------------------------------------------
# the system
# ---------------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Body:
    """A rigid body in the plane. ``x``, ``y``, ``theta``: its centroid position [m] and absolute angle
    [rad] as sympy expressions (a coordinate symbol, or a constant when the body is held in that
    coordinate); ``xd``, ``yd``, ``thetad``: their rates."""
    name: str
    mass: float
    inertia: float
    coords: tuple
    x: object = None
    y: object = None
    theta: object = None
    xd: object = None
    yd: object = None
    thetad: object = None

    def __repr__(self):
        return f"Body({self.name!r}, m={self.mass:g} kg, I={self.inertia:g} kg m², coords={self.coords})"


class PlanarSystem:
    """A planar multibody system in descriptor coordinates, built by calls, then evaluated numerically.

    Build: ``add_body``; constraints ``revolute`` (pin), ``slot`` (point on a line), ``constraint``
    (any φ(q, t) = 0), ``knife_edge`` and ``nonholonomic`` (any ψ(q, q̇, t) = 0); forces ``torque``,
    ``force``, ``spring_damper``, ``potential``, ``generalized_force``. Expressions are sympy expressions
    in the symbols ``q``, ``qd`` and ``t`` (or a body's ``x``, ``theta``, ``xd``, ...).

    Evaluate: ``mass_matrix()``, ``applied_forces(q, qd, t)``, ``constraint_jacobian(q, qd, t)`` → (J, γ),
    ``phi``, ``velocity_residual``, ``energy``; the symbolic J, γ are in ``symbolic()``.
    """

    def __init__(self, gravity=(0.0, -9.81), name="planar system"):
        sp = _sympy()
        if len(gravity) != 2:
            raise ModelError(f"{name}: gravity: expected 2 components (gx, gy) [m/s²], got {gravity!r}")
        self.name = name
        self.gravity = tuple(_finite(g, f"{name}: gravity") for g in gravity)
        self.t = sp.Symbol("t", real=True)
        self.bodies: list[Body] = []
        self.q: list = []          # coordinate symbols
        self.qd: list = []         # their rates
        self.names: list[str] = []
        self._masses: list[float] = []
        self.holonomic: list = []      # (name, expr)
        self.nonholonomic_rows: list = []  # (name, expr)
        self._V = sp.Integer(0)    # potential energy of springs and user potentials (gravity added later)
        self._Qnc: list = []       # non-conservative generalised forces (sympy vectors)
        self._num = None

    # -- bodies and points ---------------------------------------------------------------------------
    def add_body(self, name, mass, inertia, coords=COORDS, fixed=None) -> Body:
        """A body with centroid coordinates ``coords`` (a subset of x, y, theta, in that order in q);
        the others are held at ``fixed`` (default 0). ``inertia`` [kg m²] is about the centroid."""
        sp = _sympy()
        if any(b.name == name for b in self.bodies):
            raise ModelError(f"{self.name}: body {name!r} defined twice")
        coords = tuple(coords)
        bad = [c for c in coords if c not in COORDS]
        if bad or len(set(coords)) != len(coords):
            raise ModelError(f"{self.name}: body {name!r}: coords must be distinct names from {COORDS}, got {coords}")
        coords = tuple(c for c in COORDS if c in coords)
        mass = _finite(mass, f"{self.name}: body {name!r}: mass")
        inertia = _finite(inertia, f"{self.name}: body {name!r}: inertia")
        if ("x" in coords or "y" in coords) and not mass > 0:
            raise ModelError(f"{self.name}: body {name!r}: mass must be > 0 kg, got {mass}")
        if "theta" in coords and not inertia > 0:
            raise ModelError(f"{self.name}: body {name!r}: inertia must be > 0 kg m² (it rotates), got {inertia}")
        fixed = dict(fixed or {})
        for c in fixed:
            if c in coords or c not in COORDS:
                raise ModelError(f"{self.name}: body {name!r}: fixed {c!r} is not a held coordinate")
        b = Body(name, mass, inertia, coords)
        for c in COORDS:
            if c in coords:
                s = sp.Symbol(f"{c}_{name}", real=True)
                sd = sp.Symbol(f"{c}d_{name}", real=True)
                self.q.append(s)
                self.qd.append(sd)
                self.names.append(f"{name}.{c}")
                self._masses.append(inertia if c == "theta" else mass)
            else:
                s = sp.Float(_finite(fixed.get(c, 0.0), f"{self.name}: body {name!r}: fixed {c}"))
                sd = sp.Integer(0)
            setattr(b, c, s)
            setattr(b, c + "d", sd)
        self.bodies.append(b)
        self._num = None
        return b

    @property
    def n(self) -> int:
        return len(self.q)

    def body(self, name) -> Body:
        for b in self.bodies:
            if b.name == name:
                return b
        raise ModelError(f"{self.name}: unknown body {name!r} (bodies: {', '.join(b.name for b in self.bodies)})")

    def index(self, name) -> int:
        """Index in q of a coordinate named ``"body.c"`` (c in x, y, theta)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ModelError(f"{self.name}: unknown coordinate {name!r} (coordinates: {', '.join(self.names)})") from None

    def point(self, body, local=(0.0, 0.0)):
        """World position (sympy 2-vector) of the point ``local`` [m] of ``body`` (body frame at the
        centroid); ``body=None`` is the ground, where ``local`` is already a world point."""
        sp = _sympy()
        px, py = (sp.sympify(v) for v in local)
        if body is None:
            return sp.Matrix([px, py])
        b = self.body(body) if isinstance(body, str) else body
        c, s = sp.cos(b.theta), sp.sin(b.theta)
        return sp.Matrix([b.x + c * px - s * py, b.y + s * px + c * py])

    def velocity(self, body, local=(0.0, 0.0)):
        """World velocity (sympy 2-vector) of a body point: ∂r/∂q q̇."""
        return self._rate(self.point(body, local))

    def _rate(self, expr):
        sp = _sympy()
        expr = sp.Matrix(expr) if not isinstance(expr, sp.MatrixBase) else expr
        if not self.q:
            return expr.diff(self.t)
        return expr.jacobian(self.q) * sp.Matrix(self.qd) + expr.diff(self.t)

    def _check(self, expr, what, allow_qd):
        sp = _sympy()
        expr = sp.sympify(expr)
        ok = set(self.q) | {self.t} | (set(self.qd) if allow_qd else set())
        extra = expr.free_symbols - ok
        if extra:
            raise ModelError(f"{self.name}: {what}: unknown symbols {sorted(map(str, extra))} (allowed: the "
                             f"system's q{', qd' if allow_qd else ''} and t)")
        return expr

    # -- constraints ---------------------------------------------------------------------------------
    def constraint(self, expr, name=None):
        """A holonomic constraint φ(q, t) = 0 (a sympy expression in q and t)."""
        expr = self._check(expr, f"constraint {name or len(self.holonomic)}", False)
        self.holonomic.append((name or f"phi{len(self.holonomic)}", expr))
        self._num = None

    def revolute(self, body_a, point_a, body_b, point_b, name=None):
        """A pin joint: point ``point_a`` of body a coincides with ``point_b`` of body b (None = ground).
        Two rows, r_a − r_b = 0 in x and y; their multipliers λ are the joint force on body a [N]."""
        name = name or f"pin_{getattr(body_a, 'name', body_a) or 'ground'}_{getattr(body_b, 'name', body_b) or 'ground'}"
        d = self.point(body_a, point_a) - self.point(body_b, point_b)
        self.constraint(d[0], f"{name}.x")
        self.constraint(d[1], f"{name}.y")

    def slot(self, body, point, line_point, line_direction, name=None):
        """A point of ``body`` stays on a ground line through ``line_point`` along ``line_direction``."""
        sp = _sympy()
        ux, uy = (sp.sympify(v) for v in line_direction)
        r = self.point(body, point) - sp.Matrix([sp.sympify(v) for v in line_point])
        self.constraint(-uy * r[0] + ux * r[1], name or f"slot_{getattr(body, 'name', body)}")

    def nonholonomic(self, expr, name=None):
        """A non-holonomic constraint ψ(q, q̇, t) = 0 (a sympy expression in q, qd and t)."""
        expr = self._check(expr, f"non-holonomic constraint {name or len(self.nonholonomic_rows)}", True)
        self.nonholonomic_rows.append((name or f"psi{len(self.nonholonomic_rows)}", expr))
        self._num = None

    def knife_edge(self, body, point=(0.0, 0.0), direction=(1.0, 0.0), name=None):
        """A knife edge (skate, Chaplygin sleigh blade) at ``point`` of ``body``: the point's velocity
        across the blade (``direction`` in the body frame) is zero."""
        sp = _sympy()
        b = self.body(body) if isinstance(body, str) else body
        c, s = sp.cos(b.theta), sp.sin(b.theta)
        dx, dy = (sp.sympify(v) for v in direction)
        ex, ey = c * dx - s * dy, s * dx + c * dy          # blade direction in the world
        v = self.velocity(b, point)
        self.nonholonomic(-ey * v[0] + ex * v[1], name or f"knife_{b.name}")

    # -- forces --------------------------------------------------------------------------------------
    def _generalised(self, body, point, F):
        sp = _sympy()
        r = self.point(body, point)
        return r.jacobian(self.q).T * sp.Matrix(F)

    def force(self, body, point, F, name=None):
        """A force F = (Fx, Fy) [N] (world frame; numbers or sympy expressions in q, qd, t) at a body point."""
        F = [self._check(f, f"force {name or ''}", True) for f in F]
        self._Qnc.append(self._generalised(body, point, F))
        self._num = None

    def torque(self, body, tau):
        """A torque τ [N m] (number or sympy expression in q, qd, t) on ``body``, positive counter-clockwise."""
        sp = _sympy()
        b = self.body(body) if isinstance(body, str) else body
        tau = self._check(tau, f"torque on {b.name}", True)
        self._Qnc.append(sp.Matrix([b.theta]).jacobian(self.q).T * tau)
        self._num = None

    def generalized_force(self, values):
        """Generalised forces {coordinate name or index: expression}, added to Q as they are."""
        sp = _sympy()
        Qv = sp.zeros(self.n, 1)
        for k, v in values.items():
            i = k if isinstance(k, int) else self.index(k)
            Qv[i] += self._check(v, f"generalized force on {self.names[i]}", True)
        self._Qnc.append(Qv)
        self._num = None

    def potential(self, V):
        """Add a potential energy V(q) [J] (conservative: its force −∂V/∂q enters Q, V enters the energy)."""
        self._V = self._V + self._check(V, "potential", False)
        self._num = None

    def spring_damper(self, body_a, point_a, body_b, point_b, k=0.0, length0=0.0, c=0.0):
        """A linear spring-damper between two points (None = ground): tension k (L − L0) + c L̇ [N]."""
        sp = _sympy()
        d = self.point(body_b, point_b) - self.point(body_a, point_a)
        L = sp.sqrt(d[0] ** 2 + d[1] ** 2)
        k, length0, c = (_finite(v, f"{self.name}: spring_damper") for v in (k, length0, c))
        if k:
            self.potential(k / 2 * (L - length0) ** 2)
        if c:
            gradL = sp.Matrix([L]).jacobian(self.q)       # 1×n
            Ldot = (gradL * sp.Matrix(self.qd))[0]
            self._Qnc.append(-c * Ldot * gradL.T)
            self._num = None

    # -- symbolic and numeric evaluation -----------------------------------------------------------
    def gravity_potential(self):
        sp = _sympy()
        gx, gy = self.gravity
        return sum((-b.mass * (gx * b.x + gy * b.y) for b in self.bodies), sp.Integer(0))

    def symbolic(self) -> dict:
        """The symbolic pieces: M, V, Q (conservative + non-conservative), Q_nc, φ, v = [φ̇; ψ], J, γ."""
        sp = _sympy()
        if self.n == 0:
            raise ModelError(f"{self.name}: no coordinates (add a body)")
        q, qd, t = sp.Matrix(self.q), sp.Matrix(self.qd), self.t
        V = self.gravity_potential() + self._V
        Qc = -sp.Matrix([V]).jacobian(self.q).T
        Qnc = sp.zeros(self.n, 1)
        for f in self._Qnc:
            Qnc += f
        phi = sp.Matrix([e for _, e in self.holonomic]) if self.holonomic else sp.zeros(0, 1)
        psi = sp.Matrix([e for _, e in self.nonholonomic_rows]) if self.nonholonomic_rows else sp.zeros(0, 1)
        phid = (phi.jacobian(q) * qd + phi.diff(t)) if self.holonomic else sp.zeros(0, 1)
        v = phid.col_join(psi)
        if v.rows:
            J = v.jacobian(qd)
            gamma = -(v.jacobian(q) * qd + v.diff(t))
        else:
            J, gamma = sp.zeros(0, self.n), sp.zeros(0, 1)
        return dict(M=np.diag(self._masses), V=V, Q=Qc + Qnc, Q_nc=Qnc, V_t=sp.diff(V, t), phi=phi,
                    phid=phid, psi=psi, v=v, J=J, gamma=gamma)

    def _numeric(self):
        if self._num is not None:
            return self._num
        sp = _sympy()
        s = self.symbolic()
        args = (list(self.q), list(self.qd), self.t)
        n, m, nh = self.n, s["J"].rows, s["phi"].rows

        def fn(pieces):
            """One lambdified call (common subexpressions shared) returning numpy arrays of the given
            shapes; zero-size pieces are not printed by sympy and come back as zeros."""
            live = [(i, e) for i, (e, sh) in enumerate(pieces) if int(np.prod(sh)) > 0]
            f = sp.lambdify(args, [e for _, e in live], modules="numpy", cse=True)
            shapes = [sh for _, sh in pieces]

            def call(q, qd, t):
                out = [np.zeros(sh) for sh in shapes]
                for (i, _), o in zip(live, f(q, qd, t)):
                    out[i] = np.asarray(o, float).reshape(shapes[i])
                return out
            return call

        Jphi = s["phi"].jacobian(self.q) if nh else sp.zeros(0, n)
        M = s["M"]
        w, U = np.linalg.eigh(M)
        self._num = dict(
            M=M, Minv=np.diag(1.0 / np.diag(M)), Mih=(U / np.sqrt(w)) @ U.T, m=m, nh=nh,
            # Q, Q_nc, ∂V/∂t, J, γ, φ̇, ψ, φ
            all=fn([(s["Q"], (n,)), (s["Q_nc"], (n,)), (sp.Matrix([s["V_t"]]), ()), (s["J"], (m, n)),
                    (s["gamma"], (m,)), (s["phid"], (nh,)), (s["psi"], (m - nh,)), (s["phi"], (nh,))]),
            dyn=fn([(s["Q"], (n,)), (s["Q_nc"], (n,)), (sp.Matrix([s["V_t"]]), ())]),
            con=fn([(s["J"], (m, n)), (s["gamma"], (m,))]),
            vel=fn([(s["phid"], (nh,)), (s["psi"], (m - nh,))]),
            pos=fn([(s["phi"], (nh,)), (Jphi, (nh, n))]),
            V=fn([(sp.Matrix([s["V"]]), ())]))
        return self._num

    def _state(self, q, qd, t):
        q = np.asarray(q, float).reshape(-1)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise StateError(f"{self.name}: q must be {self.n} finite numbers ({', '.join(self.names)}), got shape {q.shape}")
        qd = np.zeros(self.n) if qd is None else np.asarray(qd, float).reshape(-1)
        if qd.shape != (self.n,) or not np.all(np.isfinite(qd)):
            raise StateError(f"{self.name}: qd must be {self.n} finite numbers, got shape {qd.shape}")
        if not math.isfinite(float(t)):
            raise StateError(f"{self.name}: t must be finite, got {t}")
        return q, qd, float(t)

    def mass_matrix(self) -> np.ndarray:
        """M (n, n): diag(m, m, I_c) per body, restricted to the body's coordinates."""
        return self._numeric()["M"].copy()

    def applied_forces(self, q, qd=None, t=0.0) -> np.ndarray:
        """Q(q, q̇, t) (n,): gravity, springs, dampers, forces and torques as generalised forces [N | N m]."""
        q, qd, t = self._state(q, qd, t)
        return self._numeric()["dyn"](q, qd, t)[0]

    def constraint_jacobian(self, q, qd=None, t=0.0):
        """(J, γ): J (m, n), γ (m,) with J q̈ = γ, holonomic rows first (seed 001 eq. (6))."""
        q, qd, t = self._state(q, qd, t)
        return tuple(self._numeric()["con"](q, qd, t))

    def phi(self, q, t=0.0) -> np.ndarray:
        """Holonomic residuals φ(q, t) (nh,) [m, rad]."""
        q, _, t = self._state(q, None, t)
        return self._numeric()["pos"](q, np.zeros(self.n), t)[0]

    def velocity_residual(self, q, qd, t=0.0) -> np.ndarray:
        """v = [φ̇; ψ](q, q̇, t) (m,): zero on a consistent state."""
        q, qd, t = self._state(q, qd, t)
        a, b = self._numeric()["vel"](q, qd, t)
        return np.concatenate([a, b])

    def potential_energy(self, q, t=0.0) -> float:
        q, _, t = self._state(q, None, t)
        return float(self._numeric()["V"](q, np.zeros(self.n), t)[0])

    def energy(self, q, qd, t=0.0) -> float:
        """Kinetic ½ q̇ᵀ M q̇ plus potential (gravity and springs) [J]."""
        q, qd, t = self._state(q, qd, t)
        return float(0.5 * qd @ self._numeric()["M"] @ qd) + self.potential_energy(q, t)

    def __repr__(self):
        return (f"PlanarSystem({self.name!r}: {len(self.bodies)} bodies, n = {self.n}, "
                f"{len(self.holonomic)} holonomic + {len(self.nonholonomic_rows)} non-holonomic constraints)")


# ---------------------------------------------------------------------------------------------------------
# accelerations
# ---------------------------------------------------------------------------------------------------------
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
    method: str
    diagnostics: dict = field(default_factory=dict)


def gauss_function(system, q, qd, qdd, t=0.0) -> float:
    """Gauss's constraint G = ½ (M q̈ − Q)ᵀ M⁻¹ (M q̈ − Q) (seed 001 eq. (1), f = 0: Q holds every force)."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    r = num["M"] @ np.asarray(qdd, float) - num["dyn"](q, qd, t)[0]
    return float(0.5 * r @ num["Minv"] @ r)


def _baumgarte(gamma, phid, psi, phi, t_stab):
    """γ − [2α φ̇ + α² φ; α ψ], α = 1/t_stab (RBDA eq. 8.21–8.22, as ``loops.loop_constraints``)."""
    if t_stab is None:
        return gamma
    if not t_stab > 0:
        raise ValueError(f"t_stab must be > 0 s, got {t_stab}")
    alpha = 1.0 / t_stab
    return gamma - np.concatenate([2 * alpha * phid + alpha ** 2 * phi, alpha * psi])


def _solve(num, Q, J, gamma, method, rtol):
    """(q̈, a, rank, λ from KKT or None) for one state: the three methods of ``accelerations``."""
    M, Minv, Mih = num["M"], num["Minv"], num["Mih"]
    a = Minv @ Q
    n, m = len(Q), len(gamma)
    if m == 0:
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
        return a.copy(), a, 0, None
    if method == "gauss":
        # q̈ = a + M^-½ (J M^-½)⁺ (γ − J a), the pseudo-inverse from one SVD with a relative cut-off
        B = J @ Mih
        U, sv, Vt = np.linalg.svd(B, full_matrices=False)
        rank = int(np.sum(sv > rtol * sv[0])) if sv[0] > 0 else 0
        z = Vt[:rank].T @ ((U[:, :rank].T @ (gamma - J @ a)) / sv[:rank])
        return a + Mih @ z, a, rank, None
    sv = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(sv > rtol * sv[0])) if sv[0] > 0 else 0
    if method == "kkt":
        # [M Jᵀ; J 0] [q̈; −λ] = [Q; γ]: LU when J has full row rank, else SVD least squares
        K = np.block([[M, J.T], [J, np.zeros((m, m))]])
        rhs = np.concatenate([Q, gamma])
        x = np.linalg.solve(K, rhs) if rank == m else np.linalg.lstsq(K, rhs, rcond=rtol)[0]
        return x[:n], a, rank, -x[n:]
    if method == "paper16":
        # seed 001 eq. (16) with f = 0: q̈ = J⁺γ − (I − J⁺J)(I − J⁺J)⁺ (J⁺γ − M⁻¹Q)  — NOT the minimiser
        Jp = np.linalg.pinv(J, rcond=rtol)
        P = np.eye(n) - Jp @ J
        return Jp @ gamma - P @ np.linalg.pinv(P, rcond=rtol) @ (Jp @ gamma - a), a, rank, None
    raise ValueError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")


def accelerations(system, q, qd=None, t=0.0, method="gauss", t_stab=None, rtol=1e-10) -> GaussAccel:
    """Constrained accelerations of ``system`` at (q, q̇, t).

    method: ``"gauss"`` — the M-weighted least-squares minimiser q̈ = a + M^-½ (J M^-½)⁺ (γ − J a)
    (Udwadia–Kalaba); ``"kkt"`` — the Lagrange-multiplier system [M Jᵀ; J 0][q̈; −λ] = [Q; γ] (solved by
    LU, or by SVD least squares when J is rank deficient); ``"paper16"`` — seed 001's eq. (16), which is
    NOT Gauss's minimiser unless M ∝ I (kept to show the error). t_stab [s]: Baumgarte terms (None: none).
    rtol: relative singular-value cut-off of the pseudo-inverses."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    Q, _, _, J, gamma, phid, psi, phi = num["all"](q, qd, t)
    gamma = _baumgarte(gamma, phid, psi, phi, t_stab)
    qdd, a, rank, lam = _solve(num, Q, J, gamma, method, rtol)
    Qc = num["M"] @ (qdd - a)
    diag = {}
    if len(gamma):
        if lam is None:
            lam = np.linalg.lstsq(J.T, Qc, rcond=rtol)[0]
        diag["tangential_force"] = float(np.linalg.norm(Qc - J.T @ lam))
        residual = float(np.linalg.norm(J @ qdd - gamma))
    else:
        lam, residual = np.zeros(0), 0.0
    d = qdd - a
    return GaussAccel(qdd, lam, Qc, a, J, gamma, residual, float(0.5 * d @ num["M"] @ d), rank, method, diag)


# ---------------------------------------------------------------------------------------------------------
# projection and simulation
# ---------------------------------------------------------------------------------------------------------
def project(system, q, qd=None, t=0.0, tol=1e-12, max_iter=50):
    """Project (q, q̇) onto the constraints: q by M-weighted Gauss–Newton steps on φ(q, t) = 0, then q̇
    by the M-weighted minimum-norm correction that makes [φ̇; ψ] = 0. Returns (q, q̇).
    Raises SimulationError if φ cannot be brought below ``tol`` (e.g. a configuration out of reach)."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    Minv = num["Minv"]
    q = q.copy()
    for _ in range(max_iter):
        phi, Jp = num["pos"](q, qd, t)
        if phi.size == 0 or np.linalg.norm(phi) <= tol:
            break
        A = Jp @ Minv @ Jp.T
        q = q - Minv @ Jp.T @ np.linalg.lstsq(A, phi, rcond=1e-12)[0]
    else:
        raise SimulationError(f"{system.name}: could not assemble: ‖φ‖ = {np.linalg.norm(phi):.3g} after "
                              f"{max_iter} iterations")
    qd = qd.copy()
    for _ in range(max_iter):
        v = system.velocity_residual(q, qd, t)
        if v.size == 0 or np.linalg.norm(v) <= tol * max(1.0, np.linalg.norm(qd)):
            break
        J = num["con"](q, qd, t)[0]
        qd = qd - Minv @ J.T @ np.linalg.lstsq(J @ Minv @ J.T, v, rcond=1e-12)[0]
    return q, qd


@dataclass
class GaussTrajectory:
    """Sampled motion of a PlanarSystem. t (N,) [s]; q, qd, qdd (N, n) in the order of ``names``;
    lam (N, m) constraint multipliers (Q_c = Jᵀλ); energy (N,) kinetic + potential [J]; work (N,) work of
    the non-conservative applied forces since t = 0 [J] (energy − energy[0] − work = 0 up to drift when
    the constraints are ideal and scleronomic); phi (N, nh) holonomic residuals; psi (N, m) [φ̇; ψ]."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    phi: np.ndarray
    psi: np.ndarray
    names: tuple
    constraint_names: tuple = ()
    meta: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.t)

    def coordinate(self, name, kind="q"):
        """One column of q, qd or qdd by coordinate name ("crank.theta")."""
        return getattr(self, kind)[:, list(self.names).index(name)]

    @property
    def energy_balance(self):
        """E(t) − E(0) − W_nc(t) [J]: zero for exact motion under ideal scleronomic constraints."""
        return self.energy - self.energy[0] - self.work

    def save(self, path):
        """Write ``.npz`` or ``.csv`` (by the suffix), atomically. Returns the path as a string."""
        path = str(path)
        cols = {"t": self.t}
        for k in ("q", "qd", "qdd"):
            for i, nm in enumerate(self.names):
                cols[f"{k}[{nm}]"] = getattr(self, k)[:, i]
        for i, nm in enumerate(self.constraint_names):
            cols[f"lambda[{nm}]"] = self.lam[:, i]
        cols["energy"], cols["work_nc"] = self.energy, self.work
        if path.endswith(".csv"):
            with atomic_path(path) as tmp:
                with open(tmp, "w", newline="") as fh:
                    w = csv.writer(fh)
                    w.writerow(list(cols))
                    w.writerows(np.column_stack(list(cols.values())).tolist())
            return path
        if not path.endswith(".npz"):
            raise ValueError(f"unknown trajectory format for {path!r}: use .npz or .csv")
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, lam=self.lam, energy=self.energy,
                         work=self.work, phi=self.phi, psi=self.psi, names=np.array(self.names),
                         constraint_names=np.array(self.constraint_names), meta=np.array(repr(self.meta)))
        return path


def _samples(system, t, X, accel, t_stab, rtol, meta):
    n = system.n
    num = system._numeric()
    q, qd, work = X[:, :n], X[:, n:2 * n], X[:, 2 * n]
    res = [accelerations(system, qi, qdi, ti, method=accel, t_stab=t_stab, rtol=rtol)
           for ti, qi, qdi in zip(t, q, qd)]
    m = num["m"]
    qdd = np.array([r.qdd for r in res]).reshape(len(t), n)
    lam = np.array([r.lam for r in res]).reshape(len(t), m)
    energy = np.array([system.energy(qi, qdi, ti) for ti, qi, qdi in zip(t, q, qd)])
    phi = np.array([system.phi(qi, ti) for ti, qi in zip(t, q)]).reshape(len(t), num["nh"])
    psi = np.array([system.velocity_residual(qi, qdi, ti) for ti, qi, qdi in zip(t, q, qd)]).reshape(len(t), m)
    names = tuple(nm for nm, _ in system.holonomic) + tuple(nm for nm, _ in system.nonholonomic_rows)
    return GaussTrajectory(np.asarray(t, float), q.copy(), qd.copy(), qdd, lam, energy, work.copy(), phi, psi,
                           tuple(system.names), names, meta)


def simulate(system, q0, qd0=None, duration=1.0, dt_out=0.01, method="DOP853", rtol=1e-10, atol=1e-12,
             accel="gauss", stabilisation="baumgarte", t_stab=0.1, pinv_rtol=1e-10, max_step=np.inf,
             project_initial=True) -> GaussTrajectory:
    """Integrate M q̈ = Q + Q_c with scipy.integrate.solve_ivp from (q0, q̇0).

    accel: ``"gauss"`` | ``"kkt"`` | ``"paper16"`` (see ``accelerations``). stabilisation: ``"baumgarte"``
    (time constant ``t_stab`` [s]), ``"projection"`` (integrate each output interval, then ``project``)
    or None. The work of the non-conservative forces is integrated alongside (``GaussTrajectory.work``).
    Raises SimulationError (with ``.trajectory`` up to the failure) if the solver fails."""
    from scipy.integrate import solve_ivp
    n = system.n
    q0, qd0, _ = system._state(q0, qd0, 0.0)
    if not (duration > 0 and dt_out > 0):
        raise ValueError(f"duration and dt_out must be > 0 (got {duration}, {dt_out})")
    if stabilisation not in ("baumgarte", "projection", None, "none"):
        raise ValueError(f"unknown stabilisation {stabilisation!r} (baumgarte, projection, none)")
    if accel not in METHODS:
        raise ValueError(f"unknown method {accel!r} (choose from {', '.join(METHODS)})")
    stab = None if stabilisation in (None, "none") else stabilisation
    ts = t_stab if stab == "baumgarte" else None
    num = system._numeric()
    if project_initial:
        q0, qd0 = project(system, q0, qd0, 0.0)

    def rhs(t, x):
        q, qd = x[:n], x[n:2 * n]
        Q, Qnc, Vt, J, gamma, phid, psi, phi = num["all"](q, qd, t)
        qdd = _solve(num, Q, J, _baumgarte(gamma, phid, psi, phi, ts), accel, pinv_rtol)[0]
        return np.concatenate([qd, qdd, [Qnc @ qd + float(Vt)]])

    n_out = int(np.floor(duration / dt_out + 1e-9)) + 1
    t_out = np.minimum(np.linspace(0.0, dt_out * (n_out - 1), n_out), duration)
    meta = dict(system=system.name, method=method, rtol=rtol, atol=atol, dt_out=dt_out, accel=accel,
                stabilisation=stab, t_stab=ts, nfev=0)
    x0 = np.concatenate([q0, qd0, [0.0]])
    failure = None
    if stab == "projection":
        xs = [x0]
        for k in range(1, n_out):
            sol = solve_ivp(rhs, (t_out[k - 1], t_out[k]), xs[-1], method=method, rtol=rtol, atol=atol,
                            max_step=max_step)
            meta["nfev"] += sol.nfev
            if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
                failure = f"the solver failed at t = {sol.t[-1]:.6g} s: {sol.message}"
                break
            x = sol.y[:, -1].copy()
            try:
                x[:n], x[n:2 * n] = project(system, x[:n], x[n:2 * n], t_out[k])
            except SimulationError as e:
                failure = str(e)
                break
            xs.append(x)
        X, tt = np.array(xs), t_out[:len(xs)]
    else:
        sol = solve_ivp(rhs, (0.0, t_out[-1]), x0, method=method, t_eval=t_out, rtol=rtol, atol=atol,
                        max_step=max_step)
        meta["nfev"] = sol.nfev
        X, tt = sol.y.T, sol.t
        if not sol.success or len(tt) < n_out or not np.all(np.isfinite(X)):
            good = np.all(np.isfinite(X), axis=1) if len(X) else np.zeros(0, bool)
            stop = int(np.argmin(good)) if not good.all() else len(X)
            X, tt = X[:stop], tt[:stop]
            failure = f"the solver stopped at t = {sol.t[-1] if len(sol.t) else 0:.6g} s: {sol.message}"
    meta["status"] = "failed" if failure else "finished"
    traj = _samples(system, tt, X, accel, ts, pinv_rtol, meta)
    if failure:
        meta["message"] = failure
        raise SimulationError(f"{system.name}: {failure}; {len(traj)} samples kept", trajectory=traj)
    return traj


# ---------------------------------------------------------------------------------------------------------
# examples
# ---------------------------------------------------------------------------------------------------------
def crank_slider(m1=0.37, m2=0.77, m3=0.1, l1=0.15, l2=0.56, tau=-0.5, k=5.0, c=1.0, g=9.81,
                 constraints="joints", spring_anchor=1.0, I1=None, I2=None) -> PlanarSystem:
    """Seed 001's crank-slider (its Fig. 1, eqs. (17)–(21)) in q = [x1, y1, θ1, x2, y2, θ2, x3]: crank
    (body 1, pivot at the origin, centroid at l1/2), connecting rod (body 2), slider (body 3, x only, on
    y = 0); paper plane x-y, gravity g along −y; θ absolute, counter-clockwise; torque τ on the crank;
    a spring-damper from the slider to a wall anchor at (``spring_anchor``, 0) [m], relaxed at
    x3 = l1 + l2, so Q7 = k (l1 + l2 − x3) − c ẋ3 as in the paper's eq. (19).

    constraints: ``"joints"`` — three pin joints (O: ground–crank, A: crank–rod, B: rod–slider; their
    multipliers are pin forces); ``"paper"`` — the paper's six φ rows (eq. (21)) typed as written.
    Both describe the same constraint manifold and give the same accelerations.
    I1, I2: centroidal inertias [kg m²] (default: slender rods, m l² / 12, as in the paper)."""
    sp = _sympy()
    s = PlanarSystem(gravity=(0.0, -g), name="crank_slider (seed 001)")
    crank = s.add_body("crank", m1, m1 * l1 ** 2 / 12 if I1 is None else I1)
    rod = s.add_body("rod", m2, m2 * l2 ** 2 / 12 if I2 is None else I2)
    slider = s.add_body("slider", m3, 0.0, coords=("x",))
    if constraints == "joints":
        s.revolute(crank, (-l1 / 2, 0.0), None, (0.0, 0.0), name="O")
        s.revolute(crank, (l1 / 2, 0.0), rod, (-l2 / 2, 0.0), name="A")
        s.revolute(rod, (l2 / 2, 0.0), slider, (0.0, 0.0), name="B")
    elif constraints == "paper":
        x1, y1, t1, x2, y2, t2, x3 = s.q
        for i, e in enumerate([x1 - l1 / 2 * sp.cos(t1), y1 - l1 / 2 * sp.sin(t1),
                               l1 * sp.cos(t1) - x2 + l2 / 2 * sp.cos(t2), l1 * sp.sin(t1) - y2 + l2 / 2 * sp.sin(t2),
                               x2 + l2 / 2 * sp.cos(t2) - x3, y2 + l2 / 2 * sp.sin(t2)]):
            s.constraint(e, f"phi{i + 1}")
    else:
        raise ValueError(f"constraints must be 'joints' or 'paper', got {constraints!r}")
    s.torque(crank, tau)
    if not spring_anchor > l1 + l2:
        raise ModelError(f"crank_slider: spring_anchor must lie beyond the slider's reach l1 + l2 = {l1 + l2} m")
    s.spring_damper(slider, (0.0, 0.0), None, (spring_anchor, 0.0), k=k, length0=spring_anchor - (l1 + l2), c=c)
    return s


def chaplygin_sleigh(m=1.0, inertia=0.05, a=0.3, gravity=(0.0, 0.0)) -> PlanarSystem:
    """Chaplygin's sleigh: one body on a horizontal plane, a knife edge at distance ``a`` [m] behind the
    centroid along the body x axis (q = [x, y, θ] of the centroid). Energy is conserved (the knife
    edge does no work); with v the contact point's speed along the blade and ω = θ̇ (Bloch,
    *Nonholonomic Mechanics and Control* §1.7): v̇ = a ω², ω̇ = −m a v ω / (I + m a²)."""
    s = PlanarSystem(gravity=gravity, name="chaplygin_sleigh")
    b = s.add_body("sleigh", m, inertia)
    s.knife_edge(b, (-a, 0.0), (1.0, 0.0), name="blade")
    return s


# ---------------------------------------------------------------------------------------------------------
# the launch job (job: gauss)
# ---------------------------------------------------------------------------------------------------------
_GAUSS_KEYS = {"mechanism", "parameters", "q0", "qd0", "accelerations", "stabilisation", "constraints",
               "compare_tree", "compare_paper16", "figures"}
_FIGURES = [  # (file, paper figure, title, quantity, unit)
    ("fig2_crank_x.png", 2, "crank centroid x displacement", "x1", "m"),
    ("fig3_crank_vx.png", 3, "crank centroid x velocity", "vx1", "m/s"),
    ("fig4_crank_y.png", 4, "crank centroid y displacement", "y1", "m"),
    ("fig5_crank_vy.png", 5, "crank centroid y velocity", "vy1", "m/s"),
    ("fig6_crank_angle.png", 6, "crank angle θ1", "th1", "rad"),
    ("fig7_crank_rate.png", 7, "crank angular velocity dθ1/dt", "w1", "rad/s"),
    ("fig8_slider_x.png", 8, "slider x displacement", "x3", "m"),
    ("fig9_slider_vx.png", 9, "slider x velocity", "vx3", "m/s"),
]
_LABELS = dict(x1="x1", vx1="dx1/dt", y1="y1", vy1="dy1/dt", th1="θ1", w1="dθ1/dt", x3="x3", vx3="dx3/dt")


def _series_descriptor(tr):
    c = tr.coordinate
    return dict(x1=c("crank.x"), vx1=c("crank.x", "qd"), y1=c("crank.y"), vy1=c("crank.y", "qd"),
                th1=c("crank.theta"), w1=c("crank.theta", "qd"), x3=c("slider.x"), vx3=c("slider.x", "qd"))


def _series_tree(tr, l1):
    """The same quantities from the tree + loop trajectory (x-z plane: our z is the paper's y)."""
    th, w = tr.q[:, 0], tr.qd[:, 0]
    return dict(x1=l1 / 2 * np.cos(th), vx1=-l1 / 2 * np.sin(th) * w, y1=l1 / 2 * np.sin(th),
                vy1=l1 / 2 * np.cos(th) * w, th1=th, w1=w, x3=tr.q[:, 2], vx3=tr.qd[:, 2])


def _tidy(x, tol=1e-12):
    return 0.0 if abs(x) < tol else float(x)


def _num(launch, v, key, positive=False):
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise launch.err(key, f"{v!r} is not a number") from None
    if not math.isfinite(x):
        raise launch.err(key, f"{v!r} is not finite")
    if positive and not x > 0:
        raise launch.err(key, f"must be > 0, got {x}")
    return x


def _vector(launch, v, key, n):
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise launch.err(key, f"expected a list of {n} numbers (x1, y1, θ1, x2, y2, θ2, x3), got {v!r}")
    return np.array([_num(launch, x, f"{key}[{i}]") for i, x in enumerate(v)])


def _read_gauss_section(launch):
    g = launch.data.get("gauss") or {}
    if not isinstance(g, dict):
        raise launch.err("gauss", f"expected a mapping, got {type(g).__name__}")
    for k in g:
        if k not in _GAUSS_KEYS:
            raise launch.err(f"gauss.{k}", f"unknown key (known: {', '.join(sorted(_GAUSS_KEYS))})")
    mech = g.get("mechanism", "crank_slider")
    if mech != "crank_slider":
        raise launch.err("gauss.mechanism", f"unknown mechanism {mech!r} (built in: crank_slider)")
    params = dict(CRANK_SLIDER_PAPER)
    p = g.get("parameters") or {}
    if not isinstance(p, dict):
        raise launch.err("gauss.parameters", "expected a mapping such as {m1: 0.37, tau: -0.5}")
    for k, v in p.items():
        if k not in params:
            raise launch.err(f"gauss.parameters.{k}", f"unknown parameter (known: {', '.join(params)})")
        params[k] = _num(launch, v, f"gauss.parameters.{k}", positive=k in ("m1", "m2", "m3", "l1", "l2"))
        if k in ("k", "c", "g") and params[k] < 0:
            raise launch.err(f"gauss.parameters.{k}", f"must be >= 0, got {params[k]}")
    if params["l2"] <= params["l1"]:
        raise launch.err("gauss.parameters", f"need l2 > l1 for a crank that turns (l1 = {params['l1']}, l2 = {params['l2']})")
    opts = dict(
        params=params,
        q0=_vector(launch, g.get("q0", list(PAPER_Q0)), "gauss.q0", 7),
        qd0=_vector(launch, g.get("qd0", [0.0] * 7), "gauss.qd0", 7),
        accel=g.get("accelerations", "gauss"), stab=g.get("stabilisation", "baumgarte"),
        constraints=g.get("constraints", "joints"), compare_tree=g.get("compare_tree", True),
        compare_paper16=g.get("compare_paper16", True), figures=g.get("figures", True))
    if opts["accel"] not in METHODS:
        raise launch.err("gauss.accelerations", f"unknown method {opts['accel']!r} ({', '.join(METHODS)})")
    if opts["stab"] not in ("baumgarte", "projection", "none", None):
        raise launch.err("gauss.stabilisation", f"unknown stabilisation {opts['stab']!r} (baumgarte, projection, none)")
    if opts["constraints"] not in ("joints", "paper"):
        raise launch.err("gauss.constraints", f"{opts['constraints']!r}: use joints or paper")
    for k in ("compare_tree", "figures"):
        if not isinstance(opts[k], bool):
            raise launch.err(f"gauss.{k}", f"expected true or false, got {opts[k]!r}")
    c16 = opts["compare_paper16"]
    if isinstance(c16, bool):
        opts["compare_paper16"] = 2.0 if c16 else None
    else:
        opts["compare_paper16"] = _num(launch, c16, "gauss.compare_paper16", positive=True)
    return opts


def _plot_figures(outdir, tr, tree, p16, params, written):
    from .report import _pyplot, _save
    plt = _pyplot()
    S = _series_descriptor(tr)
    T = _series_tree(tree, params["l1"]) if tree is not None else None
    P = _series_descriptor(p16) if p16 is not None else None
    for fname, fig_no, title, key, unit in _FIGURES:
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        ax.plot(tr.t, S[key], lw=1.6, color="C0", label="descriptor coordinates, Gauss minimiser")
        if T is not None:
            ax.plot(tree.t, T[key], lw=1.0, ls="--", color="C1", label="tree + <loop> (urdf_dyn.simulate)")
        ax.set_xlabel("t [s]")
        ax.set_ylabel(f"{_LABELS[key]} [{unit}]")
        ax.set_title(f"seed 001 Fig. {fig_no}: {title}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        written[fname.removesuffix(".png")] = _save(fig, outdir / fname)
    # overview: figs 2-9 on one page, the whole run and its first 2 s
    for key_out, fname, t_max in (("overview", "crank_slider_gauss.png", None),
                                  ("overview_2s", "crank_slider_gauss_2s.png", 2.0)):
        if t_max is not None and tr.t[-1] <= t_max:
            continue
        k = len(tr) if t_max is None else int(np.searchsorted(tr.t, t_max, side="right"))
        kt = None if T is None else (len(tree) if t_max is None else int(np.searchsorted(tree.t, t_max, side="right")))
        fig, axes = plt.subplots(4, 2, figsize=(11, 11), sharex=True)
        for ax, (_, fig_no, title, key, unit) in zip(axes.ravel(), _FIGURES):
            ax.plot(tr.t[:k], S[key][:k], lw=1.4, color="C0", label="Gauss (descriptor)")
            if T is not None:
                ax.plot(tree.t[:kt], T[key][:kt], lw=0.9, ls="--", color="C1", label="tree + loop")
            ax.set_title(f"Fig. {fig_no}: {title}", fontsize=9)
            ax.set_ylabel(f"{_LABELS[key]} [{unit}]")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        fig.suptitle("Crank-slider of seed 001 by Gauss's principle (τ = %g N m, k = %g N/m, c = %g N s/m)%s"
                     % (params["tau"], params["k"], params["c"], "" if t_max is None else f", first {t_max:g} s"),
                     fontsize=11)
        fig.tight_layout()
        written[key_out] = _save(fig, outdir / fname)
    # diagnostics: constraint residuals, energy balance, and (if run) the gap to the tree solution
    rows = 3 if T is not None else 2
    fig, axes = plt.subplots(rows, 1, figsize=(8, 2.8 * rows + 0.4), sharex=True)
    ax = axes[0]
    ax.semilogy(tr.t, np.maximum(np.abs(tr.phi).max(axis=1), 1e-18), label="max |φ| [m]")
    ax.semilogy(tr.t, np.maximum(np.abs(tr.psi).max(axis=1), 1e-18), label="max |dφ/dt| [m/s]")
    ax.set_ylabel("constraint residual")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    ax.plot(tr.t, tr.energy - tr.energy[0], label="E(t) − E(0)")
    ax.plot(tr.t, tr.work, ls="--", label="work of τ and the damper")
    ax.plot(tr.t, tr.energy_balance, label="E − E(0) − W (should be 0; max |·| = %.1e J)"
            % np.abs(tr.energy_balance).max())
    ax.set_ylabel("[J]")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    if T is not None:
        ax = axes[2]
        ax.semilogy(tr.t, np.maximum(np.abs(S["th1"] - T["th1"]), 1e-18), label="|Δθ1| [rad]")
        ax.semilogy(tr.t, np.maximum(np.abs(S["x3"] - T["x3"]), 1e-18), label="|Δx3| [m]")
        ax.set_ylabel("descriptor − tree")
        ax.set_title("difference to the tree + <loop> model (its URDF rounds the rod inertia to 7 digits)",
                     fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, which="both")
    axes[-1].set_xlabel("t [s]")
    fig.tight_layout()
    written["diagnostics"] = _save(fig, outdir / "gauss_diagnostics.png")
    if P is not None:
        fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
        for ax, key, title, unit in ((axes[0, 0], "th1", "crank angle θ1", "rad"),
                                     (axes[0, 1], "w1", "crank angular velocity dθ1/dt", "rad/s"),
                                     (axes[1, 0], "x3", "slider x", "m"),
                                     (axes[1, 1], "vx3", "slider velocity", "m/s")):
            k = len(p16)
            ax.plot(tr.t[:k], S[key][:k], lw=1.4, label="Gauss minimiser (= KKT = tree + loop)")
            ax.plot(p16.t, P[key], lw=1.2, ls="--", color="C3", label="seed 001 eq. (16)")
            ax.set_title(title, fontsize=9)
            ax.set_ylabel(f"[{unit}]")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        fig.suptitle("The paper's closed form (16) integrated beside the true minimiser", fontsize=11)
        fig.tight_layout()
        written["paper16"] = _save(fig, outdir / "paper16_vs_gauss.png")


def eq16_gap(system, q, qd, t=0.0):
    """(relative gap ‖q̈₁₆ − q̈‖/‖q̈‖, crank-rate ratio θ̈1₁₆/θ̈1 if a crank exists, both results)."""
    g = accelerations(system, q, qd, t, method="gauss")
    p = accelerations(system, q, qd, t, method="paper16")
    rel = float(np.linalg.norm(p.qdd - g.qdd) / np.linalg.norm(g.qdd))
    ratio = None
    if "crank.theta" in system.names:
        i = system.index("crank.theta")
        ratio = float(p.qdd[i] / g.qdd[i]) if g.qdd[i] else math.inf
    return rel, ratio, g, p


def run_launch_job(launch, out_dir=None, progress=None, echo=print):
    """``job: gauss``: seed 001's crank-slider by Gauss's principle in descriptor coordinates, compared
    with the tree + ``<loop>`` model of ``robot.file`` and with the paper's eq. (16); writes the trajectory,
    the PNGs of the paper's figures 2–9, diagnostics and a Markdown report. Returns (GaussTrajectory,
    {name: path written})."""
    from .launch import _number
    for k in launch.data:
        if k not in ("job", "robot", "duration", "solver", "outputs", "gauss"):
            raise launch.err(k, "not used by job: gauss (job, robot, duration, solver, outputs, gauss)")
    for k in launch.data.get("outputs") or {}:
        if k not in ("directory", "trajectory", "report"):
            raise launch.err(f"outputs.{k}", "not written by job: gauss (directory, trajectory, report); the PNGs "
                                            "have fixed names")
    opts = _read_gauss_section(launch)
    params = opts["params"]
    duration = _number(launch, launch.data.get("duration", 10.0), "duration")
    if duration <= 0:
        raise launch.err("duration", "must be > 0 s")
    s = launch.data.get("solver") or {}
    for k in s:
        if k not in ("method", "rtol", "atol", "dt_out", "t_stab", "max_step", "closed_loop_method"):
            raise launch.err(f"solver.{k}", "not used by job: gauss (method, rtol, atol, dt_out, t_stab, max_step, "
                                            "closed_loop_method for the tree comparison)")
    if "closed_loop_method" in s:
        from .closed_loop import METHODS as CL_METHODS
        if s["closed_loop_method"] not in CL_METHODS:
            raise launch.err("solver.closed_loop_method", f"unknown method {s['closed_loop_method']!r} "
                                                          f"({', '.join(CL_METHODS)})")
    kw = dict(method=s.get("method", "DOP853"), rtol=_number(launch, s.get("rtol", 1e-10), "solver.rtol"),
              atol=_number(launch, s.get("atol", 1e-12), "solver.atol"),
              dt_out=_number(launch, s.get("dt_out", 0.01), "solver.dt_out"))
    if "max_step" in s:
        kw["max_step"] = _number(launch, s["max_step"], "solver.max_step")
    t_stab = s.get("t_stab", 0.1)
    t_stab = None if t_stab is None else _number(launch, t_stab, "solver.t_stab")
    if t_stab is not None and t_stab <= 0:
        raise launch.err("solver.t_stab", "must be > 0 s")
    o = launch.data.get("outputs") or {}
    outdir = Path(out_dir) if out_dir else Path(o.get("directory", f"urdf_dyn_out/{launch.path.name.split('.')[0]}"))

    system = crank_slider(**params, constraints=opts["constraints"])
    q0, qd0 = opts["q0"], opts["qd0"]
    if np.linalg.norm(system.phi(q0)) > 1e-6:
        raise launch.err("gauss.q0", f"not an assembled configuration: ‖φ(q0)‖ = {np.linalg.norm(system.phi(q0)):.3g} "
                                     "(the paper's is [0.075, 0, 0, 0.43, 0, 0, 0.71])")
    echo(f"{system!r}; {duration:g} s, accelerations {opts['accel']}, stabilisation {opts['stab']}"
         f" (t_stab {t_stab} s), {kw['method']} rtol={kw['rtol']:g}")
    try:
        tr = simulate(system, q0, qd0, duration, accel=opts["accel"], stabilisation=opts["stab"], t_stab=t_stab, **kw)
    except (ValueError, StateError) as e:
        raise launch.err("solver", str(e)) from None
    written = {}
    lines = []
    trajs = o.get("trajectory", ["gauss_trajectory.npz", "gauss_trajectory.csv"])
    for name in [trajs] if isinstance(trajs, str) else trajs:
        written[name] = tr.save(outdir / name)

    # the paper's formula against the miniser: at q0 and at a generic state of the run
    k_mid = len(tr) // 3
    rel0, ratio0, g0, p0 = eq16_gap(system, tr.q[0], tr.qd[0], 0.0)
    relm, ratiom, _, _ = eq16_gap(system, tr.q[k_mid], tr.qd[k_mid], tr.t[k_mid])
    kkt0 = accelerations(system, tr.q[0], tr.qd[0], 0.0, method="kkt")
    lines.append(f"at q0: θ̈1 = {g0.qdd[2]:.6g} rad/s² (Gauss minimiser; KKT {kkt0.qdd[2]:.6g}, "
                 f"|Δ| = {np.max(np.abs(kkt0.qdd - g0.qdd)):.1e}); eq. (16) gives {p0.qdd[2]:.6g} "
                 f"({ratio0:.3g}×), ‖Δq̈‖/‖q̈‖ = {rel0:.3g}")
    lines.append(f"at t = {tr.t[k_mid]:g} s: eq. (16) / minimiser crank acceleration {ratiom:.3g}×, "
                 f"‖Δq̈‖/‖q̈‖ = {relm:.3g}")
    lines.append(f"max constraint residual |φ| = {np.abs(tr.phi).max():.2e} m, |φ̇| = {np.abs(tr.psi).max():.2e} m/s; "
                 f"energy balance max |E − E(0) − W| = {np.abs(tr.energy_balance).max():.2e} J "
                 f"(E(0) = {_tidy(tr.energy[0]):.4g} J, W(end) = {tr.work[-1]:.4g} J)")
    th, x3 = tr.coordinate("crank.theta"), tr.coordinate("slider.x")
    last = tr.t >= tr.t[-1] - min(1.0, tr.t[-1] / 2)
    w_mean = float(np.mean(tr.coordinate("crank.theta", "qd")[last]))
    lines.append(f"end state: θ1 = {th[-1]:.5g} rad, θ̇1 = {tr.coordinate('crank.theta', 'qd')[-1]:.3g} rad/s, "
                 f"x3 = {x3[-1]:.5g} m; mean crank rate over the last {tr.t[-1] - tr.t[last][0]:.3g} s "
                 f"{w_mean:.3g} rad/s (" + ("at rest" if abs(w_mean) < 1e-2 else
                                             "still turning: the paper's text says the mechanism comes to rest") + ")")

    tree = None
    if opts["compare_tree"]:
        from .controllers import Constant
        from .launch import build_model
        from .simulate import simulate as tree_simulate
        model = build_model(launch)
        if model.nv != 3 or not model.has_constraints:
            raise launch.err("robot.file", f"the comparison needs the tree + <loop> crank-slider "
                                           f"(robots/crank_slider.urdf), got {model.name!r} with {model.nv} joints")
        dm = model.total_mass - (params["m1"] + params["m2"] + params["m3"])
        if abs(dm) > 1e-9:
            echo(f"WARNING: robot.file's mass differs from m1 + m2 + m3 by {dm:.3g} kg: the comparison is not like for like")
        tau = np.zeros(model.nv)
        tau[0] = params["tau"]
        th2 = q0[5]
        qt0 = np.array([q0[2], th2 - q0[2], q0[6]])
        qtd0 = np.array([qd0[2], qd0[5] - qd0[2], qd0[6]])
        tree = tree_simulate(model, qt0, qtd0, duration, controller=Constant(model, tau), dt_out=kw["dt_out"],
                             rtol=min(kw["rtol"], 1e-9), atol=min(kw["atol"], 1e-11), t_stab=t_stab,
                             progress=progress, cl_method=s.get("closed_loop_method", "nullspace"))
        S, T = _series_descriptor(tr), _series_tree(tree, params["l1"])
        n2 = min(len(tr), len(tree), int(round(2.0 / kw["dt_out"])) + 1)
        d_th, d_x3 = np.abs(S["th1"] - T["th1"]), np.abs(S["x3"] - T["x3"])
        lines.append(f"descriptor (Gauss) vs tree + loop: max |Δθ1| = {d_th[:n2].max():.2e} rad, max |Δx3| = "
                     f"{d_x3[:n2].max():.2e} m over the first {tr.t[n2 - 1]:g} s; over {tr.t[-1]:g} s: "
                     f"{d_th.max():.2e} rad, {d_x3.max():.2e} m")
        written["tree_trajectory"] = tree.save(outdir / "tree_trajectory.npz")
    p16 = None
    if opts["compare_paper16"] and opts["accel"] != "paper16":
        d16 = min(duration, opts["compare_paper16"])
        try:
            p16 = simulate(system, q0, qd0, d16, accel="paper16", stabilisation=opts["stab"], t_stab=t_stab, **kw)
        except SimulationError as e:
            p16 = e.trajectory
            lines.append(f"eq. (16) run stopped early: {e}")
        d = np.abs(p16.coordinate("crank.theta") - th[:len(p16)])
        lines.append(f"integrated with eq. (16) for {p16.t[-1]:g} s: max |Δθ1| from the minimiser {d.max():.3g} rad "
                     f"(θ1 = {p16.coordinate('crank.theta')[-1]:.4g} instead of {th[len(p16) - 1]:.4g} rad); "
                     f"energy balance error max |E − E(0) − W| = {np.abs(p16.energy_balance).max():.3g} J")
    if opts["figures"]:
        _plot_figures(outdir, tr, tree, p16, params, written)
    rep = outdir / o.get("report", "gauss_report.md")
    text = (f"# {system.name}: Gauss's principle in descriptor coordinates\n\nlaunch: `{launch.path}`; "
            f"{len(tr)} samples over {tr.t[-1]:g} s; parameters {params}\n\n"
            + "\n".join(f"- {ln}" for ln in lines) + "\n")
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(text)
    written["report"] = str(rep)
    for ln in lines:
        echo(ln)
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return tr, written
