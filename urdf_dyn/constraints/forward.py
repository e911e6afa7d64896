"""Closed-loop forward dynamics, explicit constraints and assembly (RBDA §8.3–8.8, §8.11, §8.13).

The spanning tree's equation of motion with loop-closure forces (RBDA eq. 8.34–8.35):

    H q̈ + C = τ + Kᵀ λ,      K q̈ = k (+ k_stab)

``constrained_forward_dynamics`` solves it by five independent methods (results agree to rounding):

- ``"direct"``   — RBDA §8.5 method 1: the (n + n^c) KKT system by a rank-revealing least-squares solver
                   (SVD), so redundant constraints (r < n^c) are handled.
- ``"lambda"``   — method 2 (eqs. 8.36–8.41): H = L Lᵀ (Cholesky), A = K H⁻¹ Kᵀ, λ = A⁺ b with a
                   relative-tolerance pseudo-inverse (eigendecomposition) when r < n^c (``_lambda_solve``,
                   which the simulator's fallback ``qdd_from_terms`` shares).
- ``"nullspace"``— method 3 (eqs. 8.42–8.46): q̈ = G ÿ + g with G, g from K by Gaussian elimination with
                   complete pivoting (§8.8), then GᵀHG ÿ = Gᵀ(τ − C − H g).
- ``"sparse"``   — §8.13: the bodies' Newton–Euler equations in base coordinates with every tree and loop
                   joint's constraint force as unknowns (eq. 8.64), solved by scipy.sparse (SuperLU).
- ``"gauss"``    — Gauss's principle of least constraint: minimise (q̈ − a)ᵀ H (q̈ − a) subject to
                   K q̈ = k, with a = H⁻¹(τ − C): q̈ = a + L⁻ᵀ (K L⁻ᵀ)⁺ (k − K a), H = L Lᵀ (Udwadia–Kalaba;
                   docs/gauss.md on seed 001's erroneous (AB)⁺ = B⁺A⁺; shared with ``urdf_dyn.gauss`` through ``constraints.solve``).

λ has one entry per constraint row: for loop joint k, the wrench T_k λ_k (in Fp coordinates, [n; f] in
N·m and N) acts on the successor, its negative on the predecessor. Where rows are redundant, λ is the
minimum-norm solution (only Kᵀλ is unique).
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from urdf_dyn._checks import as_batch
from urdf_dyn.algorithms.dynamics import bias_force, mass_matrix
from urdf_dyn.algorithms.spatial import crf, crm
from urdf_dyn.constraints.actuators import _OneStateResult, _read_only
from urdf_dyn.constraints.couplings import coupling_rows
from urdf_dyn.constraints.explicit import complete_pivot_lu, explicit_constraint
from urdf_dyn.constraints.loops import ConstraintWarning, compiled_covers, constraint_terms, numerical_rank
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.model import Data, default_data
from urdf_dyn.algorithms import _calls
from urdf_dyn.constraints import _kernels as _LK
from urdf_dyn._checks import renamed_keywords
from urdf_dyn.constraints.solve import gauss_accelerations

__all__ = ["constrained_forward_dynamics", "ConstrainedAccel", "fast_qdd", "qdd_from_terms", "METHODS"]

METHODS = ("direct", "lambda", "nullspace", "sparse", "gauss")


@dataclass
class ConstrainedAccel:
    """Result of closed-loop forward dynamics at one state.

    qdd (nv,): joint accelerations; lam (n^c,): constraint-force multipliers; loop_forces: {loop name:
    wrench (6,) [n; f] on the successor in Fp coordinates, N·m and N}; rank: r of K; residual: ‖K q̈ − k‖;
    method: the method used."""
    qdd: np.ndarray
    lam: np.ndarray
    loop_forces: dict
    rank: int
    residual: float
    method: str
    diagnostics: dict = field(default_factory=dict)



def _loop_forces(model, lam):
    out, i = {}, 0
    for lp in model.loops:
        out[lp.name] = np.asarray(lp.T) @ lam[i:i + lp.nc]
        i += lp.nc
    for label in coupling_rows(model).labels:  # <mimic> and <coupling> rows
        out[label] = lam[i:i + 1]
        i += 1
    return out


def _sparse_method(model, st, tau, K, k, rtol, f_ext_body=None):
    """RBDA §8.13, eq. 8.64, in base coordinates: [I PT; (PT)ᵀ 0] [a; −λ] = [rhs; c]. A joint's armature
    (``Model.armature``) takes armature_j q̈_j from the force its joint passes on; with the force direction
    d_j = S_j at body j, −S_j at its parent (base coordinates, Sᵀ S = 1), q̈_j = d_jᵀ a − S_jᵀ (v_j × S_j q̇_j),
    so the I block gets armature_j d_j d_jᵀ and rhs armature_j (S_jᵀ (v_j × S_j q̇_j)) d_j."""
    NB, nv = model.NB, model.nv
    a_g = model.a_grav
    blocks_I, rhs = [], []
    for i in range(1, NB + 1):
        Xi = st.X0[i]
        I0 = Xi.T @ np.asarray(model.I[i]) @ Xi  # body inertia in base coordinates
        v = st.v0[i]
        blocks_I.append(I0)
        rhs.append(-crf(v) @ I0 @ v + I0 @ a_g)
    rhs = np.concatenate(rhs)
    cols, c = [], []  # constraint columns of PT (6NB,) and right-hand sides
    arm = np.asarray(model.armature, float)
    D = np.zeros((6 * NB, NB))  # the joints' force directions d_j (armature terms)
    # tree joints: 5 constraint directions each (T_j ⟂ S_j in body coordinates), and the active force τ S
    for j in range(1, NB + 1):
        Sb = st.S[j]
        Tb = np.linalg.svd(Sb[None, :])[2][1:].T  # 6×5 orthonormal complement of S_j
        T0 = st.X0[j].T @ Tb                      # force transform body -> base
        Sa = st.X0[j].T @ Sb                      # active force direction (Tᵃ = S for unit axes)
        par = model.parent[j]
        rhs[6 * (j - 1):6 * j] += Sa * tau[j - 1]
        D[6 * (j - 1):6 * j, j - 1] = Sa
        if par > 0:
            rhs[6 * (par - 1):6 * par] -= Sa * tau[j - 1]
            D[6 * (par - 1):6 * par, j - 1] = -Sa
        vj, vp = st.v0[j], st.v0[par]
        if arm[j - 1]:
            rhs += arm[j - 1] * (Sa @ crm(vj) @ (st.S0[j] * st.qd[j - 1])) * D[:, j - 1]
        Tdot = crf(vj) @ T0                       # T fixed in body j
        for col in range(5):
            vec = np.zeros(6 * NB)
            vec[6 * (j - 1):6 * j] = T0[:, col]
            if par > 0:
                vec[6 * (par - 1):6 * par] = -T0[:, col]
            cols.append(vec)
            c.append(-Tdot[:, col] @ (vj - vp))
    # loop joints: the independent rows of K (redundant ones dropped by complete pivoting); the row's
    # constraint force direction in base coordinates is d = Xᵀ T. Its right side is k without the
    # velocity-product term that K q̈ = k moved there: dᵀ(a_s − a_p) = k + dᵀ(a^vp_s − a^vp_p).
    r, _, _, prow = complete_pivot_lu(K, rtol)
    nl = sum(lp.nc for lp in model.loops)
    row_dirs = []
    for lp in model.loops:
        XFp, _ = st.loop_frames(lp)
        T, _ = st.T_of(lp)
        for col in range(lp.nc):
            row_dirs.append((lp, XFp.T @ T[:, col]))
    mimic_rows = []
    for ri in sorted(prow):
        if ri < nl:
            lp, d0 = row_dirs[ri]
            vec = np.zeros(6 * NB)
            if lp.s > 0:
                vec[6 * (lp.s - 1):6 * lp.s] += d0
            if lp.p > 0:
                vec[6 * (lp.p - 1):6 * lp.p] -= d0
            cols.append(vec)
            c.append(k[ri] + d0 @ (st.avp0[lp.s] - st.avp0[lp.p]))
        else:
            mimic_rows.append(ri)
    if mimic_rows:
        raise NotImplementedError("the sparse method does not handle <mimic>/<coupling> rows; use another method")
    PT = np.array(cols).T
    nc_all = PT.shape[1]
    A_I = sp.block_diag(blocks_I) + sp.csr_matrix((D * arm) @ D.T)
    A = sp.bmat([[A_I, sp.csr_matrix(PT)], [sp.csr_matrix(PT.T), None]], format="csc")
    sol = spla.spsolve(A, np.concatenate([rhs, c]))
    a = sol[:6 * NB].reshape(NB, 6)
    lam_tree_loop = -sol[6 * NB:]
    qdd = np.zeros(nv)
    for j in range(1, NB + 1):
        par = model.parent[j]
        S0 = st.S0[j]
        arel = a[j - 1] - (a[par - 1] if par > 0 else 0.0) - crm(st.v0[j]) @ (S0 * st.qd[j - 1])
        qdd[j - 1] = S0 @ arel / (S0 @ S0)
    lam = np.zeros(K.shape[0])
    lam[np.sort(prow)] = lam_tree_loop[5 * NB:]
    return qdd, lam, nc_all


_F8 = np.dtype(np.float64)
_ND = np.ndarray
_UNMADE = object()


class _Default(float):
    """A keyword's default value that a function tells apart from the same value given (``is``): how
    ``constrained_forward_dynamics`` and ``inverse.actuator_forces`` know that a former keyword and its new
    name were both given, without ``_checks.renamed_keywords``' wrapper (≈ 0.4 µs a call). Prints as the float."""
    __slots__ = ()
    __repr__ = float.__repr__


