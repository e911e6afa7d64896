"""A trimesh scene of a urdf_dyn Model: the URDF's visuals, posed by urdf_dyn's forward kinematics.

Every ``<visual>`` of every link becomes one node of a ``trimesh.Scene`` whose transform (visual frame in
the base frame) is set from ``urdf_dyn.kinematics.body_poses``. Primitives (box, cylinder, sphere) are
built with ``trimesh.creation``; meshes are loaded with ``trimesh.load`` (``package://`` through
``urdf_dyn.packages.PackageResolver``, relative names from the robot file's folder). A mesh that cannot be
found or read falls back to the link's collision geometry, then to a box of the link's inertia, then to a
magenta placeholder, with one ``ViewerWarning`` — never an exception. Mesh scales
are baked into the vertices, so node transforms stay rigid.

The loop-closure data for the overlays (poses of Fp and Fs, residual per loop) come from the same body
poses and ``urdf_dyn.loops.LoopState``; so do the balancers' pins (``balancers.balancer_states``).
"""
from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from urdf_dyn import body_poses
from urdf_dyn import LoopState
from urdf_dyn import PackageResolver

from .backend import ViewerError

__all__ = ["ViewerWarning", "Visual", "load_visuals", "inertia_box", "RobotScene", "resolver_of", "PLACEHOLDER_RGBA"]

DEFAULT_RGBA = (0.70, 0.70, 0.72, 1.0)
PLACEHOLDER_RGBA = (1.0, 0.0, 1.0, 1.0)


class ViewerWarning(UserWarning):
    """A visual could not be drawn as described (missing or unreadable mesh, unknown geometry)."""


@dataclass
class Visual:
    """One URDF ``<visual>``: ``link`` it belongs to, ``name`` (unique in the scene), ``mesh`` (trimesh, in
    the visual frame, scale applied), ``origin`` (4x4 pose of the visual frame in the link frame) and
    ``placeholder`` (True when the geometry could not be loaded)."""
    link: str
    name: str
    mesh: trimesh.Trimesh
    origin: np.ndarray
    placeholder: bool = False


def resolver_of(model) -> PackageResolver:
    """The PackageResolver the model was loaded with (``model.package_dirs``)."""
    r = PackageResolver(None)
    items, dirs = (tuple(model.package_dirs) + ((), ()))[:2] if model.package_dirs else ((), ())
    r.mapping = {k: Path(v) for k, v in items}
    r.search = [Path(d) for d in dirs]
    return r


def _floats(text, n, default):
    if text is None:
        return np.array(default, float)
    v = [float(x) for x in text.split()]
    if len(v) == 1 and n == 3:
        v = v * 3
    if len(v) != n:
        raise ValueError(f"expected {n} numbers, got {text!r}")
    return np.array(v, float)


def _origin(el):
    T = np.eye(4)
    o = el.find("origin") if el is not None else None
    if o is None:
        return T
    xyz = _floats(o.get("xyz"), 3, (0, 0, 0))
    rpy = _floats(o.get("rpy"), 3, (0, 0, 0))
    T = trimesh.transformations.euler_matrix(*rpy, axes="sxyz")  # R = Rz(y) Ry(p) Rx(r), URDF convention
    T[:3, 3] = xyz
    return T


def _rgba(mat_el, materials):
    """Colour of a ``<material>`` element (inline ``<color>`` or a robot-level material by name), or None."""
    if mat_el is None:
        return None
    c = mat_el.find("color")
    if c is not None and c.get("rgba"):
        return tuple(_floats(c.get("rgba"), 4, DEFAULT_RGBA))
    return materials.get(mat_el.get("name"))


def placeholder_mesh(size=0.05):
    """The stand-in for a visual that could not be loaded: a small magenta octahedron."""
    m = trimesh.creation.icosphere(subdivisions=0, radius=size)
    m.visual.face_colors = _u8(PLACEHOLDER_RGBA)
    return m


def _u8(rgba):
    return np.round(np.clip(np.asarray(rgba, float), 0.0, 1.0) * 255).astype(np.uint8)


