"""The force at every pin of a closed-loop machine along a motion: tree joints and loop joints alike.

Tree joint i: the spatial force f_i transmitted across joint i from its parent λ(i) to body i, from the
backward pass of the recursive Newton–Euler algorithm (RBDA Table 5.1):

    v_i = ^iX_λ v_λ + S_i q̇_i,   a_i = ^iX_λ a_λ + S_i q̈_i + v_i × S_i q̇_i,   a_0 = −a_grav,
    f_i = I_i a_i + v_i ×* I_i v_i − f_i^x,     f_λ += ^λX_i^* f_i   (children first),

where the external forces f_i^x include the loop-closure forces (RBDA §8.12): for loop joint k the wrench
T_k λ_k (Fp coordinates) acts on its successor and its negative on its predecessor (``constraints.forward``
and ``constraints.inverse`` module docstrings). f_i is in body i's coordinates, whose origin and axes are
joint i's frame (the child link's URDF frame): the pin's own frame. Its component Sᵢᵀ f_i is the joint
force τ_i of RNEA (an actuator's force on an actuated joint, 0 on a free pin).

Loop joint k: the constraint wrench T_k λ_k on the successor in Fp coordinates (about Fp's origin, the pin
centre) — the pin load of that loop.

A pin that stands for ``count`` identical pins in parallel (a boom-cylinder pair modelled as one body) is
reported per pin: its wrench divided by ``count`` (the pair shares the load equally, as the model's one body
assumes).

The swing bearing (a revolute tree joint about z at the slewing ring) is reported as its axial force
f_z (> 0: the undercarriage pushes the upper structure up, compression), radial force √(f_x² + f_y²), tilting
moment √(n_x² + n_y²) about the joint origin and the swing torque n_z, all in the joint frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.algorithms.dynamics import f_ext_body
from urdf_dyn.algorithms.joints import motion_subspace
from urdf_dyn.algorithms.spatial_rows import cross_force, cross_motion
from urdf_dyn.machines.poses import body_poses

__all__ = ["PinSpec", "SwingBearing", "PinLoads", "joint_wrenches", "joint_wrenches_repeated",
           "loop_wrenches_on_bodies", "pin_loads", "pin_loads_repeated"]


@dataclass(frozen=True)
class PinSpec:
    """A named pin: ``joint`` (a tree joint or loop joint name of the model) and ``count`` (identical pins
    in parallel that share its load)."""
    joint: str
    count: int = 1


def _plux_batch(T):
    """^B X_A (N, 6, 6) motion transforms from poses T (N, 4, 4) of B in A (RBDA eq. 2.24)."""
    E = np.swapaxes(T[:, :3, :3], 1, 2)
    r = T[:, :3, 3]
    S = np.zeros((len(T), 3, 3))
    S[:, 0, 1], S[:, 0, 2], S[:, 1, 2] = -r[:, 2], r[:, 1], -r[:, 0]
    S[:, 1, 0], S[:, 2, 0], S[:, 2, 1] = r[:, 2], -r[:, 1], r[:, 0]
    X = np.zeros((len(T), 6, 6))
    X[:, :3, :3] = E
    X[:, 3:, 3:] = E
    X[:, 3:, :3] = -E @ S
    return X


def _relative(Ta, Tb):
    """Poses (N, 4, 4) of frames b in frames a from their world poses (rigid inverse, no general inverse)."""
    out = np.zeros_like(Tb)
    Rt = np.swapaxes(Ta[:, :3, :3], 1, 2)
    out[:, :3, :3] = Rt @ Tb[:, :3, :3]
    out[:, :3, 3] = np.einsum("nij,nj->ni", Rt, Tb[:, :3, 3] - Ta[:, :3, 3])
    out[:, 3, 3] = 1.0
    return out


def loop_wrenches_on_bodies(model, q, loop_forces, T=None):
    """The loop-closure forces as body wrenches (N, NB+1, 6) [n; f] in body coordinates (N m, N).

    loop_forces: {loop name: (N, 6)} the wrench on the successor in Fp coordinates (``ActuatorForces.
    loop_forces``); the predecessor receives its negative (RBDA §8.1). T: the body poses (N, NB+1, 4, 4)
    at q when already computed (``body_poses``). q: (N, nq) joint positions."""
    Q = np.atleast_2d(np.asarray(q, float))
    if not model.loops:
        return np.zeros((len(Q), model.NB + 1, 6))
    T = body_poses(model, Q) if T is None else T
    return _loop_wrenches(model, _loop_transforms(model, T), loop_forces, len(Q))


def _loop_transforms(model, T):
    """[^{Fp}X_s (N, 6, 6)] per loop at body poses T: X_P ^pX_s, with ^pX_s from the pose of p in s."""
    return [np.asarray(lp.X_P) @ _plux_batch(_relative(T[:, lp.s], T[:, lp.p])) for lp in model.loops]


def _loop_wrenches(model, XL, loop_forces, N):
    out = np.zeros((N, model.NB + 1, 6))
    for lp, X_Fp_s in zip(model.loops, XL):
        w = np.broadcast_to(np.asarray(loop_forces[lp.name], float), (N, 6))
        out[:, lp.s] += np.einsum("nji,nj->ni", X_Fp_s, w)            # f_s = (^{Fp}X_s)ᵀ w
        out[:, lp.p] -= w @ np.asarray(lp.X_P)                          # f_p = −X_Pᵀ w
    return out


def _tree_transforms(model, T):
    """[None, ^1X_λ(1), …, ^{NB}X_λ(NB)] (N, 6, 6) at body poses T."""
    return [None] + [_plux_batch(_relative(T[:, model.parent[i]], T[:, i])) for i in range(1, model.NB + 1)]


def joint_wrenches(model, q, qd, qdd, loop_forces=None, f_ext=None, poses=None):
    """f_i (N, NB, 6) [n; f] (N m, N): the wrench body λ(i) applies to body i across tree joint i, in body
    i's frame (the joint frame), for every tree joint in ``model.joint_names`` order (module docstring).

    q, qd, qdd: (N, nv) a consistent motion; loop_forces: {loop: (N, 6)} as ``loop_wrenches_on_bodies``
    (required when the model has loops); f_ext: {link: (6,) or (N, 6)} external wrenches in the link frame
    about its origin, as ``inverse_dynamics``. Source: RBDA Table 5.1 (backward pass) with §8.12's loop
    forces as external forces. ``poses``: the body poses (N, NB + 1, 4, 4) at q when already computed
    (``SizingRun.poses``). Raises ValueError when the model has loops and no loop_forces are given."""
    Q, QD, QDD = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    QD, QDD = (np.broadcast_to(x, (len(Q),) + x.shape[1:]) if len(x) == 1 else x for x in (QD, QDD))
    return joint_wrenches_repeated(model, Q, QD, QDD, loop_forces, f_ext, poses)


def joint_wrenches_repeated(model, q, qd, qdd, loop_forces=None, f_ext=None, poses=None):
    """``joint_wrenches`` (S·N, NB, 6) of S load sets on the same N poses q (N, nv): qd, qdd (S·N, nv),
    loop_forces {loop: (S·N, 6)} and f_ext {link: (6,) or (S·N, 6)} stacked set after set (row s·N + n at
    pose n), poses (N, NB + 1, 4, 4) at q when already computed. The same numbers as ``joint_wrenches`` of
    q repeated S times, with the poses and the spatial transforms computed once (e.g. a machine at rest and
    under unit loads at the tool). Raises ValueError as ``joint_wrenches``, and for S·N rows that are not a
    multiple of N."""
    Q, QD, QDD = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    N, NB = len(QD), model.NB
    if N % len(Q) or len(QDD) != N:
        raise ValueError(f"qd and qdd must have a multiple of q's {len(Q)} rows, got {len(QD)} and {len(QDD)}")
    if model.loops and loop_forces is None:
        raise ValueError(f"{model.name} has loop joints: give their loop_forces (ActuatorForces.loop_forces)")
    T = body_poses(model, Q) if poses is None else poses
    S = N // len(Q)

    def rep(X):
        return X if S == 1 else np.concatenate([X] * S)
    fx = np.zeros((N, NB + 1, 6))
    if f_ext:
        fx += f_ext_body(model, f_ext, N)
    if model.loops:
        fx += _loop_wrenches(model, [rep(X) for X in _loop_transforms(model, T)], loop_forces, N)
    X, S_ = [None] + [rep(X) for X in _tree_transforms(model, T)[1:]], np.zeros((NB + 1, 6))
    v, a, f = np.zeros((NB + 1, N, 6)), np.zeros((NB + 1, N, 6)), np.zeros((NB + 1, N, 6))
    a[0] = model.a0
    for i in range(1, NB + 1):
        lam = model.parent[i]
        S_[i] = motion_subspace(model.jtype[i], model.axis[i])
        vJ = QD[:, i - 1, None] * S_[i]
        v[i] = np.einsum("nij,nj->ni", X[i], v[lam]) + vJ
        a[i] = (np.einsum("nij,nj->ni", X[i], a[lam]) + QDD[:, i - 1, None] * S_[i] + cross_motion(v[i], vJ))
        Iv = v[i] @ np.asarray(model.I[i]).T
        f[i] = a[i] @ np.asarray(model.I[i]).T + cross_force(v[i], Iv) - fx[:, i]
    for i in range(NB, 0, -1):
        lam = model.parent[i]
        if lam > 0:
            f[lam] += np.einsum("nji,nj->ni", X[i], f[i])                     # ^λX_i^* f_i = (^iX_λ)ᵀ f_i
    return np.transpose(f[1:], (1, 0, 2))


@dataclass
class SwingBearing:
    """The swing bearing's loads (N,) in its joint frame: ``axial`` [N] (> 0 compression), ``radial`` [N],
    ``tilting`` [N m] about the joint origin, ``torque`` [N m] the swing torque about the axis."""
    joint: str
    axial: np.ndarray
    radial: np.ndarray
    tilting: np.ndarray
    torque: np.ndarray

    def peaks(self) -> dict:
        """JSON-ready peaks: axial_N (largest |f_z|), radial_N, tilting_moment_Nm, torque_Nm."""
        return dict(joint=self.joint, axial_N=float(np.max(np.abs(self.axial))), radial_N=float(np.max(self.radial)),
                    tilting_moment_Nm=float(np.max(self.tilting)), torque_Nm=float(np.max(np.abs(self.torque))))


@dataclass
class PinLoads:
    """Per pin (``names`` order): ``specs`` {name: PinSpec}; ``kind`` {name: "tree" | "loop"}; ``wrench``
    {name: (N, 6)} [n; f] (N m, N) per pin on the child / successor in the pin's own frame (joint frame or
    Fp); ``t`` (N,) [s]; ``swing`` a SwingBearing or None."""
    t: np.ndarray
    names: tuple
    specs: dict
    kind: dict
    wrench: dict
    swing: SwingBearing = None
    extra: dict = field(default_factory=dict)

    def force(self, name) -> np.ndarray:
        """|f| (N,) [N]: the pin force's magnitude over time."""
        return np.linalg.norm(self.wrench[name][:, 3:], axis=1)

    def cycle_peak(self, name) -> tuple:
        """(peak |f| [N], time [s], force components (3,) in the pin frame at the peak [N])."""
        F = self.force(name)
        i = int(np.argmax(F))
        return float(F[i]), float(self.t[i]), self.wrench[name][i, 3:].copy()


