"""MJCF equalities, tendons and actuators → URDF ``<loop>``, ``<mimic>`` and ``<transmission>`` (the part of
``urdf_dyn.io.mjcf``'s translation beside the kinematic tree), as MuJoCo's compiler and engine define them
(https://mujoco.readthedocs.io/en/stable/XMLreference.html#equality, ``mj_instantiateEquality``):

- ``connect`` between bodies: body1's point ``anchor`` (``eq_data[0:3]``) coincides with body2's point
  ``eq_data[3:6]`` (the compiler puts it where body1's anchor is at qpos0) → a spherical loop with Fp at the
  first, Fs at the second; between sites: the two site positions coincide → Fp, Fs at the sites.
- ``weld`` between bodies: body1's point ``relpos`` (``eq_data[3:6]``) coincides with body2's point
  ``anchor`` (``eq_data[0:3]``), and body1's orientation times ``relquat`` (``eq_data[6:10]``) is body2's
  (the compiler fills relpose from qpos0 when the file gives none) → a fixed loop with Fp = (relpos,
  relquat) in body1, Fs = (anchor, identity) in body2; between sites: the two site frames coincide.
- ``joint`` equality q1 − q1₀ = c0 + c1 (q2 − q2₀) + c2 (q2 − q2₀)² + … (``polycoef``) → ``<mimic>`` with
  urdf_dyn's ``polynomial="c2 c3 c4"`` when those are not zero (a nonlinear row, ``constraints.couplings``);
  a ``joint`` equality without joint2 (a lock) is refused.
- ``tendon`` equality between fixed tendons L1 − L1₀ = c0 + c1 (L2 − L2₀) (L − L₀ = Σ c_j q_j) → a linear
  ``<coupling>``, one constant row Σ a_j q_j − c1 Σ b_j q_j = c0 (``urdf_dyn.io.urdf_plus``); higher terms
  and spatial tendons are refused.
- An actuator on a joint → ``<transmission>`` (gear as mechanical reduction); on a fixed tendon L = Σ c_j q_j
  → one ``<transmission>`` naming every joint of the tendon with its ``<coefficient>``: the actuator's force u
  acts as τ_j = c_j u (B's column is the tendon's coefficients; ``urdf_dyn.io.urdf_plus``).

Unnamed equalities are named ``<type>_<obj1>__<obj2>`` (bodies or sites), with ``_2``, ``_3``, ... for the
second and later ones of the same name, so two connects closing one revolute get two names, the same on every
load. What is not modelled — an inactive equality, tendon limits, stiffness, damping and friction, spatial
tendons, muscles, actuators on sites, bodies or slider-cranks — is a located ModelWarning.
"""
from __future__ import annotations

import numpy as np
from lxml import etree

from urdf_dyn.errors import UnsupportedError
from urdf_dyn.io._urdf_text import add_loop

__all__ = ["equalities", "transmissions", "quat_T"]


def quat_T(pos, quat_wxyz):
    """The 4×4 pose of a position and a MuJoCo (w, x, y, z) quaternion."""
    from scipy.spatial.transform import Rotation
    T = np.eye(4)
    w, x, y, z = quat_wxyz
    T[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
    T[:3, 3] = pos
    return T


def _names(mujoco, m, src, bodies):
    """Each equality's loop or mimic name: its own, else ``<type>_<obj1>__<obj2>`` made unique."""
    OE, OS = mujoco.mjtObj.mjOBJ_EQUALITY, mujoco.mjtObj.mjOBJ_SITE
    own = [mujoco.mj_id2name(m, OE, e) for e in range(m.neq)]
    taken, out = {n for n in own if n}, []
    for e in range(m.neq):
        if own[e]:
            out.append(own[e])
            continue
        et = mujoco.mjtEq(int(m.eq_type[e]))
        kind = et.name[5:].lower()
        if et in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD):
            if int(m.eq_objtype[e]) == int(OS):
                objs = [mujoco.mj_id2name(m, OS, int(i)) or f"site_{int(i)}" for i in (m.eq_obj1id[e], m.eq_obj2id[e])]
            else:
                objs = [bodies[int(i)] for i in (m.eq_obj1id[e], m.eq_obj2id[e])]
            base = f"{kind}_{objs[0]}__{objs[1]}"
        else:
            base = f"{kind}_{e}"
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        out.append(name)
    return out


