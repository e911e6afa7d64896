"""The robot's visuals in static GPU buffers, drawn with one transform per body.

trimesh's SceneViewer draws one vertex list per visual, with a scene-graph look-up, cache checks and a
matrix push per node: ≈ 5 ms a frame for the excavator's 55 visuals on Mesa's llvmpipe (measured), where this
module takes ≈ 1.5 ms including the rasterisation. Here every untextured visual is baked once into its body's frame (the visual's origin and the
link's pose in the body applied to vertices and normals) and all of them go into ONE vertex buffer
(positions, normals, colours interleaved) and one index buffer, in runs of one body each; a frame then
costs one ``glMultMatrixf`` + ``glDrawElements`` per run (14 for the excavator). The data per vertex are
trimesh's own (``trimesh.rendering.mesh_to_vertexlist`` with ``smooth=False``: face normals and face
colours, flat shading), so the picture is the one trimesh draws; equal (position, normal, colour) corners
are stored once, which halves the vertices llvmpipe transforms and lights. Closed meshes (watertight,
consistently wound outwards: every URDF primitive) and opaque are drawn with back faces culled and
one-sided lighting: their back faces are hidden anyway, and llvmpipe sets up half the triangles; open or
see-through meshes keep two-sided lighting and the viewer's culling switch. Textured visuals keep trimesh's vertex list and texture and are
drawn one by one; visuals with transparent colours are drawn after the opaque ones.

Needs a current OpenGL context (pyglet) when built and drawn.
"""
from __future__ import annotations

import ctypes

import numpy as np
from pyglet import gl

__all__ = ["BodyMeshes", "gl_matrices"]

_VERTEX = np.dtype([("v", np.float32, 3), ("n", np.float32, 3), ("c", np.uint8, 4)])  # 28 bytes


def gl_matrices(T):
    """Column-major float32 copies (n, 16) of poses T (n, 4, 4), for ``glMultMatrixf``."""
    return np.ascontiguousarray(np.asarray(T, float).transpose(0, 2, 1), dtype=np.float32).reshape(-1, 16)


def _soup(mesh, M):
    """Vertices (3 per face, in the frame M maps from the mesh's), face normals and face colours of a
    Trimesh, as trimesh's viewer sends them for ``smooth=False``."""
    faces = np.asarray(mesh.faces)
    out = np.empty(3 * len(faces), _VERTEX)
    V = np.asarray(mesh.vertices, float)[faces].reshape(-1, 3)
    N = np.repeat(np.asarray(mesh.face_normals, float), 3, axis=0)
    out["v"] = V @ M[:3, :3].T + M[:3, 3]
    out["n"] = N @ M[:3, :3].T
    out["c"] = np.repeat(np.asarray(mesh.visual.face_colors, np.uint8)[:, :4], 3, axis=0)
    return out


def _closed(mesh):
    """True for a watertight mesh wound consistently with its normals outwards (its back faces never show)."""
    try:
        return bool(mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0)
    except Exception:  # noqa: BLE001 - a degenerate mesh: draw it two-sided
        return False


def _textured(mesh):
    visual = getattr(mesh, "visual", None)
    return getattr(visual, "kind", None) == "texture"


