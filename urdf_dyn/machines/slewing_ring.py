"""The slewing ring's loads at the tipping limit: the largest static load the ground lets the machine hold,
over every pose of the front and every slew angle of the upper structure over the tracks.

**Ring loads** (``pins`` module docstring): the swing joint's wrench on the upper structure in its own frame
(it turns with the upper structure): the axial force f_z (> 0: compression, the undercarriage pushes the
upper structure up), the radial force √(f_x² + f_y²), the tilting moment √(n_x² + n_y²) about the joint
origin and the torque |n_z|. The swing joint is the root of the upper structure's subtree, so its wrench
is the sum of the subtree's weights and applied loads: the loop-closure forces inside the subtree cancel
and are not needed (they are passed as zero; ``tests/machines/test_slewing_ring.py`` checks this against the
full closed-loop statics).

**At the tipping limit.** For each pose (a grid of the front, e.g. a stall envelope's) and slew angle ψ
(0: over the front of the tracks, 90°: over the side), a vertical load L at the tool point grows until the
centre of pressure of the ground reaction reaches the tipping polygon's edge (``stability.tipping_load``:
the maker's tipping condition, rear rollers clear of the rails), where the hydraulics hold it (the states in
which the cylinders' reliefs give way first are hydraulic limits, not tipping ones: near the tipping edge
L grows without bound). The ring's loads in the house frame do not depend on ψ for a given pose and load;
ψ sets where the machine tips (over the side first: the gauge is narrower than the roller length). Slewing-ring makers rate a ring for
its axial force and tilting moment together (a catalogue's static limiting load curve of M over F_A) and
turn the radial force into an equivalent axial one (e.g. Rollix, "Loads selection":
F_eq = F_A + K_R·F_R with K_R = 0.5 … 2.4 by F_R/F_A); the table gives both per state.
"""
from __future__ import annotations

import numpy as np

from urdf_dyn.machines.pins import joint_wrenches_repeated
from urdf_dyn.machines.poses import body_poses
from urdf_dyn.machines.stability import base_reaction, tipping_load

__all__ = ["ring_components", "ring_wrench", "ring_at_tipping_limit", "rollix_equivalent_axial"]


def ring_components(w) -> dict:
    """{"tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm"} (…) of swing-joint wrenches (…, 6) [n; f]."""
    w = np.asarray(w, float)
    return dict(tilting_moment_Nm=np.hypot(w[..., 0], w[..., 1]), axial_N=w[..., 5],
                radial_N=np.hypot(w[..., 3], w[..., 4]), torque_Nm=np.abs(w[..., 2]))


def ring_wrench(model, q, swing="swing", f_ext=None, poses=None) -> np.ndarray:
    """The swing joint's wrench (N, 6) [n; f] in its frame at rest at poses q (N, nv) with external wrenches
    ``f_ext`` {link: (6,) or (N, 6)} in the link frame about its origin (module docstring: the loops'
    internal forces cancel). S load sets on the same poses: f_ext rows (S·N, 6) stacked set after set give
    (S·N, 6) (``pins.joint_wrenches_repeated``: the poses and transforms once). ``poses``: the body poses
    (N, NB + 1, 4, 4) at q when already computed. Raises KeyError for an unknown swing joint, ValueError for
    f_ext rows that are not a multiple of N."""
    Q = np.atleast_2d(np.asarray(q, float))
    i = model.joint_index(swing)
    rows = max([len(Q)] + [len(np.atleast_2d(w)) for w in (f_ext or {}).values()])
    z = np.zeros((rows, model.nv))
    lf = {lp.name: np.zeros((rows, 6)) for lp in model.loops}
    return joint_wrenches_repeated(model, Q, z, z, lf or None, f_ext, poses)[:, i]


