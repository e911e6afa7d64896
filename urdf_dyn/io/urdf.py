"""URDF / xacro → Model. Parsing by lxml (safe settings) and yourdfpy; xacro by the ``xacro`` package.

The loader first checks the XML tree itself so that every problem is reported with the file, the line
and the element (yourdfpy has no line numbers and recovers silently from broken XML), then lets yourdfpy
turn the checked tree into its dataclasses, from which the Featherstone Model is built:

- bodies in depth-first order of the URDF tree (parents before children, document order among siblings;
  Pinocchio orders siblings differently on branched trees, so compare models by joint name);
- ``fixed`` joints merged into their parent body (inertias added, RBDA eq. 2.65), every link frame kept
  addressable;
- link inertias from ``<inertial>`` (mass, origin xyz/rpy, inertia tensor in the rotated inertial frame).
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import re
import threading
import warnings
from collections import defaultdict
from pathlib import Path
from types import MappingProxyType

import numpy as np
from lxml import etree

from urdf_dyn.errors import ModelError, ModelWarning, UnsupportedError, XacroError, XMLError
from urdf_dyn.algorithms.joints import FREE, PLANAR, SUB_P, SUB_R, TYPE_CODES
from urdf_dyn.model import LinkFrame, Mimic, Model, Transmission, frozen
from urdf_dyn.io.packages import PackageResolver
from urdf_dyn.io.urdf_plus import coupling_followers, joint_armature, read_couplings, read_transmissions
from urdf_dyn.algorithms.spatial import mcI, pose_to_plux

__all__ = ["parse_urdf", "MAX_XML_BYTES", "NEAR_PSD_RTOL", "NEAR_PSD_ATOL"]

#: Robot descriptions larger than this are refused (an XML bomb guard; real URDFs are far smaller).
MAX_XML_BYTES = 64 * 1024 * 1024

#: A negative inertia eigenvalue down to −(NEAR_PSD_RTOL·max|λ| + NEAR_PSD_ATOL) is taken as rounding in the
#: description and repaired with a ModelWarning (urdfdom and Pinocchio load such files); below, refused.
NEAR_PSD_RTOL, NEAR_PSD_ATOL = 1e-3, 1e-6

KNOWN_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_xacro_lock = threading.Lock()


# ---------------------------------------------------------------------------------------------------------
# reading: file / string / xacro -> checked lxml tree
# ---------------------------------------------------------------------------------------------------------
def _read_source(source):
    """Return (text bytes, display name, path or None)."""
    if isinstance(source, bytes):
        return source, "<string>", None
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.encode(), "<string>", None
    path = Path(os.fspath(source))
    if not path.is_file():
        raise ModelError("file not found" if not path.exists() else "not a file", file=str(path))
    size = path.stat().st_size
    if size > MAX_XML_BYTES:
        raise XMLError(f"file is {size} bytes, over the {MAX_XML_BYTES}-byte limit", file=str(path))
    return path.read_bytes(), str(path), path


def _refuse_doctype(data: bytes, name: str):
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        line = data[: data.find(b"<!")].count(b"\n") + 1
        raise XMLError("DOCTYPE/ENTITY declarations are refused (external or expanding entities are unsafe "
                       "and URDF does not use them)", file=name, line=line)


def _run_xacro(data: bytes, name: str, path, resolver: PackageResolver, xacro_args, trust=False):
    """Expand xacro with the restricted evaluator and the limits of ``io.xacro_safe`` (``trust``: xacro's
    own Python evaluation, which runs code). Raises XacroError naming the file (and the expression's line)."""
    import xacro
    from xacro import substitution_args as sa

    from urdf_dyn.io.xacro_safe import XacroLimitError, XacroSafetyError, expansion, trusted

    def find(pkg):
        return str(resolver.find(pkg))

    if xacro_args is not None and not hasattr(xacro_args, "items"):
        raise XacroError(f"xacro_args must be a mapping {{name: value}}, got {type(xacro_args).__name__} "
                         f"{xacro_args!r:.60}", file=name)
    mappings = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    with _xacro_lock:  # $(find) is resolved through a module-level function of xacro
        saved = sa._eval_find, sa._eval_dict.get("find")
        sa._eval_find = find
        sa._eval_dict["find"] = find
        parse = xacro.parse
        xacro.parse = _declaring(parse, name, data)
        try:
            with expansion(trust=trust or trusted()):
                if path is not None:
                    doc = xacro.process_file(str(path), mappings=mappings)
                else:
                    doc = xacro.parse(data.decode())
                    xacro.process_doc(doc, mappings=mappings)
                return doc.toxml().encode()
        except Exception as e:  # xacro raises many types (XacroException, NameError, ExpatError, ...)
            inner = e
            while inner is not None and not isinstance(inner, (ModelError, XacroSafetyError, XacroLimitError)):
                inner = inner.__cause__ or inner.__context__ or getattr(inner, "exc", None)
            if isinstance(inner, ModelError):
                raise type(inner)(inner.reason, file=name) from None
            if isinstance(inner, (XacroSafetyError, XacroLimitError, RecursionError)):
                msg = str(inner)
                expr = msg[2:msg.index("}: ")] if msg.startswith("${") and "}: " in msg else None
                line = data[:data.find(expr.encode())].count(b"\n") + 1 if expr and expr.encode() in data else None
                raise XacroError(("refused: " if isinstance(inner, XacroSafetyError) else "limit: ") + msg,
                                 file=name, line=line) from None
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if isinstance(e, RecursionError) or "recursion" in msg:
                msg += " (a recursive macro or property: give it an end condition)"
            raise XacroError(f"xacro failed: {msg}", file=name) from e
        finally:
            sa._eval_find, sa._eval_dict["find"] = saved[0], saved[1]
            xacro.parse = parse


def _declaring(parse, name, data):
    """xacro's ``parse`` (the main file and every ``xacro:include``) with undeclared namespace prefixes
    declared (``io.xml_ns``; expat refuses them as "unbound prefix") and a located ModelWarning for each."""
    import os

    import xacro

    from urdf_dyn.io.xml_ns import declare_prefixes

    def wrapped(inp, filename=None):
        if isinstance(inp, str) or inp is None and filename is not None:
            where = name if inp is not None else str(filename)
            try:
                raw = inp.encode() if inp is not None else open(os.path.join(xacro.root_dir, filename), "rb").read()
            except OSError:
                return parse(inp, filename)
            raw, found = declare_prefixes(raw)
            for p, uri, line in found:
                warnings.warn(str(XMLError(f"undeclared namespace prefix {p!r} declared as {uri}; its elements and "
                                           "attributes are kept as they are (urdfdom and Pinocchio ignore them)",
                                           file=where, line=line)), ModelWarning, stacklevel=2)
            if found or inp is None:
                return parse(raw.decode(), filename)
        return parse(inp, filename)
    return wrapped


def _parse_xml(data: bytes, name: str, strict: bool = False):
    """lxml tree of ``data`` (DTDs and entities refused, no network). Quirks that libxml2 rejects but
    urdfdom (TinyXML2) accepts are repaired with a located ModelWarning unless ``strict``: an XML
    declaration with an unsupported version (``<?xml version="0.0"?>``), a declaration after a comment or
    blank lines, and namespace prefixes used without a declaration (``drake:``, declared as Drake's
    namespace; any other prefix as ``urn:undeclared:<prefix>``)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    for _ in range(64):  # one repair per round; a file has few distinct quirks
        try:
            return etree.fromstring(data, parser)
        except etree.XMLSyntaxError as e:
            line = e.position[0] if e.position else None
            fixed = None if strict else _repair_xml(data, e.msg or "")
            if fixed is None:
                raise XMLError(f"XML syntax error: {e.msg}", file=name, line=line) from None
            data, what = fixed
            warnings.warn(str(XMLError(f"{what} (libxml2: {e.msg}); accepted as urdfdom does",
                                       file=name, line=line)), ModelWarning, stacklevel=4)
    raise XMLError("XML syntax error: too many repairs", file=name)


_DECL = re.compile(rb"<\?xml\b[^>]*\?>")
_VERSION = re.compile(rb"(<\?xml\b[^>]*?version\s*=\s*)([\"'])[^\"']*\2")
_UNDECLARED = re.compile(r"Namespace prefix ([A-Za-z_][\w.-]*) (?:for [^ ]+ )?on [^ ]+ is not defined")  # element or attribute
_ROOT_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")


def _repair_xml(data: bytes, msg: str):
    """(repaired bytes, what was done) for the quirks urdfdom accepts, or None."""
    if msg.startswith("Unsupported version"):
        fixed = _VERSION.sub(rb'\g<1>"1.0"', data, count=1)
        return (fixed, "unsupported XML version in the declaration read as 1.0") if fixed != data else None
    if msg.startswith("XML declaration allowed only at the start"):
        fixed = _DECL.sub(b"", data, count=1)
        return (fixed, "XML declaration not at the start of the file ignored") if fixed != data else None
    m = _UNDECLARED.match(msg)
    if m:
        prefix = m.group(1)
        uri = DRAKE_NS if prefix == "drake" else f"urn:undeclared:{prefix}"
        body = _DECL.sub(lambda d: b" " * len(d.group(0)), data)  # skip declarations when finding the root
        body = re.sub(rb"<!--.*?-->", lambda c: b" " * len(c.group(0)), body, flags=re.S)
        r = _ROOT_TAG.search(body)
        if r is None:
            return None
        at = r.end()
        fixed = data[:at] + f' xmlns:{prefix}="{uri}"'.encode() + data[at:]
        return fixed, f"undeclared namespace prefix {prefix!r} declared as {uri}"
    return None


_XACRO_NS = ("http://wiki.ros.org/xacro", "http://www.ros.org/wiki/xacro", "http://ros.org/wiki/xacro")


def _has_xacro_elements(root) -> bool:
    """True if the parsed tree holds an element of the xacro namespace (comments and a mere namespace
    declaration do not count)."""
    prefixes = tuple("{%s}" % ns for ns in _XACRO_NS)
    return any(isinstance(el.tag, str) and el.tag.startswith(prefixes) for el in root.iter())


# ---------------------------------------------------------------------------------------------------------
# checking the tree with locations
# ---------------------------------------------------------------------------------------------------------
class _Checker:
    def __init__(self, name, strict=False):
        self.name = name
        self.strict = strict

    def err(self, el, msg, cls=ModelError):
        desc = None
        if el is not None:
            desc = f"<{el.tag}" + (f" name=\"{el.get('name')}\"" if el.get("name") is not None else "") + ">"
        return cls(msg, file=self.name, line=getattr(el, "sourceline", None), element=desc)

    def warn(self, el, msg):
        warnings.warn(str(self.err(el, msg)), ModelWarning, stacklevel=4)

    def lenient(self, el, msg):
        """Input urdfdom and Pinocchio accept: a located ModelWarning, or a ModelError when strict."""
        if self.strict:
            raise self.err(el, msg + " [refused: strict=True]")
        self.warn(el, msg)

    def floats(self, el, attr, n, default=None, owner=None):
        """Parse attribute ``attr`` of ``el`` as n finite floats."""
        if el is None or el.get(attr) is None:
            return default
        raw = el.get(attr)
        try:
            vals = [float(t) for t in raw.split()]
        except ValueError:
            raise self.err(owner if owner is not None else el,
                           f"<{el.tag} {attr}=\"{raw}\">: not a number") from None
        if len(vals) != n:
            raise self.err(owner if owner is not None else el,
                           f"<{el.tag} {attr}=\"{raw}\">: expected {n} numbers, got {len(vals)}")
        if not all(math.isfinite(v) for v in vals):
            raise self.err(owner if owner is not None else el, f"<{el.tag} {attr}=\"{raw}\">: non-finite number")
        return vals

    def check(self, root):
        if root.tag != "robot":
            raise self.err(root, f"the root element is <{root.tag}>, expected <robot>")
        if not root.get("name"):
            raise self.err(root, "<robot> has no name attribute")
        links, joints = {}, {}
        for el in root.findall("link"):
            n = el.get("name")
            if not n:
                raise self.err(el, "<link> without a name attribute")
            if n in links:
                raise self.err(el, f"duplicate link name {n!r} (first defined on line {links[n].sourceline})")
            links[n] = el
            self.check_inertial(el)
        if not links:
            raise self.err(root, "the robot has no <link>")
        child_of = {}
        for el in root.findall("joint"):
            n = el.get("name")
            if not n:
                raise self.err(el, "<joint> without a name attribute")
            if n in joints:
                raise self.err(el, f"duplicate joint name {n!r} (first defined on line {joints[n].sourceline})")
            joints[n] = el
            t = el.get("type")
            if t is None:
                raise self.err(el, "joint has no type attribute")
            if t not in KNOWN_JOINT_TYPES:
                raise self.err(el, f"unknown joint type {t!r} (URDF types: {', '.join(KNOWN_JOINT_TYPES)})")
            for tag in ("parent", "child"):
                sub = el.find(tag)
                if sub is None or not sub.get("link"):
                    raise self.err(el, f"joint has no <{tag} link=...>")
                if sub.get("link") not in links:
                    raise self.err(sub, f"joint {n!r} names unknown {tag} link {sub.get('link')!r}")
            parent, child = el.find("parent").get("link"), el.find("child").get("link")
            if parent == child:
                raise self.err(el, f"joint {n!r} connects link {parent!r} to itself")
            if child in child_of:
                raise self.err(el, f"link {child!r} has two parent joints ({child_of[child]!r} and {n!r}); a "
                                   "kinematic loop must be declared with a <loop> element, not as a joint")
            child_of[child] = n
            origin = el.find("origin")
            self.floats(origin, "xyz", 3, owner=el)
            self.floats(origin, "rpy", 3, owner=el)
            axis = self.floats(el.find("axis"), "xyz", 3, owner=el)
            if axis is not None and t != "fixed" and np.linalg.norm(axis) < 1e-12:
                raise self.err(el, "joint axis is zero")
            lim = el.find("limit")
            if lim is not None:
                vals = {a: self.floats(lim, a, 1, owner=el) for a in ("lower", "upper", "effort", "velocity")}
                lo, up = vals["lower"], vals["upper"]
                if lo is not None and up is not None and lo[0] > up[0] and t != "continuous":
                    raise self.err(el, f"limit lower={lo[0]} > upper={up[0]}")
                for a in ("effort", "velocity"):
                    if vals[a] is not None and vals[a][0] < 0:
                        raise self.err(el, f"limit {a}={vals[a][0]} is negative")
            elif t in ("revolute", "prismatic"):
                pass  # urdfdom requires <limit>; we accept its absence as "no limits" (see README)
            dyn = el.find("dynamics")
            if dyn is not None:
                for a in ("damping", "friction", "armature"):
                    v = self.floats(dyn, a, 1, owner=el)
                    if v is not None and v[0] < 0:
                        raise self.err(el, f"dynamics {a}={v[0]} is negative")
            mim = el.find("mimic")
            if mim is not None:
                self.floats(mim, "multiplier", 1, owner=el)
                self.floats(mim, "offset", 1, owner=el)
        for el in root.findall("joint"):
            mim = el.find("mimic")
            if mim is not None:
                leader = mim.get("joint")
                if leader not in joints:  # Pinocchio ignores such a mimic; so do we, unless strict
                    self.lenient(el, f"<mimic joint={leader!r}> names an unknown joint; the mimic is ignored")
                    el.remove(mim)
                    continue
                if leader == el.get("name"):
                    raise self.err(el, "joint mimics itself")
                if "fixed" in (el.get("type"), joints[leader].get("type")):  # Pinocchio ignores it (mimic=False)
                    self.lenient(el, f"<mimic joint={leader!r}> couples a fixed joint; the mimic is ignored")
                    el.remove(mim)
        self.check_mimic_cycles(root, joints)
        roots = [n for n in links if n not in child_of]
        if len(roots) != 1:
            if not roots:
                raise self.err(root, "no root link: every link is the child of a joint (a cycle of joints)")
            raise self.err(links[roots[1]], f"more than one root link ({', '.join(roots)}); links not "
                                            f"connected to {roots[0]!r} by joints")
        return links, joints, roots[0]

    def check_mimic_cycles(self, root, joints):
        lead = {el.get("name"): el.find("mimic").get("joint") for el in root.findall("joint")
                if el.find("mimic") is not None}
        for start in lead:
            seen, j = set(), start
            while j in lead:
                if j in seen:
                    raise self.err(joints[start], f"<mimic> chain forms a cycle through {sorted(seen)}")
                seen.add(j)
                j = lead[j]

    def check_inertial(self, link):
        for kind in ("visual", "collision"):  # a NaN pose would reach the viewer as "missing EGL"
            for el in link.findall(kind):
                for node, attr in [(el.find("origin"), a) for a in ("xyz", "rpy")] + [
                        (g, a) for g in el.findall("geometry/*") for a in ("size", "radius", "length", "scale")]:
                    raw = node.get(attr) if node is not None else None
                    if raw and any(t.lower().lstrip("+-") in ("nan", "inf", "infinity") for t in raw.split()):
                        raise self.err(el, f"<{node.tag} {attr}=\"{raw}\">: non-finite number")
        inertial = link.find("inertial")
        if inertial is None:
            return
        origin = inertial.find("origin")
        self.floats(origin, "xyz", 3, owner=link)
        self.floats(origin, "rpy", 3, owner=link)
        mass_el = inertial.find("mass")
        m = self.floats(mass_el, "value", 1, owner=link)
        if m is None:
            raise self.err(link, "<inertial> without <mass value=...>")
        if m[0] < 0:
            raise self.err(link, f"negative mass {m[0]}")
        it = inertial.find("inertia")
        if it is None:
            raise self.err(link, "<inertial> without <inertia>")
        vals = {}
        for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            v = self.floats(it, a, 1, default=[0.0], owner=link)
            vals[a] = v[0]
        Ic = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]], [vals["ixy"], vals["iyy"], vals["iyz"]],
                       [vals["ixz"], vals["iyz"], vals["izz"]]])
        ev, V = np.linalg.eigh(Ic)
        scale = float(np.abs(ev).max())
        if ev.min() < -1e-9 * scale - 1e-12:  # relative, with an absolute floor for all-zero tensors
            if ev.min() < -NEAR_PSD_RTOL * scale - NEAR_PSD_ATOL:
                raise self.err(link, f"inertia tensor is not positive semi-definite (eigenvalues {ev}); "
                                     f"repairable only down to -{NEAR_PSD_RTOL:g}·max|eigenvalue| - "
                                     f"{NEAR_PSD_ATOL:g} kg m²")
            # rounding in CAD exports: urdfdom and Pinocchio load it; use the nearest PSD tensor
            Ic = V @ np.diag(np.maximum(ev, 0.0)) @ V.T
            self.lenient(link, f"inertia tensor is not positive semi-definite (eigenvalues {ev}); repaired to "
                               f"the nearest positive semi-definite tensor (eigenvalues {np.maximum(ev, 0.0)})")
            for a, (r, c) in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                                 ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
                it.set(a, repr(float(Ic[r, c])))
            ev = np.maximum(ev, 0.0)
        a, b, c = ev
        tol = 1e-6 * scale + 1e-12
        if a + b < c - tol or a + c < b - tol or b + c < a - tol:
            # physically impossible for a rigid body, but frequent in CAD exports and accepted by urdfdom
            # and Pinocchio; the dynamics stay well defined (the tensor is still positive semi-definite)
            self.warn(link, f"inertia violates the triangle inequality (principal moments {ev.round(9)}); "
                            "kept as given")


# ---------------------------------------------------------------------------------------------------------
# building the Model
# ---------------------------------------------------------------------------------------------------------
def _link_inertia(link):
    """Spatial inertia (6×6) of a yourdfpy Link in its own frame, and its mass."""
    inert = link.inertial
    if inert is None or inert.mass is None:
        return np.zeros((6, 6)), 0.0
    T = np.eye(4) if inert.origin is None else np.asarray(inert.origin, float)
    R, c = T[:3, :3], T[:3, 3]
    Ic = np.zeros((3, 3)) if inert.inertia is None else np.asarray(inert.inertia, float)
    return mcI(float(inert.mass), np.ascontiguousarray(c), R @ Ic @ R.T), float(inert.mass)


def parse_urdf(source, package_dirs=None, xacro_args=None, gravity=(0.0, 0.0, -9.81), trust_xacro=False,
               strict=False, floating_base=False) -> Model:
    """Read a URDF/xacro robot description into a Model (no solver runs here: ``urdf_dyn.load`` adds the
    check that the loops can be assembled).

    Args:
        source: path of a ``.urdf`` or ``.xacro`` file, or the XML text itself (a string starting with ``<``).
        package_dirs: where ``package://`` and ``$(find pkg)`` point: a mapping {package: folder}, or a list of
            folders containing packages. ``ROS_PACKAGE_PATH`` and the folders above the file are searched too.
        xacro_args: mapping of xacro arguments (``name:=value``).
        gravity: (3,) gravitational acceleration [m/s²] in the root link frame.
        trust_xacro: evaluate ``${...}``/``$(eval ...)`` with Python (RUNS CODE from the file); by default a
            restricted evaluator (``urdf_dyn.io.xacro_safe``) refuses anything but arithmetic and properties.
        strict: refuse (ModelError) what urdfdom and Pinocchio accept and urdf_dyn otherwise repairs or
            ignores with a located ``ModelWarning``: XML quirks, near-PSD inertias, a mimic naming a missing
            joint, a reduction that is not a number.
        floating_base: give the root link a floating joint named ``root_joint`` to a fixed ``universe`` body
            (Pinocchio's ``JointModelFreeFlyer`` root), for legged robots whose file has no floating joint.

    ``floating`` joints (6 dof, positions (x, y, z, qx, qy, qz, qw)) and ``planar`` joints (3 dof in the plane
    normal to ``<axis>``, positions (x, y, θ)) become one kernel body per velocity coordinate
    (``urdf_dyn.algorithms.joints``); their ``<limit>`` is ignored, as by urdfdom.

    Returns:
        An immutable Model (see ``urdf_dyn.model``).

    Raises:
        ModelError and subclasses (XMLError, XacroError, PackageNotFoundError, UnsupportedError), each naming
        the file, line and element at fault.
    """
    data, name, path = _read_source(source)
    _refuse_doctype(data, name)
    resolver = PackageResolver(package_dirs, origin=path)
    display = name
    is_xacro_file = path is not None and path.name.endswith(".xacro")
    root = None if is_xacro_file else _parse_xml(data, display, strict)  # parsed once unless xacro must run
    if is_xacro_file or _has_xacro_elements(root):
        data = _run_xacro(data, name, path, resolver, xacro_args, trust_xacro)
        display = f"{name} (xacro output)"
        root = _parse_xml(data, display, strict)
    chk = _Checker(display, strict)
    links_el, joints_el, root_link = chk.check(root)

    import yourdfpy
    text = etree.tostring(root)
    try:
        urdf = yourdfpy.URDF.load(io.BytesIO(text), build_scene_graph=False, load_meshes=False,
                                  build_collision_scene_graph=False, load_collision_meshes=False,
                                  mesh_dir=str(path.parent) if path else "")
    except Exception as e:  # anything the checks above did not anticipate
        raise ModelError(f"yourdfpy could not read the description: {e}", file=display) from e
    robot = urdf.robot
    lby = {l.name: l for l in robot.links}
    children = defaultdict(list)
    for j in robot.joints:
        children[j.parent].append(j)

    parent, jtype, axis, T_tree, I_body = [-1], [-1], [np.zeros(3)], [np.eye(4)], [np.zeros((6, 6))]
    body_names, joint_names, joint_types, lim_rows = [root_link], [], [], []
    links, masses = {}, {}
    urdf_joint_of = {}  # joint_names entry -> URDF joint name (None for floating_base's root_joint)

    def attach(link_name, body, T_body_link):
        links[link_name] = LinkFrame(body, frozen(T_body_link))
        I_link, m = _link_inertia(lby[link_name])
        masses[link_name] = m
        X = pose_to_plux(np.ascontiguousarray(T_body_link))
        I_body[body] = I_body[body] + X.T @ I_link @ X

    def add_body(pbody, code, a, T, bname, jname, jtname, row, urdf_name):
        parent.append(pbody)
        jtype.append(code)
        axis.append(np.asarray(a, float))
        T_tree.append(T)
        I_body.append(np.zeros((6, 6)))
        body_names.append(bname)
        joint_names.append(jname)
        joint_types.append(jtname)
        lim_rows.append(row)
        urdf_joint_of[jname] = urdf_name
        return len(parent) - 1

    def add_multi(pbody, T, a, jname, jtname, child, urdf_name):
        """A floating / planar joint: a head body and its sub-bodies (``algorithms.joints``); returns the
        body of the child link and the link's pose in that body."""
        free = jtname == "floating"
        R = np.eye(4)
        if not free:  # rotate the joint frame so that its z axis is the plane normal <axis>
            R[:3, :3] = _frame_with_z(a)
        coords = _FREE_COORDS if free else _PLANAR_COORDS
        b = pbody
        for k, (c, code, ax) in enumerate(coords):
            last = k == len(coords) - 1
            b = add_body(b, code, ax, T @ R if k == 0 else np.eye(4), child if last else f"{jname}.{c}",
                         f"{jname}.{c}", jtname, (-np.inf, np.inf, np.inf, np.inf, 0.0, 0.0), urdf_name)
        return b, np.linalg.inv(R)

    if floating_base:
        if any(j.type == "floating" for j in children[root_link]):
            raise UnsupportedError(f"floating_base=True: the root link {root_link!r} already has a floating joint "
                                   "below it; load the file without floating_base", file=display)
        body_names[0] = "universe"
        b, T_bl0 = add_multi(0, np.eye(4), None, "root_joint", "floating", root_link, None)
        attach(root_link, b, T_bl0)
    else:
        attach(root_link, 0, np.eye(4))
    stack = [root_link]
    while stack:  # depth-first, document order among siblings
        ln = stack.pop()
        body = links[ln].body
        T_bl = np.asarray(links[ln].T_body_link)
        for j in reversed(children[ln]):
            stack.append(j.child)
        for j in children[ln]:
            origin = np.eye(4) if j.origin is None else np.asarray(j.origin, float)
            if j.type == "fixed":
                attach(j.child, body, T_bl @ origin)
                continue
            a = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, float)
            a = a / np.linalg.norm(a)
            if j.type in ("floating", "planar"):
                b, T_link = add_multi(body, T_bl @ origin, a, j.name, j.type, j.child, j.name)
                attach(j.child, b, T_link)
                continue
            lim = j.limit
            lo = -np.inf if (lim is None or lim.lower is None or j.type == "continuous") else lim.lower
            up = np.inf if (lim is None or lim.upper is None or j.type == "continuous") else lim.upper
            vel = np.inf if (lim is None or lim.velocity is None) else lim.velocity
            eff = np.inf if (lim is None or lim.effort is None) else lim.effort
            dmp = 0.0 if (j.dynamics is None or j.dynamics.damping is None) else j.dynamics.damping
            fr = 0.0 if (j.dynamics is None or j.dynamics.friction is None) else j.dynamics.friction
            b = add_body(body, TYPE_CODES[j.type], a, T_bl @ origin, j.child, j.name, j.type,
                         (lo, up, vel, eff, dmp, fr), j.name)
            attach(j.child, b, np.eye(4))
        # the DFS visits children after this loop: they were pushed above, in document order

    # The loop above appends bodies in breadth order within a link but pushes children for a depth-first
    # walk; re-number bodies so that the numbering is depth-first pre-order (Pinocchio's), λ(i) < i.
    order = _dfs_order(parent)
    renum = {old: new for new, old in enumerate(order)}
    parent = [-1] + [renum[parent[old]] for old in order[1:]]
    perm = order
    pick = lambda seq: [seq[k] for k in perm]  # noqa: E731
    jtype, axis, T_tree, I_body, body_names = (pick(s) for s in (jtype, axis, T_tree, I_body, body_names))
    jperm = [k - 1 for k in perm[1:]]
    joint_names = [joint_names[k] for k in jperm]
    joint_types = [joint_types[k] for k in jperm]
    lim_rows = [lim_rows[k] for k in jperm]
    links = {n: LinkFrame(renum[lf.body], lf.T_body_link) for n, lf in links.items()}

    lim = np.array(lim_rows, float).reshape(-1, 6)
    # URDF+: independent="true" joints are preferred as independent coordinates; in a file that marks some
    # joints independent="false" (rotors, passive loop joints), the unmarked joints are independent too
    # (generalized_rbda's default is true), so only the "false" ones become dependent.
    flags = {j: (joints_el[urdf_joint_of[j]].get("independent") or "").lower() if urdf_joint_of[j] else ""
             for j in joint_names}
    default = "true" if "false" in flags.values() else "false"
    independent = tuple(j for j in joint_names if (flags[j] or default) == "true")
    init = _initial_configuration(root, joint_names, chk)
    springs = _gazebo_springs(root, joint_names, chk)
    X_tree = [np.zeros((6, 6))] + [pose_to_plux(np.ascontiguousarray(T)) for T in T_tree[1:]]
    mimic = []
    for j in (j for j in robot.joints if j.mimic is not None):
        if j.name not in joint_names or j.mimic.joint not in joint_names:  # Talos: <mimic> on a fixed joint
            chk.warn(joints_el[j.name], f"<mimic joint={j.mimic.joint!r}> ignored: only movable joints can be "
                     "coupled (this joint or its leader is fixed)")
            continue
        mim_el = joints_el[j.name].find("mimic")
        poly = (chk.floats(mim_el, "polynomial", 3, owner=joints_el[j.name])
                if mim_el is not None and mim_el.get("polynomial") is not None else ())
        mimic.append(Mimic(j.name, j.mimic.joint, 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier),
                           0.0 if j.mimic.offset is None else float(j.mimic.offset), tuple(poly)))
    mimic = tuple(mimic)
    model = Model(
        name=robot.name, source=name, urdf_xml=text.decode(),
        parent=frozen(parent, int), jtype=frozen(jtype, np.int64), axis=frozen(axis),
        X_tree=frozen(X_tree), T_tree=frozen(T_tree), I=frozen(I_body),
        body_names=tuple(body_names), joint_names=tuple(joint_names), joint_types=tuple(joint_types),
        lower=frozen(lim[:, 0]), upper=frozen(lim[:, 1]), velocity_limit=frozen(lim[:, 2]),
        effort_limit=frozen(lim[:, 3]), damping=frozen(lim[:, 4]), friction=frozen(lim[:, 5]),
        gravity=frozen(gravity), links=MappingProxyType(links), link_masses=MappingProxyType(masses),
        mimic=mimic, transmissions=read_transmissions(root, joints_el, chk), package_dirs=resolver.as_tuple(),
        independent=independent, initial_configuration=MappingProxyType(init),
        spring_stiffness=frozen(springs[0]), spring_reference=frozen(springs[1]),
        armature=frozen(joint_armature(root, joint_names, urdf_joint_of, joints_el, chk)),
    )
    loops = _loops(root, model, chk)
    if loops:
        model = dataclasses.replace(model, loops=loops)
    couplings = read_couplings(root, model, chk)
    if couplings:
        model = dataclasses.replace(model, couplings=couplings)
    if (couplings or model.mimic) and not any(v for v in flags.values()):  # no independent= in the file
        followers = coupling_followers(model, couplings)
        model = dataclasses.replace(model, independent=tuple(j for j in joint_names if j not in followers))
    _say_actuators(root, model, chk)
    if model.total_mass == 0.0 and model.NB > 0:
        chk.warn(root, "the robot has no mass (no <inertial> with a non-zero mass): its dynamics are zero; "
                       "kinematics only")
    return model


