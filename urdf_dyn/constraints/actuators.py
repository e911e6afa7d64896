"""The actuators of a model and the pieces of closed-loop inverse dynamics that do not depend on a state:
which joints or loop joints carry an actuator (``actuators_of``), the actuation matrix B (τ = B u,
``actuation_matrix``), the result type ``ActuatorForces``, the weighted minimum-norm solve of RBDA eq. 8.63
(``_solve_one``) and the compiled path's model-side inputs (``_path_inputs``). ``constraints.inverse`` re-exports
the public names; the private helpers serve ``inverse`` only."""
from __future__ import annotations

import dataclasses
import functools

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.constraints.loops import LoopState

__all__ = ["Actuator", "actuators_of", "actuation_matrix", "ActuatorForces", "OneStateForces"]


@dataclass(frozen=True)
class Actuator:
    """An actuator: ``name``, ``kind`` ("joint" for a tree joint, "loop" for an actuated loop joint, "tendon"
    for a fixed-tendon transmission), ``joint`` (the tree joint or loop joint it drives; a tendon's name),
    ``unit`` (N or N m), ``limit`` (effort, inf if none), ``coefficients`` ((joint, c_j), ...) of a tendon:
    its force u gives τ_j = c_j u."""
    name: str
    kind: str
    joint: str
    unit: str
    limit: float
    coefficients: tuple = ()


def actuators_of(model, actuated=None):
    """The actuators of ``model``: tree joints from ``<transmission>`` (all joints if the URDF has neither
    transmissions nor actuated loops, none if the file declares its actuators and has none:
    ``Model.actuators_declared``), fixed-tendon transmissions, and loop joints with ``actuated="true"``, or
    the given list of joint / loop / tendon-transmission names. Raises KeyError for an unknown name."""
    loops = {lp.name: lp for lp in model.loops}
    tendons = {t.name: t for t in model.transmissions if t.coefficients}
    if actuated is None:
        names = [lp.name for lp in model.loops if lp.actuated]
        tree = list(model.actuated_joints) if (model.transmissions or not names) else []
        names = tree + list(tendons) + names
    else:
        names = list(actuated)
    out = []
    for n in names:
        if n in tendons and n not in model.joint_names:
            t = tendons[n]
            types = {model.joint_types[model.joint_index(j)] for j in t.joints}
            out.append(Actuator(n, "tendon", n, "N m" if types <= {"revolute", "continuous"} else "N",
                                np.inf, tuple(zip(t.joints, t.coefficients))))
        elif n in loops:
            lp = loops[n]
            if lp.S.shape[1] != 1:
                raise KeyError(f"loop {n!r} ({lp.type}) has {lp.S.shape[1]} freedoms; only 1-dof loop joints "
                               "can carry an actuator")
            out.append(Actuator(n, "loop", n, "N" if lp.type == "prismatic" else "N m", lp.effort))
        else:
            i = model.joint_index(n)
            out.append(Actuator(n, "joint", n, "N" if model.joint_types[i] == "prismatic" else "N m",
                                float(model.effort_limit[i])))
    return tuple(out)


def actuation_matrix(model, q, acts, state=None):
    """B (nv × p): joint forces τ = B u produced by actuator forces u (module docstring). ``state``: a
    ``LoopState`` at q to reuse (the loop actuators' columns need its Jacobians)."""
    B = np.zeros((model.nv, len(acts)))
    st = state
    for c, a in enumerate(acts):
        if a.kind == "joint":
            B[model.joint_index(a.joint), c] = 1.0
        elif a.kind == "tendon":
            for j, coef in a.coefficients:
                B[model.joint_index(j), c] += coef
        else:
            st = st or LoopState(model, q)
            lp = next(lp for lp in model.loops if lp.name == a.joint)
            XFp, _ = st.loop_frames(lp)
            J = XFp @ (st.body_jacobian(lp.s) - st.body_jacobian(lp.p))
            B[:, c] = J.T @ np.asarray(lp.S)[:, 0]
    return B


@dataclass
class ActuatorForces:
    """Actuator forces for one state or a batch of N states.

    names, units, limits: per actuator; u: (p,) or (N, p) [N | N m]; case: "properly actuated",
    "redundantly actuated", "under-actuated" or "redundantly and under-actuated"; rank_Gu: rank of G_u;
    dof: n − r; residual: Gᵀ(τ_ID − B u) ((n−r,) or (N, n−r)), zero unless under-actuated;
    loop_forces: {loop name: (6,) or (N, 6)} pin wrenches [n; f] on the successor in Fp (N·m, N);
    over_limit: names of actuators whose |u| exceeds their effort limit somewhere."""
    names: tuple
    units: tuple
    limits: np.ndarray
    u: np.ndarray
    case: str
    rank_Gu: int
    dof: int
    residual: np.ndarray
    loop_forces: dict
    over_limit: tuple
    tau_ID: np.ndarray = None
    details: dict = field(default_factory=dict)


