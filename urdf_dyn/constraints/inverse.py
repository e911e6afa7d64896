"""Closed-loop inverse dynamics and actuator forces (RBDA §8.12, eqs. 8.61–8.63).

The spanning tree's equation of motion with the loop-closure forces,  τ = H q̈ + C − τᵃ − Kᵀλ  (8.61),
projected onto the motion freedom G (K G = 0) eliminates λ:

    Gᵀ τ = Gᵀ τ_ID,     τ_ID = ID(q, q̇, q̈) − τᵃ                                        (8.62)

where τᵃ are the known forces (URDF damping, Gazebo springs). Actuators u (p forces, N or N·m) act
through τ = B u: a tree actuator on joint j is the column e_j; an actuated loop joint k with motion axis S_k
(in Fp) is the column (^{Fp}X_0 (J_s − J_p))ᵀ S_k. Then  Gᵀ B u = Gᵀ τ_ID  (8.63), with G_u = Bᵀ G:

- properly actuated   (p = rank G_u = n − r):  the unique u;
- redundantly actuated (p > rank G_u): the weighted minimum-norm u (W = diag(weights)), or, with bounds,
  bounded least squares (scipy.optimize.lsq_linear) — the null-space component is chosen inside limits;
- under-actuated      (rank G_u < n − r): the least-squares u; ``residual`` = Gᵀ(τ_ID − B u), the part of
  the motion the actuators cannot produce, is reported with a warning.
A machine can be both redundantly and under-actuated. The loop-joint forces λ then follow from
Kᵀλ = τ_ID − B u (minimum norm where loops are redundant): ``loop_forces[name]`` is the wrench [n; f]
(N·m, N) on the successor in Fp coordinates — the pin load.
"""
from __future__ import annotations

import warnings

import numpy as np

from urdf_dyn._checks import as_batch
from urdf_dyn.algorithms.dynamics import inverse_dynamics
from urdf_dyn.constraints.explicit import explicit_constraint
from urdf_dyn.constraints.forward import (_RTOL, _UNMADE, _former_rtol, _loop_forces, _public_signature, _state_entry,
                                         _types)
from urdf_dyn.constraints.loops import compiled_covers, constraint_terms, numerical_rank
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.constraints.actuators import (Actuator, ActuatorForces, OneStateForces, _path_inputs, _read_only,  # noqa: F401
                                           _solve_one, actuation_matrix, actuators_of)
from urdf_dyn.errors import StateError
from urdf_dyn.model import Data, default_data
from urdf_dyn._checks import renamed_keywords

__all__ = ["Actuator", "actuators_of", "actuation_matrix", "constrained_inverse_dynamics", "actuator_forces",
           "ActuatorForces", "ActuationWarning", "ActuationPlan"]


class ActuationWarning(UserWarning):
    """The actuators cannot produce the requested motion (under-actuated), or exceed their limits."""


def _consistency(model, st, qd, qdd, K, k, tol):
    d = np.abs(st.deltas()).max(initial=0.0)
    v = np.abs(K @ qd).max(initial=0.0)
    a = np.abs(K @ qdd - k).max(initial=0.0)
    scale = 1.0 + np.abs(qd).max() + np.abs(qdd).max()
    if d > tol or v > tol * scale or a > tol * scale * scale:
        _inconsistent(model, d, v, a)


def _inconsistent(model, d, v, a):
    raise StateError(f"{model.name}: q, q̇, q̈ do not satisfy the loop constraints (position error {d:.3g}, "
                     f"velocity {v:.3g}, acceleration {a:.3g}); assemble q, project q̇ and q̈ first "
                     "(urdf_dyn.motion.consistent_motion)")


def _closed_loop_id(model, q, qd, qdd, check, tol, passive, f_ext, data=None, compiled=True):
    """The reference pipeline at one state: (LoopState, K, k, τ_ID, ExplicitConstraint or None), K built once;
    ``compiled=False``: the loop terms from the readable Python (``LoopState(compiled=False)``), not the kernel."""
    st, K, k = constraint_terms(model, q, qd, compiled=compiled)
    if check and model.has_constraints:
        _consistency(model, st, qd, qdd, K, k, tol)
    tau = inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
    if passive:
        tau = tau - passive_forces(model, q, qd)
    ec = explicit_constraint(model, q, qd, K=K, k=k, data=data) if model.has_constraints else None
    return st, K, k, tau, ec