#: the default rank tolerance (1e-6) of the single-state functions that take ``rank_rtol`` or its former ``rtol``
_RTOL = _Default(1e-6)


def _former_rtol(name, former, rank_rtol):
    """``rank_rtol`` for a call that gave keywords outside the signature (``former``): ``rtol=`` is the former
    name of ``rank_rtol`` (a FutureWarning names both, as ``_checks.renamed_keywords``); giving both, or any
    other unknown keyword, is a TypeError."""
    for k in former:
        if k != "rtol":
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
    if rank_rtol is not _RTOL:
        raise TypeError(f"{name}() got both rtol= and its new name rank_rtol=")
    warnings.warn(f"{name}(): the keyword rtol= is now rank_rtol=", FutureWarning, stacklevel=3)
    return former["rtol"]


def _public_signature(fn):
    """``fn`` with the signature its documentation gives: without the ``**former`` catch-all."""
    import inspect
    sig = inspect.signature(fn)
    fn.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD])
    return fn


def _state_entry(kernel, args, tail):
    """The compiled entry point of a single-state kernel (``constraints._sample``) whose first arguments are
    ``args`` (prepared once) and whose others have the numba types ``tail`` (``_STATE`` for a state vector:
    float64 (n,), any strides, layout 'A', so a row or a column of a caller's array passes as it is; ``_OUT``
    for a result buffer). Bound to ``args`` (``functools.partial``): a call passes the state and the buffer.
    The caller must pass arrays of these types (the entry point trusts its arguments,
    ``algorithms._calls.entry_point``)."""
    from numba import typeof
    sig = tuple(typeof(a) for a in args) + tuple(tail)
    f = kernel.overloads.get(sig)
    if f is None:
        kernel.compile(sig)
        f = kernel.overloads[sig]
    return functools.partial(f.entry_point, *args)


