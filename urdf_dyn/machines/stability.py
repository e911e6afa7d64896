"""Stability of a fixed-base machine standing on the ground: the base reaction wrench, its centre of pressure
(the ZMP) and the tipping margin against the support polygon (e.g. an excavator's track footprint).

**Base reaction.** The spanning tree's RNEA (RBDA Table 5.1) computes, body by body, the net spatial force
f_i = I_i a_i + v_i ×* I_i v_i that body i needs, with the fictitious base acceleration −a_grav that puts
gravity in (RBDA §5.3). Internal joint and loop-closure forces cancel in the sum, so the wrench the ground
must apply to the root body is (Newton–Euler for the whole system, RBDA eq. 2.77 summed over bodies)

    f_ground = Σ_i  ^0X_i^*  f_i  −  Σ_links  f_ext          (i = 0 … NB, the root body included)

in root coordinates, about the root frame's origin, as [n; f] (N m, N), angular first (Featherstone). It is
Pinocchio's ``rnea`` base wrench of the same URDF on a free-flyer root held at rest
(``tests/test_stability.py`` compares them). Loops need no special care: loop-closure forces are internal.

**Centre of pressure (ZMP).** For a ground plane z = z_ground in root coordinates, the point on it about
which the reaction has no horizontal moment: p_x = −n'_y / f_z, p_y = n'_x / f_z, with n' the moment
about (0, 0, z_ground) (Vukobratović & Borovac, "Zero-moment point — thirty five years of its life",
Int. J. Humanoid Robotics 1(1), 2004, eq. 4). f_z ≤ 0 means the machine lifts off: the ZMP is undefined
(NaN) and the margin is −inf.

**Tipping margin.** The signed distance of the ZMP to the boundary of the convex support polygon,
positive inside [m]. A machine tips when the ZMP reaches an edge (margin 0).

**One tipping line** for the ZMP check, the lift chart (``lift_chart``) and ISO 6015's tipping limit
(``iso6015``): the convex *tipping polygon* the caller gives (the main job: ``stability.track`` of the
scenario file). ISO 10567:2007's own definition of the tipping lines was not retrievable (only its scope and
its rating rule); we follow the maker's stated convention: "An excavator is considered to be at the tipping
point when the weight in the bucket acting at the center of gravity causes the rear rollers to lift clear of
the track rails" (Caterpillar Performance Handbook ed. 47, p. 7-122, "Tipping Conditions", after SAE J1097,
which ISO 10567 superseded). The machine (frames and upper structure) then pivots on the roller–rail
contact of the loaded side, so ``tipping_polygon(roller_length, gauge)`` is the rectangle of those
contacts: over the front/rear the front idler / last roller, x = ±(length to centre of rollers)/2, over the
side the rail line of the near track, y = ±gauge/2 (its centreline), not the outer shoe edge (the shoe
plates cantilever outward of the rails). For the CAT 320 (cat320_datasheet.md S5/S6: 3650 mm to centre of
rollers, 2380 mm gauge) that is x = ±1.825 m, y = ±1.19 m; the shoe edge, ±1.585 m, would raise the
over-side capacity by 53–60 %.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.dynamics import f_ext_body
from urdf_dyn.algorithms.joints import motion_subspace
from urdf_dyn.algorithms.spatial_rows import cross_force, cross_motion
from urdf_dyn.machines.poses import body_poses
from urdf_dyn._checks import as_batch, renamed_keywords
from urdf_dyn.errors import StateError

__all__ = ["StabilityWarning", "tipping_polygon", "tipping_load", "tipping_rows", "base_reaction", "center_of_pressure", "polygon_margin",
           "StabilityResult", "zmp_margin"]


class StabilityWarning(UserWarning):
    """The centre of pressure leaves the support polygon (the machine tips), or the machine lifts off."""


def _skew(r):
    """(N, 3, 3) cross-product matrices of r (N, 3)."""
    S = np.zeros(r.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -r[..., 2], r[..., 1], -r[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = r[..., 2], -r[..., 1], r[..., 0]
    return S


def tipping_polygon(roller_length, gauge) -> np.ndarray:
    """The tipping polygon (4, 2) [m], counter-clockwise, of a crawler centred on the swing axis (module
    docstring: Cat's roller–rail convention): x = ±roller_length/2 (length to centre of rollers), y =
    ±gauge/2 (track centrelines). Raises ValueError naming the argument that is not > 0."""
    for name, v in (("roller_length", roller_length), ("gauge", gauge)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be > 0 [m], got {v!r}")
    a, b = roller_length / 2, gauge / 2
    return np.array([[a, -b], [a, b], [-a, b], [-a, -b]], float)


def tipping_load(W0, W1, polygon, z_ground=0.0):
    """Largest L ≥ 0 (N,) [units of W1's load] for which the centre of pressure of W0 + L·W1 stays inside
    the convex ``polygon`` (k, 2), and the index (N,) of the edge it reaches (−1: never; then L = inf).

    W0, W1 (N, 6) or (6,) [n; f] about the root origin (``base_reaction``): the reaction without the load and
    per unit load. With an edge through P_j with inward normal m_j, the centre of pressure p = (−n'_y, n'_x)/f_z
    is inside while c_j(W) = m_x (−n'_y − P_x f_z) + m_y (n'_x − P_y f_z) ≥ 0 (f_z > 0), which is linear in W:
    c_j(W0) + L c_j(W1) ≥ 0. The balance point (ISO 10567's tipping condition, the moment about the tipping
    line zero) is where the first edge is reached. L = 0 where W0 is already outside."""
    C = tipping_rows(polygon, z_ground)
    W0, W1 = np.atleast_2d(np.asarray(W0, float)), np.atleast_2d(np.asarray(W1, float))
    c0, c1 = W0 @ C.T, W1 @ C.T
    with np.errstate(divide="ignore", invalid="ignore"):
        B = np.where(c1 < 0, -c0 / c1, np.inf)
    B = np.where(c0 < 0, 0.0, np.maximum(B, 0.0))       # already outside that edge: no load is safe
    j = np.argmin(B, axis=1)
    L = B[np.arange(len(B)), j]
    return L, np.where(np.isfinite(L), j, -1)


def tipping_rows(polygon, z_ground=0.0) -> np.ndarray:
    """The tipping conditions of ``tipping_load`` as rows C (k, 6): the centre of pressure of a ground
    reaction W = [n; f] (6,) (about the root origin, root coordinates) is inside the convex ``polygon`` (k, 2)
    [m] while C W ≥ 0 (f_z > 0), row j the edge from vertex j to j + 1 (counter-clockwise):
    c_j(W) = m_x (−n'_y − P_x f_z) + m_y (n'_x − P_y f_z), n' the moment about the ground point (0, 0,
    z_ground), m_j the edge's inward unit normal. Raises ValueError for a polygon that is not convex."""
    P, E = _check_polygon(polygon)
    m = np.column_stack([-E[:, 1], E[:, 0]]) / np.linalg.norm(E, axis=1)[:, None]
    C = np.zeros((len(P), 6))
    C[:, 0], C[:, 4] = m[:, 1], m[:, 1] * z_ground            # n'_x = n_x + z_g f_y
    C[:, 1], C[:, 3] = -m[:, 0], m[:, 0] * z_ground           # n'_y = n_y − z_g f_x
    C[:, 5] = -m[:, 0] * P[:, 0] - m[:, 1] * P[:, 1]
    return C


@renamed_keywords(Q="q", QD="qd", QDD="qdd")
def base_reaction(model, q, qd=None, qdd=None, f_ext=None, poses=None) -> np.ndarray:
    """Wrench (N, 6) or (6,) [n; f] (N m, N) the ground must apply to the root link, about the root frame's
    origin in root coordinates (module docstring), for tree states q, qd, qdd (N, nv) or (nv,) (qd, qdd
    default 0: statics). ``f_ext``: {link: (6,) or (N, 6)} [n; f] in the link frame about its origin (as
    ``inverse_dynamics``), forces the environment applies (soil, a lifted load). The states need not satisfy
    the loop constraints: the result is the tree's (loop forces are internal). ``poses``: the body poses
    (N, NB + 1, 4, 4) at q when already computed (a sizing run's ``SizingRun.poses``). Raises StateError for
    bad arrays."""
    n = model.nv
    Q, QD, QDD = q, qd, qdd
    Q, single = as_batch(Q, "q", n)
    N = Q.shape[0]
    QD = np.zeros_like(Q) if QD is None else as_batch(QD, "qd", n, N)[0]
    QDD = np.zeros_like(Q) if QDD is None else as_batch(QDD, "qdd", n, N)[0]
    fx = f_ext_body(model, f_ext, N)               # (0 = none, 1 or N, NB+1, 6) in body coordinates
    # the sum in root coordinates, all N states and bodies at once: ^0X_i from the body poses (T_i = pose of
    # body i), S_i and I_i in root coordinates (eq. 2.66: I = ^0X_i^* I_i ^iX_0), then v_i = v_λ(i) + S_i q̇_i,
    # a_i = a_λ(i) + S_i q̈_i + v_i × S_i q̇_i (RBDA Table 5.1 in base coordinates, a_0 = −a_grav) and
    # f_i = I_i a_i + v_i ×* I_i v_i
    NB = model.NB
    T = body_poses(model, Q) if poses is None else poses  # (N, NB+1, 4, 4)
    R, r = T[..., :3, :3], T[..., :3, 3]
    Rt = np.swapaxes(R, -1, -2)
    rx = _skew(r)
    iX0 = np.zeros((N, NB + 1, 6, 6))                 # ^iX_0 = plux(Rᵀ, r)
    iX0[..., :3, :3] = Rt
    iX0[..., 3:, 3:] = Rt
    iX0[..., 3:, :3] = -Rt @ rx
    X0i = np.zeros_like(iX0)                          # ^0X_i = plux(R, −Rᵀ r)
    X0i[..., :3, :3] = R
    X0i[..., 3:, 3:] = R
    X0i[..., 3:, :3] = rx @ R
    Sb = np.zeros((NB + 1, 6))
    for i in range(1, NB + 1):
        Sb[i] = motion_subspace(model.jtype[i], model.axis[i])
    S = (X0i @ Sb[..., None])[..., 0]                 # (N, NB+1, 6)
    I0 = np.swapaxes(iX0, -1, -2) @ np.asarray(model.I) @ iX0
    a = np.zeros((N, NB + 1, 6))
    a[:, 0] = np.asarray(model.a0, float)
    v = np.zeros((N, NB + 1, 6))
    moving = bool(np.any(QD))
    for i in range(1, NB + 1):
        p = model.parent[i]
        a[:, i] = a[:, p] + S[:, i] * QDD[:, i - 1, None]
        if moving:
            vJ = S[:, i] * QD[:, i - 1, None]
            v[:, i] = v[:, p] + vJ
            a[:, i] += cross_motion(v[:, i], vJ)
    f = (I0 @ a[..., None])[..., 0]
    if moving:
        f += cross_force(v, (I0 @ v[..., None])[..., 0])
    loaded = np.flatnonzero(np.any(fx != 0, axis=(0, 2))) if fx.shape[0] else ()   # the bodies f_ext acts on
    if len(loaded):                                   # ^0X_i^* f_ext = (^iX_0)ᵀ f_ext
        f[:, loaded] -= (np.swapaxes(iX0[:, loaded], -1, -2) @ fx[:, loaded, :, None])[..., 0]
    out = f.sum(axis=1)
    if not np.all(np.isfinite(out)):
        raise StateError("the base reaction is not finite: the inputs are out of any physical range")
    return out[0] if single else out


def center_of_pressure(W, z_ground=0.0):
    """Centre of pressure (N, 2) or (2,) [m] on the plane z = ``z_ground`` of base wrenches W (N, 6) or (6,)
    [n; f] about the root origin; NaN where the normal force f_z ≤ 0 (lift-off)."""
    W = np.asarray(W, float)
    one = W.ndim == 1
    W = np.atleast_2d(W)
    n, f = W[:, :3], W[:, 3:]
    nx = n[:, 0] + z_ground * f[:, 1]           # moment about (0, 0, z_ground): n − r × f
    ny = n[:, 1] - z_ground * f[:, 0]
    fz = f[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(fz[:, None] > 0, np.column_stack([-ny / fz, nx / fz]), np.nan)
    return p[0] if one else p


def _check_polygon(poly):
    P = np.asarray(poly, float)
    if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] < 3 or not np.all(np.isfinite(P)):
        raise ValueError(f"a support polygon is (k >= 3, 2) finite vertices [m], got shape {P.shape}")
    area = np.sum(P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1]) / 2
    if area < 0:
        P = P[::-1].copy()                         # clockwise: reverse to counter-clockwise
    E = np.roll(P, -1, axis=0) - P
    En = np.roll(E, -1, axis=0)
    cross = E[:, 0] * En[:, 1] - E[:, 1] * En[:, 0]
    if area == 0 or np.any(cross < -1e-12 * np.abs(cross).max()):
        raise ValueError("the support polygon must be convex with non-zero area (vertices in order around it)")
    return P, E


