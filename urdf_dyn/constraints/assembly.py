"""Assembly: close the loops by least squares from a guess that picks the branch, and project velocities
onto the constraint manifold (RBDA §8.3)."""
from __future__ import annotations

import numpy as np
import scipy.optimize

from urdf_dyn._checks import as_batch
from urdf_dyn.constraints.loops import LoopState, loop_constraints
from urdf_dyn.errors import ModelError
from urdf_dyn._checks import renamed_keywords

__all__ = ["assemble", "project_velocity", "check_assembly"]


@renamed_keywords(tol="residual_tol")
def assemble(model, q_guess=None, hold=(), residual_tol=1e-6, max_nfev=200, compiled=True):
    """Close every loop by least squares (scipy.optimize.least_squares), keeping the joints in ``hold`` at
    their values in ``q_guess`` (default: ``<initial_configuration>``). Starting from a guess near the wanted
    branch keeps that branch; the step is bounded to stay near it.

    Returns q (nq,). Raises ModelError if the loops cannot be closed (residual above ``residual_tol`` [m, rad]),
    naming the worst loop — e.g. a held joint value out of the mechanism's reach. ``residual_tol`` sits above the
    ~1e-9 that rounding in a file leaves in overconstrained (planar) loops, which no q can remove.
    ``compiled``: the loop terms from the compiled kernel (default) or the readable reference (``LoopState``)."""
    from urdf_dyn._checks import one_state
    one_state("assemble", q_guess=q_guess)
    n = model.nv
    q0 = model.q_initial() if q_guess is None else as_batch(q_guess, "q_guess", model.nq)[0][0]
    held = [model.joint_index(j) for j in hold]
    # the unknowns are the 1-dof joints' positions: a floating or planar joint moves both ends of every loop
    # and coupling below it alike, so its coordinates (zero columns of K) are kept where q_guess puts them
    qi, vi = model.one_dof_indices
    free_q = [int(k) for k, j in zip(qi, vi) if j not in held]
    free = [int(j) for j in vi if j not in held]
    if not model.has_constraints:
        return q0.copy()

    def fun(x):
        q = q0.copy()
        q[free_q] = x
        return LoopState(model, q, compiled=compiled).deltas()

    def jac(x):
        q = q0.copy()
        q[free_q] = x
        K, _ = loop_constraints(model, q, np.zeros(n), compiled=compiled)
        return K[:, free]

    sol = scipy.optimize.least_squares(fun, q0[free_q], jac=jac, method="trf", xtol=1e-15, ftol=1e-15,
                                       gtol=1e-15, max_nfev=max_nfev, x_scale="jac")
    q = q0.copy()
    q[free_q] = sol.x
    res = LoopState(model, q, compiled=compiled).deltas()
    if np.max(np.abs(res), initial=0.0) > residual_tol:
        worst = _worst_loop(model, q)
        raise ModelError(f"{model.name}: cannot assemble the loops (largest residual {np.abs(res).max():.3g} at "
                         f"{worst}); held joints: {', '.join(hold) or 'none'} — a held value may be out of reach",
                         file=model.source)
    return q


def _worst_loop(model, q):
    from urdf_dyn.constraints.loops import loop_residuals
    r = loop_residuals(model, q)
    return max(r, key=lambda kk: np.abs(r[kk]).max())


def project_velocity(model, q, qd, hold=()):
    """The velocity closest to ``qd`` (least squares) that satisfies K q̇ = 0, keeping the joints in
    ``hold`` at their given velocities. Returns (nv,)."""
    from urdf_dyn._checks import one_state
    one_state("project_velocity", q=q, qd=qd)
    n = model.nv
    qd = as_batch(qd, "qd", n)[0][0]
    K, _ = loop_constraints(model, q, np.zeros(n))
    held = [model.joint_index(j) for j in hold]
    free = [i for i in range(n) if i not in held]
    rhs = -K[:, held] @ qd[held] if held else np.zeros(K.shape[0])
    Kf = K[:, free]
    x = qd[free] + np.linalg.lstsq(Kf, rhs - Kf @ qd[free], rcond=1e-9)[0]
    out = qd.copy()
    out[free] = x
    return out


@renamed_keywords(tol="residual_tol")
def check_assembly(model, residual_tol=1e-6):
    """Raise ModelError, naming the file, line and ``<loop>`` element, if the loops of ``model`` cannot be
    closed near its initial configuration (``<initial_configuration>``; residual above ``residual_tol`` [m, rad]
    after ``assemble``). Returns None when they can."""
    if not model.loops:
        return
    gap = [float(np.abs(d).max()) for d in LoopState(model, model.q_initial()).loop_deltas()]
    if max(gap) <= residual_tol:
        return
    try:
        assemble(model, model.q_initial(), residual_tol=residual_tol)
        return
    except ModelError:
        pass
    i = int(np.argmax(gap))
    worst = model.loops[i]
    raise ModelError(f"the loops cannot be assembled near the initial configuration (loop {worst.name!r} "
                     f"is open by {gap[i]:.3g} m/rad there): check the <predecessor>/"
                     "<successor> origins, or give an <initial_configuration> close to an assembled pose",
                     file=model.source, line=worst.line or None, element=f'<loop name="{worst.name}">')