def equalities(mujoco, m, src, robot, bodies, jnames, origins):
    """Append the loops and mimics of ``m``'s equalities to ``robot`` (module docstring); ``origins`` gets
    {("loop" | "joint", URDF name): (line, MJCF element)} for messages about the translation."""
    OE, OS = mujoco.mjtObj.mjOBJ_EQUALITY, mujoco.mjtObj.mjOBJ_SITE
    E = mujoco.mjtEq
    names = _names(mujoco, m, src, bodies)
    joints_el = {el.get("name"): el for el in robot.findall("joint")}
    for e in range(m.neq):
        et, d, ename = E(int(m.eq_type[e])), np.asarray(m.eq_data[e], float), names[e]
        where = src.where("equality", e, mujoco.mj_id2name(m, OE, e), m.neq, label=ename)
        if not m.eq_active0[e]:
            src.warn(where, f"equality {ename!r} is inactive (active=\"false\") in the file; it is not read")
            continue
        if et in (E.mjEQ_CONNECT, E.mjEQ_WELD):
            sites = int(m.eq_objtype[e]) == int(OS)
            o1, o2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            if sites:  # the two site frames (connect: their positions) coincide
                b1, b2 = int(m.site_bodyid[o1]), int(m.site_bodyid[o2])
                TP, TS = quat_T(m.site_pos[o1], m.site_quat[o1]), quat_T(m.site_pos[o2], m.site_quat[o2])
                if et == E.mjEQ_CONNECT:
                    TP[:3, :3], TS[:3, :3] = np.eye(3), np.eye(3)
            elif et == E.mjEQ_CONNECT:
                b1, b2 = o1, o2
                TP, TS = np.eye(4), np.eye(4)
                TP[:3, 3], TS[:3, 3] = d[0:3], d[3:6]
            else:
                b1, b2 = o1, o2
                TP, TS = quat_T(d[3:6], d[6:10] / np.linalg.norm(d[6:10])), np.eye(4)
                TS[:3, 3] = d[0:3]
            if et == E.mjEQ_WELD and d[10] != 1.0:
                src.warn(where, f"torquescale {d[10]:g} is not modelled: the weld holds orientation rigidly")
            add_loop(robot, ename, "spherical" if et == E.mjEQ_CONNECT else "fixed", bodies[b1], TP, bodies[b2], TS)
            origins[("loop", ename)] = where
        elif et == E.mjEQ_JOINT:
            j1, j2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            if j2 < 0:
                raise src.err(where, f"joint equality {ename!r} without joint2 (q1 = {d[0]:g}, a locked joint) is "
                                     "not read; lock the joint by making it fixed", UnsupportedError)
            if j1 not in jnames or j2 not in jnames:
                raise src.err(where, f"joint equality {ename!r} couples a joint that is not a hinge or slide",
                              UnsupportedError)
            el = joints_el[jnames[j1]]
            if el.find("mimic") is not None:
                raise src.err(where, f"joint {jnames[j1]!r} is joint1 of two joint equalities; make it joint2 "
                                     "of one of them", UnsupportedError)
            mim = etree.SubElement(el, "mimic", joint=jnames[j2], multiplier=repr(float(d[1])),
                                   offset=repr(float(d[0])))
            if np.any(d[2:5]):  # q1 = c0 + c1 q2 + c2 q2² + c3 q2³ + c4 q2⁴: urdf_dyn's polynomial extension
                mim.set("polynomial", " ".join(repr(float(v)) for v in d[2:5]))
            origins[("joint", jnames[j1])] = where
        elif et == E.mjEQ_TENDON:
            _tendon_equality(mujoco, m, src, robot, jnames, e, ename, where)
            origins[("coupling", ename)] = where
        else:
            raise src.err(where, f"equality {ename!r} of type {et.name[5:].lower()}: urdf_dyn reads connect, weld, "
                                 "joint and fixed-tendon equalities", UnsupportedError)


def _tendon_equality(mujoco, m, src, robot, jnames, e, ename, where):
    """A tendon equality L1 − L1₀ = c0 + c1 (L2 − L2₀) between fixed tendons (L − L₀ = Σ c_j q_j, q = qpos −
    qpos0) → ``<coupling type="linear">``: Σ a_j q_j − c1 Σ b_j q_j = c0."""
    d = np.asarray(m.eq_data[e], float)
    if np.any(d[2:5]):
        raise src.err(where, f"tendon equality {ename!r} has polycoef {' '.join(f'{v:g}' for v in d[:5])}: urdf_dyn "
                             "reads L1 = c0 + c1 L2 (terms in L2², L2³, L2⁴ are not read)", UnsupportedError)
    coef = {}
    for t, scale in ((int(m.eq_obj1id[e]), 1.0), (int(m.eq_obj2id[e]), -float(d[1]))):
        if t < 0:
            continue
        terms = _fixed_tendon(mujoco, m, t, jnames)
        if terms is None:
            raise src.err(where, f"tendon equality {ename!r} holds a spatial tendon: urdf_dyn reads fixed tendons "
                                 "of hinge and slide joints", UnsupportedError)
        for jn, c in terms:
            coef[jn] = coef.get(jn, 0.0) + scale * c
    el = etree.SubElement(robot, "coupling", name=ename, type="linear")
    for jn, c in coef.items():
        etree.SubElement(el, "joint", name=jn, coefficient=repr(c))
    etree.SubElement(el, "offset", value=repr(float(d[0])))


