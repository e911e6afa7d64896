"""Screen text drawn from pyglet's glyph atlas in one draw call per frame.

A ``pyglet.text.Label`` lays its text out again (grapheme breaking, glyph look-up, a new vertex list)
whenever the text changes; the heads-up text changes every frame of an animation (time, joint values,
residuals), and ten labels cost ~4 ms a frame. ``GlyphText`` keeps the font's glyphs (pyglet renders each
character once into its texture atlas) in numpy tables and turns a frame's lines into one array of textured
quads with a few vector operations: the same glyphs, advances and baselines as a Label with
``anchor_x="left"`` and ``anchor_y="top"`` or ``"bottom"``, drawn with the same blending.

Needs a current OpenGL context (pyglet) when glyphs are first used and when drawn.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pyglet
from pyglet import gl

__all__ = ["GlyphText"]


class GlyphText:
    """Lines of text for one frame, drawn together.

    Args:
        font_name: a name or a sequence of names (the first installed one is used, as for a Label).
        font_size: [pt] at ``dpi`` (pyglet's default 96).
    Usage: ``add(text, x, y, rgba, anchor_y)`` for every line of a frame, then ``draw()`` in pixel
    coordinates (an orthographic projection of the window), which also clears the lines.
    """

    def __init__(self, font_name=None, font_size=9, dpi=96):
        self.font = pyglet.font.load(font_name, font_size, dpi=dpi)
        self.ascent, self.descent = self.font.ascent, self.font.descent
        self._index = {}                  # character -> row of the tables below
        self._box = np.zeros((0, 4), np.float32)      # x0, y0, x1, y1 around the pen on the baseline [px]
        self._tex = np.zeros((0, 12), np.float32)     # the 4 corners' texture coordinates (u, v, r)
        self._adv = np.zeros(0, np.float32)           # advance [px]
        self._owner = np.zeros(0, np.int64)           # atlas texture id
        self._code = np.zeros(0, np.int64)            # code point -> row of the tables above (-1: not seen)
        self._lines = []

    def _rows(self, text):
        """Table rows (len(text),) int64 of the characters of ``text`` (rendering glyphs not seen before), by
        one look-up of their code points (a frame's lines together: ``draw``)."""
        cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        if len(cp) and (int(cp.max()) >= len(self._code) or (self._code[cp] < 0).any()):
            self._render(text)
        return self._code[cp]

    def _render(self, text):
        """Glyphs of the characters of ``text`` not seen before into the tables (and the code point table)."""
        idx = self._index
        new = [c for c in set(text) if c not in idx]
        if new:
            glyphs = self.font.get_glyphs("".join(new))
            if len(glyphs) != len(new):  # grapheme clusters (combining marks): one character at a time
                glyphs = [self.font.get_glyphs(c)[0] for c in new]
            n0 = len(self._adv)
            for k, (c, g) in enumerate(zip(new, glyphs)):
                idx[c] = n0 + k
            self._box = np.vstack([self._box, np.array([g.vertices for g in glyphs], np.float32)])
            self._tex = np.vstack([self._tex, np.array([g.tex_coords for g in glyphs], np.float32)])
            self._adv = np.concatenate([self._adv, np.array([g.advance for g in glyphs], np.float32)])
            self._owner = np.concatenate([self._owner, np.array([g.owner.id for g in glyphs], np.int64)])
            top = max(ord(c) for c in idx) + 1
            if top > len(self._code):
                self._code = np.concatenate([self._code, np.full(top - len(self._code), -1, np.int64)])
            for c in new:
                self._code[ord(c)] = idx[c]

    def width(self, text):
        """Advance width of ``text`` [px]."""
        return float(self._adv[self._rows(text)].sum()) if text else 0.0

    def add(self, text, x, y, rgba=(0, 0, 0, 255), anchor_y="top"):
        """Queue a line: its left edge at x, its top (``anchor_y="top"``) or bottom ("bottom") at y [px]."""
        text = text.replace("\t", " ")
        if not text:
            return
        base = y - self.ascent if anchor_y == "top" else y - self.descent
        self._lines.append((text, float(x), float(base), rgba))

    def draw(self):
        """Draw the queued lines (one ``glDrawArrays`` per atlas texture) and clear the queue."""
        if not self._lines:
            return
        lines, self._lines = self._lines, []
        rows = self._rows("".join([text for text, *_ in lines]))
        counts = np.array([len(text) for text, *_ in lines])
        line = np.repeat(np.arange(len(lines)), counts)
        x0 = np.array([x for _, x, _, _ in lines], np.float32)
        y0 = np.array([y for _, _, y, _ in lines], np.float32)
        rgba = np.array([tuple(int(c) for c in c4) for *_, c4 in lines], np.uint8)
        adv = self._adv[rows]
        pen = np.cumsum(adv) - adv                         # pen position from the start of all text
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        pen = pen - pen[starts][line] + x0[line]           # ... from the start of each line
        b = self._box[rows]
        px0, px1 = pen + b[:, 0], pen + b[:, 2]
        py0, py1 = y0[line] + b[:, 1], y0[line] + b[:, 3]
        n = len(rows)
        v = np.empty((n, 4, 2), np.float32)                # corners as pyglet lays them out: (x0,y0) (x1,y0) (x1,y1) (x0,y1)
        v[:, 0, 0], v[:, 0, 1] = px0, py0
        v[:, 1, 0], v[:, 1, 1] = px1, py0
        v[:, 2, 0], v[:, 2, 1] = px1, py1
        v[:, 3, 0], v[:, 3, 1] = px0, py1
        t = np.ascontiguousarray(self._tex[rows])
        c = np.ascontiguousarray(np.repeat(rgba[line], 4, axis=0))
        owner = self._owner[rows]
        gl.glPushAttrib(gl.GL_ENABLE_BIT | gl.GL_CURRENT_BIT | gl.GL_TEXTURE_BIT)
        gl.glPushClientAttrib(gl.GL_CLIENT_VERTEX_ARRAY_BIT)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
        gl.glEnable(gl.GL_BLEND)
        gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
        gl.glEnable(gl.GL_TEXTURE_2D)
        gl.glTexEnvi(gl.GL_TEXTURE_ENV, gl.GL_TEXTURE_ENV_MODE, gl.GL_MODULATE)
        gl.glEnableClientState(gl.GL_VERTEX_ARRAY)
        gl.glEnableClientState(gl.GL_TEXTURE_COORD_ARRAY)
        gl.glEnableClientState(gl.GL_COLOR_ARRAY)
        for tex in np.unique(owner):
            sel = owner == tex
            vs = np.ascontiguousarray(v[sel]) if not sel.all() else v
            ts = np.ascontiguousarray(t[sel]) if not sel.all() else t
            cs = np.ascontiguousarray(c.reshape(n, 4, 4)[sel]) if not sel.all() else c
            gl.glBindTexture(gl.GL_TEXTURE_2D, int(tex))
            gl.glVertexPointer(2, gl.GL_FLOAT, 0, vs.ctypes.data_as(ctypes.c_void_p))
            gl.glTexCoordPointer(3, gl.GL_FLOAT, 0, ts.ctypes.data_as(ctypes.c_void_p))
            gl.glColorPointer(4, gl.GL_UNSIGNED_BYTE, 0, cs.ctypes.data_as(ctypes.c_void_p))
            gl.glDrawArrays(gl.GL_QUADS, 0, 4 * int(sel.sum()))
        gl.glPopClientAttrib()
        gl.glPopAttrib()