def _types():
    from numba import types
    return types, types.Array(types.float64, 1, "A"), types.Array(types.float64, 1, "C")


class _ForwardWork:
    """What ``constraints._sample.forward_one`` needs besides the state, prepared once per ``Data``: the packed
    model, its workspace (which keeps the independent set of RBDA §8.8 between calls), the result buffer
    and the compiled entry point bound to them."""

    def __init__(self, model):
        from urdf_dyn.constraints import _sample
        pack = model.loop_pack
        n, R, L = model.nv, len(pack["row_loop"]), len(model.loops)
        pref = np.zeros(n, np.bool_)
        pref[[model.joint_index(j) for j in model.independent]] = True
        fw, iw = _sample.actuation_work(n, R, R, 0)
        none = np.zeros(0)
        mi, mf, fw, iw = _sample.one_pack(model, pack["row_loop"], pack["row_T"], R, np.zeros(0, np.int64), none,
                                          none, none, fw, iw)
        self.off = o = _sample.forward_layout(n, R, L)
        self.size, self.res_at = o[-1], o[4] + 2  # a result buffer's length; ‖K q̈ − k‖ in it
        self.n = n
        self.loops = tuple(lp.name for lp in model.loops)
        self.iw, self.free_at, self.names = iw, int(iw[_sample._NF + 1 + _sample._FREE]), model.joint_names
        self.chosen, self.independent = -1, ()   # the set's names, re-read when the kernel chose it anew
        self.kinds = {}                          # r: the results' class, for the set in use
        t, state, out = _types()
        self.call = _state_entry(_sample.forward_one, (mi, mf, fw, iw, pref),
                                 (state, state, state, t.float64, t.float64, t.boolean, out))

    def result(self, code, buf):
        """The ``OneStateAccel`` of the state the kernel just solved into ``buf`` (its code ≥ 0: r and the
        times the set was chosen, ``_sample.forward_one``)."""
        r, chosen = code & 0xFFFFF, code >> 20
        if chosen != self.chosen:                # the set was chosen anew: its names, new classes
            self.chosen, self.kinds = chosen, {}
            a = self.free_at
            self.independent = tuple(self.names[j] for j in self.iw[a:a + self.n - r])
        kind = self.kinds.get(r)
        if kind is None:                         # the results' class for this rank and independent set
            kind = self.kinds[r] = OneStateAccel.kind(
                {"rank": r, "method": "nullspace", "_independent": self.independent, "_off": self.off,
                 "_loops": self.loops})
        obj = object.__new__(kind)
        obj._buf = buf
        obj.residual = buf.item(self.res_at)
        return obj


