"""MJCF (MuJoCo) → Model: the kinematic tree of ``<body>``/``<joint>`` plus the ``connect`` and ``weld``
equalities as loop joints, ``joint`` equalities as mimic couplings, actuators on joints and fixed tendons as
transmissions.

MuJoCo's own compiler reads the file (defaults, ``childclass``, angle units, ``euler`` sequences,
``fullinertia`` → principal axes, ``connect`` anchors on body2 and weld ``relpose`` at qpos0 are all resolved
by it), so the reader only translates the compiled ``mjModel``; it needs the ``[mujoco]`` extra (``pip
install 'urdf_dyn[mujoco]'``). Compiler errors become a ModelError naming the file and MuJoCo's line; every
other error and warning names the user's file, line and MJCF element (``urdf_dyn.io.mjcf_source``), also
when it comes from the URDF reader's checks of the translation.

Translation (q = qpos − qpos0, i.e. q = 0 is the configuration written in the file, where MuJoCo's
compiler closes the ``connect`` anchors and ``weld`` poses):

- a body without joints is fixed to its parent; a ``hinge`` → revolute (continuous when unlimited); a
  ``slide`` → prismatic; several joints in one body → a chain through massless links ``<body>__j<k>``;
  a ``free`` joint (``<freejoint>``) → a floating joint whose origin is the body's pose in the file, so that
  q = (0, 0, 0, 0, 0, 0, 1) is that pose (MuJoCo's qpos holds the world pose and (w, x, y, z); its qvel the
  world-frame linear velocity — urdf_dyn's is the body frame's, ``docs/floating_base.md``); ``ball`` joints are
  refused (UnsupportedError);
- every MJCF body frame stays a URDF link of the same name (a joint away from the body origin moves a
  massless link ``<body>__joint`` to which the body is fixed);
- inertias from ``body_mass``, ``body_ipos``, ``body_iquat``, ``body_inertia`` (the compiled principal axes);
- equalities, tendons and actuators: ``urdf_dyn.io.mjcf_equality`` (connect/weld between bodies or sites →
  loops, joint equalities → mimic (polynomial ones nonlinear), fixed-tendon equalities → linear couplings,
  actuators on joints or fixed tendons → transmissions);
- damping, armature (``<dynamics damping armature>``), stiffness/springref → Gazebo springs; joint ranges
  shifted by qpos0. ``frictionloss`` is kept as ``<dynamics friction>`` with a warning (urdf_dyn's dynamics
  have no dry friction); armature, damping or frictionloss on a free joint are left out with a warning.
- An MJCF file lists its actuators, so a file without any has no actuated joint (``Model.actuators_declared``).
"""
from __future__ import annotations

import dataclasses
import os
import re
import warnings
from pathlib import Path

import numpy as np
from lxml import etree

from urdf_dyn.errors import ModelError, ModelWarning, UnsupportedError
from urdf_dyn.io._urdf_text import add_inertial, fmt, origin
from urdf_dyn.io.mjcf_equality import equalities, quat_T, transmissions
from urdf_dyn.io.mjcf_source import MjcfSource
from urdf_dyn.io.urdf import parse_urdf

__all__ = ["parse_mjcf", "mjcf_to_urdf", "require_mujoco"]


def require_mujoco(what="MJCF import"):
    """Import mujoco, or raise a ModelError saying how to install it."""
    try:
        import mujoco
    except ImportError:
        raise ModelError(f"{what} needs MuJoCo: pip install 'urdf_dyn[mujoco]'") from None
    return mujoco


def _compile(source):
    mujoco = require_mujoco()
    from urdf_dyn.io.urdf import MAX_XML_BYTES, _refuse_doctype
    if isinstance(source, str) and source.lstrip().startswith("<"):
        name, loader = "<string>", (lambda: mujoco.MjModel.from_xml_string(source))
        data = source.encode()
    else:
        path = Path(os.fspath(source))
        if not path.is_file():
            raise ModelError("file not found" if not path.exists() else "not a file", file=str(path))
        if path.stat().st_size > MAX_XML_BYTES:
            raise ModelError(f"file is {path.stat().st_size} bytes, over the {MAX_XML_BYTES}-byte limit",
                             file=str(path))
        name, loader = str(path), (lambda: mujoco.MjModel.from_xml_path(str(path)))
        data = path.read_bytes()
    _refuse_doctype(data, name)  # as the URDF and SDF readers: MuJoCo's TinyXML2 would read the DTD's entities
    try:
        return mujoco, loader(), MjcfSource(data, name)
    except ValueError as e:
        msg = " ".join(str(e).split())
        m = re.search(r"line (\d+)", msg)
        raise ModelError(f"MuJoCo could not compile the MJCF: {msg}", file=name,
                         line=int(m.group(1)) if m else None) from None


