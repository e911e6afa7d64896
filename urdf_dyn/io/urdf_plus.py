"""Readers of the URDF elements beside the kinematic tree: ROS 1 ``<transmission>``, ROS 2
``<ros2_control>`` and URDF+ ``<coupling>``. Called by ``urdf_dyn.io.urdf.parse_urdf`` with its checker
(``chk``), so that every error and warning names the file, the line and the element.

Transmissions (ROS 1, http://wiki.ros.org/urdf/XML/Transmission; Drake's extensions):

    <transmission name="t1">
      <type>transmission_interface/SimpleTransmission</type>
      <joint name="j1"/>
      <actuator name="m1"><mechanicalReduction>50</mechanicalReduction>
                          <drake:rotor_inertia value="1e-4"/></actuator>      <!-- optional -->
    </transmission>

A fixed tendon (MuJoCo's ``<fixed>``, length L = Σ c_j q_j) driven by one actuator is a transmission whose
``<joint>`` elements each hold a ``<coefficient>`` (urdf_dyn's extension; every joint then needs one): the
actuator's force u gives the joint forces τ_j = c_j u, so B's column is (c_j) (``Transmission.coefficients``):

    <transmission name="fingers"><type>urdf_dyn/FixedTendon</type>
      <joint name="right_driver"><coefficient>0.5</coefficient></joint>
      <joint name="left_driver"><coefficient>0.5</coefficient></joint>
      <actuator name="fingers"><mechanicalReduction>1</mechanicalReduction></actuator>
    </transmission>

ROS 2 (ros2_control, https://control.ros.org): the ``<joint>`` elements of a ``<ros2_control>`` block with a
``<command_interface>`` are actuated; its ``<transmission>`` elements give ``<mechanical_reduction>`` (on the
joint or the actuator) and optionally a ``rotor_inertia`` parameter. A reduction that is not a number (e.g.
an unexpanded ``reduction`` placeholder) is kept as 1 with a located ModelWarning, as Pinocchio ignores it;
``strict=True`` refuses it.

Joint armature (``Model.armature``, the rotor inertia reflected through the gearbox, added to H's
diagonal): urdf_dyn's extension attribute ``<dynamics damping="…" friction="…" armature="…"/>`` [kg m² for a
revolute joint, kg for a prismatic one] (MuJoCo's joint ``armature``; docs/manual.md, "URDF extensions"), or,
as Drake reads it (``drake::multibody::JointActuator``: reflected inertia ρ² I_r), a ``<transmission>``'s
``<actuator>`` with ``<drake:rotor_inertia value="I_r"/>`` and optionally ``<drake:gear_ratio value="ρ"/>``
(default 1; Drake does not read ``<mechanicalReduction>``).

URDF+ couplings (generalized_rbda, Chignoli et al.; ``urdf_dyn.model.Coupling``): ``<coupling name type=
"rolling"><predecessor link/><successor link/><ratio value/></coupling>``, or its older spelling
``<constraint type="rolling">`` (Cassie v4 of generalized_rbda's history). Every joint on the two paths
from the links' nearest common ancestor must be revolute or continuous (the constraint adds joint angles).
A general linear coupling Σ c_j q_j = offset (MuJoCo's tendon equality between fixed tendons, as the MJCF
reader writes it): ``<coupling name type="linear"><joint name coefficient/>... <offset value/></coupling>``.
"""
from __future__ import annotations

import math

import numpy as np

from urdf_dyn.io.xml_ns import DRAKE_NS
from urdf_dyn.model import Coupling, Transmission

__all__ = ["read_transmissions", "read_couplings", "coupling_followers", "joint_armature"]

_ROTOR_TAGS = ("rotorInertia", "rotor_inertia", "motorInertia", "{http://drake.mit.edu}rotor_inertia")
_GEAR_TAGS = ("{http://drake.mit.edu}gear_ratio",)