@renamed_keywords(tol="residual_tol")
def constrained_inverse_dynamics(model, q, qd, qdd, check=True, residual_tol=1e-6, passive=True, f_ext=None, data=None):
    """Closed-loop inverse dynamics (RBDA eq. 8.62) at one consistent state.

    Returns (τ_ID (nv,) [N m | N], G (nv × (nv − r))): any τ with Gᵀτ = Gᵀτ_ID produces q̈. τ_ID is the
    spanning tree's RNEA minus the known passive forces (damping, springs) when ``passive``, with the
    external wrenches ``f_ext`` ({link: (6,) [n; f] in the link frame about its origin, N m and N}, as
    ``inverse_dynamics``) acting on the links. ``data``: a ``urdf_dyn.Data`` whose workspace one plain state
    (float64 ndarrays, no f_ext, passive, default residual_tol) reuses on the compiled path (default: the Model's
    per-thread one). Raises StateError if (q, q̇, q̈) violate the loop constraints by more than ``residual_tol`` (scaled)."""
    if (passive and f_ext is None and residual_tol == 1e-6 and q.__class__ is _ND and qd.__class__ is _ND
            and qdd.__class__ is _ND and q.dtype is _F8 and qd.dtype is _F8 and qdd.dtype is _F8
            and q.shape == qd.shape == qdd.shape == (model.nv,)):
        plan = (default_data(model) if data is None else data).workspace(
            ("inverse", bool(check)), lambda: _plan(model, (), None, 1e-6, check))
        if plan is not None and plan._one(q, qd, qdd):
            return plan._TAU[0].copy(), plan._G()
    from urdf_dyn._checks import one_state
    one_state("constrained_inverse_dynamics", q=q, qd=qd, qdd=qdd)
    n = model.nv
    q, qd, qdd = (as_batch(x, nm, model.nq if nm == "q" else n)[0][0] for x, nm in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
    _, _, _, tau, ec = _closed_loop_id(model, q, qd, qdd, check, residual_tol, passive, f_ext)
    return tau, (ec.G if ec is not None else np.eye(n))


def actuator_forces(model, q, qd, qdd, actuated=None, weights=None, bounds=None, rank_rtol=_RTOL, check=True,
                    warn=True, f_ext=None, compiled=True, data=None, **former) -> ActuatorForces:
    """Actuator forces that produce (q, q̇, q̈) — RBDA eq. 8.63 (module docstring for the cases).

    Args:
        q, qd, qdd: (nv,) one consistent state, or (N, nv) a trajectory.
        actuated: actuator names (tree joints and/or actuated loop joints); default from the URDF.
        weights: (p,) positive weights W of the minimum-norm solution (redundant actuation).
        rank_rtol: relative tolerance of the ranks (``rtol=`` is its former name: a FutureWarning).
        bounds: "limits" for the URDF effort limits, or (lower (p,), upper (p,)) [N | N m]; bounded least
            squares via scipy.optimize.lsq_linear.
        f_ext: external wrenches {link: (6,) or (N, 6)} [n; f] in the link frame about its origin (N m, N),
            e.g. soil forces on the bucket; they enter the inverse dynamics and the pin loads.
        compiled: run the compiled path (``constraints._path.actuation_path``) where it applies (no
            ``bounds``, no ``<mimic>``, no universal loop, no damped loop joint); False runs the readable
            reference, state by state. Both choose the independent set (§8.8) at the first state and
            re-check it at every later one; tests hold them together.
        data: a ``urdf_dyn.Data`` of ``model`` whose workspace a single-state call reuses (default: the
            Model's per-thread one, ``urdf_dyn.model.default_data``): one plain state (float64 ndarrays (nv,)) without
            ``bounds`` or ``f_ext`` runs the compiled path (``constraints._sample.actuation_one``) on an
            ``ActuationPlan`` kept there, with no per-call packing or allocation beyond the result (an
            ``OneStateForces``, whose arrays view the buffer the kernel wrote; the model side is packed
            in two arrays, so the call unboxes nine). The Data keeps the
            independent set of RBDA §8.8 between calls and re-checks it at each one, as a trajectory does
            (u, τ_ID and λ do not depend on the set; an under-actuated ``residual`` is in its coordinates).
    Raises StateError for inconsistent states, a non-finite value or a rank of K that changes along the
    trajectory; KeyError for unknown actuator names; ValueError for bad ``bounds`` or weights. Warns
    (ActuationWarning) when under-actuated or over a limit."""
    if former:
        rank_rtol = _former_rtol("actuator_forces", former, rank_rtol)
    if (bounds is None and f_ext is None and compiled and q.__class__ is _ND and qd.__class__ is _ND
            and qdd.__class__ is _ND and q.dtype is _F8 and qd.dtype is _F8 and qdd.dtype is _F8
            and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):   # the lengths: the kernel's status 2
        res = _one_state(model, q, qd, qdd, actuated, weights, rank_rtol, check, warn,
                         default_data(model) if data is None else data)
        if res is not None:
            return res
    n = model.nv
    Q, single = as_batch(q, "q", model.nq)
    QD = as_batch(qd, "qd", n, Q.shape[0])[0]
    QDD = as_batch(qdd, "qdd", n, Q.shape[0])[0]
    acts = actuators_of(model, actuated)
    p = len(acts)
    limits = np.array([a.limit for a in acts])
    if isinstance(bounds, str):
        if bounds != "limits":
            raise ValueError(f"bounds must be 'limits' or (lower, upper), got {bounds!r}")
        bounds = (-limits, limits)
    if bounds is not None:
        bounds = (np.broadcast_to(np.asarray(bounds[0], float), (p,)), np.broadcast_to(np.asarray(bounds[1], float), (p,)))
    w = np.ones(p) if weights is None else np.broadcast_to(np.asarray(weights, float), (p,))
    if np.any(w <= 0):
        raise ValueError("actuator weights must be > 0")
    fx = {}
    for link, wr in (f_ext or {}).items():
        wr = np.asarray(wr, float)
        if wr.shape not in ((6,), (Q.shape[0], 6)):
            raise StateError(f"f_ext[{link!r}] must have shape (6,) or ({Q.shape[0]}, 6), got {wr.shape}")
        fx[link] = np.broadcast_to(wr, (Q.shape[0], 6))
    if compiled and bounds is None and compiled_covers(model) and _one_joint_actuators(model):
        U, R, TAU, lam, ranks, dof = _compiled(model, Q, QD, QDD, acts, w, rank_rtol, check, fx)
        LF = _loop_forces(model, lam.T) if model.has_constraints else {}
    else:
        U, R, TAU, lam, ranks, dof = _reference(model, Q, QD, QDD, acts, w, bounds, rank_rtol, check, fx)
        LF = _loop_forces(model, lam.T) if model.has_constraints else {}
    LF = {k: v.T for k, v in LF.items()}
    rank = int(ranks.min()) if len(ranks) else 0
    under = rank < dof
    redundant = p > rank
    case = ("redundantly and under-actuated" if under and redundant else "under-actuated" if under
            else "redundantly actuated" if redundant else "properly actuated")
    over = tuple(a.name for i, a in enumerate(acts) if np.isfinite(limits[i]) and limits[i] > 0
                 and np.any(np.abs(U[:, i]) > limits[i] * (1 + 1e-9)))
    if warn:
        rmax = np.abs(R).max(initial=0.0)
        _warn_actuation(model, under and rmax > 1e-9 * (1 + np.abs(TAU).max()), rank, dof, rmax, over, 3)
    if single:
        U, R, TAU = U[0], R[0], TAU[0]
        LF = {k: v[0] for k, v in LF.items()}
    return ActuatorForces(tuple(a.name for a in acts), tuple(a.unit for a in acts), limits, U, case, rank, dof,
                          R, LF, over, TAU)


_public_signature(actuator_forces)


_F8 = np.dtype(np.float64)
_ND = np.ndarray


def _plan(model, actuated, weights, rtol, check):
    """An ActuationPlan for a Data's workspace, or None where the compiled path does not apply."""
    try:
        plan = ActuationPlan(model, actuated, weights, rtol, check)
    except (KeyError, ValueError):      # the general path raises them with its own message
        return None
    if not plan.compiled or not model.loops:
        return None
    return plan


_CASES = {(False, False): "properly actuated", (False, True): "redundantly actuated",
          (True, False): "under-actuated", (True, True): "redundantly and under-actuated"}


_DEFAULT_KEY = ("actuation", 1e-6, True)


def _one_state(model, q, qd, qdd, actuated, weights, rtol, check, warn, data):
    """``actuator_forces`` at one plain state (float64 ndarrays) through an ``ActuationPlan`` kept in ``data``
    (the compiled path, no per-call packing), or None where the general path must answer (not covered, a
    wrong shape, a fallback state, an error to explain)."""
    if actuated is None and weights is None and rtol is _RTOL and check is True:
        key = _DEFAULT_KEY
    else:
        try:
            key = ("actuation", rtol, check, None if actuated is None else tuple(actuated),
                   None if weights is None else np.asarray(weights, float).tobytes())
        except (TypeError, ValueError):  # the general path explains
            return None
    plan = data.workspaces.get(key, _UNMADE)
    if plan is _UNMADE:
        try:
            plan = data.workspace(key, lambda: _plan(model, actuated, weights, float(rtol), bool(check)))
        except TypeError:               # unhashable actuator names: the general path explains
            return None
    if plan is None:
        return None
    buf = np.empty(plan._size)          # the result's own buffer
    code = plan._call(q, qd, qdd, buf)  # −status, or rank · 2³² + (n − r) · 4 + flags (``actuation_one``)
    if code < 0:
        return None
    kind = plan._kinds.get(code >> 2)
    if kind is None:                    # the results' class for this rank and mobility, made once
        kind = plan._kinds[code >> 2] = plan._result_kind(code >> 32, (code >> 2) & 0x3FFFFFFF)
    obj = object.__new__(kind)
    obj._buf = buf
    if code & 3:                        # over a limit, or under-actuated with a residual: read the details
        o = plan._layout
        _, rank, dof, _, rmax, _ = buf[o[7]:o[8]].tolist()
        over = tuple(nm for nm, h in zip(plan._names, buf[o[6]:o[7]].tolist()) if h) if code & 1 else ()
        obj.over_limit = over
        if warn:
            _warn_actuation(model, bool(code & 2), int(rank), int(dof), rmax, over, 4)
    return obj


def _warn_actuation(model, under, rank, dof, rmax, over, stacklevel):
    """The ActuationWarnings of ``actuator_forces``: under-actuated (largest unproduced force rmax), over a limit."""
    if under:
        warnings.warn(f"{model.name}: under-actuated (rank G_u = {rank} < {dof} degrees of freedom): the "
                      f"actuators cannot produce this motion; largest unproduced generalised force "
                      f"{rmax:.3g}", ActuationWarning, stacklevel=stacklevel)
    if over:
        warnings.warn(f"{model.name}: over the effort limit: {', '.join(over)}", ActuationWarning, stacklevel=stacklevel)


def _one_joint_actuators(model):
    """True when every transmission drives its joints one by one: the compiled path has one joint (or loop
    joint) per actuator, so a fixed-tendon transmission (``Transmission.coefficients``) takes the reference."""
    return not any(t.coefficients for t in model.transmissions)


class ActuationPlan:
    """Actuator forces (RBDA eq. 8.63) at one state after another — a controller's or a simulator's call —
    with everything that depends only on the model and the actuator set prepared once: the actuators, the
    packed loop rows and the actuator columns of ``constraints._path.actuation_path``, and its work arrays.

    ``forces(q, q̇, q̈)`` equals ``actuator_forces(model, q, q̇, q̈, actuated, weights, rank_rtol=rank_rtol,
    check=check).u`` bit for bit (the same compiled path on the same inputs, URDF damping and springs
    included); it only skips the per-call set-up and the pin loads' bookkeeping. Where the compiled path does
    not apply (``<mimic>``, ``<coupling>``, a universal or damped loop joint), and at a state where it
    defers to the reference's SVD (A not clearly of full rank) or meets a non-finite value, it calls
    ``actuator_forces`` itself, which then also raises its errors. A plan reuses its work arrays: one plan
    per thread (each controller builds its own).

    Args:
        model: the Model. actuated, weights, rank_rtol, check: as ``actuator_forces`` (no ``bounds``, no
            ``f_ext``; no warnings are issued).
    Methods:
        forces(q, qd, qdd) -> u (p,) [N | N m]: q, q̇, q̈ (nv,) one consistent state.
        joint_forces(q, qd, qdd) -> τ = B u (nv,) [N m | N]: the generalised forces the actuators apply
            (tree actuators: u on their joint; actuated loop joints: the column (^{Fp}X_0 (J_s − J_p))ᵀ S).
    Raises StateError for a state of the wrong shape (and, from ``actuator_forces``, a non-finite or —
    with ``check`` — inconsistent one); KeyError for an unknown actuator name; ValueError for a weight ≤ 0."""

    @renamed_keywords(rtol="rank_rtol")
    def __init__(self, model, actuated=None, weights=None, rank_rtol=1e-6, check=True):
        self.model, self.actuated, self.rtol, self.check = model, actuated, float(rank_rtol), bool(check)
        self.acts = actuators_of(model, actuated)
        p, n = len(self.acts), model.nv
        w = np.ones(p) if weights is None else np.broadcast_to(np.asarray(weights, float), (p,))
        if np.any(w <= 0):
            raise ValueError("actuator weights must be > 0")
        self.weights = np.ascontiguousarray(w, float)
        self.compiled = compiled_covers(model) and _one_joint_actuators(model)
        cols = np.array([model.joint_index(a.joint) if a.kind == "joint" else -1 for a in self.acts], np.int64)
        self._tree = np.flatnonzero(cols >= 0)            # actuators on tree joints: τ[col] = u
        self._tree_cols = cols[self._tree]
        self._loop = np.flatnonzero(cols < 0)             # actuated loop joints: τ += B_c u_c
        if not self.compiled:
            return
        from urdf_dyn.constraints import _sample
        static, pref = _path_inputs(model, self.acts)
        nrows, RA = static[8], len(static[6])
        self.limits = _read_only(np.array([a.limit for a in self.acts]))   # shared by every result: read-only
        self._names, self._units = tuple(a.name for a in self.acts), tuple(a.unit for a in self.acts)
        lim_on = (self.limits > 0) & np.isfinite(self.limits)
        self._lim = np.where(lim_on, self.limits * (1 + 1e-9), np.inf)
        self._loop_names = tuple(lp.name for lp in model.loops)
        fw, iw = _sample.actuation_work(n, nrows, RA, p)
        # the model, its loop rows, the passive forces and the settings in two read-only arrays; the workspace
        # with the tree's (E, r), W^-½ and the actuator columns at its end (``_sample.one_pack``)
        mi, mf, self._fw, self._iw = _sample.one_pack(model, static[6], static[7], nrows, static[9],
                                                      1.0 / np.sqrt(self.weights), self._lim,
                                                      np.array([self.rtol, float(self.check), 1e-6]), fw, iw)
        L = len(model.loops)
        self._layout = o = _sample.one_layout(n, p, nrows, L)
        self._ob = ob = np.zeros(o[-1])              # the buffer of ``forces`` and ``_one`` (views below)
        self._x, self._TAU, self._U = ob[o[0]:o[1]].reshape(3, n), ob[o[1]:o[2]].reshape(1, n), ob[o[2]:o[3]]
        self._RES, self._LAM, self._LF = ob[o[3]:o[4]], ob[o[4]:o[5]], ob[o[5]:o[6]].reshape(L, 6)
        self._over, self._out = ob[o[6]:o[7]], ob[o[7]:o[8]]
        self._kinds = {}                           # rank · 2³⁰ + n − r: the single-state results' class
        self._size = o[-1]                         # a result buffer's length
        # actuation_one bound to the packed model and the workspace: a call passes q, q̇, q̈ and a buffer
        _, state, out = _types()
        self._call = _state_entry(_sample.actuation_one, (mi, mf, self._fw, self._iw, pref), (state,) * 3 + (out,))
        if len(self._loop):                               # B's loop columns: rows S_cᵀ ^{Fp}X_0 (J_s − J_p)
            row_loop, row_T = static[6][nrows:], np.ascontiguousarray(static[7][nrows:])
            self._bcols = (static[:6], row_loop, row_T, np.zeros((len(row_loop), n)), np.zeros(len(row_loop)),
                           np.zeros(len(row_loop)), np.zeros(len(row_loop)))

    def _state(self, q, qd, qdd):
        n = self.model.nv
        for name, x in (("q", q), ("qd", qd), ("qdd", qdd)):
            if np.shape(x) != (n,):
                raise StateError(f"{name} must have shape ({n},), one state; got {np.shape(x)}")

    def forces(self, q, qd, qdd):
        """Actuator forces u (p,) [N | N m] at one consistent state (class docstring)."""
        self._state(q, qd, qdd)
        x = None
        if self.compiled:
            try:
                x = np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float)
            except (TypeError, ValueError):    # not numbers: actuator_forces names the argument
                x = None
        if x is not None and self._one(*x):
            return self._U.copy()
        return actuator_forces(self.model, q, qd, qdd, self.actuated, self.weights, rank_rtol=self.rtol,
                               check=self.check, warn=False).u

    def _one(self, q, qd, qdd):
        """The compiled path at one state (float64 ndarrays (nv,), any strides); True when it answered (finite,
        consistent, A clearly of full rank), its results then in ``_U``, ``_RES``, ``_LAM``, ``_LF``, ``_TAU``,
        ``_over``, ``_out``."""
        return self._call(q, qd, qdd, self._ob) >= 0

    def _result_kind(self, rank, dof):
        """The ``OneStateForces`` subclass of this plan's results for this rank of G_u and n − r."""
        return OneStateForces.kind({"names": self._names, "units": self._units, "limits": self.limits,
                                    "_off": self._layout, "_loops": self._loop_names,
                                    "case": _CASES[rank < dof, len(self._names) > rank], "rank_Gu": rank,
                                    "dof": dof, "over_limit": ()})

    def _G(self):
        """G (n × (n − r)) of the last state (a copy)."""
        from urdf_dyn.constraints._sample import explicit_G
        return explicit_G(self._fw, self._iw, self.model.nv).copy()

    def joint_forces(self, q, qd, qdd):
        """τ = B u (nv,) [N m | N]: the actuators' generalised forces at one consistent state."""
        u = self.forces(q, qd, qdd)
        tau = np.zeros(self.model.nv)
        tau[self._tree_cols] = u[self._tree]
        if len(self._loop):
            if self.compiled:
                from urdf_dyn.constraints._kernels import loop_terms
                lp, row_loop, row_T, Bt, k, vJ, dl = self._bcols
                m = self.model
                loop_terms(m.parent, m.jtype, m.axis, m.X_tree, np.ascontiguousarray(q, float), np.zeros(m.nv), *lp,
                           row_loop, row_T, Bt, k, vJ, dl)
                tau += Bt.T @ u[self._loop]
            else:
                tau += actuation_matrix(self.model, q, [self.acts[c] for c in self._loop]) @ u[self._loop]
        return tau