def mjcf_to_urdf(source):
    """Translate an MJCF file (path or XML text) into URDF text with ``<loop>`` elements.

    Returns:
        (urdf_text, display name). Raises ModelError/UnsupportedError naming the file, line and MJCF element;
        warns (ModelWarning, located the same way) about what the translation leaves out.
    """
    return _translate(source)[:2]


def _translate(source):
    """(urdf_text, display name, origins {(URDF tag, name): (line, MJCF element)}, MjcfSource, mjModel)."""
    mujoco, m, src = _compile(source)
    name = src.name
    nm = lambda obj, i: mujoco.mj_id2name(m, obj, i) or f"{mujoco.mjtObj(obj).name[6:].lower()}_{i}"  # noqa: E731
    OB, OJ = mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_JOINT
    J = mujoco.mjtJoint

    def jwhere(j):
        return src.where("joint", j, mujoco.mj_id2name(m, OJ, j), m.njnt, label=nm(OJ, j))

    robot = etree.Element("robot", name=m.names[:m.names.index(b"\0")].decode() or "mjcf_model")
    robot.append(etree.Comment(f" translated from MJCF {name} by urdf_dyn.io.mjcf; q = qpos - qpos0 "))
    bodies = [nm(OB, b) for b in range(m.nbody)]
    if len(set(bodies)) != len(bodies):
        raise ModelError("MJCF body names must be unique", file=name)
    origins = {}
    for b in range(m.nbody):
        el = etree.SubElement(robot, "link", name=bodies[b])
        origins[("link", bodies[b])] = src.where("body", b, mujoco.mj_id2name(m, OB, b), m.nbody, label=bodies[b])
        if b and m.body_mass[b] > 0:
            add_inertial(el, m.body_mass[b], quat_T(m.body_ipos[b], m.body_iquat[b]), np.diag(m.body_inertia[b]))
        _visuals(mujoco, m, b, el)
    comp = [b for b in range(1, m.nbody) if m.body_gravcomp[b]]
    if comp:  # MuJoCo's gravity compensation: a passive force urdf_dyn does not have
        listed = ", ".join(bodies[b] for b in comp[:6]) + (", ..." if len(comp) > 6 else "")
        src.warn(origins[("link", bodies[comp[0]])], f"gravcomp of {len(comp)} bodies ({listed}) not modelled: "
                                                     "urdf_dyn applies gravity to every body")
    jnames, friction = {}, []
    for b in range(1, m.nbody):
        parent = bodies[m.body_parentid[b]]
        T_pb = quat_T(m.body_pos[b], m.body_quat[b])
        adr, num = m.body_jntadr[b], m.body_jntnum[b]
        prev, T_prev, p_prev = parent, T_pb, np.zeros(3)
        if num == 0:
            el = etree.SubElement(robot, "joint", name=f"{bodies[b]}__fixed", type="fixed")
            etree.SubElement(el, "parent", link=parent)
            etree.SubElement(el, "child", link=bodies[b])
            origin(el, T_pb)
            continue
        if num == 1 and int(m.jnt_type[adr]) == int(J.mjJNT_FREE):
            # a free joint: a URDF floating joint whose origin is the body's pose in the file (q = 0 there)
            jnames[adr] = nm(OJ, adr)
            dofs = slice(m.jnt_dofadr[adr], m.jnt_dofadr[adr] + 6)
            unread = [w for w, v in (("armature", m.dof_armature[dofs]), ("damping", m.dof_damping[dofs]),
                                     ("frictionloss", m.dof_frictionloss[dofs])) if np.any(v)]
            if unread:
                src.warn(jwhere(adr), f"{' and '.join(unread)} of the free joint {jnames[adr]!r} not modelled; "
                                      "left out")
            el = etree.SubElement(robot, "joint", name=jnames[adr], type="floating")
            etree.SubElement(el, "parent", link=parent)
            etree.SubElement(el, "child", link=bodies[b])
            origin(el, T_pb)
            origins[("joint", jnames[adr])] = jwhere(adr)
            continue
        for k in range(num):
            j = adr + k
            jt = int(m.jnt_type[j])
            jn = nm(OJ, j)
            if jt not in (int(J.mjJNT_HINGE), int(J.mjJNT_SLIDE)):
                kind = "free" if jt == int(J.mjJNT_FREE) else "ball"
                raise src.err(jwhere(j), f"{kind} joint {jn!r} in body {bodies[b]!r}: urdf_dyn trees have hinge, "
                                         "slide and free joints (a ball joint can close a loop: use a connect "
                                         "equality)", UnsupportedError)
            jnames[j] = jn
            origins[("joint", jn)] = jwhere(j)
            p = np.asarray(m.jnt_pos[j], float)
            last = k == num - 1
            child = (bodies[b] if not p.any() else f"{bodies[b]}__joint") if last else f"{bodies[b]}__j{k}"
            if child != bodies[b]:
                etree.SubElement(robot, "link", name=child)
            limited = bool(m.jnt_limited[j]) if hasattr(m, "jnt_limited") else bool(m.jnt_range[j].any())
            hinge = jt == int(J.mjJNT_HINGE)
            utype = ("revolute" if limited else "continuous") if hinge else "prismatic"
            el = etree.SubElement(robot, "joint", name=jn, type=utype)
            etree.SubElement(el, "parent", link=prev)
            etree.SubElement(el, "child", link=child)
            T_o = np.eye(4)
            T_o[:3, 3] = p - p_prev
            origin(el, (T_prev if k == 0 else np.eye(4)) @ T_o)
            etree.SubElement(el, "axis", xyz=fmt(m.jnt_axis[j]))
            q0 = m.qpos0[m.jnt_qposadr[j]]
            attrs = {}
            if limited:
                attrs.update(lower=m.jnt_range[j][0] - q0, upper=m.jnt_range[j][1] - q0)
            if attrs or not hinge:
                etree.SubElement(el, "limit", **{k_: repr(float(v)) for k_, v in attrs.items()})
            dof = m.jnt_dofadr[j]
            dyn = {k_: repr(float(v)) for k_, v in (("damping", m.dof_damping[dof]),
                                                   ("friction", m.dof_frictionloss[dof]),
                                                   ("armature", m.dof_armature[dof])) if v}
            if dyn:
                etree.SubElement(el, "dynamics", **dyn)
            if m.dof_frictionloss[dof]:
                friction.append(j)
            if m.jnt_stiffness[j]:
                g = etree.SubElement(robot, "gazebo", reference=jn)
                etree.SubElement(g, "springStiffness").text = repr(float(m.jnt_stiffness[j]))
                etree.SubElement(g, "springReference").text = repr(float(m.qpos_spring[m.jnt_qposadr[j]] - q0))
            prev, T_prev, p_prev = child, np.eye(4), p
        if prev != bodies[b]:
            el = etree.SubElement(robot, "joint", name=f"{bodies[b]}__fixed", type="fixed")
            etree.SubElement(el, "parent", link=prev)
            etree.SubElement(el, "child", link=bodies[b])
            T = np.eye(4)
            T[:3, 3] = -p_prev
            origin(el, T)
    if friction:  # one warning per file, at the first such joint
        listed = ", ".join(f"{jnames[j]} {m.dof_frictionloss[m.jnt_dofadr[j]]:g}" for j in friction[:6])
        src.warn(jwhere(friction[0]), f"frictionloss of {len(friction)} joint(s) ({listed}"
                                      f"{', ...' if len(friction) > 6 else ''}) is kept as <dynamics friction> but "
                                      "not modelled: urdf_dyn's dynamics have no dry friction")
    equalities(mujoco, m, src, robot, bodies, jnames, origins)
    transmissions(mujoco, m, src, robot, jnames, origins)
    return etree.tostring(robot, pretty_print=True).decode(), name, origins, src, m


