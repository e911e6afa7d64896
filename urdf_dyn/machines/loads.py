"""External loads along a motion, as the wrenches ``f_ext`` that RNEA and closed-loop inverse dynamics take:
{link: (N, 6)} [n; f] in the link frame about the link origin (N m, N), Featherstone's order.

A force f and a moment n given at a point p in a frame F (the link's own frame, the world = root frame, or
any named frame: another link or a ``Frame`` fixed to a link, such as a bucket's cutting edge) become, in
the link frame L (RBDA eq. 2.13, the force transform): f_L = R_Lᵀ R_F f, n_L = R_Lᵀ R_F n + r × f_L with
r = the point in L coordinates.

A payload of mass m(t) at a point c of a link (the soil in a bucket) is the wrench of the force
m(t) (g − a_c) at c, with a_c the point's acceleration from the kinematics: for a constant m this equals
adding the point mass to the link's inertia (``Model.with_payload``; ``tests/test_loads.py``). a_c comes
from the spatial velocity v = [ω; v_O] and acceleration a = [ω̇; a_O] of the link in root coordinates, the
forward pass of RBDA Table 5.1 along the link's support path for the whole batch at once (v_i = v_λ + S_i q̇_i,
a_i = a_λ + S_i q̈_i + v_i × S_i q̇_i, no gravity), as the classical acceleration of the point p:
a_c = a_O + ω̇ × p + ω × (v_O + ω × p) (RBDA §2.11). Joints other than revolute and prismatic on the path
fall back to directional differences of batched forward kinematics, a_c = J q̈ + q̇ᵀ(∂²p/∂q²)q̇ =
[p(q + εq̈) − p(q − εq̈)]/(2ε) + [p(q + εq̇) − 2p(q) + p(q − εq̇)]/ε² (error O(ε²), ε scaled to the state).

Time profiles: ``profile(t, t_knots, values)`` interpolates waypoints linearly (numpy.interp);
``phase_times`` and ``phase_mask`` turn named motion phases (one per segment) into time windows, so that a
load follows its phase when a duration changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.kinematics import support_path
from urdf_dyn.algorithms.spatial_rows import cross3
from urdf_dyn.machines.poses import body_poses
from urdf_dyn._checks import renamed_keywords

__all__ = ["Frame", "frame_poses", "point_wrench", "point_positions", "point_acceleration", "payload_wrench",
           "profile", "phase_times", "phase_mask", "add_wrenches", "WrenchLoad", "wrench_loads", "SoilLoads",
           "soil_wrench", "soil_loads", "release_profile"]


@dataclass(frozen=True)
class Frame:
    """A frame fixed to ``link``: origin ``xyz`` [m] and orientation ``rpy`` [rad] (URDF convention) in the
    link frame."""
    link: str
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)

    def pose(self) -> np.ndarray:
        r, p, y = self.rpy
        cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
        T = np.eye(4)
        T[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]]
        T[:3, 3] = self.xyz
        return T


def _link_poses(model, Q, link, poses=None):
    lf = model.link(link)
    T = body_poses(model, np.atleast_2d(Q)) if poses is None else poses
    return T[:, lf.body] @ lf.T_body_link


def frame_poses(model, Q, frame, frames=None, poses=None) -> np.ndarray:
    """Poses (N, 4, 4) in the world (root) frame of ``frame``: ``"world"``, a link name, a ``Frame``, or a
    name in ``frames`` ({name: Frame}). ``poses``: the body poses (N, NB + 1, 4, 4) at Q when already
    computed (``machines.poses.body_poses``; a sizing run's ``SizingRun.poses``). Raises KeyError naming what
    is known."""
    Q = np.atleast_2d(Q)
    if isinstance(frame, Frame):
        return _link_poses(model, Q, frame.link, poses) @ frame.pose()
    if frame == "world":
        return np.broadcast_to(np.eye(4), (Q.shape[0], 4, 4)).copy()
    if frames and frame in frames:
        return frame_poses(model, Q, frames[frame], poses=poses)
    if frame in model.links:
        return _link_poses(model, Q, frame, poses)
    raise KeyError(f"unknown frame {frame!r}; use 'world', a link ({', '.join(model.links)})"
                   + (f" or a named frame ({', '.join(frames)})" if frames else ""))


@renamed_keywords(Q="q")
def point_wrench(model, q, link, force, point=(0.0, 0.0, 0.0), moment=None, frame=None, frames=None, poses=None):
    """Wrench (N, 6) [n; f] on ``link`` in its frame about its origin, of a force (3,) or (N, 3) [N] and a
    moment [N m] expressed in ``frame`` (default the link itself; ``"world"``, a link, a ``Frame`` or a name
    in ``frames``) acting at ``point`` (3,) or (N, 3) [m] given in that frame; ``poses`` as ``frame_poses``."""
    q = np.atleast_2d(q)
    N = q.shape[0]
    TL = _link_poses(model, q, link, poses)
    f = np.broadcast_to(np.asarray(force, float), (N, 3))
    n = np.zeros((N, 3)) if moment is None else np.broadcast_to(np.asarray(moment, float), (N, 3))
    p = np.broadcast_to(np.asarray(point, float), (N, 3))
    if frame is None or frame == link:
        fL, nL, r = f, n, p
    else:
        TF = frame_poses(model, q, frame, frames, poses)
        R = np.einsum("nji,njk->nik", TL[:, :3, :3], TF[:, :3, :3])           # R_Lᵀ R_F
        fL = np.einsum("nij,nj->ni", R, f)
        nL = np.einsum("nij,nj->ni", R, n)
        pw = np.einsum("nij,nj->ni", TF[:, :3, :3], p) + TF[:, :3, 3]
        r = np.einsum("nji,nj->ni", TL[:, :3, :3], pw - TL[:, :3, 3])
    return np.hstack([nL + np.cross(r, fL), fL])


def point_positions(model, Q, link, point) -> np.ndarray:
    """World positions (N, 3) [m] of a point (3,) [m] fixed in ``link``."""
    T = _link_poses(model, Q, link)
    return np.einsum("nij,j->ni", T[:, :3, :3], np.asarray(point, float)) + T[:, :3, 3]


@renamed_keywords(Q="q", QD="qd", QDD="qdd")
def point_acceleration(model, q, qd, qdd, link, point, poses=None) -> np.ndarray:
    """Acceleration (N, 3) [m/s²] in world coordinates of a point (3,) [m] fixed in ``link`` (module
    docstring: the link's spatial acceleration from RBDA Table 5.1's forward pass, batched); ``poses`` as
    ``frame_poses``."""
    q, qd, qdd = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    lf = model.link(link)
    path = support_path(model, link)
    if path is None:
        return _point_acceleration_fd(model, q, qd, qdd, link, point)
    T = body_poses(model, q) if poses is None else poses
    N = len(q)
    w, vO, wd, aO = (np.zeros((N, 3)) for _ in range(4))
    for i in reversed(path):                                   # root to tip
        ax = T[:, i, :3, :3] @ np.asarray(model.axis[i], float)   # joint axis in root coordinates
        if model.jtype[i] == 0:                                    # revolute: S = [a; r × a]
            sw, sv = ax, cross3(T[:, i, :3, 3], ax)
        else:                                                      # prismatic: S = [0; a]
            sw, sv = np.zeros_like(ax), ax
        qd_i, qdd_i = qd[:, i - 1, None], qdd[:, i - 1, None]
        jw, jv = sw * qd_i, sv * qd_i                              # S q̇
        w, vO = w + jw, vO + jv                                    # v_i = v_λ + S q̇
        wd = wd + sw * qdd_i + cross3(w, jw)                       # a_i = a_λ + S q̈ + v_i × S q̇
        aO = aO + sv * qdd_i + cross3(w, jv) + cross3(vO, jw)
    TL = T[:, lf.body] @ lf.T_body_link
    p = TL[:, :3, :3] @ np.asarray(point, float) + TL[:, :3, 3]
    return aO + cross3(wd, p) + cross3(w, vO + cross3(w, p))


def _point_acceleration_fd(model, Q, QD, QDD, link, point) -> np.ndarray:
    """``point_acceleration`` by directional differences of batched forward kinematics (module docstring)."""

    def scaled(V, base):
        return base / (1.0 + np.linalg.norm(V, axis=1))         # ε |V| ≤ base [rad | m]

    e1 = scaled(QDD, 1e-4)[:, None]
    e2 = scaled(QD, 1e-4)[:, None]
    p = lambda X: point_positions(model, X, link, point)  # noqa: E731
    p0 = p(Q)
    a1 = (p(Q + e1 * QDD) - p(Q - e1 * QDD)) / (2 * e1)
    a2 = (p(Q + e2 * QD) - 2 * p0 + p(Q - e2 * QD)) / e2 ** 2
    return a1 + a2


@renamed_keywords(Q="q", QD="qd", QDD="qdd")
def payload_wrench(model, q, qd, qdd, link, com, mass, poses=None) -> np.ndarray:
    """Wrench (N, 6) on ``link`` of a point payload of ``mass`` [kg] (scalar or (N,)) at ``com`` (3,) [m]
    in the link frame: force m (g − a_c) at c, g = ``model.gravity``; ``poses`` as ``frame_poses``."""
    q = np.atleast_2d(q)
    m = np.broadcast_to(np.asarray(mass, float), (q.shape[0],))
    a = point_acceleration(model, q, qd, qdd, link, com, poses=poses)
    f = m[:, None] * (np.asarray(model.gravity, float)[None, :] - a)
    TL = _link_poses(model, q, link, poses)
    fL = np.einsum("nji,nj->ni", TL[:, :3, :3], f)                  # world force in link axes
    r = np.broadcast_to(np.asarray(com, float), fL.shape)
    return np.hstack([np.cross(r, fL), fL])


def profile(t, t_knots, values) -> np.ndarray:
    """Values (N,) or (N, k) at times t (N,) [s], linear between the knots (t_knots (K,) increasing, values
    (K,) or (K, k)), held constant outside them."""
    t_knots = np.asarray(t_knots, float)
    V = np.asarray(values, float)
    if V.ndim == 1:
        return np.interp(t, t_knots, V)
    return np.column_stack([np.interp(t, t_knots, V[:, j]) for j in range(V.shape[1])])


def phase_times(names, durations) -> dict:
    """{phase name: (start, end)} [s] for one name per motion segment (a name used twice spans from its
    first start to its last end). Raises ValueError when the counts differ."""
    if len(names) != len(durations):
        raise ValueError(f"{len(names)} phase names for {len(durations)} segments")
    ends = np.cumsum(durations)
    starts = ends - np.asarray(durations, float)
    out = {}
    for n, a, b in zip(names, starts, ends):
        out[n] = (min(out[n][0], a), max(out[n][1], b)) if n in out else (float(a), float(b))
    return out


def phase_mask(t, windows, during) -> np.ndarray:
    """(N,) bool: t inside any of the phases ``during`` (a name or a list) of ``windows`` ({name: (a, b)})."""
    t = np.asarray(t, float)
    names = [during] if isinstance(during, str) else list(during)
    m = np.zeros(len(t), bool)
    for n in names:
        a, b = windows[n]
        m |= (t >= a - 1e-12) & (t <= b + 1e-12)
    return m


def add_wrenches(*dicts) -> dict:
    """Sum of {link: (N, 6)} wrench mappings."""
    out = {}
    for d in dicts:
        for k, v in (d or {}).items():
            out[k] = out[k] + v if k in out else np.array(v, float)
    return out


@dataclass(frozen=True)
class WrenchLoad:
    """One external load, resolved: on ``link``, a force (N, 3) [N] and a moment (N, 3) [N m] (already
    zero outside their phase and scaled by their time profile) expressed in ``frame`` (None: the link
    itself; ``"world"``, a link or a named frame) at ``point`` (3,) [m] in that frame."""
    link: str
    force: np.ndarray
    moment: np.ndarray
    point: tuple = (0.0, 0.0, 0.0)
    frame: object = None


def wrench_loads(model, Q, loads, frames=None, poses=None) -> dict:
    """{link: (N, 6)} the sum of the ``WrenchLoad`` s ``loads`` along the states Q (N, nq) (``point_wrench``
    each, added per link in their order); ``poses`` as ``frame_poses``."""
    out = {}
    for ld in loads:
        w = point_wrench(model, Q, ld.link, ld.force, ld.point, ld.moment, ld.frame, frames, poses)
        out[ld.link] = out[ld.link] + w if ld.link in out else w
    return out


def soil_wrench(model, Q, QD, QDD, edge: Frame, force, payload_com=None, mass=None, positions=None,
                poses=None) -> dict:
    """The soil's wrench on the machine {edge link: (N, 6)}: the cutting force ``force`` (N, 3) [N, world
    axes] at the cutting edge ``edge`` (its world positions ``positions`` (N, 3) [m] if already computed),
    plus, with ``payload_com`` (3,) [m, edge link frame] and ``mass`` (N,) [kg], the weight and inertia of the
    soil in the bucket (``payload_wrench``). The one place the soil force is applied: the sizing job and the
    viewer both call it. ``poses`` as ``frame_poses``."""
    pos = frame_poses(model, Q, edge, poses=poses)[:, :3, 3] if positions is None else positions
    w = point_wrench(model, Q, edge.link, force, pos, frame="world", poses=poses)
    if payload_com is not None and mass is not None:
        w = w + payload_wrench(model, Q, QD, QDD, edge.link, payload_com, mass, poses=poses)
    return {edge.link: w}


def release_profile(t, release) -> np.ndarray:
    """(N,) share [0, 1] of a payload still held while it leaves continuously during the samples
    ``release`` (N,) bool: 1 before, smoothstep 1 → 0 across them, 0 after."""
    a, b = t[release].min(), t[release].max()
    x = np.clip((t - a) / max(b - a, 1e-9), 0.0, 1.0)
    return 1.0 - x * x * (3 - 2 * x)


@dataclass(frozen=True)
class SoilLoads:
    """The soil's loads along a motion: ``f_ext`` {edge link: (N, 6)}, the soil (``machines.soil.Soil``), the
    cut (``machines.soil.SoilCut``), the payload ``mass`` (N,) [kg] held in the bucket, the edge ``link``, the
    ``active`` samples (N,) bool in which the edge may cut and the ``edge`` positions (N, 3) [m, world]."""
    f_ext: dict
    soil: object
    cut: object
    mass: np.ndarray
    link: str
    active: np.ndarray
    edge: np.ndarray


def soil_loads(model, t, Q, QD, QDD, soil, edge: Frame, plate, ground_height, width, capacity, active,
               edge_thickness, payload_com=None, release=None, poses=None) -> SoilLoads:
    """The soil cut by the edge ``edge`` along the motion (``machines.soil.soil_cutting``: the failure wedge
    of the Fundamental Earthmoving Equation, the cutting ``plate`` (3,) a direction in the edge frame giving
    the rake) and its wrench on the machine (``soil_wrench``), with the cut soil riding at ``payload_com``
    and leaving during ``release`` (N,) bool (``release_profile``). t (N,) [s]; Q, QD, QDD (N, nq); ``poses``
    as ``frame_poses``."""
    from urdf_dyn.machines.soil import soil_cutting
    T = frame_poses(model, Q, edge, poses=poses)
    pos = T[:, :3, 3]
    plate = np.asarray(plate, float)
    plate_w = np.einsum("nij,j->ni", T[:, :3, :3], plate / np.linalg.norm(plate))
    cut = soil_cutting(t, pos, plate_w, soil, ground_height, width, capacity, active, edge_thickness=edge_thickness)
    mass = cut.payload
    if payload_com is not None and release is not None:
        mass = mass * release_profile(t, release)
    f_ext = soil_wrench(model, Q, QD, QDD, edge, cut.force, payload_com, mass if payload_com is not None else None,
                        positions=pos, poses=poses)
    return SoilLoads(f_ext, soil, cut, mass, edge.link, active, pos)