def _reference(model, Q, QD, QDD, acts, w, bounds, rtol, check, fx):
    """The readable path, state by state: K, k, δ, G, g once per state (``_closed_loop_id``), the loop terms
    from the readable Python (``LoopState(compiled=False)``), so that it is independent of the kernels."""
    N, n = Q.shape[0], model.nv
    p = len(acts)
    data = Data(model)
    U, R, TAU, LAM, ranks, dof = np.zeros((N, p)), None, np.zeros((N, n)), np.zeros((N, model.nc)), np.zeros(N, int), None
    for i in range(N):
        st, K, _, tau, ec = _closed_loop_id(model, Q[i], QD[i], QDD[i], check, 1e-6, True,
                                            {k: v[i] for k, v in fx.items()} or None, data, compiled=False)
        G = ec.G if ec is not None else np.eye(n)
        if dof is None:
            dof = G.shape[1]
            R = np.zeros((N, dof))
        elif G.shape[1] != dof:
            raise StateError(f"{model.name}: the rank of the loop constraints changes along the trajectory "
                             f"(sample {i}): the mobility changes (RBDA §8.10); split the motion there")
        B = actuation_matrix(model, Q[i], acts, st)
        A = G.T @ B
        b = G.T @ tau
        u = _solve_one(A, b, w, bounds, rtol) if p else np.zeros(0)
        R[i] = b - A @ u
        if K.size:
            LAM[i] = np.linalg.lstsq(K.T, tau - B @ u, rcond=rtol)[0]
        U[i], TAU[i] = u, tau
        ranks[i] = numerical_rank(A, rtol)[0] if p else 0
    return U, (R if R is not None else np.zeros((0, 0))), TAU, LAM, ranks, (dof or 0)