def _say_actuators(root, model, chk):
    """One located warning each: which joints are the actuators of a constrained model without
    ``<transmission>`` (``Model.actuated_joints``: not the mimic followers nor the passive loop joints) when
    that is not simply the joints the file marks ``independent="true"`` (it has mimics, or loops with none
    marked), and
    the actuators whose ``<limit effort="0">`` is read as unknown (ROS-Industrial files write 0), not as a
    capacity of zero."""
    acts = model.actuated_joints
    if not model.transmissions and model.has_constraints and not any(lp.actuated for lp in model.loops):
        why = {}
        for j, reason in model.undriven_joints.items():
            kind = "mimic followers" if reason.startswith("mimic") else "passive loop joints"
            why.setdefault(kind, []).append(j)
        but = "; ".join(f"{k}: {', '.join(v)}" for k, v in why.items())
        free = {j for lp in model.loops for j in model.loop_chain(lp)} if not model.independent else ()
        if model.mimic or free:  # else the file's independent="true" joints are the actuators: no surprise
            chk.warn(root, f"no <transmission>: the actuators are {', '.join(acts) or 'none'}"
                     + (f" (not driven: {but})" if but else "")
                     + (f"; the {len(free)} joints of the loops all count as actuators (none is marked independent):"
                        " mark the driven ones independent=\"true\" or give <transmission>s" if free else ""))
    zero = [j for j in acts if model.effort_limit[model.joint_index(j)] == 0.0]
    if zero:
        chk.warn(root, f"<limit effort=\"0\"> on the actuated joint(s) {', '.join(zero)}: read as unknown (ROS-"
                 "Industrial files write 0), not as zero capacity; no effort check or capacity is computed for "
                 "them: give their real effort limits [N m | N]")