def _primitive(geom):
    """(mesh, kind) of a ``<geometry>`` element's primitive, or (None, kind) for a mesh or unknown."""
    for child in geom:
        kind = child.tag
        if kind == "box":
            return trimesh.creation.box(extents=_floats(child.get("size"), 3, (0.1, 0.1, 0.1))), kind
        if kind == "cylinder":
            return trimesh.creation.cylinder(radius=float(child.get("radius", 0.05)),
                                             height=float(child.get("length", 0.1)), sections=32), kind
        if kind == "sphere":
            return trimesh.creation.icosphere(subdivisions=2, radius=float(child.get("radius", 0.05))), kind
        if kind == "capsule":  # not standard URDF, but common (ROS 2, MuJoCo exports)
            r, ln = float(child.get("radius", 0.05)), float(child.get("length", 0.1))
            return trimesh.creation.capsule(height=ln, radius=r, count=[16, 16]), kind
        return None, kind
    return None, None


MAX_TEXTURE = 512


def _shrink_textures(mesh):
    """Textures larger than MAX_TEXTURE pixels are scaled down: trimesh's viewer re-encodes every texture
    as PNG when it uploads a mesh (20 s for ANYmal C's 2048² textures); a 640×480 view shows no more."""
    mat = getattr(getattr(mesh, "visual", None), "material", None)
    for attr in ("image", "baseColorTexture"):
        img = getattr(mat, attr, None)
        if img is not None and hasattr(img, "size") and max(img.size) > MAX_TEXTURE:
            k = MAX_TEXTURE / max(img.size)
            try:
                setattr(mat, attr, img.resize((max(1, int(img.size[0] * k)), max(1, int(img.size[1] * k)))))
            except (AttributeError, TypeError, ValueError):  # a material that does not take a new image
                pass


class _MeshCache:
    def __init__(self):
        self.meshes = {}

    def load(self, path):
        if path not in self.meshes:
            loaded = trimesh.load(path, force="mesh", process=False)
            if not isinstance(loaded, trimesh.Trimesh) or loaded.is_empty:
                raise ValueError("no triangles in the file")
            bad = np.flatnonzero(~np.isfinite(np.asarray(loaded.vertices)).all(axis=1))
            if len(bad):        # a NaN vertex: the mesh file's fault, named here (not the robot file's)
                raise ViewerError(f"{path}: vertex {int(bad[0]) + 1} is {tuple(loaded.vertices[bad[0]].tolist())}, "
                                  f"not finite ({len(bad)} such vertices): the mesh file cannot be drawn")
            _shrink_textures(loaded)
            self.meshes[path] = loaded
        return self.meshes[path].copy()


def _geometry(geom, resolver, base_dir, cache):
    """(mesh, kind, problem) of a ``<geometry>`` element: problem is None when the mesh was built."""
    if geom is None:
        return None, None, "no <geometry>"
    mesh, kind = _primitive(geom)
    if mesh is None and kind == "mesh":
        el = geom.find("mesh")
        uri = el.get("filename", "")
        try:
            path = resolver.resolve(uri, base_dir)
            mesh = cache.load(path)
            scale = _floats(el.get("scale"), 3, (1, 1, 1))
            if not np.allclose(scale, 1.0):
                mesh.apply_transform(np.diag([*scale, 1.0]))
        except Exception as e:  # missing file, unknown package, unreadable format
            if isinstance(e, ViewerError):           # a broken mesh file (a NaN vertex): an error naming it
                raise
            return None, kind, f"mesh {uri!r} could not be loaded ({e})"
    elif mesh is None:
        return None, kind, f"unsupported geometry <{kind}>"
    return mesh, kind, None