def _number(chk, el, text, what):
    """float(text), or None with a located warning (error when strict) if it is not a finite number."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        v = None
    if v is None or not math.isfinite(v):
        chk.lenient(el, f"{what} {text!r} is not a number; ignored (Pinocchio ignores it too)")
        return None
    return v


def _value(node):
    """An element's number: its ``value`` attribute or its text."""
    return node.get("value") if node.get("value") is not None else (node.text or "").strip()


def _reduction_and_rotor(chk, el, red_tags):
    red, rotor = 1.0, None
    for tag in red_tags + _GEAR_TAGS:
        for mr in el.iter(tag):
            v = _number(chk, el, _value(mr), f"<{mr.tag.split('}')[-1]}>")
            if v is not None:
                if v == 0:
                    raise chk.err(el, f"<{mr.tag.split('}')[-1]}> is zero: a reduction must be non-zero")
                red = v
    for tag in _ROTOR_TAGS:
        for ri in el.iter(tag):
            v = _number(chk, el, _value(ri), f"<{ri.tag.split('}')[-1]}>")
            if v is not None:
                if v < 0:
                    raise chk.err(el, f"rotor inertia {v} is negative")
                rotor = v
    for p in el.iter("param"):
        if p.get("name") in ("mechanical_reduction", "rotor_inertia"):
            v = _number(chk, el, (p.text or "").strip(), f"<param name={p.get('name')!r}>")
            if v is not None and p.get("name") == "mechanical_reduction" and v != 0:
                red = v
            elif v is not None and p.get("name") == "rotor_inertia" and v >= 0:
                rotor = v
    return red, rotor


def _one(chk, el, joints, source):
    names, coefs = [], []
    tendon = any(j.find("coefficient") is not None for j in el.findall("joint"))
    for j in el.findall("joint"):
        jn = j.get("name")
        if jn not in joints:  # stale transmissions are common; Pinocchio ignores them too
            if tendon:
                raise chk.err(el, f"fixed-tendon transmission names unknown joint {jn!r}")
            chk.warn(el, f"transmission names unknown joint {jn!r}; ignored")
            continue
        names.append(jn)
        if tendon:
            c = j.find("coefficient")
            if c is None:
                raise chk.err(el, f"joint {jn!r} of a fixed-tendon transmission has no <coefficient> (every joint "
                                  "needs one when one has)")
            v = _number(chk, el, _value(c), "<coefficient>")
            if v is None:
                raise chk.err(el, f"<coefficient> {_value(c)!r} of joint {jn!r} is not a number")
            coefs.append(v)
    tags = ("mechanicalReduction",) if source == "ros1" else ("mechanical_reduction", "mechanicalReduction")
    red, rotor = _reduction_and_rotor(chk, el, tags)
    act = el.find("actuator")
    return Transmission(el.get("name") or "", tuple(names), red, source, rotor,
                        (act.get("name") or "") if act is not None else "", tuple(coefs))


def read_transmissions(root, joints, chk):
    """Transmission tuple: ROS 1 ``<transmission>`` elements under ``<robot>``, then per ``<ros2_control>``
    its ``<transmission>`` elements and, for actuated joints without one, a reduction-1 entry."""
    out = [_one(chk, el, joints, "ros1") for el in root.findall("transmission")]
    for rc in root.findall("ros2_control"):
        covered = set()
        for el in rc.findall("transmission"):
            t = _one(chk, el, joints, "ros2_control")
            covered.update(t.joints)
            out.append(t)
        for j in rc.findall("joint"):
            jn = j.get("name")
            if jn in covered or j.find("command_interface") is None:
                continue
            if jn not in joints:
                chk.warn(j, f"<ros2_control> names unknown joint {jn!r}; ignored")
                continue
            red, rotor = _reduction_and_rotor(chk, j, ("mechanical_reduction",))
            out.append(Transmission(jn, (jn,), red, "ros2_control", rotor, ""))
    return tuple(out)