def _compiled(model, Q, QD, QDD, acts, w, rtol, check, fx):
    """The compiled path (``constraints._path.actuation_path``), every state in one call."""
    from urdf_dyn.algorithms.dynamics import f_ext_body
    from urdf_dyn.constraints import _path
    N, n = Q.shape
    p = len(acts)
    static, pref = _path_inputs(model, acts)
    nrows = static[8]
    tau_a = _read_only(np.ascontiguousarray(np.broadcast_to(passive_forces(model, Q, QD), (N, n))))
    fb = _read_only(np.ascontiguousarray(f_ext_body(model, fx, N))) if fx else model.f_ext_zero
    TAU, U, RES, LAM = np.zeros((N, n)), np.zeros((N, p)), np.zeros((N, n)), np.zeros((N, nrows))
    RANK, info = np.zeros(N, np.int64), np.zeros(3, np.int64)
    GALL, FALL = np.empty((N, n, n)), np.zeros(N, np.int64)   # G is read back only where FALL
    _path.actuation_path(model.parent, model.jtype, model.axis, model.X_tree, *model.kernel_pack, *static, Q, QD,
                         QDD, fb, tau_a, pref, np.ascontiguousarray(w, float), rtol, check,
                         1e-6, TAU, U, RES, LAM, RANK, GALL, FALL, info)
    if info[0] == 1:            # the readable terms explain (the same message as the reference's)
        i = int(info[1])
        st, K, k = constraint_terms(model, Q[i], QD[i], compiled=False)
        _consistency(model, st, QD[i], QDD[i], K, k, 1e-6)
    if info[0] == 3:
        raise StateError(f"{model.name}: the rank of the loop constraints changes along the trajectory "
                         f"(sample {int(info[1])}): the mobility changes (RBDA §8.10); split the motion there")
    if not np.all(np.isfinite(TAU)):
        raise StateError("the inverse dynamics is not finite: the inputs are out of any physical range (overflow)")
    dof = int(info[2])
    for i in np.flatnonzero(FALL):      # A not clearly of full rank here: the reference's SVD decides
        G = GALL[i, :, :dof]
        st, K, _ = constraint_terms(model, Q[i], QD[i])
        B = actuation_matrix(model, Q[i], acts, st)
        A = G.T @ B
        b = G.T @ TAU[i]
        U[i] = _solve_one(A, b, w, None, rtol)
        RES[i, :dof] = b - A @ U[i]
        RANK[i] = numerical_rank(A, rtol)[0]
        if K.size:
            LAM[i] = np.linalg.lstsq(K.T, TAU[i] - B @ U[i], rcond=rtol)[0]
    return U, RES[:, :dof], TAU, LAM, RANK if p else np.zeros(N, int), dof