def rollix_equivalent_axial(axial, radial):
    """F_eq = F_A + K_R F_R [N] for a horizontally mounted ring (Rollix "Loads selection", standard bearings:
    K_R = 0.5 for F_R/F_A < 0.25, 1.5 up to 1, 2.4 above), |F_A| taken."""
    fa, fr = np.abs(np.asarray(axial, float)), np.asarray(radial, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(fa > 0, fr / fa, np.inf)
    kr = np.where(ratio < 0.25, 0.5, np.where(ratio <= 1.0, 1.5, 2.4))
    return fa + kr * fr


def ring_at_tipping_limit(model, Q, tip, footprint, hold_N=None, swing="swing",
                          slew_deg=np.arange(0.0, 181.0, 15.0)) -> dict:
    """The ring's loads at the tipping limit (module docstring) over poses Q (M, nv) and slew angles
    ``slew_deg`` [deg] (the swing joint set to each; the loops do not involve it).

    tip: (link, point (3,) [m] in the link frame) where the vertical load hangs; footprint: the tipping
    polygon (k, 2) [m]; hold_N (M,) [N]: the largest vertical load the hydraulics hold in each pose (e.g. a
    stall envelope's held force straight down; None: unlimited). Only the states where tipping binds before
    the hydraulics count (the load grows without bound as the tool nears the tipping edge, where the
    cylinders give way first). Returns {"tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm" (the state of the
    largest tilting moment), "load_N" (the tipping load there), "slew_deg", "pose_index", "q" (nv,),
    "force" (3,) root coordinates [N], "point" (3,), "equivalent_axial_N" (Rollix), "per_slew":
    [{"slew_deg", "tilting_moment_Nm", "load_N"}] the largest per angle}. Raises ValueError without a
    footprint."""
    if footprint is None:
        raise ValueError("the ring at the tipping limit needs the tipping polygon (stability.track)")
    Q = np.atleast_2d(np.asarray(Q, float))
    link, p = tip[0], np.asarray(tip[1], float)
    lf = model.link(link)
    isw = model.joint_index(swing)
    best, per = None, []
    for psi in np.asarray(slew_deg, float):
        Qs = Q.copy()
        Qs[:, isw] = np.radians(psi)
        poses = body_poses(model, Qs)
        T = poses[:, lf.body] @ np.asarray(lf.T_body_link)
        R = T[:, :3, :3]
        pt = np.einsum("mij,j->mi", R, p) + T[:, :3, 3]
        down = np.einsum("mji,j->mi", R, [0.0, 0.0, -1.0])                  # unit downward force, link frame
        w_unit = np.concatenate([np.cross(p, down), down], axis=1)
        W0 = base_reaction(model, Qs, poses=poses)
        W1 = -np.concatenate([np.cross(pt, [0.0, 0.0, -1.0]), np.broadcast_to([0.0, 0.0, -1.0], pt.shape)], axis=1)
        L, _ = tipping_load(W0, W1, footprint)
        ok = np.isfinite(L) & (L > 0) & (True if hold_N is None else L <= np.asarray(hold_N, float))
        if not ok.any():
            continue
        # at rest and under the unit load, only where tipping binds first (ring_wrench's statics, one call)
        k = np.flatnonzero(ok)
        n = len(k)
        r = ring_wrench(model, Qs[k], swing, {link: np.concatenate([np.zeros((n, 6)), w_unit[k]])}, poses[k])
        w = r[:n] + L[k][:, None] * (r[n:] - r[:n])
        c = ring_components(w)
        tilt = c["tilting_moment_Nm"]
        j = int(np.argmax(tilt))
        m = int(k[j])
        per.append(dict(slew_deg=float(psi), tilting_moment_Nm=float(tilt[j]), load_N=float(L[m])))
        if best is None or tilt[j] > best["tilting_moment_Nm"]:
            best = dict({key: float(v[j]) for key, v in c.items()}, load_N=float(L[m]), slew_deg=float(psi),
                        pose_index=m, q=Qs[m].copy(), force=np.array([0.0, 0.0, -L[m]]), point=p.copy(),
                        equivalent_axial_N=float(rollix_equivalent_axial(c["axial_N"][j], c["radial_N"][j])))
    if best is None:
        raise ValueError("no pose reaches the tipping limit under a vertical load at the tip before the "
                         "hydraulics give way")
    best["per_slew"] = per
    return best