def _initial_configuration(root, joint_names, chk):
    out = {}
    for el in root.findall("initial_configuration"):
        for jp in el.findall("joint_position"):
            j = jp.get("joint")
            if j not in joint_names:
                raise chk.err(jp, f"<joint_position joint={j!r}>: not a movable joint of this robot")
            out[j] = chk.floats(jp, "value", 1, owner=jp)[0] if jp.get("value") is not None else 0.0
        break  # the first <initial_configuration> is the one used
    return out


def _gazebo_springs(root, joint_names, chk):
    k, ref = np.zeros(len(joint_names)), np.zeros(len(joint_names))
    for el in root.findall("gazebo"):
        j = el.get("reference")
        st, sr = el.find("springStiffness"), el.find("springReference")
        if j is None or (st is None and sr is None):
            continue
        if j not in joint_names:
            raise chk.err(el, f"<gazebo reference={j!r}> with a spring: not a movable joint")
        i = joint_names.index(j)
        for node, arr in ((st, k), (sr, ref)):
            if node is not None:
                try:
                    arr[i] = float(node.text)
                except (TypeError, ValueError):
                    raise chk.err(el, f"<{node.tag}> {node.text!r} is not a number") from None
                if not math.isfinite(arr[i]):
                    raise chk.err(el, f"<{node.tag}> is not finite")
    return k, ref


