"""Writing URDF elements (with the ``<loop>`` extension) from poses and inertias: the common back end of the
SDF and MJCF readers, which translate their format to a URDF tree + loops and let ``io.urdf`` build the Model
(so that one builder, one set of checks and one viewer path serve every format)."""
from __future__ import annotations

import numpy as np
from lxml import etree
from scipy.spatial.transform import Rotation

__all__ = ["fmt", "origin", "add_inertial", "add_loop", "matrix_to_rpy"]


def fmt(values) -> str:
    """Space-separated shortest round-trip representation of floats (no precision lost)."""
    return " ".join(repr(float(v)) for v in np.ravel(values))


def matrix_to_rpy(R) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed x, y, z axes: R = Rz(y) Ry(p) Rx(r)) of a rotation matrix (3×3).

    At pitch ±90° (a capsule ``fromto`` along x, say) roll and yaw are not unique: scipy then sets the third
    angle to zero and warns "Gimbal lock detected"; the angles it returns still give R exactly, so the
    warning says nothing to the user about their file and is not shown."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Gimbal lock detected", category=UserWarning)
        return Rotation.from_matrix(np.asarray(R, float)).as_euler("xyz")


def origin(parent, T, tag="origin"):
    """Append ``<origin xyz rpy>`` for the 4×4 pose T to ``parent``."""
    return etree.SubElement(parent, tag, xyz=fmt(T[:3, 3]), rpy=fmt(matrix_to_rpy(T[:3, :3])))


def add_inertial(link_el, mass, T_com, Ic):
    """``<inertial>``: ``mass`` [kg], centre-of-mass frame ``T_com`` (4×4 in the link frame), rotational
    inertia ``Ic`` (3×3) [kg m²] about the centre of mass in the T_com frame."""
    inert = etree.SubElement(link_el, "inertial")
    origin(inert, T_com)
    etree.SubElement(inert, "mass", value=repr(float(mass)))
    Ic = np.asarray(Ic, float)
    etree.SubElement(inert, "inertia", ixx=repr(float(Ic[0, 0])), ixy=repr(float(Ic[0, 1])), ixz=repr(float(Ic[0, 2])),
                     iyy=repr(float(Ic[1, 1])), iyz=repr(float(Ic[1, 2])), izz=repr(float(Ic[2, 2])))
    return inert


def add_loop(robot_el, name, ltype, pred, T_P, succ, T_S, axis=(1.0, 0.0, 0.0), axis2=None, limits=None,
             actuated=False):
    """``<loop>`` between links ``pred`` and ``succ`` with Fp = T_P (4×4 in the predecessor link frame), Fs =
    T_S (in the successor link frame), ``axis`` in Fp; ``limits`` an optional {lower, upper, effort, velocity}."""
    el = etree.SubElement(robot_el, "loop", name=name, type=ltype, actuated="true" if actuated else "false")
    origin(etree.SubElement(el, "predecessor", link=pred), T_P)
    origin(etree.SubElement(el, "successor", link=succ), T_S)
    etree.SubElement(el, "axis", xyz=fmt(axis))
    if axis2 is not None:
        etree.SubElement(el, "axis2", xyz=fmt(axis2))
    if limits:
        etree.SubElement(el, "limit", **{k: repr(float(v)) for k, v in limits.items() if np.isfinite(v)})
    return el