class OneStateAccel(_OneStateResult, ConstrainedAccel):
    """``ConstrainedAccel`` from the compiled single-state path: qdd, lam and the loop forces are views of the
    buffer the kernel wrote (the result's own), made on first access, and the fields that one state does not change
    (rank, method, the independent set) are attributes of a subclass made once per rank and set (``kind``), so
    that a call makes one array and one object. Behaves as its base class in every other way (fields, repr,
    ``dataclasses.replace``); pickles and copies as a ``ConstrainedAccel``. ``_off``: the buffer's parts
    (``_sample.forward_layout``); ``_loops``: the loop names; ``_independent``: the independent coordinates'
    names."""
    _base = ConstrainedAccel

    @functools.cached_property
    def qdd(self):
        o = self._off
        return self._buf[o[1]:o[2]]

    @functools.cached_property
    def lam(self):
        o = self._off
        return self._buf[o[2]:o[3]]

    @functools.cached_property
    def loop_forces(self):
        o = self._off
        LF = self._buf[o[3]:o[4]].reshape(-1, 6)
        return {nm: LF[i] for i, nm in enumerate(self._loops)}

    @functools.cached_property
    def diagnostics(self):
        return {"independent": self._independent}


#: "no such passive force", read-only like the Model's arrays (one compiled variant)
_RO_NONE = _read_only(np.zeros(0))


