"""Free-body load sets of a machine's bodies for the structure's finite-element analysis: every force on one
body at one state, in the body's frame (written as CSV and as Nastran bulk-data cards by
``reports.fe_report``).

**The loads on body i** (at a state q, q̇, q̈ with external wrenches), each a wrench [n; f] about the body
frame's origin (the URDF link frame of the body, which is the frame of its parent joint), RBDA Table 5.1's
backward pass taken apart:

- ``joint:<name>`` from the parent across tree joint i: f_i (``pins.joint_wrenches``);
- ``joint:<name>`` of each child j (λ(j) = i): the reaction −(^jX_i)ᵀ f_j;
- ``loop:<name>`` of each loop joint with body i as successor or predecessor: the constraint wrench
  (``pins.loop_wrenches_on_bodies``: T_k λ_k on the successor, its negative on the predecessor);
- ``external:<link>``: the applied wrench (e.g. the soil's or the stall's force on the lip);
- ``weight``: m g at the centre of mass (from the body's mass and centre of mass, not from RNEA's a₀);
- ``inertia``: −(I_i a_i + v_i ×* I_i v_i), a_i the true (not gravity-shifted) acceleration (d'Alembert):
  zero at rest.

Their sum is zero (Newton–Euler for the body, RBDA eq. 2.72); ``FreeBody.residual`` measures it. Each load
is also given as a force at its **point** (the pin centre of a joint or loop, the centre of mass of the
weight and inertia, the point where an external force acts when it is a pure force) with the moment about
that point: n_P = n_O − r_P × f. Units N, N m, m; the body frame's axes (REP-103 right-handed).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.algorithms.dynamics import f_ext_body
from urdf_dyn.machines.pins import _plux_batch, _relative, joint_wrenches, loop_wrenches_on_bodies
from urdf_dyn.machines.poses import body_poses

__all__ = ["BodyLoad", "FreeBody", "free_bodies", "design_case_free_bodies"]


@dataclass(frozen=True)
class BodyLoad:
    """One load on a body: ``name`` ("joint:…", "loop:…", "external:…", "weight", "inertia"), ``wrench``
    (6,) [n; f] about the body origin, ``point`` (3,) [m] where it acts and ``moment`` (3,) [N m] about it
    (body frame)."""
    name: str
    wrench: np.ndarray
    point: np.ndarray
    moment: np.ndarray


@dataclass
class FreeBody:
    """The loads on one body at one state: ``case`` (a design case's name), ``body`` (its link), ``loads``."""
    case: str
    body: str
    loads: list = field(default_factory=list)

    @property
    def residual(self) -> np.ndarray:
        """Σ wrenches (6,) [n; f] about the body origin: zero in equilibrium."""
        return np.sum([ld.wrench for ld in self.loads], axis=0)

    @property
    def largest_force(self) -> float:
        """The largest |f| [N] of the loads."""
        return float(max(np.linalg.norm(ld.wrench[3:]) for ld in self.loads))


def _at(point, w):
    """(point, moment about the point) of wrench w = [n; f] about the origin."""
    p = np.asarray(point, float)
    return p, w[:3] - np.cross(p, w[3:])


def free_bodies(model, case, q, qd=None, qdd=None, loop_forces=None, f_ext=None, bodies=None, points=None):
    """The free-body load sets of ``bodies`` (link names; default every body but the root) at one state
    (module docstring). q, qd, qdd (nv,) (default at rest); loop_forces {loop: (6,)} (computed with
    ``actuator_forces`` when the model has loops and none are given); f_ext {link: (6,)} [n; f] in the link
    frame about its origin; points {link: (3,)} where its external force acts (link frame; default the
    origin). Returns [FreeBody]. Raises KeyError for an unknown body."""
    q = np.asarray(q, float)[None]
    z = np.zeros_like(q)
    qd = z if qd is None else np.asarray(qd, float)[None]
    qdd = z if qdd is None else np.asarray(qdd, float)[None]
    f_ext = {k: np.asarray(v, float) for k, v in (f_ext or {}).items()}
    if model.loops and loop_forces is None:
        from urdf_dyn.constraints.inverse import actuator_forces
        loop_forces = actuator_forces(model, q, qd, qdd, warn=False, f_ext={k: v[None] for k, v in f_ext.items()}
                                      ).loop_forces
        loop_forces = {k: np.asarray(v, float)[0] for k, v in loop_forces.items()}
    lf = {k: np.asarray(v, float)[None] for k, v in (loop_forces or {}).items()}
    F = joint_wrenches(model, q, qd, qdd, lf or None, {k: v[None] for k, v in f_ext.items()} or None)[0]
    T = body_poses(model, q)
    L = loop_wrenches_on_bodies(model, q, lf, T)[0] if model.loops else None
    fx = f_ext_body(model, {k: v[None] for k, v in f_ext.items()}, 1)[0] if f_ext else np.zeros((model.NB + 1, 6))
    names = list(model.body_names)
    want = names[1:] if bodies is None else list(bodies)
    # velocities and true accelerations for the inertia term (forward pass without the gravity shift)
    v, a = np.zeros((model.NB + 1, 6)), np.zeros((model.NB + 1, 6))
    from urdf_dyn.algorithms.joints import motion_subspace
    from urdf_dyn.algorithms.spatial_rows import cross_force, cross_motion
    X = [None] * (model.NB + 1)
    for i in range(1, model.NB + 1):
        lam = model.parent[i]
        X[i] = _plux_batch(_relative(T[:, lam], T[:, i]))[0]
        S = motion_subspace(model.jtype[i], model.axis[i])
        vJ = qd[0, i - 1] * S
        v[i] = X[i] @ v[lam] + vJ
        a[i] = X[i] @ a[lam] + qdd[0, i - 1] * S + cross_motion(v[i][None], vJ[None])[0]
    out = []
    for b in want:
        if b not in names:
            raise KeyError(f"unknown body {b!r} (bodies: {', '.join(names[1:])})")
        i = names.index(b)
        fb = FreeBody(case, b)
        fb.loads.append(BodyLoad(f"joint:{model.joint_names[i - 1]}", F[i - 1].copy(), *_at(np.zeros(3), F[i - 1])))
        for j in range(1, model.NB + 1):
            if model.parent[j] == i:
                w = -X[j].T @ F[j - 1]
                fb.loads.append(BodyLoad(f"joint:{model.joint_names[j - 1]}", w, *_at(T[0, i, :3, :3].T @ (
                    T[0, j, :3, 3] - T[0, i, :3, 3]), w)))
        for lp in model.loops:
            if i in (lp.s, lp.p):
                w = _loop_share(model, lp, i, q, lf, T)
                Tp = T[0, lp.p] @ _pose_of(lp.X_P)
                pt = T[0, i, :3, :3].T @ (Tp[:3, 3] - T[0, i, :3, 3])
                fb.loads.append(BodyLoad(f"loop:{lp.name}", w, *_at(pt, w)))
        if np.any(fx[i]):
            for k, wl in f_ext.items():
                lfr = model.link(k)
                if lfr.body == i:
                    w = fx[i] if sum(model.link(kk).body == i for kk in f_ext) == 1 else _link_to_body(lfr, wl)
                    pt = (np.asarray(lfr.T_body_link) @ np.r_[np.asarray((points or {}).get(k, np.zeros(3))), 1.0])[:3]
                    fb.loads.append(BodyLoad(f"external:{k}", w, *_at(pt, w)))
        Ii = np.asarray(model.I[i])
        m = Ii[5, 5]
        if m > 0:
            c = np.array([Ii[2, 4], Ii[0, 5], Ii[1, 3]]) / m                 # I = [[Ic + m cx cxᵀ, m cx], ...]
            g = T[0, i, :3, :3].T @ np.asarray(model.gravity, float)
            w = np.r_[np.cross(c, m * g), m * g]
            fb.loads.append(BodyLoad("weight", w, *_at(c, w)))
            winert = -(Ii @ a[i] + cross_force(v[i][None], (Ii @ v[i])[None])[0])
            fb.loads.append(BodyLoad("inertia", winert, *_at(c, winert)))
        out.append(fb)
    return out


def design_case_free_bodies(model, design_loads, cylinders, relief, tip, holding_relief=None, footprint=None,
                            friction=None, bodies=None, strokes=("boom_cyl", "stick_cyl", "bucket_cyl")):
    """The free bodies of every distinct design case of ``design_loads`` ({pin: {"design_case": ...}} of
    ``StallEnvelopes.design_loads`` or ``stall_refine.ConvergedLoads.loads``): each case's pose and tip force
    rebuilt as a one-pose envelope at its strokes and angle (``stall_envelopes`` with the same limits), the
    case named after the pins it sizes ("boom_foot+boom_nose"). Returns [FreeBody]."""
    from urdf_dyn.machines.stall import stall_envelopes
    cases = {}
    for pin, d in design_loads.items():
        c = d["design_case"]
        key = (c["cylinder"], c["direction"], round(c["angle_deg"], 9), tuple(round(c["pose"][s], 12) for s in strokes))
        cases.setdefault(key, (c, []))[1].append(pin)
    out = []
    link, p = tip[0], np.asarray(tip[1], float)
    for c, pins in cases.values():
        one = stall_envelopes(model, cylinders, relief, (link, p), holding_relief=holding_relief, footprint=footprint,
                              friction=friction, working=(c["cylinder"],), axes=[[c["pose"][s]] for s in strokes],
                              fan_deg=[c["angle_deg"]])
        # the case's own direction: a fan or corner case is the first fan column (its angle alone), not the
        # larger of it and the tangent that ``fan[...]["force"]`` keeps
        if c["direction"] == "tangent":
            f_root = one.tangent[c["cylinder"]]["force"][0]
        else:
            f_root = one.fan[c["cylinder"]]["all_force"][0, 0]
        T = body_poses(model, one.Q[:1])[0]
        lf = model.link(link)
        R = (T[lf.body] @ np.asarray(lf.T_body_link))[:3, :3]
        f = R.T @ f_root
        out += free_bodies(model, "+".join(pins), one.Q[0], f_ext={link: np.r_[np.cross(p, f), f]}, bodies=bodies,
                           points={link: p})
    return out


def _pose_of(X_P):
    """The pose (4, 4) of frame Fp in its body from the motion transform X_P = ^{Fp}X_body."""
    X = np.asarray(X_P, float)
    E = X[:3, :3]
    Sx = -E.T @ X[3:, :3]                       # X[3:, :3] = −E S(r)
    r = np.array([Sx[2, 1], Sx[0, 2], Sx[1, 0]])
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = E.T, r
    return T


def _loop_share(model, lp, i, q, lf, T):
    """The wrench (6,) loop ``lp`` puts on body i (successor: (^{Fp}X_s)ᵀ w; predecessor: −X_Pᵀ w)."""
    w = np.asarray(lf[lp.name], float)[0]
    if i == lp.p:
        return -w @ np.asarray(lp.X_P)
    X_Fp_s = np.asarray(lp.X_P) @ _plux_batch(_relative(T[:, lp.s], T[:, lp.p]))[0]
    return X_Fp_s.T @ w


def _link_to_body(lfr, w):
    """A link-frame wrench (6,) [n; f] about the link origin, in its body's frame about the body origin."""
    Tb = np.asarray(lfr.T_body_link)
    R, p = Tb[:3, :3], Tb[:3, 3]
    f = R @ w[3:]
    return np.r_[R @ w[:3] + np.cross(p, f), f]
