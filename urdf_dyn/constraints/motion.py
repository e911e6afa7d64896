"""Motions to size against: a motion of the independent coordinates y (e.g. swing and cylinder strokes)
mapped to consistent spanning-tree states (q, q̇, q̈) through assembly and the explicit constraint
(RBDA eqs. 3.11, 8.42): q = γ(y) by Newton's method holding y (warm-started from the previous sample,
which tracks the assembly branch continuously), q̇ = G ẏ, q̈ = G ÿ + g."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.explicit import choose_independent, explicit_constraint, lu_partial, lu_solve
from urdf_dyn.constraints.loops import LoopState, compiled_covers, constraint_terms
from urdf_dyn.errors import ModelError
from urdf_dyn.model import Data

__all__ = ["CoordinateMotion", "consistent_motion"]


@dataclass
class CoordinateMotion:
    """A motion of named coordinates: ``names`` (k,), ``t`` (N,) [s], y, yd, ydd (N, k) [rad | m, /s, /s²]."""
    names: tuple
    t: np.ndarray
    y: np.ndarray
    yd: np.ndarray
    ydd: np.ndarray


def consistent_motion(model, motion: CoordinateMotion, q_start=None, progress=None, compiled=True):
    """(Q, QD, QDD) (N, nv) consistent with the loops for a motion of independent coordinates.

    The first sample is assembled by least squares (``assemble``) from ``q_start`` (default the URDF's
    initial configuration), which picks the branch; every later one by Newton's method on the
    independent constraint rows, K_d Δq_dep = −δ_rows, from the previous states extrapolated to third
    order (``_predict``), so the branch is tracked. Then q̇ = G ẏ and q̈ = G ÿ + g (RBDA §8.8), with the row set chosen
    once by complete pivoting and re-checked at each sample. ``compiled`` (default) runs every sample in
    one compiled call (``constraints._path.motion_path``) when the model allows it
    (``constraints.loops.compiled_covers``: no ``<mimic>`` or ``<coupling>``, no universal loop); False
    runs the readable reference, which the tests hold it to.
    Raises ModelError naming the time at which the loops cannot be closed (a stroke out of reach), and
    ValueError if the named coordinates cannot serve as independent coordinates; UnsupportedError for a
    model with a floating or planar joint (q has nq ≠ nv entries there: not written yet)."""
    if not model.is_fixed_base:
        from urdf_dyn.errors import UnsupportedError
        raise UnsupportedError(f"{model.name}: consistent_motion is written for fixed-base machines (q̇ = v); "
                               "this model has a floating or planar joint", file=model.source)
    n = model.nv
    idx = np.array([model.joint_index(j) for j in motion.names], np.int64)
    N = len(motion.t)
    Q, QD, QDD = (np.zeros((N, n)) for _ in range(3))
    q = model.q_initial() if q_start is None else np.array(q_start, float)
    if not model.has_constraints:
        Q[:] = q
        Q[:, idx], QD[:, idx], QDD[:, idx] = motion.y, motion.yd, motion.ydd
        return Q, QD, QDD
    q[idx] = motion.y[0]
    try:
        q = assemble(model, q, hold=motion.names, compiled=compiled)
    except ModelError as e:
        raise ModelError(f"at t = {motion.t[0]:.4g} s: {e.reason}", file=model.source) from None
    if compiled and compiled_covers(model, passive=False):
        _compiled(model, motion, idx, q, Q, QD, QDD)
    else:
        _reference(model, motion, idx, q, Q, QD, QDD, progress)
    return Q, QD, QDD


#: Newton on the independent rows stops at this largest row error [m, rad], or after NEWTON_MAXIT steps;
#: every row must then be within CLOSE_TOL (file rounding leaves ~1e-9 in redundant planar rows)
NEWTON_TOL, NEWTON_MAXIT, CLOSE_TOL = 1e-12, 20, 1e-6


def _not_closed(model, motion, i, res):
    return ModelError(f"at t = {motion.t[i]:.4g} s: the loops cannot be closed (largest residual {res:.3g} after "
                      f"Newton's method from the previous sample): a stroke out of reach, or a singular pose",
                      file=model.source)


def _predict(t, Q, QD, QDD, i):
    """Newton's starting point at sample i > 0: the previous state extrapolated by Taylor's series to third
    order, q + h q̇ + h²/2 q̈ + h³/6 q⃛, with q⃛ the backward difference of q̈ (second order at i = 1 and
    after a repeated time). At 1 ms on the dig cycle it lands within 1e-12 of the assembled state at 95 %
    of the samples (second order: 0.1 %), so that most samples need no Newton step. The compiled copy is
    ``constraints._path._predict``."""
    h = t[i] - t[i - 1]
    q = Q[i - 1] + h * QD[i - 1] + 0.5 * h * h * QDD[i - 1]
    if i >= 2 and t[i - 1] > t[i - 2]:
        q = q + h * h * h / 6.0 / (t[i - 1] - t[i - 2]) * (QDD[i - 1] - QDD[i - 2])
    return q


def _reference(model, motion, idx, q, Q, QD, QDD, progress):
    """The readable path: Newton on the rows chosen by ``choose_independent``, then ``explicit_constraint``."""
    from tqdm.auto import tqdm
    n = model.nv
    names = motion.names
    data = Data(model)
    dep = np.array([j for j in range(n) if j not in set(idx.tolist())], int)
    for i in tqdm(range(len(motion.t)), disable=None if progress is None else not progress, leave=False,
                  unit="sample", desc="assembling"):
        if i > 0:
            q = _predict(motion.t, Q, QD, QDD, i)
        q[idx] = motion.y[i]
        for it in range(NEWTON_MAXIT + 1):
            st = LoopState(model, q, np.zeros(n), compiled=False)   # the readable reference throughout
            K, _, _, _ = st.K_k()
            dl = st.deltas()
            if names not in data.independent_sets:
                data.independent_sets[names] = choose_independent(model, K, independent=names)
            rows = data.independent_sets[names][0]
            if np.abs(dl[rows]).max(initial=0.0) <= NEWTON_TOL or it == NEWTON_MAXIT:
                break
            LU, perm, dmin = lu_partial(K[np.ix_(rows, dep)])
            if dmin == 0.0:
                break
            q = q.copy()
            q[dep] += lu_solve(LU, perm, -dl[rows])
        if not np.abs(dl).max(initial=0.0) <= CLOSE_TOL:
            raise _not_closed(model, motion, i, np.abs(dl).max())
        G = explicit_constraint(model, q, np.zeros(n), K=K, k=np.zeros(len(K)), independent=names, data=data).G
        qd = G @ motion.yd[i]
        _, K, k = constraint_terms(model, q, qd, compiled=False)
        ec = explicit_constraint(model, q, qd, K=K, k=k, independent=names, data=data)
        Q[i], QD[i], QDD[i] = q, qd, ec.G @ motion.ydd[i] + ec.g


def _compiled(model, motion, idx, q0, Q, QD, QDD):
    from urdf_dyn.constraints import _path
    n = model.nv
    pack = model.loop_pack
    dep = np.array([j for j in range(n) if j not in set(idx.tolist())], np.int64)
    info = np.zeros(2, np.int64)
    f = np.ascontiguousarray
    _path.motion_path(model.parent, model.jtype, model.axis, model.X_tree, *pack["args"], idx, dep,
                      f(motion.t, float), f(motion.y, float), f(motion.yd, float), f(motion.ydd, float), q0,
                      1e-6, NEWTON_TOL, NEWTON_MAXIT, CLOSE_TOL, Q, QD, QDD, info)
    if info[0] == 1:            # Q[i] holds Newton's last iterate there
        i = int(info[1])
        raise _not_closed(model, motion, i, float(np.abs(LoopState(model, Q[i]).deltas()).max(initial=0.0)))
    if info[0] == 2:
        K = LoopState(model, Q[max(int(info[1]) - 1, 0)]).K_k()[0]
        choose_independent(model, K, independent=motion.names)      # raises ValueError naming the coordinates
        raise ValueError(f"{model.name}: {', '.join(motion.names)} cannot serve as independent coordinates at "
                         f"t = {motion.t[int(info[1])]:.4g} s (the others' constraint columns are singular)")