def constrained_forward_dynamics(model, q, qd, tau, loop_solver="nullspace", t_stab=None, rank_rtol=_RTOL,
                                 passive=True, data=None, **former) -> ConstrainedAccel:
    """Closed-loop forward dynamics at one state (RBDA §8.3–8.5, §8.13).

    Args:
        q, qd, tau: (nq,), (nv,), (nv,) spanning-tree joint positions [rad | m], velocities and forces
            [N m | N] (nq = nv + 1 per floating joint, ``urdf_dyn.model``).
        loop_solver: one of ``METHODS`` (module docstring).
        t_stab: Baumgarte time constant [s] (RBDA §8.3); None for the exact constraint K q̈ = k.
        rank_rtol: relative tolerance for ranks and pseudo-inverses (overconstrained loops); ``rtol=`` is its
            former name (a FutureWarning).
        passive: add the passive joint forces (``passive_forces``: URDF damping, Gazebo springs, loop-joint
            damping) to τ; the same switch and default (True) as ``simulate`` and ``actuator_forces``.
        data: a ``urdf_dyn.Data`` of ``model`` whose workspace the call reuses (default: the Model's per-thread
            one, ``urdf_dyn.model.default_data``). With the default method, one plain state (float64 ndarrays) of a
            model the compiled path covers (loops without ``<mimic>``, ``<coupling>``, universal or damped
            loop joints, fixed base) runs ``constraints._sample.forward_one``, which tests hold to this
            function's readable path. The Data keeps the independent set of RBDA §8.8 between calls and
            re-checks it at each one (q̈, λ and the rank do not depend on the set; ``diagnostics["independent"]``
            names the set used); the compiled path answers only where the rank of K is certain, away from a
            change of mobility (``_sample._certified``); elsewhere, or where the loops are inconsistent, the
            readable path answers (and warns). The result is then a ``OneStateAccel``, whose arrays view the
            buffer the kernel wrote.

    Returns a ConstrainedAccel. Raises StateError for bad arrays, ValueError for an unknown method. Warns
    (ConstraintWarning) if the constraints are inconsistent (‖K q̈ − k‖ large: e.g. a locked mechanism).
    """
    if former:
        rank_rtol = _former_rtol("constrained_forward_dynamics", former, rank_rtol)
    if (loop_solver == "nullspace" and q.__class__ is _ND and qd.__class__ is _ND and tau.__class__ is _ND
            and q.dtype is _F8 and qd.dtype is _F8 and tau.dtype is _F8 and q.ndim == 1 and qd.ndim == 1
            and tau.ndim == 1):                                         # the lengths: the kernel's status 2
        if data is None:
            data = default_data(model)
        w = data.workspaces.get("forward", _UNMADE)
        if w is _UNMADE:
            w = data.workspace("forward", lambda: _ForwardWork(model) if model.loops and compiled_covers(model) else None)
        if w is not None:
            alpha = 0.0 if t_stab is None else 1.0 / t_stab if t_stab > 0 else None
            if alpha is not None:
                buf = np.empty(w.size)           # the result's own buffer
                code = w.call(q, qd, tau, alpha, 1e-6 if rank_rtol is _RTOL else float(rank_rtol),
                              passive is True or bool(passive), buf)
                if code >= 0:
                    return w.result(code, buf)
    from urdf_dyn._checks import one_state
    one_state("constrained_forward_dynamics", q=q, qd=qd, tau=tau)
    n = model.nv
    q = as_batch(q, "q", model.nq)[0][0]
    qd = as_batch(qd, "qd", n)[0][0]
    tau = as_batch(tau, "tau", n)[0][0]
    if loop_solver not in METHODS:
        raise ValueError(f"unknown loop_solver {loop_solver!r}; use one of {', '.join(METHODS)}")
    method = loop_solver
    if passive:
        tau = tau + passive_forces(model, q, qd)
    st, K, k = constraint_terms(model, q, qd, t_stab)
    H = mass_matrix(model, q)
    C = bias_force(model, q, qd)
    rhs = tau - C
    r, sv, tol = numerical_rank(K, rank_rtol)
    if sv.size and np.any((sv > tol) & (sv < 1e3 * tol)):
        warnings.warn(f"{model.name}: loop constraints near-singular here (smallest kept singular value "
                      f"{sv[sv > tol][-1]:.3g}, tolerance {tol:.3g}): near a change of mobility (RBDA §8.10); "
                      "the minimum-norm answer is returned", ConstraintWarning, stacklevel=2)
    diag = {}
    if method == "direct":
        nc = K.shape[0]
        A = np.block([[H, K.T], [K, np.zeros((nc, nc))]])
        x = sla.lstsq(A, np.r_[rhs, k], cond=rank_rtol * 1e-3)[0]
        qdd, lam = x[:n], -x[n:]
    elif method == "lambda":
        qdd, lam = _lambda_solve(H, rhs, K, k, rank_rtol)
    elif method == "nullspace":
        ec = explicit_constraint(model, q, qd, rank_rtol=rank_rtol, K=K, k=k)
        G, g = ec.G, ec.g
        ydd = np.linalg.solve(G.T @ H @ G, G.T @ (rhs - H @ g))
        qdd = G @ ydd + g
        lam = np.linalg.lstsq(K.T, H @ qdd - rhs, rcond=rank_rtol)[0] if K.size else np.zeros(0)
        diag["independent"] = ec.independent
    elif method == "gauss":
        qdd = gauss_accelerations(H, rhs, K, k, rank_rtol)[0]   # Udwadia–Kalaba, shared with urdf_dyn.gauss
        lam = np.linalg.lstsq(K.T, H @ qdd - rhs, rcond=rank_rtol)[0] if K.size else np.zeros(0)
    else:  # sparse
        qdd, lam, nall = _sparse_method(model, st, tau, K, k, rank_rtol)
        diag["sparse_system_size"] = 6 * model.NB + nall
    res = float(np.linalg.norm(K @ qdd - k)) if K.size else 0.0
    scale = max(1.0, float(np.linalg.norm(k)), float(np.linalg.norm(K, ord=np.inf) * np.linalg.norm(qdd)))
    if res > 1e-6 * scale:
        warnings.warn(f"{model.name}: loop constraints inconsistent at this state (‖K q̈ − k‖ = {res:.3g}); "
                      "the least-squares answer is returned", ConstraintWarning, stacklevel=2)
    return ConstrainedAccel(qdd, lam, _loop_forces(model, lam), r, res, method, diag)