def _fixed_tendon(mujoco, m, t, jnames):
    """((joint name, coefficient), ...) of fixed tendon t, or None if it is spatial (or holds a joint that is
    not a hinge or slide)."""
    adr, num = int(m.tendon_adr[t]), int(m.tendon_num[t])
    if any(int(m.wrap_type[w]) != int(mujoco.mjtWrap.mjWRAP_JOINT) or int(m.wrap_objid[w]) not in jnames
           for w in range(adr, adr + num)):
        return None
    return tuple((jnames[int(m.wrap_objid[w])], float(m.wrap_prm[w])) for w in range(adr, adr + num))


def transmissions(mujoco, m, src, robot, jnames, origins):
    """Append a ``<transmission>`` per actuator on a joint or a fixed tendon (module docstring), warn about
    what is not modelled in tendons and actuators."""
    OT, OA = mujoco.mjtObj.mjOBJ_TENDON, mujoco.mjtObj.mjOBJ_ACTUATOR
    T = mujoco.mjtTrn
    tendons = {}
    for t in range(m.ntendon):
        tname = mujoco.mj_id2name(m, OT, t) or f"tendon_{t}"
        where = src.where("tendon", t, mujoco.mj_id2name(m, OT, t), m.ntendon, label=tname)
        tendons[t] = terms = _fixed_tendon(mujoco, m, t, jnames)
        if terms is None:
            src.warn(where, f"spatial tendon {tname!r} is not modelled (urdf_dyn reads fixed tendons of hinge and "
                            "slide joints); its limits, forces and actuators are left out")
            continue
        unread = [w for w, v in (("range (a unilateral limit)", m.tendon_limited[t]),
                                 ("stiffness", m.tendon_stiffness[t]), ("damping", m.tendon_damping[t]),
                                 ("frictionloss", m.tendon_frictionloss[t]),
                                 ("armature", getattr(m, "tendon_armature", np.zeros(m.ntendon))[t])) if v]
        if unread:
            src.warn(where, f"fixed tendon {tname!r}: {', '.join(unread)} not modelled; left out")
    for a in range(m.nu):
        aname = mujoco.mj_id2name(m, OA, a) or f"actuator_{a}"
        where = src.where("actuator", a, mujoco.mj_id2name(m, OA, a), m.nu, label=aname)
        trn, obj = T(int(m.actuator_trntype[a])), int(m.actuator_trnid[a][0])
        if int(m.actuator_dyntype[a]) == int(mujoco.mjtDyn.mjDYN_MUSCLE) \
                or int(m.actuator_gaintype[a]) == int(mujoco.mjtGain.mjGAIN_MUSCLE):
            src.warn(where, f"muscle {aname!r}: its activation and force-length-velocity law are not modelled; "
                            "read as a force u on its transmission")
        if trn in (T.mjTRN_JOINT, T.mjTRN_JOINTINPARENT) and obj in jnames:
            terms = ((jnames[obj], 1.0),)
        elif trn == T.mjTRN_TENDON and tendons.get(obj):
            terms = tendons[obj]
        else:
            what = {T.mjTRN_TENDON: "a spatial tendon", T.mjTRN_JOINT: "a ball or free joint",
                    T.mjTRN_JOINTINPARENT: "a ball or free joint"}.get(trn, trn.name[7:].lower() + " transmission")
            src.warn(where, f"actuator {aname!r} acts through {what}, which is not modelled; it is left out of "
                            "the actuators")
            continue
        tr = etree.SubElement(robot, "transmission", name=aname)
        etree.SubElement(tr, "type").text = ("transmission_interface/SimpleTransmission" if trn != T.mjTRN_TENDON
                                             else "urdf_dyn/FixedTendon")
        etree.SubElement(etree.SubElement(tr, "actuator", name=aname),
                         "mechanicalReduction").text = repr(float(m.actuator_gear[a][0]))
        for jn, c in terms:
            j_el = etree.SubElement(tr, "joint", name=jn)
            if trn == T.mjTRN_TENDON:
                etree.SubElement(j_el, "coefficient").text = repr(c)
        origins[("transmission", aname)] = where