def inertia_box(link_el):
    """(mesh, origin) of the uniform box with the link's mass and rotational inertia (half-axes from the
    principal moments: a² = 6 (I₂ + I₃ − I₁) / m, ...), placed at the centre of mass along the principal axes —
    the stand-in Drake's and Pinocchio's viewers draw; None without a positive mass and inertia."""
    inertial = link_el.find("inertial")
    if inertial is None or inertial.find("mass") is None or inertial.find("inertia") is None:
        return None
    try:
        m = float(inertial.find("mass").get("value", 0))
        a = inertial.find("inertia").attrib
        I = np.array([[float(a.get("ixx", 0)), float(a.get("ixy", 0)), float(a.get("ixz", 0))],
                      [float(a.get("ixy", 0)), float(a.get("iyy", 0)), float(a.get("iyz", 0))],
                      [float(a.get("ixz", 0)), float(a.get("iyz", 0)), float(a.get("izz", 0))]])
    except ValueError:
        return None
    if not (m > 0) or not np.all(np.isfinite(I)):
        return None
    w, R = np.linalg.eigh(I)
    ext = np.sqrt(np.clip(6.0 * (w.sum() - 2 * w) / m, 0.0, None))  # full edge lengths
    if not np.any(ext > 0):
        return None
    ext = np.maximum(ext, 0.05 * ext.max())  # a rod or plate still shows
    if np.linalg.det(R) < 0:
        R[:, 0] = -R[:, 0]
    T = _origin(inertial)
    P = np.eye(4)
    P[:3, :3] = R
    return trimesh.creation.box(extents=ext), T @ P


def load_visuals(model, resolver=None) -> list:
    """The visuals of every link of ``model`` (from ``model.urdf_xml``). A visual whose mesh is missing or
    unreadable (or whose geometry is unknown) falls back to the link's ``<collision>`` geometry, then to a
    box of the link's inertia (``inertia_box``), then to a small magenta placeholder; a robot without any
    ``<visual>`` is drawn from its collision geometry or inertias. One ViewerWarning lists what was replaced.
    Raises ViewerError when there is nothing at all to draw."""
    from .backend import ViewerError
    root = ET.fromstring(model.urdf_xml)
    resolver = resolver or resolver_of(model)
    base_dir = Path(model.source).resolve().parent if model.source and os.path.isfile(model.source) else None
    materials = {}
    for m in root.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None and c.get("rgba"):
            materials[m.get("name")] = tuple(_floats(c.get("rgba"), 4, DEFAULT_RGBA))
    cache = _MeshCache()
    out, replaced = [], []
    links = [ln for ln in root.findall("link") if ln.get("name") in model.links]
    no_visuals = not any(ln.findall("visual") for ln in links)

    def fallback(link, lname, problem):
        """(mesh, origin, how) from the link's collision geometry, else its inertia box, else None."""
        for col in link.findall("collision"):
            mesh, _, bad = _geometry(col.find("geometry"), resolver, base_dir, cache)
            if mesh is not None:
                return mesh, _origin(col), "collision geometry"
        box = inertia_box(link)
        if box is not None:
            return box[0], box[1], "inertia box"
        return None

    for link in links:
        lname = link.get("name")
        visuals = link.findall("visual")
        if no_visuals:
            fb = fallback(link, lname, None)
            if fb is not None:
                mesh, origin, how = fb
                mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=_u8(DEFAULT_RGBA))
                out.append(Visual(lname, f"{lname}:{how}", mesh, origin, True))
            continue
        for k, vis in enumerate(visuals):
            name = f"{lname}:{vis.get('name') or k}"
            if any(v.name == name for v in out):
                name = f"{lname}:{k}"
            origin = _origin(vis)
            rgba = _rgba(vis.find("material"), materials)
            mesh, kind, problem = _geometry(vis.find("geometry"), resolver, base_dir, cache)
            placeholder = mesh is None
            if placeholder:
                fb = fallback(link, lname, problem)
                if fb is not None:
                    mesh, origin, how = fb
                else:
                    mesh, how = placeholder_mesh(), "placeholder"
                mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=_u8(PLACEHOLDER_RGBA if how == "placeholder"
                                                                                 else rgba or DEFAULT_RGBA))
                replaced.append(f"{lname} ({problem}; drawn as {how})")
            elif rgba is not None or kind != "mesh" or not _has_colors(mesh):
                mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=_u8(rgba or DEFAULT_RGBA))
            out.append(Visual(lname, name, mesh, origin, placeholder))
    if not out:
        raise ViewerError(f"{model.source}: nothing to draw: robot {model.name!r} has no <visual> or <collision> "
                          "geometry and no link with a mass and inertia")
    if no_visuals:
        warnings.warn(f"{model.source}: robot {model.name!r} has no <visual> geometry: drawn from its collision "
                      f"geometry and link inertias ({len(out)} shapes)", ViewerWarning, stacklevel=2)
    elif replaced:
        warnings.warn(f"{model.source}: {len(replaced)} visual(s) could not be drawn as described: "
                      + "; ".join(replaced[:5]) + (f"; and {len(replaced) - 5} more" if len(replaced) > 5 else ""),
                      ViewerWarning, stacklevel=2)
    return out


