"""Assembly: close the loops by least squares from a guess that picks the branch, and project velocities
onto the constraint manifold (RBDA §8.3)."""
from __future__ import annotations

import numpy as np

from urdf_dyn._checks import as_batch
from urdf_dyn.algorithms.configuration import so3_right_jacobian
from urdf_dyn.constraints.loops import LoopState, loop_constraints
from urdf_dyn.errors import ModelError
from urdf_dyn._checks import renamed_keywords

__all__ = ["assemble", "project_velocity", "check_assembly"]


@renamed_keywords(tol="residual_tol")
def assemble(model, q_guess=None, hold=None, residual_tol=1e-6, max_nfev=200, compiled=True, branch_tol=0.5):
    """Close every loop by least squares (scipy.optimize.least_squares), keeping the joints in ``hold`` at
    their values in ``q_guess`` (default: ``<initial_configuration>``). ``hold`` defaults to the joints the
    file declares ``independent="true"`` (``closure.declared_independent``): assembly never moves them. Starting
    from a guess near the wanted branch keeps that branch; the step is bounded to stay near it. The unknowns
    are the 1-dof joints' positions and, for each ball joint, a rotation vector φ (its quaternion is the
    guess's times exp(φ); naming any of its coordinates in ``hold`` holds the whole joint); floating and planar
    joints stay where ``q_guess`` puts them. The Jacobian is K (which is ∂δ/∂q where the loops close); if
    that solve stalls above ``residual_tol``, it is run again from the guess with central differences.

    When nothing is held (no ``hold``, none declared independent), the independent coordinates that complete
    pivoting picks (RBDA §8.8) may move: if one moves by more than ``branch_tol`` [rad | m], the
    pose has likely landed on another branch of the mechanism, and a ``ConstraintWarning`` says which joint
    moved by how much.

    Returns q (nq,). Raises ModelError if the loops cannot be closed (residual above ``residual_tol`` [m, rad]),
    naming the worst loop — e.g. a held joint value out of the mechanism's reach. ``residual_tol`` sits above the
    ~1e-9 that rounding in a file leaves in overconstrained (planar) loops, which no q can remove.
    ``compiled``: the loop terms from the compiled kernel (default) or the readable reference (``LoopState``)."""
    from urdf_dyn._checks import one_state
    from urdf_dyn.constraints.closure import declared_independent
    one_state("assemble", q_guess=q_guess)
    n = model.nv
    q0 = model.q_initial() if q_guess is None else as_batch(q_guess, "q_guess", model.nq)[0][0]
    if not model.has_constraints:
        return q0.copy()
    hold = tuple(declared_independent(model) if hold is None else hold)
    held = [model.joint_index(j) for j in hold]
    # the unknowns are the 1-dof joints' positions and a rotation vector φ per ball joint (its quaternion is
    # q_guess's ⊗ exp(φ)): a floating or planar joint moves both ends of every loop and coupling below it
    # alike, so its coordinates (zero columns of K) are kept where q_guess puts them
    qi, vi = model.one_dof_indices
    free_q = [int(k) for k, j in zip(qi, vi) if j not in held]
    free = [int(j) for j in vi if j not in held]
    balls = [(k, j) for kind, k, j, _ in model.multi_dof_joints
             if kind == "ball" and not {j, j + 1, j + 2} & set(held)]
    n1 = len(free_q)

    def at(x):
        from scipy.spatial.transform import Rotation
        q = q0.copy()
        q[free_q] = x[:n1]
        for b, (k, _) in enumerate(balls):
            phi = x[n1 + 3 * b:n1 + 3 * b + 3]
            q[k:k + 4] = (Rotation.from_quat(q0[k:k + 4]) * Rotation.from_rotvec(phi)).as_quat()
        return q

    def fun(x):
        return LoopState(model, at(x), compiled=compiled).deltas()

    def jac(x):
        K, _ = loop_constraints(model, at(x), np.zeros(n), compiled=compiled)
        cols = [K[:, free]]
        for b, (_, j) in enumerate(balls):  # ω = J_r(φ) φ̇ (body frame, as K's columns)
            cols.append(K[:, j:j + 3] @ so3_right_jacobian(x[None, n1 + 3 * b:n1 + 3 * b + 3])[0])
        return np.hstack(cols)

    import scipy.optimize                  # on use: 0.3 s of the import of every module that imports this one
    opts = dict(method="trf", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=max_nfev, x_scale="jac")
    x0 = np.r_[q0[free_q], np.zeros(3 * len(balls))]
    sol = scipy.optimize.least_squares(fun, x0, jac=jac, **opts)
    q = at(sol.x)
    res = LoopState(model, q, compiled=compiled).deltas()
    if np.max(np.abs(res), initial=0.0) > residual_tol:
        # K is ∂δ/∂q only where the loops close (away from closure δ's frame turns too), and a step with it
        # can stall away from closure (Cassie's achilles rods on their ball joints, guessed 0.03 m open,
        # stall at 0.03 m): again from the guess with the residual's own derivative, by central differences
        # (unscaled: a coordinate that moves no loop has a rounding-noise column, which x_scale="jac" would
        # turn into giant steps of that coordinate)
        sol = scipy.optimize.least_squares(fun, x0, jac="3-point", **{**opts, "x_scale": 1.0})
        q = at(sol.x)
        res = LoopState(model, q, compiled=compiled).deltas()
    if np.max(np.abs(res), initial=0.0) > residual_tol:
        worst = _worst_loop(model, q)
        raise ModelError(f"{model.name}: cannot assemble the loops (largest residual {np.abs(res).max():.3g} at "
                         f"{worst}); held joints: {', '.join(hold) or 'none'} — a held value may be out of reach",
                         file=model.source)
    if not hold and model.loops and branch_tol is not None:
        _warn_branch(model, q0, q, branch_tol)
    return q