def read_couplings(root, model, chk):
    """Coupling tuple from the ``<coupling>`` elements (see the module docstring), checked."""
    out, seen = [], {}
    axes_world = None
    for el in root.findall("constraint"):  # the older URDF+ spelling (generalized_rbda before <coupling>)
        if el.get("type") != "rolling":
            chk.lenient(el, f"<constraint type={el.get('type')!r}> (older URDF+) is not read: declare the loop "
                            "with a <loop> element")
    old_style = [el for el in root.findall("constraint") if el.get("type") == "rolling"]
    for el in root.findall("coupling") + old_style:
        name = el.get("name")
        if not name:
            raise chk.err(el, "<coupling> without a name attribute")
        if name in seen:
            raise chk.err(el, f"duplicate coupling name {name!r} (first on line {seen[name]})")
        seen[name] = el.sourceline
        ctype = el.get("type") or "rolling"
        if ctype == "linear":
            out.append(_linear_coupling(el, name, model, chk))
            continue
        if ctype != "rolling":
            raise chk.err(el, f"coupling type {ctype!r} is not supported (types: rolling, linear); use <loop> "
                              "for a position constraint", )
        ends = []
        for tag in ("predecessor", "successor"):
            e = el.find(tag)
            if e is None or not e.get("link"):
                raise chk.err(el, f"coupling has no <{tag} link=...>")
            if e.get("link") not in model.links:
                raise chk.err(el, f"coupling names unknown link {e.get('link')!r}")
            ends.append(e.get("link"))
        r_el = el.find("ratio")
        ratio = 1.0 if r_el is None else chk.floats(r_el, "value", 1, owner=el)[0]
        if ratio == 0:
            raise chk.err(el, "coupling ratio is zero")
        bp, bs = model.links[ends[0]].body, model.links[ends[1]].body
        coef = _path_coefficients(model, bp, bs, ratio)
        if coef is None:
            raise chk.err(el, f"links {ends[0]!r} and {ends[1]!r}: one is an ancestor of the other (or they are "
                              "welded together); a coupling needs two branches from their common ancestor")
        bad = [j for j, _ in coef if model.joint_types[model.joint_index(j)] not in ("revolute", "continuous")]
        if bad:
            raise chk.err(el, f"coupling through non-revolute joint(s) {', '.join(bad)}: a rolling coupling adds "
                              "joint angles, so every joint on its paths must be revolute or continuous")
        if axes_world is None:
            axes_world = _joint_axes_world(model)
        ax = [axes_world[model.joint_index(j)] for j, _ in coef]
        if any(abs(abs(a @ ax[0]) - 1.0) > 1e-6 for a in ax):
            chk.warn(el, "the joints of this coupling do not turn about parallel axes at the initial "
                         "configuration; the angle sum of the rolling constraint is kept as written")
        out.append(Coupling(name, ctype, ends[0], ends[1], float(ratio), coef, el.sourceline or 0))
    return tuple(out)


def _linear_coupling(el, name, model, chk):
    """A ``<coupling type="linear">``: Σ c_j q_j = offset over its ``<joint name coefficient>`` elements."""
    coef = {}
    for j in el.findall("joint"):
        jn = j.get("name")
        if jn not in model.joint_names or model.joint_types[model.joint_index(jn)] not in (
                "revolute", "continuous", "prismatic"):
            raise chk.err(el, f"linear coupling names {jn!r}, which is not a revolute, continuous or prismatic joint")
        coef[jn] = coef.get(jn, 0.0) + chk.floats(j, "coefficient", 1, owner=el)[0]
    if not any(coef.values()):
        raise chk.err(el, "linear coupling has no <joint name coefficient> with a non-zero coefficient")
    off = el.find("offset")
    offset = 0.0 if off is None else chk.floats(off, "value", 1, owner=el)[0]
    return Coupling(name, "linear", "", "", 1.0, tuple(coef.items()), el.sourceline or 0, offset)