def _has_colors(mesh):
    v = mesh.visual
    if getattr(v, "kind", None) in ("texture",):
        return True
    return getattr(v, "kind", None) in ("face", "vertex") and v.defined


class RobotScene:
    """A ``trimesh.Scene`` of ``model``'s visuals with node transforms driven by forward kinematics.

    ``set_q(q)`` poses the scene; ``body_T`` then holds the body poses (NB+1, 4, 4) used for it, ``visual_T``
    the visuals' poses (n_visuals, 4, 4), ``loop_frames()`` / ``loop_residuals()`` the loop-closure data of
    the same pose and ``balancers()`` its balancers' pins and forces."""

    def __init__(self, model, visuals=None, resolver=None):
        self.model = model
        self.visuals = load_visuals(model, resolver) if visuals is None else visuals
        self.scene = trimesh.Scene()
        self.nodes = []
        body, M = [], []
        for v in self.visuals:
            lf = model.links[v.link]
            body.append(lf.body)
            M.append(np.asarray(lf.T_body_link) @ v.origin)
            self.scene.add_geometry(v.mesh, node_name=v.name, geom_name=v.name)
            self.nodes.append(v.name)
        self._body = np.array(body, int)
        self._M = np.array(M).reshape(-1, 4, 4)
        # bounding-box corners of every visual in its own frame, for camera fitting
        self._corners = np.array([trimesh.bounds.corners(v.mesh.bounds) for v in self.visuals]).reshape(-1, 8, 3)
        self.q = None
        self.body_T = None
        self.visual_T = None
        self.set_q(model.q_initial())

    # -- posing ------------------------------------------------------------------------------------------
    def visual_poses(self, Q):
        """Poses (N, n_visuals, 4, 4) of every visual frame for a batch Q (N, nv)."""
        T = body_poses(self.model, np.atleast_2d(np.asarray(Q, float)))
        return T[:, self._body] @ self._M

    def set_q(self, q, graph=True):
        """Pose the scene at joint positions q (nv,): ``body_T`` and ``visual_T``, and the trimesh scene graph's
        node transforms unless ``graph=False`` (the viewer draws from ``visual_T``; an export skips them)."""
        q = np.asarray(q, float).reshape(self.model.nq)     # position coordinates (nv + 1 per quaternion)
        self.q = q
        self.body_T = body_poses(self.model, q[None])[0]
        W = self.visual_T = self.body_T[self._body] @ self._M
        if graph:
            g = self.scene.graph
            for node, w in zip(self.nodes, W):
                g.update(frame_to=node, matrix=w)
        return self

    def points(self, Q):
        """World positions (N * n_visuals * 8 (+ N * 2 per loop), 3) of the visuals' bounding-box corners over
        the poses Q, and of the loop frames' origins (an open loop's gap is in view too)."""
        T = body_poses(self.model, np.atleast_2d(np.asarray(Q, float)))
        ends = [T[:, b] @ np.asarray(M)[:, 3] for lp in self.model.loops for b, M in ((lp.p, lp.T_P), (lp.s, lp.T_S))]
        ends = np.concatenate(ends)[:, :3] if ends else np.zeros((0, 3))
        if not len(self.visuals):
            return np.concatenate([T[:, :, :3, 3].reshape(-1, 3), ends])
        W = T[:, self._body] @ self._M  # (N, V, 4, 4)
        P = np.einsum("nvij,vkj->nvki", W[..., :3, :3], self._corners) + W[:, :, None, :3, 3]
        return np.concatenate([P.reshape(-1, 3), ends])

    # -- balancers --------------------------------------------------------------------------------------
    def balancers(self):
        """[balancers.BalancerState] of the model's balancers at the current pose: pins a, b (3,) [m] in the
        base frame from ``body_T``, pin length [m], force [N] (+ pushes the pins apart). Kept for the pose
        (the overlay and the heads-up text ask for the same pose's); [] without balancers."""
        if not self.model.balancers:
            return []
        if getattr(self, "_bal_T", None) is not self.body_T:
            from .balancers import balancer_states
            self._bal, self._bal_T = balancer_states(self.model, self.body_T), self.body_T
        return self._bal

    # -- loops -------------------------------------------------------------------------------------------
    def loop_frames(self):
        """[(LoopJoint, pose of Fp (4x4), pose of Fs (4x4))] in the base frame at the current pose."""
        T = self.body_T
        return [(lp, T[lp.p] @ lp.T_P, T[lp.s] @ lp.T_S) for lp in self.model.loops]

    def loop_residuals(self):
        """{loop name: ||δ_k||} [m, rad] at the current pose (RBDA eq. 8.23: ``urdf_dyn.loops.LoopState.deltas``,
        the compiled loop terms, whose rows come loop by loop, n^c_k rows each). Cached per pose (the
        overlay, the heads-up text and ``gap_labels`` ask for the same pose's)."""
        if not self.model.loops:
            return {}
        key = self.q.tobytes()
        if getattr(self, "_res_key", None) == key:
            return dict(self._res)
        d = LoopState(self.model, self.q).deltas()
        out, k = {}, 0
        for lp in self.model.loops:
            out[lp.name] = float(np.linalg.norm(d[k:k + lp.nc]))
            k += lp.nc
        self._res_key, self._res = key, out
        return dict(out)

    def gap_labels(self, tol):
        """{loop name: label} of the loops open by more than ``tol`` [m, rad] at the current pose: the gap
        between Fp and Fs (position [m], angle [rad], ``urdf_dyn.constraints.closure.loop_gaps``) and the
        nearest fix of the loop's origins when one closes it here (``closure.nearest_fix``), e.g.
        "tie_rod_pin: gap 2.24 m, 0 rad; closes if predecessor xyz z = -1.12 instead of +1.12". Cached per pose.

        A loop's gap is its constrained error T Tᵀ d split into position and angle, and its residual
        ``loop_residuals`` is ‖Tᵀ d‖ = ‖T Tᵀ d‖ (T's columns orthonormal), so neither part exceeds the
        residual: where every residual is at most half of ``tol`` (a motion that keeps its loops closed, at
        every frame of an animation), no loop is open and the gaps are not computed."""
        if not self.model.loops:
            return {}
        key = (self.q.tobytes(), float(tol))
        if getattr(self, "_gap_key", None) == key:
            return self._gap_text
        if max(self.loop_residuals().values()) <= 0.5 * tol:
            self._gap_key, self._gap_text = key, {}
            return {}
        from urdf_dyn.constraints.closure import loop_gaps, nearest_fix
        out = {}
        for lp, g in zip(self.model.loops, loop_gaps(self.model, self.q)):
            if g.size > tol:
                fix = nearest_fix(self.model, lp, self.q)
                out[lp.name] = (f"{lp.name}: gap {g.position:.3g} m, {g.angle:.3g} rad"
                                + (f"; closes if {fix[0]}" if fix else ""))
        self._gap_key, self._gap_text = key, out
        return out