DRAKE_NS = "http://drake.mit.edu"


def _loop_elements(root, chk):
    """(element, name, type, predecessor link, Fp pose, successor link, Fs pose or None, axis, axis2)
    for every <loop> and <drake:ball_constraint>."""
    from urdf_dyn.algorithms.spatial import rpy_to_matrix
    out = []

    def pose(origin, owner):
        T = np.eye(4)
        xyz = chk.floats(origin, "xyz", 3, [0.0, 0.0, 0.0], owner=owner)
        rpy = chk.floats(origin, "rpy", 3, [0.0, 0.0, 0.0], owner=owner)
        T[:3, :3] = rpy_to_matrix(rpy)
        T[:3, 3] = xyz
        return T

    for el in root.findall("loop"):
        name = el.get("name")
        if not name:
            raise chk.err(el, "<loop> without a name attribute")
        ends = []
        for tag in ("predecessor", "successor"):
            e = el.find(tag)
            if e is None or not e.get("link"):
                raise chk.err(el, f"loop has no <{tag} link=...>")
            o = e.find("origin")
            ends.append((e.get("link"), None if (o is None and tag == "successor") else pose(o, el), e))
        ax = chk.floats(el.find("axis"), "xyz", 3, [1.0, 0.0, 0.0], owner=el)
        ax2 = chk.floats(el.find("axis2"), "xyz", 3, None, owner=el)
        out.append((el, name, el.get("type"), *ends[0][:2], *ends[1][:2], ax, ax2))
    for el in root.iter("{%s}ball_constraint" % DRAKE_NS):
        def get(tag, attr):
            e = el.find("{%s}%s" % (DRAKE_NS, tag))
            if e is None or e.get(attr) is None:
                raise chk.err(el, f"drake:ball_constraint without <drake:{tag} {attr}=...>")
            return e
        A = get("ball_constraint_body_A", "name").get("name")
        B = get("ball_constraint_body_B", "name").get("name")
        TA, TB = np.eye(4), np.eye(4)
        TA[:3, 3] = chk.floats(get("ball_constraint_p_AP", "value"), "value", 3, owner=el)
        TB[:3, 3] = chk.floats(get("ball_constraint_p_BQ", "value"), "value", 3, owner=el)
        out.append((el, el.get("name") or f"ball_{A}_{B}", "spherical", A, TA, B, TB, [1.0, 0, 0], None))
    return out


