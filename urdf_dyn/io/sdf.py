"""SDFormat (Gazebo) → Model, closed kinematic chains included.

No maintained SDF reader installs beside numpy 2 (python-sdformat pins numpy < 2; see the shared design notes
§7), so the file is parsed with lxml under the same safe settings and the same error discipline as
``io.urdf``: every problem names the file, the line and the element.

An SDF ``<model>`` is a graph of links and joints that may hold cycles (a Stewart platform, a four-bar). The
reader chooses the cut joints itself:

- the root is the link attached to ``world`` by a joint, else the model's first link (the canonical link);
  the root is fixed to the world unless that joint moves (revolute, prismatic: the URDF root is then a
  ``world`` link) or ``floating_base=True`` (a floating joint; a moving joint to the world, such as a test
  stand's slider, is then dropped with a ModelWarning);
- a spanning tree is grown by breadth-first search from the root, over the joints in document order; a joint
  walked from child to parent becomes a tree joint with the SDF child as parent and the axis reversed, so
  that q keeps the SDF sign (R(−a, q) = R(a, q)ᵀ);
- every joint the search does not need is cut and becomes a ``<loop>`` joint of its own type (revolute,
  continuous, prismatic, fixed, ball → spherical, universal), named after the SDF joint, with Fp and Fs the
  joint frame seen from the SDF parent and child links. ``cut_joints(model)`` lists them;
- a ball (universal) joint that the tree needs is expanded into three (two) revolute joints through massless
  links ``<joint>__rx``, ``<joint>__ry`` (Featherstone's tree joints have one degree of freedom);
- every SDF link frame stays addressable (``model.links``, ``forward_kinematics``): where a joint frame is not
  its child link's frame, the joint moves a massless link ``<child>__joint`` to which the link is fixed;
- a ``gearbox`` joint (SDFormat: θ_2 = −gearbox_ratio · θ_1, θ_1 the angle of the parent link and θ_2 that
  of the child link from the ``gearbox_reference_body``, about ``axis`` and ``axis2``) is not a kinematic
  joint: it becomes a URDF+ rolling ``<coupling>`` between the two revolute joints that attach the parent
  and the child to the reference body (each must be one revolute joint on that body, as on Cassie);
- ``revolute2`` and ``screw`` joints, nested models and ``<frame>`` references are refused with an
  UnsupportedError.

Conventions (SDFormat 1.4–1.9): link poses are in the model frame (or ``relative_to`` a link); a joint's pose
is in its child link frame; a joint axis is in the joint frame (the model frame in SDF 1.4, with
``<use_parent_model_frame>`` or ``expressed_in="__model__"``); an inertial pose is in the link frame. The
description is translated into URDF with ``<loop>`` elements and read by ``io.urdf``, so every URDF check
applies, and ``model.urdf_xml`` carries the visuals (box, cylinder, sphere, mesh) for the viewer.

Malformed XML declarations such as ``<? xml version="1.0" ?>`` (the generated Stewart platform SDF starts
with one) are blanked before parsing, keeping the line numbers.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import warnings
from collections import deque
from pathlib import Path

import numpy as np
from lxml import etree

from urdf_dyn.algorithms.spatial import rpy_to_matrix
from urdf_dyn.errors import ModelError, ModelWarning, UnsupportedError, XMLError
from urdf_dyn.io._urdf_text import add_inertial, add_loop, fmt, origin
from urdf_dyn.io.urdf import MAX_XML_BYTES, parse_urdf

__all__ = ["parse_sdf", "sdf_to_urdf", "cut_joints"]

_TREE_TYPES = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed"}
_LOOP_TYPES = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed",
               "ball": "spherical", "universal": "universal"}
_BAD_DECL = re.compile(rb"^\s*<\?\s+xml[^>]*\?>")


class _Sdf:
    """Reads one SDF file; ``err`` builds located errors."""

    def __init__(self, data: bytes, name: str):
        self.name = name
        data, n = _BAD_DECL.subn(b"", data, count=1)  # '<? xml ...?>' is not an XML declaration
        if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
            raise XMLError("DOCTYPE/ENTITY declarations are refused", file=name)
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                                 remove_pis=True)
        from urdf_dyn.io.xml_ns import declare_prefixes
        data, found = declare_prefixes(data)  # <drake:...> in Drake's SDFormat files
        for p, uri, line in found:
            warnings.warn(str(XMLError(f"undeclared namespace prefix {p!r} declared as {uri}; its elements are "
                                       "ignored", file=name, line=line)), ModelWarning, stacklevel=3)
        try:
            self.root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError as e:
            raise XMLError(f"XML syntax error: {e.msg}", file=name, line=e.position[0] if e.position else None) \
                from None

    def err(self, el, msg, cls=ModelError):
        desc = None if el is None else f"<{el.tag}" + (f" name=\"{el.get('name')}\"" if el.get("name") else "") + ">"
        return cls(msg, file=self.name, line=getattr(el, "sourceline", None), element=desc)

    def nums(self, el, n, owner=None):
        try:
            # a stray '"' after a number (the Stewart SDF writes <length>1.929"</length>) is ignored
            vals = [float(t) for t in (el.text or "").replace('"', " ").split()]
        except ValueError:
            raise self.err(owner if owner is not None else el, f"<{el.tag}>{el.text}</{el.tag}>: not a number") from None
        if len(vals) != n or not all(math.isfinite(v) for v in vals):
            raise self.err(owner if owner is not None else el,
                           f"<{el.tag}>{(el.text or '').strip()}</{el.tag}>: expected {n} finite numbers")
        return vals

    def num(self, parent, tag, default=None):
        el = parent.find(tag) if parent is not None else None
        return default if el is None else self.nums(el, 1, owner=parent)[0]

    def pose(self, el):
        """4×4 pose of ``<pose>`` (x y z roll pitch yaw, or x y z qx qy qz qw with rotation_format)."""
        T = np.eye(4)
        if el is None:
            return T
        if el.get("rotation_format", "euler_rpy") == "quat_xyzw":
            v = self.nums(el, 7)
            from scipy.spatial.transform import Rotation
            if not 1e-6 < float(np.linalg.norm(v[3:])) < 1e6:     # scipy would say "zero norm quaternions"
                raise self.err(el, f"<pose rotation_format=\"quat_xyzw\">: the quaternion {tuple(v[3:])} has norm "
                                   f"{float(np.linalg.norm(v[3:])):.3g}: not a rotation")
            T[:3, :3] = Rotation.from_quat(v[3:]).as_matrix()
        else:
            v = self.nums(el, 6)
            rpy = np.radians(v[3:]) if el.get("degrees", "false") == "true" else v[3:]
            T[:3, :3] = rpy_to_matrix(rpy)
        T[:3, 3] = v[:3]
        return T


def _model_element(doc: _Sdf):
    root = doc.root
    if root.tag != "sdf":
        raise doc.err(root, f"the root element is <{root.tag}>, expected <sdf>")
    models = root.findall("model") + root.findall("world/model")
    if len(models) != 1:
        raise doc.err(root, f"expected one <model>, found {len(models)}")
    model = models[0]
    for tag in ("model", "include"):
        if model.find(tag) is not None:
            raise doc.err(model.find(tag), f"nested <{tag}> is not supported: flatten the model", UnsupportedError)
    return model


def _version(root):
    try:
        return tuple(int(x) for x in root.get("version", "1.6").split(".")[:2])
    except ValueError:
        return (1, 6)


def sdf_to_urdf(source, floating_base=False):
    """Translate an SDF file into URDF text with ``<loop>`` elements (see the module docstring).

    Args:
        source: path of a ``.sdf`` file, or the SDF text (a string starting with ``<``).

    Returns:
        (urdf_text: str, display name: str, cut: list of the SDF joint names cut into loops).

    Raises:
        ModelError (XMLError, UnsupportedError) naming the file, line and element.
    """
    if isinstance(source, str) and source.lstrip().startswith("<"):
        data, name = source.encode(), "<string>"
    else:
        path = Path(os.fspath(source))
        if not path.is_file():
            raise ModelError("file not found" if not path.exists() else "not a file", file=str(path))
        if path.stat().st_size > MAX_XML_BYTES:
            raise XMLError(f"file is over the {MAX_XML_BYTES}-byte limit", file=str(path))
        data, name = path.read_bytes(), str(path)
    doc = _Sdf(data, name)
    model = _model_element(doc)
    version = _version(doc.root)
    if model.find("frame") is not None:
        raise doc.err(model.find("frame"), "<frame> is not supported", UnsupportedError)

    links = {}
    for el in model.findall("link"):
        n = el.get("name")
        if not n:
            raise doc.err(el, "<link> without a name attribute")
        if n in links or n == "world":
            raise doc.err(el, f"duplicate or reserved link name {n!r}")
        links[n] = el
    if not links:
        raise doc.err(model, "the model has no <link>")
    T_link = {}  # SDF link frame in the model frame
    for n, el in links.items():
        pe = el.find("pose")
        rel = pe.get("relative_to", "__model__") if pe is not None else "__model__"
        if rel not in ("__model__", "") and rel not in links:
            raise doc.err(el, f"<pose relative_to={rel!r}>: not a link of this model", UnsupportedError)
        T_link[n] = doc.pose(pe) if rel in ("__model__", "") else None
    for n, el in links.items():  # one level of relative_to a link
        if T_link[n] is None:
            rel = el.find("pose").get("relative_to")
            if T_link[rel] is None:
                raise doc.err(el, "chained relative_to poses are not supported", UnsupportedError)
            T_link[n] = T_link[rel] @ doc.pose(el.find("pose"))

    joints, world_child, gearboxes = [], None, []
    for el in model.findall("joint"):
        n, t = el.get("name"), el.get("type")
        if not n:
            raise doc.err(el, "<joint> without a name attribute")
        if any(j["name"] == n for j in joints):
            raise doc.err(el, f"duplicate joint name {n!r}")
        if t not in _LOOP_TYPES and t != "gearbox":
            cls = UnsupportedError if t in ("revolute2", "screw") else ModelError
            raise doc.err(el, f"joint type {t!r} is not supported (types: {', '.join(_LOOP_TYPES)})", cls)
        ends = {}
        for tag in ("parent", "child"):
            sub = el.find(tag)
            txt = (sub.text or "").strip() if sub is not None else ""
            if not txt:
                raise doc.err(el, f"joint has no <{tag}>")
            if txt not in links and not (tag == "parent" and txt == "world"):
                raise doc.err(sub, f"joint {n!r} names unknown {tag} link {txt!r}")
            ends[tag] = txt
        if ends["parent"] == ends["child"]:
            raise doc.err(el, f"joint {n!r} connects link {ends['child']!r} to itself")
        pe = el.find("pose")
        rel = pe.get("relative_to") if pe is not None else None
        if rel not in (None, "", ends["child"], ends["parent"], "__model__"):
            raise doc.err(el, f"<pose relative_to={rel!r}>: use the parent or child link", UnsupportedError)
        base = T_link[ends["child"]] if rel in (None, "", ends["child"]) else (
            np.eye(4) if rel == "__model__" else T_link[ends["parent"]])
        TJ = base @ doc.pose(pe)  # joint frame in the model frame
        ax_el = el.find("axis")
        axes = []
        for tag in ("axis", "axis2"):
            a_el = el.find(tag)
            if a_el is None or a_el.find("xyz") is None:
                axes.append(None)
                continue
            a = np.array(doc.nums(a_el.find("xyz"), 3, owner=el))
            if np.linalg.norm(a) < 1e-12:
                raise doc.err(el, f"<{tag}><xyz> is zero")
            a = a / np.linalg.norm(a)
            expressed = a_el.find("xyz").get("expressed_in")
            in_model = (version < (1, 5) or expressed == "__model__"
                        or (a_el.findtext("use_parent_model_frame") or "").strip() in ("true", "1"))
            if in_model:
                a = TJ[:3, :3].T @ a
            elif expressed not in (None, ""):
                if expressed not in links:
                    raise doc.err(el, f"expressed_in={expressed!r}: not a link", UnsupportedError)
                a = TJ[:3, :3].T @ T_link[expressed][:3, :3] @ a
            axes.append(a)
        if axes[0] is None and t in ("revolute", "continuous", "prismatic", "universal"):
            raise doc.err(el, "joint has no <axis><xyz>")
        lim = ax_el.find("limit") if ax_el is not None else None
        dyn = ax_el.find("dynamics") if ax_el is not None else None
        limits = {k: doc.num(lim, k, d) for k, d in
                  (("lower", -np.inf), ("upper", np.inf), ("effort", np.inf), ("velocity", np.inf))}
        if limits["lower"] > limits["upper"]:
            raise doc.err(el, f"limit lower={limits['lower']} > upper={limits['upper']}")
        for k in ("effort", "velocity"):  # SDF uses -1 for "no limit"
            if limits[k] < 0:
                limits[k] = np.inf
        if t == "continuous" or (t == "revolute" and limits["lower"] <= -1e16):
            limits["lower"], limits["upper"] = -np.inf, np.inf
        dynamics = {k: doc.num(dyn, k, 0.0) for k in ("damping", "friction", "spring_stiffness", "spring_reference")}
        j = dict(name=n, type=t, el=el, TJ=TJ, axis=axes[0], axis2=axes[1], limits=limits, dynamics=dynamics, **ends)
        if t == "gearbox":
            ref = (el.findtext("gearbox_reference_body") or "").strip()
            if ref not in links:
                raise doc.err(el, f"<gearbox_reference_body> {ref!r} is not a link of this model")
            if axes[0] is None or axes[1] is None:
                raise doc.err(el, "a gearbox joint needs <axis> and <axis2>")
            j["reference"], j["ratio"] = ref, doc.num(el, "gearbox_ratio", 1.0)
            gearboxes.append(j)
            continue
        if ends["parent"] == "world":
            if world_child is not None:
                raise doc.err(el, "two joints attach the model to the world")
            world_child = j
        else:
            joints.append(j)
    if world_child is not None and floating_base and world_child["type"] != "fixed":
        import warnings

        from urdf_dyn.errors import ModelWarning
        warnings.warn(f"{doc.name}:{world_child['el'].sourceline}: <joint name=\"{world_child['name']}\">: the "
                      f"{world_child['type']} joint to the world is replaced by the floating base", ModelWarning,
                      stacklevel=3)
        world_child = None
    return _build(doc, model, links, T_link, joints, world_child, gearboxes)


def _gearbox_coupling(doc, robot, g, joints):
    """A URDF+ rolling ``<coupling>`` for SDF gearbox joint ``g`` (module docstring): with q_1, q_2 the
    revolute joints from the reference body to the gearbox's parent and child, and s_k = ±1 the sign of their
    axes along the gearbox's ``axis``/``axis2`` (model frame), θ_2 = −r θ_1 is q_2 = (−r s_1 s_2) q_1, the
    coupling's "successor turns ratio times the predecessor" with predecessor = parent, successor = child."""
    def attach(link, axis_g):
        for j in joints:
            if {j["parent"], j["child"]} == {g["reference"], link} and j["type"] in ("revolute", "continuous"):
                a_model = j["TJ"][:3, :3] @ j["axis"]
                s = 1.0 if a_model @ (g["TJ"][:3, :3] @ axis_g) > 0 else -1.0
                return s if j["parent"] == g["reference"] else -s  # q measured from the reference body
        raise doc.err(g["el"], f"gearbox: link {link!r} must hang on the reference body {g['reference']!r} by one "
                               "revolute joint", UnsupportedError)
    s1, s2 = attach(g["parent"], g["axis"]), attach(g["child"], g["axis2"])
    el = etree.SubElement(robot, "coupling", name=g["name"], type="rolling")
    el.append(etree.Comment(f" SDF gearbox, line {g['el'].sourceline}: theta_2 = -{g['ratio']!r} theta_1 "))
    etree.SubElement(el, "predecessor", link=g["parent"])
    etree.SubElement(el, "successor", link=g["child"])
    etree.SubElement(el, "ratio", value=repr(float(-g["ratio"] * s1 * s2)))