def polygon_margin(points, polygon) -> np.ndarray:
    """Signed Euclidean distance (N,) [m] of points (N, 2) to the boundary of a convex polygon (k, 2),
    positive inside, negative outside; −inf for NaN points (lift-off). Raises ValueError for a polygon that
    is not convex."""
    P, E = _check_polygon(polygon)
    X = np.atleast_2d(np.asarray(points, float))
    L = np.linalg.norm(E, axis=1)
    nrm = np.column_stack([-E[:, 1], E[:, 0]]) / L[:, None]          # inward normals (CCW polygon)
    side = np.einsum("kj,nkj->nk", nrm, X[:, None, :] - P[None])     # (N, k) signed line distances
    t = np.clip(np.einsum("kj,nkj->nk", E, X[:, None, :] - P[None]) / L ** 2, 0.0, 1.0)
    nearest = P[None] + t[..., None] * E[None]
    dseg = np.linalg.norm(X[:, None, :] - nearest, axis=2).min(axis=1)
    inside = np.all(side >= 0, axis=1)
    m = np.where(inside, dseg, -dseg)
    return np.where(np.isnan(X).any(axis=1), -np.inf, m)


@dataclass
class StabilityResult:
    """ZMP trace and tipping margin over a motion.

    t (N,) [s] (sample index if no times were given); reaction (N, 6) [n; f] ground wrench on the root
    about its origin (N m, N); zmp (N, 2) [m] centre of pressure on the ground plane (NaN at lift-off);
    margin (N,) [m] signed distance to the footprint edge (positive inside); footprint (k, 2) [m];
    min_margin [m] and t_min [s] where it occurs (i_min its index); outside (N,) bool, ZMP outside."""
    t: np.ndarray
    reaction: np.ndarray
    zmp: np.ndarray
    margin: np.ndarray
    footprint: np.ndarray
    min_margin: float
    t_min: float
    i_min: int
    outside: np.ndarray