def _visuals(mujoco, m, b, link_el):
    """Boxes, spheres, cylinders and capsules (as cylinders) of body ``b`` as URDF visuals."""
    G = mujoco.mjtGeom
    for g in range(m.ngeom):
        if m.geom_bodyid[g] != b:
            continue
        t, s = G(int(m.geom_type[g])), m.geom_size[g]
        vis = etree.Element("visual")
        origin(vis, quat_T(m.geom_pos[g], m.geom_quat[g]))
        geo = etree.SubElement(vis, "geometry")
        if t == G.mjGEOM_BOX:
            etree.SubElement(geo, "box", size=fmt(2 * s))
        elif t == G.mjGEOM_SPHERE:
            etree.SubElement(geo, "sphere", radius=repr(float(s[0])))
        elif t in (G.mjGEOM_CYLINDER, G.mjGEOM_CAPSULE):
            etree.SubElement(geo, "cylinder", radius=repr(float(s[0])), length=repr(float(2 * s[1])))
        else:
            continue
        mat = etree.SubElement(vis, "material", name=f"geom{g}")
        etree.SubElement(mat, "color", rgba=fmt(m.geom_rgba[g]))
        link_el.append(vis)


def parse_mjcf(source, gravity=(0.0, 0.0, -9.81), floating_base=False):
    """Read an MJCF model with ``connect``/``weld`` loops into a Model (no solver runs; ``urdf_dyn.load``
    checks that the loops close).

    Args:
        source: path of an MJCF ``.xml`` file, or its text.
        gravity: (3,) [m/s²] in the world frame (the MJCF ``<option gravity>`` is not read: a located warning
            says so when it differs).
        floating_base: a floating joint between the world and the root body (``urdf_dyn.load``); an MJCF robot
            usually has its own ``<freejoint>`` instead.

    Returns:
        A Model: tree joints named as the MJCF joints (q = qpos − qpos0), loops named after the equalities
        (``connect_<body1|site1>__<body2|site2>``, ``weld_...`` when unnamed; ``_2``, ``_3``, ... for the
        second and later of one name), ``source`` the MJCF file.

    Raises:
        ModelError (MuJoCo missing or a compiler error, with its line), UnsupportedError (ball joints,
        flex equalities, equalities on spatial tendons, a joint equality without joint2), each naming the file,
        line and element. Warns (ModelWarning, located) about what is left out: frictionloss, spatial tendons,
        tendon limits/springs, muscles' activation, actuators on sites, bodies or slider-cranks, inactive
        equalities, gravcomp, a file gravity other than ``gravity``.
    """
    text, name, origins, src, m = _translate(source)
    if not np.allclose(m.opt.gravity, gravity, rtol=0, atol=1e-12):
        src.warn(src.where("option", 0), f"the file's gravity {fmt(m.opt.gravity)} m/s² is not the one used, "
                                         f"{fmt(gravity)}: pass gravity= to load it")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = parse_urdf(text, gravity=gravity, floating_base=floating_base)
        except ModelError as e:
            raise _relocate(e, origins, src) from None
    for w in caught:  # the URDF reader's warnings about the translation, located in the user's file
        if issubclass(w.category, ModelWarning):
            warnings.warn(_relocate_text(str(w.message), origins, src), ModelWarning, stacklevel=2)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    # loops carry their equality's line in the user's file, so that later messages (check_assembly) name it
    loops = tuple(dataclasses.replace(lp, line=(origins.get(("loop", lp.name)) or (0,))[0] or 0)
                  for lp in model.loops)
    # an MJCF file lists its actuators: with none, nothing is actuated (URDF's "all joints" default is not meant)
    return dataclasses.replace(model, source=name, actuators_declared=True, loops=loops)


