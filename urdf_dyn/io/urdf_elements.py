"""The URDF elements the Model is built from, read from an lxml tree: robot, links (inertial), joints
(origin, axis, limit, dynamics, mimic).

The same objects, attribute names, defaults and numbers as yourdfpy 0.0.60's ``URDF._parse_robot`` (whose
reader the URDF reader used before), without yourdfpy's import: yourdfpy imports trimesh, which imports
networkx, shapely, rtree and scipy.ndimage — about 0.4 s of every command's start-up for ~100 lines of
element reading. Origins are composed as ``trimesh.transformations.compose_matrix(translate=xyz,
angles=rpy)`` does: T(xyz) · R, with R = Rz(yaw) Ry(pitch) Rx(roll) (static x-y-z, the URDF convention),
term by term, so the poses are bit-identical. Validation (with file and line) stays with the reader's
checker (``urdf_dyn.io.urdf``): this module assumes a checked tree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Robot", "Link", "Inertial", "Joint", "Limit", "Dynamics", "Mimic", "read_robot", "origin_matrix"]


@dataclass
class Inertial:
    origin: np.ndarray | None = None    # 4x4 pose of the centre-of-mass frame in the link frame
    inertia: np.ndarray | None = None   # 3x3 [kg m²] about the centre of mass, in that frame
    mass: float | None = None           # [kg]


@dataclass
class Link:
    name: str
    inertial: Inertial | None = None


@dataclass
class Limit:
    effort: float | None = None
    velocity: float | None = None
    lower: float | None = None
    upper: float | None = None


@dataclass
class Dynamics:
    damping: str | None = None          # the attribute's text, as yourdfpy keeps it
    friction: str | None = None


@dataclass
class Mimic:
    joint: str
    multiplier: float | None = 1.0
    offset: float | None = 0.0


@dataclass
class Joint:
    name: str
    type: str | None = None
    parent: str | None = None
    child: str | None = None
    origin: np.ndarray | None = None    # 4x4 pose of the joint frame in the parent link frame
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0, 0]))
    limit: Limit | None = None
    dynamics: Dynamics | None = None
    mimic: Mimic | None = None


@dataclass
class Robot:
    name: str
    links: list = field(default_factory=list)
    joints: list = field(default_factory=list)


def _float(s):
    return float(s) if s is not None else None


def origin_matrix(xyz, rpy):
    """4x4 pose T(xyz) · Rz(rpy[2]) Ry(rpy[1]) Rx(rpy[0]) (URDF ``<origin>``), computed as
    ``trimesh.transformations.compose_matrix`` / ``euler_matrix(..., 'sxyz')`` do."""
    ai, aj, ak = (float(a) for a in rpy)
    si, sj, sk = math.sin(ai), math.sin(aj), math.sin(ak)
    ci, cj, ck = math.cos(ai), math.cos(aj), math.cos(ak)
    cc, cs = ci * ck, ci * sk
    sc, ss = si * ck, si * sk
    R = np.identity(4)
    R[0, 0], R[0, 1], R[0, 2] = cj * ck, sj * sc - cs, sj * cc + ss
    R[1, 0], R[1, 1], R[1, 2] = cj * sk, sj * ss + cc, sj * cs - sc
    R[2, 0], R[2, 1], R[2, 2] = -sj, cj * si, cj * ci
    T = np.identity(4)
    T[:3, 3] = np.asarray(xyz, float)[:3]
    M = np.dot(np.dot(np.identity(4), T), R)
    M /= M[3, 3]
    return M


def _origin(el):
    if el is None:
        return None
    xyz = np.array(list(map(float, el.get("xyz", default="0 0 0").split())))
    rpy = np.array(list(map(float, el.get("rpy", default="0 0 0").split())))
    return origin_matrix(xyz, rpy)


def _inertia(x):
    if x is None:
        return None
    g = x.get
    return np.array([[g("ixx", default=1.0), g("ixy", default=0.0), g("ixz", default=0.0)],
                     [g("ixy", default=0.0), g("iyy", default=1.0), g("iyz", default=0.0)],
                     [g("ixz", default=0.0), g("iyz", default=0.0), g("izz", default=1.0)]], dtype=np.float64)


def _inertial(el):
    if el is None:
        return None
    mass = el.find("mass")
    return Inertial(origin=_origin(el.find("origin")), inertia=_inertia(el.find("inertia")),
                    mass=None if mass is None else _float(mass.get("value", default=0.0)))


def _joint(el):
    axis = el.find("axis")
    limit, dyn, mimic = el.find("limit"), el.find("dynamics"), el.find("mimic")
    return Joint(
        name=el.attrib["name"], type=el.get("type", default=None),
        parent=el.find("parent").get("link"), child=el.find("child").get("link"),
        origin=_origin(el.find("origin")),
        axis=np.array([1.0, 0, 0]) if axis is None else np.array(list(map(float, axis.get("xyz", "1 0 0").split()))),
        limit=None if limit is None else Limit(*(_float(limit.get(k, default=None))
                                                 for k in ("effort", "velocity", "lower", "upper"))),
        dynamics=None if dyn is None else Dynamics(dyn.get("damping", default=None), dyn.get("friction", default=None)),
        mimic=None if mimic is None else Mimic(mimic.get("joint"), _float(mimic.get("multiplier", 1.0)),
                                               _float(mimic.get("offset", 0.0))))


def read_robot(root) -> Robot:
    """The Robot of a checked ``<robot>`` element (lxml): its ``<link>`` and ``<joint>`` children in document
    order. Raises what reading a malformed element raises (KeyError, AttributeError, ValueError): the
    caller reports it with the file."""
    return Robot(name=root.attrib["name"],
                 links=[Link(el.attrib["name"], _inertial(el.find("inertial"))) for el in root.findall("link")],
                 joints=[_joint(el) for el in root.findall("joint")])