def _warn_branch(model, q0, q, branch_tol):
    """A ConstraintWarning when an independent coordinate (complete pivoting at the assembled q, RBDA §8.8;
    at the unassembled guess K is generally of full rank) moved by more than ``branch_tol`` between the guess
    q0 and q."""
    import warnings
    from urdf_dyn.algorithms.configuration import joint_positions
    from urdf_dyn.constraints.explicit import explicit_constraint
    from urdf_dyn.constraints.loops import ConstraintWarning
    try:
        y = explicit_constraint(model, q, np.zeros(model.nv)).independent
    except (ValueError, np.linalg.LinAlgError):
        return
    d = np.abs(joint_positions(model, q) - joint_positions(model, q0))
    moved = {j: float(d[model.joint_index(j)]) for j in y if d[model.joint_index(j)] > branch_tol}
    if moved:
        warnings.warn(f"{model.source}: assembling the loops moved the independent coordinate(s) "
                      + ", ".join(f"{j} by {v:.3g}" for j, v in moved.items())
                      + " from the guess: the pose has likely landed on another branch of the mechanism; hold "
                      "them (hold=[...]), mark them independent=\"true\" in the file, or start nearer",
                      ConstraintWarning, stacklevel=3)


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
def check_assembly(model, residual_tol=1e-6, *, element="loop", advice=None):
    """Raise ``closure.LoopClosureError`` (a ModelError), naming the file, line and ``<loop>`` element, its
    gap [m, rad] and the nearest fix of its origins (``closure.nearest_fix``), if a loop of ``model`` cannot
    be closed near its initial configuration (``<initial_configuration>``): when ``assemble`` (which holds
    the joints declared independent) fails, or when the loop is open there (above ``residual_tol``) and
    one sign flip or axis swap of its origins closes it where it is — the file's mistake, which assembling
    would hide by moving the mechanism to another branch. Returns None when the loops close.

    ``element`` is the tag the error names (``"equality"`` for a model read from MJCF, whose loops carry the
    line of the user's ``<equality>``) and ``advice``, if given, replaces the URDF advice at the message's end
    (what to check in the user's own file)."""
    from urdf_dyn.constraints.closure import LoopClosureError, loop_gaps, nearest_fix
    if not model.loops:
        return
    q0 = model.q_initial()
    gaps = loop_gaps(model, q0)
    if max(g.size for g in gaps) <= residual_tol:
        return
    fixes = {g.name: nearest_fix(model, lp, q0) for g, lp in zip(gaps, model.loops) if g.size > residual_tol}
    typo = [g for g in gaps if fixes.get(g.name)]
    try:
        qa = assemble(model, q0, residual_tol=residual_tol, branch_tol=None)
    except ModelError:
        qa = None
    if qa is not None and not typo:
        return
    worst = typo[0] if typo else max(gaps, key=lambda g: g.size)
    lp = model.loops[[g.name for g in gaps].index(worst.name)]
    fix = fixes.get(worst.name)
    moved = ""
    if qa is not None:
        d = np.abs(qa - q0)
        k = int(np.argmax(d))
        moved = (f"; assembling would close it only by moving {model.q_names[k]} by {d[k]:.3g} (another branch), "
                 "which hides the mistake")
    what = f"it closes if {fix[0]}" if fix else "no single sign flip or axis swap of its <origin>s closes it"
    if advice is not None:
        what = f"{what}{moved}: {advice}"
    elif fix:
        what = f"{what}{moved}"
    else:
        what = (f"{what}: check the <predecessor>/<successor> origins, or give an <initial_configuration> close "
                f"to an assembled pose{moved}")
    raise LoopClosureError(
        f"loop {worst.name} ({worst.predecessor} -> {worst.successor}) cannot be assembled near the initial "
        f"configuration: it is open by {worst.position:.3g} m and {worst.angle:.3g} rad there; {what}",
        loop=worst.name, gap=worst, fix=fix[0] if fix else None, file=model.source, line=lp.line or None,
        element=f'<{element} name="{lp.name}">')