def pin_loads(model, t, q, qd, qdd, pins=None, loop_forces=None, f_ext=None, actuated=None, swing=None,
              poses=None):
    """Every pin's force along a consistent motion (module docstring).

    Args:
        model: the Model; t (N,) [s]; q, qd, qdd (N, nv) a consistent motion.
        pins: {name: PinSpec | joint name} the pins to report (default: every revolute tree joint and every
            loop joint, under its URDF name).
        loop_forces: {loop: (N, 6)} (``ActuatorForces.loop_forces``); computed by ``actuator_forces`` on the
            compiled path (with ``actuated`` and ``f_ext``) when not given.
        f_ext: {link: (6,) or (N, 6)} external wrenches in the link frame about its origin [N m, N].
        swing: the tree joint of the swing bearing (reported as axial / radial / tilting), or None.
        poses: the body poses (N, NB + 1, 4, 4) at q when already computed (``SizingRun.poses``).
    Returns PinLoads. Raises KeyError for a pin naming an unknown joint, ValueError for count < 1."""
    return _pin_loads(model, t, q, qd, qdd, pins, loop_forces, f_ext, actuated, swing, poses, joint_wrenches)


def pin_loads_repeated(model, t, q, qd, qdd, pins=None, loop_forces=None, f_ext=None, swing=None, poses=None):
    """``pin_loads`` of S load sets on the same N poses q (N, nv): t (S·N,), qd, qdd (S·N, nv), loop_forces
    {loop: (S·N, 6)} (required when the model has loops) and f_ext stacked set after set, as
    ``joint_wrenches_repeated`` (the same numbers as ``pin_loads`` of q repeated S times). Raises as
    ``pin_loads``, and ValueError without the loop forces of a model with loops."""
    if model.loops and loop_forces is None:
        raise ValueError(f"{model.name} has loop joints: give their loop_forces for every load set")
    return _pin_loads(model, t, q, qd, qdd, pins, loop_forces, f_ext, None, swing, poses, joint_wrenches_repeated)


