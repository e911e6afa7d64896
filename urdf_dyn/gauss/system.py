"""The planar multibody system in descriptor coordinates (x, y, θ per body) with holonomic constraints
φ(q, t) = 0 and non-holonomic ψ(q, q̇, t) = 0 (seed 001 eqs. (4)–(6)); J q̈ = γ derived by sympy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from urdf_dyn.extras import require
from urdf_dyn.errors import ModelError, StateError

__all__ = ["METHODS", "COORDS", "CRANK_SLIDER_PAPER", "PAPER_Q0", "Body", "PlanarSystem"]

#: the accelerations solvers of ``accelerations`` (``solver=``)
METHODS = ("gauss", "kkt", "paper16")
COORDS = ("x", "y", "theta")

#: seed 001's parameters (section 4) and initial state q0 = [x1, y1, θ1, x2, y2, θ2, x3]
CRANK_SLIDER_PAPER = dict(m1=0.37, m2=0.77, m3=0.1, l1=0.15, l2=0.56, tau=-0.5, k=5.0, c=1.0, g=9.81)
PAPER_Q0 = (0.075, 0.0, 0.0, 0.43, 0.0, 0.0, 0.71)


def _sympy():
    return require("sympy", "urdf_dyn.gauss (the constraints' symbolic Jacobians)")


def _finite(x, what):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: {x!r} is not a number") from None
    if not math.isfinite(v):
        raise ModelError(f"{what}: {x!r} is not finite")
    return v



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