@renamed_keywords(Q="q", QD="qd", QDD="qdd")
def zmp_margin(model_or_reactions, footprint=None, q=None, qd=None, qdd=None, f_ext=None, t=None,
               z_ground=0.0, warn=True, poses=None) -> StabilityResult:
    """ZMP trace and tipping margin (module docstring).

    Args:
        model_or_reactions: a Model (then q, and optionally qd, qdd (N, nv) and ``f_ext`` as in
            ``base_reaction``) or precomputed base wrenches (N, 6) [n; f] about the root origin.
        footprint: the tipping polygon (k, 2) [m] in root x–y coordinates (``tipping_polygon``), required.
        t: (N,) sample times [s] (default 0, 1, 2 … N−1).
        z_ground: height of the ground plane in root coordinates [m] (the excavator's root is on it: 0).
        warn: warn (StabilityWarning) when the ZMP leaves the polygon or the machine lifts off.
        poses: the body poses (N, NB + 1, 4, 4) at q when already computed (``base_reaction``).
    Returns a StabilityResult. Raises ValueError for a non-convex polygon, StateError for bad states."""
    if hasattr(model_or_reactions, "nv"):
        if q is None:
            raise ValueError("zmp_margin(model, ...) needs the states q (N, nv)")
        W = np.atleast_2d(base_reaction(model_or_reactions, q, qd, qdd, f_ext, poses=poses))
    else:
        W = np.atleast_2d(np.asarray(model_or_reactions, float))
        if W.shape[1] != 6:
            raise ValueError(f"base reactions must be (N, 6) [n; f], got {W.shape}")
    if footprint is None:
        raise ValueError("zmp_margin needs the tipping polygon (footprint); see tipping_polygon")
    fp, _ = _check_polygon(footprint)
    zmp = center_of_pressure(W, z_ground)
    m = polygon_margin(zmp, fp)
    t = np.arange(len(W), dtype=float) if t is None else np.asarray(t, float)
    i = int(np.argmin(m))
    out = m < 0
    if warn and np.any(out):
        j = int(np.argmax(out))
        what = "the machine lifts off" if not np.isfinite(m[j]) else "the ZMP leaves the support polygon"
        warnings.warn(f"{what} at t = {t[j]:.3g} s (minimum margin {m[i]:.3g} m at t = {t[i]:.3g} s)",
                      StabilityWarning, stacklevel=2)
    return StabilityResult(t, W, zmp, m, fp, float(m[i]), float(t[i]), i, out)
