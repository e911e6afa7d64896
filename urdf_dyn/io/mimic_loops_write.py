"""Writing the converted description of ``io.mimic_loops``: mimics dropped, cranks moved to the motor shaft,
``<loop>``s and ``<transmission>``s added; and saving it (never over its input), with its meshes copied
beside it when asked."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
from lxml import etree

from urdf_dyn.errors import ModelError
from urdf_dyn.io._urdf_text import add_loop, fmt, matrix_to_rpy

__all__ = ["write_converted", "save_converted"]


def _set_origin(el, T):
    o = el.find("origin")
    if o is None:
        o = etree.SubElement(el, "origin")
    o.set("xyz", fmt(np.round(T[:3, 3], 12) + 0.0))
    o.set("rpy", fmt(np.round(matrix_to_rpy(T[:3, :3]), 12) + 0.0))


def _transmission(root, name, joint, actuator):
    t = etree.SubElement(root, "transmission", name=name)
    etree.SubElement(t, "type").text = "transmission_interface/SimpleTransmission"
    j = etree.SubElement(t, "joint", name=joint)
    etree.SubElement(j, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
    a = etree.SubElement(t, "actuator", name=actuator)
    etree.SubElement(a, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
    etree.SubElement(a, "mechanicalReduction").text = "1"


def _term(c, name, first):
    sign = "-" if c < 0 else ("" if first else "+")
    mag = abs(c)
    return f"{sign} {name}" if mag == 1 else f"{sign} {mag:g}·{name}"


def write_converted(arm, closures, passive, driven, mapping, result_cls):
    """The converted URDF (``result_cls``, ``io.mimic_loops.MimicLoops``) from the classified ``arm``."""
    root, model = arm.root, arm.model
    dropped = []
    for name, el in arm.joint_el.items():
        mm = el.find("mimic")
        if mm is not None:
            dropped.append((name, mm.get("joint"), float(mm.get("multiplier", 1)), float(mm.get("offset", 0))))
            el.remove(mm)
    lines = [c.text for c in closures]
    for crank, d in driven.items():
        el, M = arm.joint_el[crank], d["leader"]
        child = arm.child[crank]
        if d["turret"] is not None:
            el.find("parent").set("link", d["turret"])
            _set_origin(el, np.linalg.inv(arm.T[d["turret"]]) @ arm.T[child])
        ax = el.find("axis")
        a = np.array([float(v) for v in ax.get("xyz").split()]) if ax is not None else np.array([1.0, 0, 0])
        if ax is None:
            ax = etree.SubElement(el, "axis")
        ax.set("xyz", fmt(d["kappa"] * a + 0.0))
        lim_m = arm.joint_el[M].find("limit")
        if lim_m is not None and el.find("limit") is None:
            etree.SubElement(el, "limit", **{k: lim_m.get(k) for k in ("effort", "velocity") if lim_m.get(k)})
        row = mapping[crank]
        expr = " ".join(_term(c, j, i == 0) for i, (j, c) in enumerate(row.items())).lstrip("+ ")
        where = f"moved to {d['turret']} (the motor's side: the crank turns about the axis of " \
                f"{arm.by_child[arm.parent[M]]}), " if d["turret"] else ""
        lines.append(f"{crank}: {where}driven (the {M} motor); {M} is passive. {crank} = {expr}")
        if len(row) > 1:
            J = arm.by_child[arm.parent[M]]
            inv = f"{M} = {crank} {'-' if row[J] > 0 else '+'} {J}"
            lines.append(f"  i.e. {inv}: {crank} is {M}'s angle measured from {d['turret']} (how FANUC and ABB "
                         f"controllers count J3 on such arms: to the horizontal), {M} the URDF's angle from {arm.parent[M]}")
    passive_set = set(passive)
    followers = {d[0] for d in dropped}
    motors = []
    for j, t in zip(model.joint_names, model.joint_types):
        if j in passive_set:
            motors.extend(c for c, d in driven.items() if d["leader"] == j)
        elif j not in followers and t in ("revolute", "continuous", "prismatic"):
            motors.append(j)
            mapping.setdefault(j, {j: 1.0})
    mapping = {j: mapping[j] for j in motors}
    for c in closures:
        kind, pred, T_P, succ, T_S, axis = c.spec   # rounded to 1e-12 (m, rad): the home-pose FK's last bits
        add_loop(root, c.loop, kind, pred, np.round(T_P, 12) + 0.0, succ, np.round(T_S, 12) + 0.0,
                 axis=np.round(axis, 12) + 0.0)
    trans = root.findall("transmission")
    if not trans:
        for j in motors:
            leader = driven[j]["leader"] if j in driven else j
            _transmission(root, f"{leader}_transmission", j, f"{leader}_motor")
        lines.append(f"transmissions written (the motors): {', '.join(motors)}")
    else:
        for t in trans:
            for je in t.findall("joint"):
                for crank, d in driven.items():
                    if je.get("name") == d["leader"]:
                        je.set("name", crank)
        lines.append("the file's own transmissions kept (a leader's moved to its crank)")
    lines.append(f"passive (set by the loops): {', '.join(passive)}")
    lines.append("mimic dropped: " + ", ".join(f"{f} = {m:g}·{ldr}" + (f" + {o:g}" if o else "")
                                               for f, ldr, m, o in dropped))
    root.insert(0, etree.Comment(" converted by urdf_dyn close_mimic_loops (urdf-dyn loops) from "
                                 f"{Path(model.source).name}:\n     " + "\n     ".join(lines) + "\n"))
    for el in root.iter():
        if el.tail is not None and not el.tail.strip():
            el.tail = None
        if el.text is not None and not el.text.strip() and len(el):
            el.text = None
    etree.indent(root, space="  ")
    text = etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True).decode()
    return result_cls(urdf=text, closures=tuple(closures), motors=tuple(motors), mapping=mapping,
                      passive=tuple(passive), dropped=tuple(dropped), lines=tuple(lines))


def save_converted(result, out, source=None, mesh_dir=None, package_dirs=None):
    """Write ``result.urdf`` to ``out`` (atomically). ``source``: the input path, refused as ``out``.
    ``mesh_dir``: a folder (relative to ``out``'s folder) into which every mesh the file names is copied,
    the file then naming it relatively (identical files named by different URIs are copied once).

    Raises ModelError: ``out`` is the input; a mesh not found; two different meshes with one file name."""
    from urdf_dyn.io.files import atomic_path
    from urdf_dyn.io.packages import PackageResolver
    out = Path(out)
    if source is not None and Path(source).exists() and out.exists() and os.path.samefile(source, out):
        raise ModelError("the output is the input file: refused (write the converted robot to another file)",
                         file=str(out))
    text = result.urdf
    if mesh_dir is not None:
        root = etree.fromstring(text.encode())
        res = PackageResolver(package_dirs, origin=Path(source) if source else None)
        folder = out.parent / mesh_dir
        copied = {}
        for m in root.iter("mesh"):
            uri = m.get("filename")
            try:
                src = Path(res.resolve(uri, base_dir=Path(source).parent if source else None))
            except ModelError as e:
                raise ModelError(f"mesh {uri!r}: {e.reason}", file=str(source)) from None
            if not src.is_file():
                raise ModelError(f"mesh {uri!r} not found (at {src})", file=str(source))
            name = src.name
            if name in copied and copied[name].read_bytes() != src.read_bytes():
                raise ModelError(f"two different meshes are named {name!r} ({copied[name]} and {src}): "
                                 "cannot copy both into one folder", file=str(source))
            copied[name] = src
            m.set("filename", f"{Path(mesh_dir).as_posix()}/{name}")
        folder.mkdir(parents=True, exist_ok=True)
        for name, src in copied.items():
            shutil.copyfile(src, folder / name)
        text = etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True).decode()
    with atomic_path(out) as tmp:
        tmp.write_text(text)
    return text