_public_signature(constrained_forward_dynamics)


@renamed_keywords(rtol="rank_rtol")
def fast_qdd(model, q, qd, tau, t_stab=None, rank_rtol=1e-6, passive=True, data=None):
    """q̈ only, for the simulator's inner loop: RBDA §8.5 method 2 without the public function's argument
    checks, rank diagnostics and λ bookkeeping (q, q̇, τ must be valid float64 (nv,) arrays). Computes
    H (CRBA) and C (RNEA) with the kernels, K, k with the compiled loop kernel, H = L Lᵀ (Cholesky),
    A = K H⁻¹ Kᵀ and λ = A⁺ b by a symmetric eigendecomposition with the same relative tolerance as
    ``constrained_forward_dynamics(loop_solver="lambda")``, which the tests compare it with. ``data``: a
    ``urdf_dyn.Data`` of ``model`` reused along a motion (it remembers the independent loop rows, which
    lets the compiled path ``constraints._kernels.cl_qdd`` run from the second call on; it adds the tree
    joints' passive forces itself, so only models with damped loop joints pay for ``passive_forces``)."""
    data = Data(model) if data is None else data
    rows = data.loop_rows
    pack = model.loop_pack
    if rows is not None and compiled_covers(model, passive=passive):   # damped loop joints: passive_forces
        b = ks = qr = _NONE
        if passive:
            b = model.damping
            if model.spring_stiffness is not None:
                ks, qr = model.spring_stiffness, model.spring_reference
        qdd = np.empty(q.shape[0])
        if _LK.cl_qdd(model.parent, model.jtype, model.axis, model.X_tree, *model.kernel_pack, q, qd, tau, b,
                      ks, qr, *pack["args"], rows, 0.0 if t_stab is None else 1.0 / t_stab, rank_rtol, qdd) == 0:
            return qdd
    if passive:
        tau = tau + passive_forces(model, q, qd)
    _, K, k = constraint_terms(model, q, qd, t_stab)
    return qdd_from_terms(model, q, qd, tau, K, k, rank_rtol, data)