def _path_coefficients(model, bp, bs, ratio):
    def chain(i):
        out = []
        while i > 0:
            out.append(i)
            i = int(model.parent[i])
        return out
    cp, cs = chain(bp), chain(bs)
    common = set(cp) & set(cs)
    pp, ps = [i for i in cp if i not in common], [i for i in cs if i not in common]
    if not pp or not ps:
        return None
    coef = {}
    for i, c in [(i, ratio) for i in pp] + [(i, -1.0) for i in ps]:
        j = model.joint_names[i - 1]
        coef[j] = coef.get(j, 0.0) + c
    return tuple(coef.items())


def _joint_axes_world(model):
    from urdf_dyn.algorithms.kinematics import body_poses
    T = body_poses(model, model.q_initial()[None, :])[0]
    return np.array([T[i][:3, :3] @ np.asarray(model.axis[i]) for i in range(1, model.NB + 1)])


def coupling_followers(model, couplings):
    """Joints that follow others: ``<mimic>`` followers and the joints on each coupling's NCA→successor path
    (the rotors). They are the natural dependent coordinates when a file marks none ``independent``."""
    out = {mi.joint for mi in model.mimic}
    for c in couplings:
        if c.type == "linear":  # its first joint with a non-zero coefficient
            out.add(next(j for j, v in c.coefficients if v))
            continue
        bs, bp = model.links[c.successor].body, model.links[c.predecessor].body
        anc = set()
        i = bp
        while i > 0:
            anc.add(i)
            i = int(model.parent[i])
        i = bs
        while i > 0 and i not in anc:
            out.add(model.joint_names[i - 1])
            i = int(model.parent[i])
    return out


def joint_armature(root, joint_names, urdf_joint_of, joints_el, chk):
    """(nv,) armature of each tree coordinate (module docstring): ``<dynamics armature>`` of a 1-dof joint,
    plus ρ² I_r of every ``<transmission>`` whose ``<actuator>`` gives ``<drake:rotor_inertia>``. Raises a
    located ModelError for a negative value; warns (located) of an armature on a floating or planar joint,
    which is not read, and of a joint given both (the ``<dynamics armature>`` value is kept)."""
    out = np.zeros(len(joint_names))
    index = {urdf_joint_of[j]: k for k, j in enumerate(joint_names) if urdf_joint_of[j]}
    given = set()
    for name, el in joints_el.items():
        v = chk.floats(el.find("dynamics"), "armature", 1, owner=el)
        if v is None:             # (a negative value was refused with the joint's other <dynamics>)
            continue
        if el.get("type") in ("floating", "planar"):
            chk.warn(el, f"<dynamics armature> on a {el.get('type')} joint is not read (1-dof joints only)")
        elif name in index:
            out[index[name]] = v[0]
            given.add(name)
    for tr in root.findall("transmission"):
        act = tr.find("actuator")
        ri = None if act is None else act.find(f"{{{DRAKE_NS}}}rotor_inertia")
        if ri is None:
            continue
        J = chk.floats(ri, "value", 1, owner=tr)
        gr = act.find(f"{{{DRAKE_NS}}}gear_ratio")
        G = chk.floats(gr, "value", 1, default=[1.0], owner=tr)[0] if gr is not None else 1.0
        if J is None:
            raise chk.err(tr, "<drake:rotor_inertia> has no value attribute")
        if J[0] < 0:
            raise chk.err(tr, f"<drake:rotor_inertia value={J[0]}> is negative")
        for j in tr.findall("joint"):
            jn = j.get("name")
            if jn in given:
                chk.warn(tr, f"joint {jn!r} has <dynamics armature> and a <drake:rotor_inertia>: the "
                             "<dynamics armature> value is kept")
            elif jn in index:
                out[index[jn]] += G * G * J[0]
    return out