def _build(doc, model, links, T_link, joints, world_child, gearboxes=()):
    root_link = world_child["child"] if world_child else next(iter(links))
    moving_root = world_child is not None and world_child["type"] != "fixed"
    if moving_root and world_child["type"] not in _TREE_TYPES:
        raise doc.err(world_child["el"], f"a {world_child['type']} joint to the world is not supported (fixed, "
                                         "revolute, continuous, prismatic)", UnsupportedError)
    adj = {n: [] for n in links}
    for j in joints:
        adj[j["parent"]].append(j)
        adj[j["child"]].append(j)
    frame = {root_link: T_link[root_link]}  # URDF link frame in the model frame (at q = 0)
    tree, seen, queue = [], {root_link}, deque([root_link])
    while queue:  # breadth-first from the root, joints in document order
        ln = queue.popleft()
        for j in sorted(adj[ln], key=lambda x: joints.index(x)):
            other = j["child"] if j["parent"] == ln else j["parent"]
            if other in seen or j.get("in_tree"):
                continue
            j["in_tree"], j["reversed"] = True, j["parent"] != ln
            seen.add(other)
            queue.append(other)
            tree.append((ln, other, j))
    missing = [n for n in links if n not in seen]
    if missing:
        raise doc.err(links[missing[0]], f"link {missing[0]!r} is not connected to the root link {root_link!r}")
    cut = [j for j in joints if not j.get("in_tree")]

    robot = etree.Element("robot", name=model.get("name") or "sdf_model")
    robot.append(etree.Comment(f" translated from SDF {doc.name}; root {root_link}; cut joints (loops): "
                               f"{', '.join(j['name'] for j in cut) or 'none'} "))
    link_el = {n: etree.SubElement(robot, "link", name=n) for n in links}
    if moving_root:  # a moving joint to the world (e.g. a test stand's slider): the world is the URDF root
        etree.SubElement(robot, "link", name="world")
        frame["world"] = np.eye(4)
        world_child["reversed"] = False
        tree.insert(0, ("world", root_link, world_child))
    springs = []
    for parent, child, j in tree:
        TJ, a = j["TJ"], j["axis"]
        sign = -1.0 if j["reversed"] else 1.0
        if j["type"] in _TREE_TYPES:
            chain = [(j["name"], j["type"], None if a is None else sign * a)]
        else:  # ball / universal in the tree: a chain of revolutes through massless links
            ax = [np.eye(3)[k] for k in range(3)] if j["type"] == "ball" else [j["axis"], j["axis2"]]
            if any(v is None for v in ax):
                raise doc.err(j["el"], "universal joint needs <axis> and <axis2>")
            if j["reversed"]:
                ax = [-v for v in reversed(ax)]
            chain = [(f"{j['name']}__r{'xyz'[k]}" if k < len(ax) - 1 else j["name"], "revolute", v)
                     for k, v in enumerate(ax)]
        prev = parent
        moving = child if np.allclose(TJ, T_link[child], rtol=0, atol=1e-12) else f"{child}__joint"
        for k, (jn, jt, axis) in enumerate(chain):
            nxt = moving if k == len(chain) - 1 else f"{j['name']}__r{'xyz'[k]}"
            if nxt != child:
                etree.SubElement(robot, "link", name=nxt)
                frame[nxt] = TJ
            el = etree.SubElement(robot, "joint", name=jn, type=jt if len(chain) == 1 else "revolute")
            el.append(etree.Comment(f" SDF line {j['el'].sourceline}" + (", reversed" if j["reversed"] else "")))
            etree.SubElement(el, "parent", link=prev)
            etree.SubElement(el, "child", link=nxt)
            origin(el, np.linalg.inv(frame[prev]) @ TJ if prev != parent or k == 0 else np.eye(4))
            if axis is not None and jt != "fixed":
                etree.SubElement(el, "axis", xyz=fmt(axis))
            if len(chain) == 1 and jt in ("revolute", "prismatic", "continuous"):
                lim = j["limits"]
                if jt == "continuous" or not np.isfinite(lim["lower"]):
                    if jt == "revolute":
                        el.set("type", "continuous")
                    attrs = {}
                else:
                    attrs = {"lower": lim["lower"], "upper": lim["upper"]}
                attrs.update({k: lim[k] for k in ("effort", "velocity") if np.isfinite(lim[k])})
                if attrs:
                    etree.SubElement(el, "limit", **{k: repr(float(v)) for k, v in attrs.items()})
                d = j["dynamics"]
                if d["damping"] or d["friction"]:
                    etree.SubElement(el, "dynamics", damping=repr(float(d["damping"])), friction=repr(float(d["friction"])))
                if d["spring_stiffness"]:
                    springs.append((jn, d["spring_stiffness"], d["spring_reference"]))
            prev = nxt
        if moving != child:  # keep the SDF link frame addressable: a fixed joint from the joint frame
            el = etree.SubElement(robot, "joint", name=f"{child}__fixed", type="fixed")
            etree.SubElement(el, "parent", link=moving)
            etree.SubElement(el, "child", link=child)
            origin(el, np.linalg.inv(TJ) @ T_link[child])
        frame[child] = T_link[child]
    for n, el in links.items():
        _inertial_and_visuals(doc, el, link_el[n], np.linalg.inv(frame[n]) @ T_link[n])
    for j in cut:
        T_P = np.linalg.inv(frame[j["parent"]]) @ j["TJ"]
        T_S = np.linalg.inv(frame[j["child"]]) @ j["TJ"]
        lim = j["limits"] if j["type"] in ("revolute", "prismatic") else None
        add_loop(robot, j["name"], _LOOP_TYPES[j["type"]], j["parent"], T_P, j["child"], T_S,
                 axis=j["axis"] if j["axis"] is not None else (1.0, 0.0, 0.0), axis2=j["axis2"] if
                 j["type"] == "universal" else None, limits=lim)
    for g in gearboxes:
        _gearbox_coupling(doc, robot, g, joints)
    for jn, k, ref in springs:
        g = etree.SubElement(robot, "gazebo", reference=jn)
        etree.SubElement(g, "springStiffness").text = repr(float(k))
        etree.SubElement(g, "springReference").text = repr(float(ref))
    text = etree.tostring(robot, pretty_print=True).decode()
    return text, doc.name, [j["name"] for j in cut]