#: "no such passive force" for ``cl_qdd``
_NONE = np.zeros(0)


def qdd_from_terms(model, q, qd, tau, K, k, rank_rtol=1e-6, data=None):
    """q̈ from H q̈ + C = τ + Kᵀλ, K q̈ = k for given K, k (RBDA §8.5 method 2, ``_lambda_solve``). τ already
    holds every applied force. ``data`` (a ``urdf_dyn.Data``) keeps the independent row set between calls."""
    n = model.nv
    q2, qd2 = np.ascontiguousarray(q, float).reshape(1, model.nq), np.ascontiguousarray(qd, float).reshape(1, n)
    H = _calls.crba(*model.kernel_pack, q2)
    C = _calls.rnea(*model.kernel_pack, q2, qd2, np.zeros((1, n)), np.zeros((0, model.NB + 1, 6)))
    return _lambda_solve(H[0], tau - C[0], K, k, rank_rtol, data)[0]


def _lambda_solve(H, rhs, K, k, rtol=1e-6, data=None):
    """RBDA §8.5 method 2 (eqs. 8.36–8.41), the one readable version (the compiled one is
    ``constraints._kernels.cl_qdd``): H = L Lᵀ (Cholesky), A = K H⁻¹ Kᵀ, λ = A⁺ (k − K H⁻¹ rhs) by a
    symmetric eigendecomposition with relative tolerance ``rtol``, q̈ = H⁻¹(rhs + Kᵀλ). Returns (q̈, λ).

    With ``data`` holding an independent row set (complete pivoting, §8.8), λ is solved on those rows
    only (A_r positive definite, Cholesky) and returned as None; if the dropped rows are then not
    satisfied (near a singular pose the subset may no longer span), the pseudo-inverse path runs and
    ``data`` gets the set chosen anew."""
    L = np.linalg.cholesky(H)
    X = sla.cho_solve((L, True), np.column_stack([rhs, K.T]), check_finite=False)
    a0, HinvKT = X[:, 0], X[:, 1:]
    if data is not None and data.loop_rows is not None and K.shape[0]:
        rows = data.loop_rows
        A = K[rows] @ HinvKT[:, rows]
        try:
            La = np.linalg.cholesky(A)
            d = np.diag(La)
            if d.size and d.min() > np.sqrt(rtol) * d.max():
                lam = sla.cho_solve((La, True), k[rows] - K[rows] @ a0, check_finite=False)
                qdd = a0 + HinvKT[:, rows] @ lam
                if np.linalg.norm(K @ qdd - k) <= 1e-7 * (np.linalg.norm(k) + np.linalg.norm(K) * np.linalg.norm(qdd)):
                    return qdd, None
        except np.linalg.LinAlgError:
            pass
    A = K @ HinvKT
    w, V = np.linalg.eigh(A)
    keep = w > rtol * max(w[-1], 0.0) if w.size else w > 0
    lam = V[:, keep] @ ((V[:, keep].T @ (k - K @ a0)) / w[keep])
    if data is not None:
        data.loop_rows = np.sort(complete_pivot_lu(K, rtol)[3]).astype(np.int64)
    return a0 + HinvKT @ lam, lam