_URDF_EL = re.compile(r'<(\w+) name="([^"]*)">')


def _origin_of(element, origins):
    """(line, MJCF element) of the URDF element described as ``<tag name="x">``, or None."""
    m = _URDF_EL.match(element or "")
    if m is None:
        return None
    tag, n = m.groups()
    if tag in ("inertial", "mass", "inertia", "visual"):
        tag = "link"
    return origins.get((tag, n)) or origins.get(("link", n)) or origins.get(("joint", n))


def _relocate(e, origins, src):
    """The URDF reader's error on the translation, located at the MJCF element it came from."""
    where = _origin_of(e.element, origins)
    if where is None:
        return type(e)(f"{e.reason} (in {e.element or 'the model'})", file=src.name)
    return src.err(where, e.reason, type(e))


def _relocate_text(text, origins, src):
    """A URDF reader warning's text ("<string>:LINE: <tag name=...>: reason"), located in the MJCF file."""
    m = re.match(r"^.*?:(?:\d+:)? (<\w+ name=\"[^\"]*\">): (.*)$", text, re.S)
    if m is None:
        return f"{src.name}: {text}"
    where = _origin_of(m.group(1), origins)
    return str(src.err(where, m.group(2))) if where else f"{src.name}: {m.group(1)}: {m.group(2)}"