def _geometry(doc, g_el, parent):
    geo = etree.SubElement(parent, "geometry")
    for shape in g_el:
        if shape.tag == "box":
            etree.SubElement(geo, "box", size=fmt(doc.nums(shape.find("size"), 3, owner=g_el)))
        elif shape.tag == "cylinder":
            etree.SubElement(geo, "cylinder", radius=repr(doc.num(shape, "radius", 0.0)),
                             length=repr(doc.num(shape, "length", 0.0)))
        elif shape.tag == "sphere":
            etree.SubElement(geo, "sphere", radius=repr(doc.num(shape, "radius", 0.0)))
        elif shape.tag == "mesh":
            scale = shape.find("scale")
            attrs = {"filename": (shape.findtext("uri") or "").strip().replace("model://", "package://")}
            if scale is not None:
                attrs["scale"] = fmt(doc.nums(scale, 3, owner=g_el))
            etree.SubElement(geo, "mesh", **attrs)
        else:
            return False
        return True
    return False


def _inertial_and_visuals(doc, sdf_link, urdf_link, T):
    """Copy ``<inertial>`` and ``<visual>``s of an SDF link into the URDF link whose frame sees the SDF link
    frame at pose ``T`` (4×4)."""
    inert = sdf_link.find("inertial")
    if inert is not None:
        m = doc.num(inert, "mass", 1.0)  # SDF's default mass is 1 kg
        if m < 0:
            raise doc.err(sdf_link, f"negative mass {m}")
        it = inert.find("inertia")
        v = {k: doc.num(it, k, 1.0 if k in ("ixx", "iyy", "izz") else 0.0) for k in
             ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        Ic = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
        add_inertial(urdf_link, m, T @ doc.pose(inert.find("pose")), Ic)
    for vis in sdf_link.findall("visual"):
        g = vis.find("geometry")
        if g is None:
            continue
        ve = etree.Element("visual")
        origin(ve, T @ doc.pose(vis.find("pose")))
        if _geometry(doc, g, ve):
            urdf_link.append(ve)
            diffuse = vis.find("material/diffuse")
            if diffuse is not None:
                try:
                    rgba = [float(x) for x in diffuse.text.split()][:4] + [1.0] * (4 - len(diffuse.text.split()))
                    mat = etree.SubElement(ve, "material", name=f"{vis.get('name') or 'sdf'}_material")
                    etree.SubElement(mat, "color", rgba=fmt(rgba[:4]))
                except (ValueError, AttributeError):
                    pass


def parse_sdf(source, package_dirs=None, gravity=(0.0, 0.0, -9.81), floating_base=False):
    """Read an SDF model (closed chains included) into a Model, without solving anything (``urdf_dyn.load``
    adds the check that the loops close).

    Args:
        source: path of a ``.sdf`` file, or the SDF text.
        package_dirs: folders for ``model://`` mesh URIs (read as ``package://``).
        gravity: (3,) [m/s²] in the root link frame.
        floating_base: a 6-dof floating joint between the world and the root link (``urdf_dyn.load``).

    Returns:
        A Model whose ``loops`` are the cut SDF joints (``cut_joints(model)``), with ``source`` the SDF file.

    Raises:
        ModelError, XMLError, UnsupportedError naming the SDF file, line and element.
    """
    text, name, _ = sdf_to_urdf(source, floating_base=floating_base)
    try:
        model = parse_urdf(text, package_dirs=package_dirs, gravity=gravity, floating_base=floating_base)
    except ModelError as e:  # a check of the URDF layer: name the SDF file
        raise type(e)(f"{e.reason} (in the URDF translation)", file=name, element=e.element) from None
    return dataclasses.replace(model, source=name)


def cut_joints(model) -> tuple:
    """Names of the joints that the SDF reader cut to open the model's cycles (its loop joints)."""
    return tuple(lp.name for lp in model.loops)