class _OneStateResult:
    """What the results of the compiled single-state paths share (``OneStateForces`` here,
    ``forward.OneStateAccel``): ``kind`` makes the subclass whose results share the fixed fields (given by
    name, with ``_off``, the offsets of the parts of the kernel's buffer, and the loop names), so that a
    call makes one array and one object; a result pickles and copies as its plain dataclass ``_base``."""
    _base = None

    @classmethod
    def kind(cls, fields):
        """The subclass whose results share ``fields`` ({attribute: value})."""
        return type(cls.__name__, (cls,), {**fields, "__module__": cls.__module__, "__qualname__": cls.__qualname__})

    def __reduce__(self):
        return self._base, tuple(getattr(self, f.name) for f in dataclasses.fields(self._base))


class OneStateForces(_OneStateResult, ActuatorForces):
    """``ActuatorForces`` of one state from the compiled single-state path: u, residual, τ_ID and the loop
    forces are views of the buffer the kernel wrote (the result's own), made on first access (as Pinocchio's and
    MuJoCo's results are read from their Data), and the fields that one state does not change (names,
    units, limits, case, rank, n − r) are attributes of a subclass made once per plan and rank (``kind``), so
    that a call makes one array and one object with one attribute (its buffer). Behaves as its base class in
    every other way (fields, equality, repr, ``dataclasses.replace``); pickles and copies as an
    ``ActuatorForces``. ``_off``: the buffer's parts (``constraints._sample.one_layout``: x, τ_ID, u, res, λ,
    loop wrenches, ...); ``_loops``: the loop names."""
    _base = ActuatorForces

    @functools.cached_property
    def u(self):
        o = self._off
        return self._buf[o[2]:o[3]]

    @functools.cached_property
    def residual(self):
        o = self._off
        return self._buf[o[3]:o[3] + self.dof]

    @functools.cached_property
    def tau_ID(self):
        o = self._off
        return self._buf[o[1]:o[2]]

    @functools.cached_property
    def loop_forces(self):
        o = self._off
        LF = self._buf[o[5]:o[6]].reshape(-1, 6)
        return {nm: LF[i] for i, nm in enumerate(self._loops)}

    @functools.cached_property
    def details(self):
        return {}


def _solve_one(A, b, weights, bounds, rtol):
    p = A.shape[1]
    w = np.ones(p) if weights is None else np.asarray(weights, float)
    if np.any(w <= 0):
        raise ValueError("actuator weights must be > 0")
    Wi = 1.0 / np.sqrt(w)  # minimise uᵀ W u: substitute u = W^-½ z, minimum-norm z
    if bounds is not None:
        lo, hi = bounds
        import scipy.optimize              # on use: 0.25 s of every run's import otherwise
        res = scipy.optimize.lsq_linear(A, b, bounds=(lo, hi), method="bvls", tol=1e-12, lsmr_tol="auto")
        u = res.x
        # among equally good solutions lsq_linear may return any; if the unbounded minimum-norm answer is
        # feasible, prefer it
        u_mn = Wi * (np.linalg.pinv(A * Wi, rcond=rtol) @ b)
        if np.all(u_mn >= lo - 1e-9) and np.all(u_mn <= hi + 1e-9):
            u = u_mn
        return u
    return Wi * (np.linalg.pinv(A * Wi, rcond=rtol) @ b)


def _path_inputs(model, acts):
    """The inputs of ``constraints._path.actuation_path`` that depend only on the model and the actuators, in
    its argument order: (lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode, row_loop, row_T, nrows, act_col), and
    pref (nv,) bool, the independent coordinates that complete pivoting takes last (RBDA §8.8). row_loop and
    row_T hold the constraint rows, then one row (the motion axis S in Fp) per actuated loop joint. For a
    model the compiled path covers (``loops.compiled_covers``: ``Model.loop_pack`` is not None)."""
    n, p = model.nv, len(acts)
    pack = model.loop_pack                          # not None: the compiled path covers the model
    nrows = len(pack["row_loop"])
    loops = {lp.name: i for i, lp in enumerate(model.loops)}
    act_col, extra_loop, extra_T = np.zeros(p, np.int64), [], []
    for c, a in enumerate(acts):
        if a.kind == "tendon":
            raise ValueError(f"actuator {a.name!r} is a fixed tendon: the compiled path has one joint per actuator")
        if a.kind == "joint":
            act_col[c] = model.joint_index(a.joint)
        else:
            act_col[c] = -(1 + len(extra_loop))
            extra_loop.append(loops[a.joint])
            extra_T.append(np.asarray(model.loops[loops[a.joint]].S)[:, 0])
    row_loop = np.concatenate([pack["row_loop"], np.array(extra_loop, np.int64)])
    row_T = np.ascontiguousarray(np.vstack([pack["row_T"], np.array(extra_T).reshape(-1, 6)]))
    lp = pack["args"][:6]                           # the loops' arrays (``layout.LOOP_ARGS``), then the rows
    pref = np.zeros(n, np.bool_)
    pref[[model.joint_index(j) for j in model.independent]] = True
    return (*lp, _read_only(row_loop), _read_only(row_T), nrows, act_col), pref


def _read_only(a):
    """A read-only view of a (the caller's array keeps its own flag). The compiled path's model-side inputs,
    τᵃ and f_ext are read-only like the Model's packed arrays: numba compiles a kernel once per combination
    of writable and read-only arguments, and each variant of ``actuation_path`` costs ≈ 10 s on the first
    run."""
    v = a.view()
    v.setflags(write=False)
    return v