def _pin_loads(model, t, q, qd, qdd, pins, loop_forces, f_ext, actuated, swing, poses, wrenches):
    Q, QD, QDD = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    loops = {lp.name: k for k, lp in enumerate(model.loops)}
    if pins is None:
        pins = {n: n for i, n in enumerate(model.joint_names) if model.joint_types[i] in ("revolute", "continuous")}
        pins.update({n: n for n in loops})
    specs = {}
    for name, p in pins.items():
        p = PinSpec(p) if isinstance(p, str) else p
        if p.joint not in model.joint_names and p.joint not in loops:
            raise KeyError(f"pin {name!r}: no joint or loop named {p.joint!r} "
                           f"(joints: {', '.join(model.joint_names)}; loops: {', '.join(loops)})")
        if p.count < 1:
            raise ValueError(f"pin {name!r}: count must be >= 1, got {p.count}")
        specs[name] = p
    if swing is not None and swing not in model.joint_names:
        raise KeyError(f"swing: no joint named {swing!r} (joints: {', '.join(model.joint_names)})")
    _refuse_undetermined(model, Q[0])
    if model.loops and loop_forces is None:
        from urdf_dyn.constraints.inverse import actuator_forces
        loop_forces = actuator_forces(model, Q, QD, QDD, actuated=actuated, warn=False, f_ext=f_ext).loop_forces
    Fj = wrenches(model, Q, QD, QDD, loop_forces, f_ext, poses)
    wrench, kind = {}, {}
    for name, p in specs.items():
        if p.joint in loops:
            w, kind[name] = np.broadcast_to(np.asarray(loop_forces[p.joint], float), (len(Fj), 6)), "loop"
        else:
            w, kind[name] = Fj[:, model.joint_index(p.joint)], "tree"
        wrench[name] = np.array(w) / p.count
    sb = None
    if swing is not None:
        w = Fj[:, model.joint_index(swing)]
        sb = SwingBearing(swing, w[:, 5].copy(), np.hypot(w[:, 3], w[:, 4]), np.hypot(w[:, 0], w[:, 1]),
                          w[:, 2].copy())
    return PinLoads(np.asarray(t, float), tuple(specs), specs, kind, wrench, sb)


def _refuse_undetermined(model, q):
    """ModelError when a loop's rows duplicate ``<mimic>`` rows (``constraints.closure.mimic_duplicates``):
    the split of the constraint force between them, hence every pin force of the chain, is undetermined."""
    from urdf_dyn.constraints.closure import mimic_duplicates
    from urdf_dyn.errors import ModelError
    dup = mimic_duplicates(model, q)
    if dup:
        raise ModelError("pin forces not reported: they are undetermined: " + "; ".join(
            f"loop {k} duplicates the <mimic> of {', '.join(v)}" for k, v in dup.items()) + " (rank-deficient "
            "constraints: any split of the force between the loop and the mimic balances the motion); drop the "
            "<mimic>s the loops replace", file=model.source)


