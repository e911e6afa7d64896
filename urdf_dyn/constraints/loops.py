"""Loop-closure constraints of a spanning tree with loop joints (RBDA §8.1–8.3, §8.10).

For loop joint k with predecessor p and successor s, and its constraint-force subspace T_k (fixed in the
loop frame Fp), the velocity constraint is T_kᵀ ^{Fp}X_0 (v_s − v_p) = 0 (RBDA eq. 8.9). With
v_i = J_i q̇ and a_i = J_i q̈ + a_i^vp this gives the acceleration constraint K q̈ = k (eqs. 8.14–8.17):

    K_k = T_kᵀ ^{Fp}X_0 (J_s − J_p)
    k_k = −T_kᵀ ^{Fp}X_0 [(a^vp_s − a^vp_p) − v_p × (v_s − v_p)]      (Ṫ_k = v_p ×* T_k, eq. 8.15)

Baumgarte stabilisation (eq. 8.21–8.22, α = β = 1/T_stab):  k_stab = −2α Tᵀ v_J − β² δ, with the
position error δ_k = T_kᵀ d_k measured from the pose of Fs relative to Fp (eqs. 8.23–8.24): rotational
rows use a × (R a) for joints that rotate about a (exact to first order at any joint angle) and the
rotation vector of R otherwise; translational rows use the position of Fs's origin in Fp.

``<mimic>`` (q_f = m q_l + o) and URDF+ ``<coupling>`` rows are constant rows of the same system (RBDA eq.
3.11), from ``constraints/couplings.py`` (a mimic with polynomial terms is the one row whose A and k depend on
the state).

All quantities of a state are computed by one ``LoopState`` so that K, k and δ agree. Units: rows of K
and k for rotational constraints are in rad/s², translational ones in m/s²; δ in rad and m.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.configuration import joint_positions

from urdf_dyn.algorithms import _kernels as _K
from urdf_dyn.constraints import _kernels as _LK
from urdf_dyn.constraints.solve import baumgarte
from urdf_dyn.constraints.couplings import coupling_rows
from urdf_dyn.algorithms.spatial import crm, inv_plux
from urdf_dyn._checks import renamed_keywords

__all__ = ["LoopState", "compiled_covers", "constraint_terms", "loop_constraints",
           "loop_residuals", "loop_jacobian", "mobility", "Mobility",
           "numerical_rank", "ConstraintWarning"]


def compiled_covers(model, passive=True) -> bool:
    """True when the compiled closed-loop paths cover ``model`` — the one rule that ``constrained_forward_dynamics``,
    ``fast_qdd``, ``actuator_forces`` and ``consistent_motion`` ask before they leave the readable reference:

    - a fixed base (q̇ = v: the compiled paths index q by v);
    - no ``<mimic>`` and no URDF+ ``<coupling>`` (their rows are not in the compiled loop terms, which hold
      the loop joints' rows only, ``Model.loop_pack``);
    - no universal loop joint (its T depends on the configuration: ``Model.loop_pack`` is None);
    - with ``passive`` (the dynamics), no damped loop joint (its passive force needs the loop Jacobian, which
      ``constraints.passive.passive_forces`` forms in Python); a motion (``consistent_motion``: kinematics
      only) passes ``passive=False``.

    A model without loops is covered when it meets the rest (a tree: the compiled paths then hold no rows)."""
    return (model.is_fixed_base and not model.mimic and not model.couplings and model.loop_pack is not None
            and not (passive and model.has_damped_loops))


class ConstraintWarning(UserWarning):
    """The loop constraints are near-singular, or their rank changed (variable mobility, RBDA §8.10)."""


def _log_so3(R):
    """Rotation vector (3,) of a rotation matrix."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if th < 1e-8:
        return 0.5 * w
    if np.pi - th < 1e-6:  # near π: axis from the symmetric part
        B = (R + np.eye(3)) / 2.0
        ax = B[:, np.argmax(np.diag(B))]
        ax = ax / np.linalg.norm(ax)
        return th * ax
    return th / (2.0 * np.sin(th)) * w


def _pose(X):
    """(R, p) of the frame B in frame A from the Plücker transform ^B X_A."""
    E = X[:3, :3]
    rx = -E.T @ X[3:, :3]  # = skew(p)
    return E.T, np.array([rx[2, 1], rx[0, 2], rx[1, 0]])


class LoopState:
    """Everything the loop algorithms need at one state (q, q̇): body transforms, velocities, a^vp,
    Jacobians, and per loop the transform ^{Fp}X_0 and the relative pose of Fs in Fp.

    ``compiled`` (default True): K, k, Tᵀv_J and δ come from the compiled kernel ``_kernels.loop_terms``
    where it applies (every loop type but universal). With ``compiled=False`` they come from the readable
    Python below (``K_k``, ``delta``) on every model: the independent reference that the tests hold the
    kernel to (tests/constraints/test_loop_reference.py)."""

    def __init__(self, model, q, qd=None, compiled=True):
        self.model = model
        self.q = np.ascontiguousarray(q, float)
        self.qd = np.zeros(model.NB) if qd is None else np.ascontiguousarray(qd, float)
        self._tree_done = False
        self._kk = None if compiled else False

    def __getattr__(self, name):
        # the per-body arrays (X0, v, avp, S, X0inv, v0, avp0, S0) are computed on first use only: the
        # compiled loop kernel does not need them
        if name in ("X0", "v", "avp", "S", "X0inv", "v0", "avp0", "S0") and not self.__dict__.get("_tree_done"):
            self._tree()
            return self.__dict__[name]
        raise AttributeError(name)

    def _tree(self):
        model = self.model
        NB = model.NB
        self._tree_done = True
        self.X0 = np.zeros((NB + 1, 6, 6))
        self.v = np.zeros((NB + 1, 6))
        self.avp = np.zeros((NB + 1, 6))
        self.S = np.zeros((NB + 1, 6))
        _K.tree_motion(model.parent, model.jtype, model.axis, model.X_tree, self.q, self.qd, self.X0, self.v,
                       self.avp, self.S)
        self.X0inv = np.array([inv_plux(X) for X in self.X0])
        self.v0 = np.einsum("bij,bj->bi", self.X0inv, self.v)       # base coordinates
        self.avp0 = np.einsum("bij,bj->bi", self.X0inv, self.avp)
        self.S0 = np.einsum("bij,bj->bi", self.X0inv, self.S)       # column j-1 of J for body j

    def support(self, i):
        out = []
        while i > 0:
            out.append(i)
            i = self.model.parent[i]
        return out

    def body_jacobian(self, i):
        """J_i (6×nv) in base coordinates: v_i = J_i q̇ (RBDA eq. 8.11–8.12)."""
        J = np.zeros((6, self.model.nv))
        for j in self.support(i):
            J[:, j - 1] = self.S0[j]
        return J

    def loop_frames(self, lp):
        """^{Fp}X_0 and ^{Fs}X_0 of loop joint ``lp``."""
        return lp.X_P @ self.X0[lp.p], lp.X_S @ self.X0[lp.s]

    def T_of(self, lp):
        """T_k (6×n^c) in Fp coordinates at this state (configuration-dependent only for universal joints)
        and, for universal joints, the extra term of k from the rotation of the second axis."""
        if lp.type != "universal":
            return np.asarray(lp.T), None
        XFp, XFs = self.loop_frames(lp)
        R = _pose(XFs @ inv_plux(XFp))[0]  # rotation of Fs in Fp
        b = R @ lp.axis2
        T = np.asarray(lp.T).copy()
        n = np.cross(b, lp.axis)
        T[:3, 0] = n  # not normalised: then δ = a·b and K stay exact derivatives (|n| = 1 when assembled)
        return T, b

    def _compiled(self):
        """K, k, Tᵀv_J and δ of every loop row from the compiled kernel (all loop types but universal),
        computed once per state; None when the model has a universal loop or the state was made with
        ``compiled=False``."""
        if self._kk is None:
            pack = self.model.loop_pack
            if pack is None:
                self._kk = False
            else:
                R = len(pack["row_loop"])
                K, k, vJ, dl = np.zeros((R, self.model.nv)), np.zeros(R), np.zeros(R), np.zeros(R)
                _LK.loop_terms(self.model.parent, self.model.jtype, self.model.axis, self.model.X_tree, self.q,
                               self.qd, *pack["args"], K, k, vJ, dl)
                self._kk = (K, k, vJ, dl)
        return self._kk or None

    def K_k(self):
        """(K (n^c×nv), k (n^c,), v_J rows Tᵀ v_J (n^c,), row labels)."""
        m = self.model
        fast = self._compiled()
        if fast is not None and not (m.mimic or m.couplings):
            return fast[0], fast[1], fast[2], m.loop_pack["labels"]
        Ks, ks, vs, labels = [], [], [], []
        for lp in m.loops:
            XFp, _ = self.loop_frames(lp)
            T, b = self.T_of(lp)
            J = self.body_jacobian(lp.s) - self.body_jacobian(lp.p)
            TX = T.T @ XFp
            dv = self.v0[lp.s] - self.v0[lp.p]
            kk = -TX @ ((self.avp0[lp.s] - self.avp0[lp.p]) - crm(self.v0[lp.p]) @ dv)
            if b is not None:  # universal: d/dt of the configuration-dependent row (module docstring)
                w = (XFp @ dv)[:3]
                kk[0] -= np.cross(np.cross(w, b), lp.axis) @ w
            Ks.append(TX @ J)
            ks.append(kk)
            vs.append(TX @ dv)
            labels += [f"{lp.name}[{i}]" for i in range(lp.nc)]
        # <mimic> and URDF+ <coupling> rows A q = b (constraints/couplings.py; a polynomial mimic's A and k
        # depend on the state)
        cr = coupling_rows(m, joint_positions(m, self.q), self.qd)
        if len(cr):
            Ks.append(cr.A)
            ks.append(cr.k)
            vs.append(cr.A @ self.qd)
            labels += list(cr.labels)
        if not Ks:
            return np.zeros((0, m.nv)), np.zeros(0), np.zeros(0), []
        return np.vstack(Ks), np.concatenate(ks), np.concatenate(vs), labels

    def delta(self, lp):
        """Position error δ_k (n^c,) of loop joint ``lp``: Tᵀ d (RBDA eq. 8.23)."""
        XFp, XFs = self.loop_frames(lp)
        R, p = _pose(XFs @ inv_plux(XFp))  # pose of Fs in Fp
        T, b = self.T_of(lp)
        a = lp.axis
        if lp.type in ("revolute", "continuous", "cylindrical", "planar"):
            rot = np.cross(a, R @ a)
        elif lp.type == "universal":
            rot = np.zeros(3)
            rot_u = float(a @ b)
        else:
            rot = _log_so3(R)
        d = np.r_[rot, p]
        out = T.T @ d
        if lp.type == "universal":
            out[0] = rot_u
        return out

    def loop_deltas(self):
        """[δ_k (n^c,) of each loop joint, in ``model.loops`` order] (RBDA eq. 8.23), from the compiled kernel
        where it applies (``_compiled``: the rows are packed loop by loop), else from ``delta``."""
        fast = self._compiled()
        if fast is None:
            return [self.delta(lp) for lp in self.model.loops]
        return np.split(fast[3], np.cumsum([lp.nc for lp in self.model.loops])[:-1])

    def deltas(self):
        """δ for all loops (concatenated), then the mimic and coupling rows A q − b (q of the 1-dof joints)."""
        m = self.model
        fast = self._compiled()
        out = [fast[3]] if fast is not None else [self.delta(lp) for lp in m.loops]
        cr = coupling_rows(m, joint_positions(m, self.q))
        if len(cr):
            out.append(cr.delta)
        return np.concatenate(out) if out else np.zeros(0)


def constraint_terms(model, q, qd, t_stab=None, compiled=True):
    """(LoopState, K, k) at (q, q̇): K q̈ = k (RBDA eqs. 8.14–8.17), with Baumgarte's
    k_stab = −2α Tᵀ v_J − β² δ, α = β = 1/t_stab added when ``t_stab`` [s] is given (eqs. 8.21–8.22).
    ``compiled``: as in ``LoopState`` (False: the readable Python reference on every model)."""
    from urdf_dyn._checks import one_state
    one_state("loop_constraints", q=q, qd=qd)
    st = LoopState(model, q, qd, compiled=compiled)
    K, k, vJ, _ = st.K_k()
    if t_stab is not None:
        k = baumgarte(k, vJ, st.deltas(), t_stab)
    return st, K, k


def loop_constraints(model, q, qd, t_stab=None, compiled=True):
    """K (n^c × nv) and k (n^c,) of the acceleration constraint K q̈ = k (RBDA eqs. 8.14–8.17); with
    ``t_stab`` [s], k includes Baumgarte's k_stab = −2α Tᵀ v_J − β² δ, α = β = 1/t_stab (eqs. 8.21–8.22).
    Rows: n^c_k per loop joint in model order, then one per ``<mimic>``, then one per ``<coupling>``.
    ``compiled``: as in ``LoopState``."""
    return constraint_terms(model, q, qd, t_stab, compiled=compiled)[1:]


def loop_jacobian(model, q, loop: str):
    """Loop Jacobian J_s − J_p (6 × nv) of loop joint ``loop`` in Fp coordinates: maps q̇ to the velocity
    across the loop joint (RBDA eq. 8.18)."""
    st = LoopState(model, q)
    lp = _find(model, loop)
    XFp, _ = st.loop_frames(lp)
    return XFp @ (st.body_jacobian(lp.s) - st.body_jacobian(lp.p))


def _find(model, name):
    for lp in model.loops:
        if lp.name == name:
            return lp
    raise KeyError(f"no loop named {name!r}; loops are: {', '.join(lp.name for lp in model.loops)}")


def loop_residuals(model, q) -> dict:
    """{loop name: δ_k} position errors (rad, m) per loop joint (and ``mimic:<joint>`` per mimic,
    ``coupling:<name>`` per coupling)."""
    from urdf_dyn._checks import one_state
    one_state("loop_residuals", q=q)
    st = LoopState(model, q)
    out = {lp.name: st.delta(lp) for lp in model.loops}
    d = st.deltas()
    for i, label in enumerate(coupling_rows(model).labels):
        out[label] = d[sum(lp.nc for lp in model.loops) + i:][:1]
    return out


@dataclass
class Mobility:
    """n: tree dof; nc: constraint equations n^c; rank: r = rank K; dof: n − r (RBDA §8.10).
    singular_values: of K (descending); tol: the absolute threshold used (rtol · σ_max)."""
    n: int
    nc: int
    rank: int
    dof: int
    singular_values: np.ndarray
    tol: float

    @property
    def redundant(self) -> int:
        """Number of redundant constraints n^c − r (> 0 for overconstrained, e.g. planar, linkages)."""
        return self.nc - self.rank


@renamed_keywords(rtol="rank_rtol")
def numerical_rank(K, rank_rtol=1e-6):
    sv = np.linalg.svd(K, compute_uv=False) if K.size else np.zeros(0)
    tol = rank_rtol * (sv[0] if sv.size else 0.0)
    r = int(np.sum(sv > tol)) if sv.size and sv[0] > 0 else 0
    return r, sv, tol


@renamed_keywords(rtol="rank_rtol")
def mobility(model, q, rank_rtol=1e-6) -> Mobility:
    """Degrees of freedom of the closed-loop system at q: rank of K with a relative tolerance ``rank_rtol`` (file
    rounding leaves singular values ~1e-9 of σ_max in overconstrained linkages). Warns (ConstraintWarning)
    when a singular value lies within a factor 1000 above the threshold (near a change of mobility)."""
    K, _ = loop_constraints(model, q, np.zeros(model.nv))
    r, sv, tol = numerical_rank(K, rank_rtol)
    if sv.size and np.any((sv > tol) & (sv < 1e3 * tol)):
        warnings.warn(f"{model.name}: loop constraints near-singular (singular values {sv[sv > tol][-1]:.3g} "
                      f"vs tolerance {tol:.3g}): the mobility may change here (RBDA §8.10)", ConstraintWarning,
                      stacklevel=2)
    return Mobility(model.nv, K.shape[0], r, model.nv - r, sv, tol)