def _loops(root, model, chk):
    """LoopJoint tuple from the <loop> elements, checked (names, types, axes, closure at q_initial)."""
    from urdf_dyn.algorithms.kinematics import body_poses
    from urdf_dyn.algorithms.joints import LOOP_TYPES, loop_subspaces
    from urdf_dyn.model import LoopJoint
    elements = _loop_elements(root, chk)
    if not elements:
        return ()
    T_body = body_poses(model, model.q_initial()[None, :])[0]
    seen, loops = {}, []
    for el, name, ltype, pl, TP, sl, TS, ax, ax2 in elements:
        if name in seen:
            raise chk.err(el, f"duplicate loop name {name!r} (first on line {seen[name]})")
        seen[name] = el.sourceline
        if ltype not in LOOP_TYPES:
            raise chk.err(el, f"unknown loop type {ltype!r} (types: {', '.join(LOOP_TYPES)})")
        for link in (pl, sl):
            if link not in model.links:
                raise chk.err(el, f"loop names unknown link {link!r}")
        if pl == sl:
            raise chk.err(el, f"loop predecessor and successor are the same link {pl!r}")
        lp_, ls_ = model.links[pl], model.links[sl]
        if lp_.body == ls_.body:
            raise chk.err(el, f"links {pl!r} and {sl!r} are welded to the same body by fixed joints: the loop "
                              "constrains nothing")
        a = np.asarray(ax, float)
        if np.linalg.norm(a) < 1e-12:
            raise chk.err(el, "loop axis is zero")
        a = a / np.linalg.norm(a)
        T_P = np.asarray(lp_.T_body_link) @ TP  # Fp in the predecessor BODY frame
        if TS is None:  # close the loop at the initial configuration (MuJoCo's connect semantics)
            T_S = np.linalg.inv(T_body[ls_.body]) @ T_body[lp_.body] @ T_P
        else:
            T_S = np.asarray(ls_.T_body_link) @ TS
        if ltype == "universal":
            a2 = np.asarray(ax2 if ax2 is not None else np.cross(a, [0, 0, 1.0]) if abs(a[2]) < 0.9
                            else np.cross(a, [1.0, 0, 0]), float)
            if np.linalg.norm(a2) < 1e-12 or abs(a @ a2) > 1e-6 * np.linalg.norm(a2):
                raise chk.err(el, "universal loop: <axis2> must be non-zero and perpendicular to <axis>")
            a2 = a2 / np.linalg.norm(a2)
        else:
            a2 = np.zeros(3)
        S, T = loop_subspaces(ltype, a, a2)
        lim, dyn = el.find("limit"), el.find("dynamics")
        vals = {k: (chk.floats(lim, k, 1, owner=el) or [d])[0]
                for k, d in (("lower", -np.inf), ("upper", np.inf), ("effort", np.inf), ("velocity", np.inf))}
        dmp = {k: (chk.floats(dyn, k, 1, owner=el) or [0.0])[0] for k in ("damping", "friction")}
        act = (el.get("actuated") or "false").lower()
        if act not in ("true", "false", "1", "0"):
            raise chk.err(el, f"actuated={el.get('actuated')!r}: use true or false")
        loops.append(LoopJoint(
            name=name, type=ltype, predecessor=pl, successor=sl, p=lp_.body, s=ls_.body,
            T_P=frozen(T_P), T_S=frozen(T_S), X_P=frozen(pose_to_plux(np.ascontiguousarray(T_P))),
            X_S=frozen(pose_to_plux(np.ascontiguousarray(T_S))), axis=frozen(a), axis2=frozen(a2),
            S=frozen(S), T=frozen(T), actuated=act in ("true", "1"), lower=vals["lower"], upper=vals["upper"],
            effort=vals["effort"], velocity=vals["velocity"], damping=dmp["damping"], friction=dmp["friction"],
            line=el.sourceline or 0))
    return tuple(loops)


#: (coordinate, type code, axis) of the kernel bodies of a floating and a planar joint (``algorithms.joints``)
_FREE_COORDS = (("x", FREE, (1, 0, 0)), ("y", SUB_P, (0, 1, 0)), ("z", SUB_P, (0, 0, 1)),
                ("rx", SUB_R, (1, 0, 0)), ("ry", SUB_R, (0, 1, 0)), ("rz", SUB_R, (0, 0, 1)))
_PLANAR_COORDS = (("x", PLANAR, (1, 0, 0)), ("y", SUB_P, (0, 1, 0)), ("rz", SUB_R, (0, 0, 1)))


def _frame_with_z(n):
    """A rotation (3×3) whose z column is the unit vector n, the identity for n = z (Pinocchio's planar
    joint is always in the joint frame's x-y plane)."""
    n = np.asarray(n, float) / np.linalg.norm(n)
    if abs(n[2] - 1.0) < 1e-12:
        return np.eye(3)
    t = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    x = np.cross(t, n)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(n, x), n])


def _dfs_order(parent):
    """Depth-first pre-order of bodies (children in creation order), starting at body 0."""
    kids = defaultdict(list)
    for i in range(1, len(parent)):
        kids[parent[i]].append(i)
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(kids[i]))
    return order
