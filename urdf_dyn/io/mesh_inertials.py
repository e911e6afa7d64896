"""Estimated inertials from a description's meshes: every link's mass, centre of mass and rotational inertia
as a solid of uniform density filling its collision mesh, the density chosen so that the links add up to a
given total (a maker's published mechanical mass). For descriptions that have none, as ROS-Industrial's
arm descriptions; an estimate, to be said as such wherever its numbers are used.

Method: trimesh's mass properties of a closed triangle mesh (divergence theorem, volume integrals over the
signed tetrahedra of the faces; trimesh ``Trimesh.mass_properties``), the mesh first placed by its
``<collision><origin>`` and ``scale``. A mesh that is not watertight is replaced by its convex hull, and the
link is named in the returned notes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from urdf_dyn.errors import ModelError
from urdf_dyn.io._urdf_text import add_inertial, fmt

__all__ = ["LinkInertial", "estimate_inertials", "add_estimated_inertials", "inertial_table"]


@dataclass(frozen=True)
class LinkInertial:
    """One link's estimate: ``mass`` [kg], ``com`` (3,) [m] and ``inertia`` (3, 3) [kg m²] about the centre
    of mass in link axes; ``volume`` [m³] of its mesh(es); ``mesh`` the file(s) used; ``watertight`` False
    when a convex hull stood in."""
    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    volume: float
    mesh: str
    watertight: bool


def _origin(el):
    from scipy.spatial.transform import Rotation
    T = np.eye(4)
    o = el.find("origin") if el is not None else None
    if o is not None:
        T[:3, 3] = [float(v) for v in o.get("xyz", "0 0 0").split()]
        T[:3, :3] = Rotation.from_euler("xyz", [float(v) for v in o.get("rpy", "0 0 0").split()]).as_matrix()
    return T


def estimate_inertials(urdf_text: str, total_mass: float, base_dir=None, package_dirs=None, source=None):
    """Per-link inertials {link: LinkInertial} of a uniform solid filling each link's ``<collision>`` meshes,
    with one density for the whole robot so that the masses add up to ``total_mass`` [kg].

    Raises ModelError: a non-positive or non-finite total, a mesh that cannot be found or read, no mesh at
    all. Needs trimesh (the ``viewer`` extra)."""
    from urdf_dyn.extras import require
    from urdf_dyn.io.packages import PackageResolver
    trimesh = require("trimesh", "estimating inertials from meshes")
    if not (np.isfinite(total_mass) and total_mass > 0):
        raise ModelError(f"total mass {total_mass!r}: expected a positive number of kg", file=source)
    root = etree.fromstring(urdf_text.encode())
    res = PackageResolver(package_dirs, origin=Path(source) if source else None)
    parts = {}
    for link in root.findall("link"):
        meshes = []
        for col in link.findall("collision"):
            m = col.find("geometry/mesh")
            if m is None:
                continue
            uri = m.get("filename")
            path = Path(res.resolve(uri, base_dir=base_dir))
            try:
                mesh = trimesh.load(str(path), force="mesh")
            except Exception as e:  # trimesh raises many types for unreadable files
                raise ModelError(f"mesh {uri!r} ({path}) cannot be read: {e}", file=source,
                                 element=f"link {link.get('name')}") from None
            scale = [float(v) for v in m.get("scale", "1 1 1").split()]
            mesh.apply_scale(scale)
            mesh.apply_transform(_origin(col))
            meshes.append((uri, mesh))
        if meshes:
            parts[link.get("name")] = meshes
    if not parts:
        raise ModelError("no <collision> mesh in the robot: nothing to estimate inertials from", file=source)
    solids = {}
    for name, meshes in parts.items():
        tight = all(m.is_watertight and m.is_volume for _, m in meshes)
        use = [m if (m.is_watertight and m.is_volume) else m.convex_hull for _, m in meshes]
        solids[name] = (trimesh.util.concatenate(use) if len(use) > 1 else use[0], tight,
                        ", ".join(Path(u).name for u, _ in meshes))
    volume = sum(abs(s.volume) for s, _, _ in solids.values())
    rho = total_mass / volume
    out = {}
    for name, (s, tight, files) in solids.items():
        s.density = rho
        out[name] = LinkInertial(name, float(s.mass), np.array(s.center_mass), np.array(s.moment_inertia),
                                 float(s.volume), files, tight)
    return out, rho


def add_estimated_inertials(urdf_text: str, inertials: dict) -> str:
    """The URDF text with an ``<inertial>`` (origin at the centre of mass, link axes) for every link of
    ``inertials`` that has none. A link that already has one keeps it."""
    root = etree.fromstring(urdf_text.encode())
    for link in root.findall("link"):
        li = inertials.get(link.get("name"))
        if li is None or link.find("inertial") is not None:
            continue
        T = np.eye(4)
        T[:3, 3] = np.where(np.abs(li.com) < 1e-15, 0.0, li.com)
        el = add_inertial(link, li.mass, T, li.inertia)
        link.remove(el)
        link.insert(0, el)
        el.addprevious(etree.Comment(f" estimated: uniform solid filling {li.mesh}, volume {li.volume:.6g} m3"
                                     + ("" if li.watertight else " (not watertight: its convex hull)") + " "))
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True).decode()


def inertial_table(inertials: dict, rho: float) -> str:
    """A Markdown table of the estimates (for a provenance file)."""
    rows = ["| link | mesh | watertight | volume [m³] | mass [kg] | CoM [m] (link frame) | Ixx Iyy Izz [kg m²] |",
            "|---|---|---|---|---|---|---|"]
    for li in inertials.values():
        rows.append(f"| {li.link} | {li.mesh} | {'yes' if li.watertight else 'no (hull)'} | {li.volume:.4f} | "
                    f"{li.mass:.1f} | {fmt(np.round(li.com, 4))} | {fmt(np.round(np.diag(li.inertia), 2))} |")
    rows.append(f"\nDensity {rho:.1f} kg/m³, total {sum(li.mass for li in inertials.values()):.1f} kg.")
    return "\n".join(rows)