class BodyMeshes:
    """Static GPU buffers of a RobotScene's visuals, grouped by body.

    Args:
        robot: urdf_dyn_viewer.scene.RobotScene (its ``visuals``, their bodies and poses in the body).
        textured: {visual index: (pyglet vertex list, texture or None)} for visuals drawn one by one
            (textured meshes): trimesh's own lists.
    Attributes:
        runs: [(body, first index, index count, closed, transparent)] in drawing order (opaque first).
        singles: [(visual index, vertex list, texture)] drawn after the runs.
    """

    def __init__(self, robot, textured=None):
        textured = dict(textured or {})
        per = {}
        self.singles = []
        for k, v in enumerate(robot.visuals):
            if k in textured or _textured(v.mesh):
                if k in textured:
                    self.singles.append((k, *textured[k]))
                continue
            if v.mesh.is_empty:
                continue
            data = _soup(v.mesh, robot._M[k])
            transparent = bool(np.any(data["c"][:, 3] < 255))
            open_ = transparent or not _closed(v.mesh)  # a see-through mesh shows its back faces
            per.setdefault((transparent, open_, int(robot._body[k])), []).append(data)
        self.runs, verts, index, nv, first = [], [], [], 0, 0
        for (transparent, open_, body) in sorted(per):
            soup = np.concatenate(per[(transparent, open_, body)])
            uniq, inv = np.unique(soup, return_inverse=True)  # equal corners once
            self.runs.append((body, first, len(soup), not open_, transparent))
            verts.append(uniq)
            index.append(inv.astype(np.uint32).reshape(-1) + nv)
            nv += len(uniq)
            first += len(soup)
        self.vertices = np.concatenate(verts) if verts else np.empty(0, _VERTEX)
        self.index = np.concatenate(index) if index else np.empty(0, np.uint32)
        self.vbo, self.ibo = gl.GLuint(0), gl.GLuint(0)
        if len(self.vertices):
            for buf, target, arr in ((self.vbo, gl.GL_ARRAY_BUFFER, self.vertices),
                                     (self.ibo, gl.GL_ELEMENT_ARRAY_BUFFER, self.index)):
                gl.glGenBuffers(1, ctypes.byref(buf))
                gl.glBindBuffer(target, buf)
                gl.glBufferData(target, arr.nbytes, arr.ctypes.data, gl.GL_STATIC_DRAW)
                gl.glBindBuffer(target, 0)

    @property
    def triangles(self):
        return len(self.index) // 3

    def draw(self, body_T, visual_T=None, cull=False):
        """Draw at body poses ``body_T`` (NB+1, 4, 4) in the current modelview (the camera's); the textured
        visuals at their poses ``visual_T`` (n_visuals, 4, 4). ``cull``: the viewer's culling switch, for
        open meshes (closed ones are always culled); it is the state left behind."""
        if self.runs:
            ptrs = self._matrices(body_T)
            stride = _VERTEX.itemsize
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
            gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, self.ibo)
            gl.glPushClientAttrib(gl.GL_CLIENT_VERTEX_ARRAY_BIT)
            gl.glEnableClientState(gl.GL_VERTEX_ARRAY)
            gl.glEnableClientState(gl.GL_NORMAL_ARRAY)
            gl.glEnableClientState(gl.GL_COLOR_ARRAY)
            gl.glVertexPointer(3, gl.GL_FLOAT, stride, 0)
            gl.glNormalPointer(gl.GL_FLOAT, stride, 12)
            gl.glColorPointer(4, gl.GL_UNSIGNED_BYTE, stride, 24)
            state = None
            for body, first, count, closed, _ in self.runs:
                if closed != state:
                    state = closed
                    gl.glLightModeli(gl.GL_LIGHT_MODEL_TWO_SIDE, gl.GL_FALSE if closed else gl.GL_TRUE)
                    (gl.glEnable if closed or cull else gl.glDisable)(gl.GL_CULL_FACE)
                gl.glPushMatrix()
                gl.glMultMatrixf(ptrs[body])
                gl.glDrawElements(gl.GL_TRIANGLES, count, gl.GL_UNSIGNED_INT, ctypes.c_void_p(4 * first))
                gl.glPopMatrix()
            gl.glLightModeli(gl.GL_LIGHT_MODEL_TWO_SIDE, gl.GL_TRUE)
            (gl.glEnable if cull else gl.glDisable)(gl.GL_CULL_FACE)
            gl.glPopClientAttrib()
            gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, 0)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
        if self.singles and visual_T is not None:
            mats = gl_matrices(visual_T)
            for k, vlist, texture in self.singles:
                gl.glPushMatrix()
                gl.glMultMatrixf((gl.GLfloat * 16)(*mats[k]))
                if texture is not None:
                    gl.glEnable(texture.target)
                    gl.glBindTexture(texture.target, texture.id)
                vlist.draw(mode=gl.GL_TRIANGLES)
                if texture is not None:
                    gl.glDisable(texture.target)
                gl.glPopMatrix()

    def _matrices(self, body_T):
        """Pointers, one per body, into a buffer kept between frames that now holds ``body_T``'s column-major
        float32 matrices (``gl_matrices``): a pointer is made once, not once per body and frame."""
        mats = getattr(self, "_mats", None)
        if mats is None or len(mats) != len(body_T):
            mats = self._mats = np.empty((len(body_T), 16), np.float32)
            ptr = ctypes.POINTER(gl.GLfloat)
            self._ptrs = [ctypes.cast(mats.ctypes.data + 64 * b, ptr) for b in range(len(body_T))]
        mats[:] = gl_matrices(body_T)
        return self._ptrs

    def delete(self):
        for buf in (self.vbo, self.ibo):
            if buf.value:
                gl.glDeleteBuffers(1, ctypes.byref(buf))
                buf.value = 0
