"""Animated GIF with one palette for the whole animation.

Pillow's per-frame quantisation (median cut of every frame) cost 4 s of the dig cycle's 9 s export. Here
the palette is computed once, from a mosaic of a few frames spread through the animation, together with a
lookup table from 15-bit RGB (5 bits a channel) to the nearest palette entry; a frame is then mapped to
palette indices in one pass over its pixels — straight from the framebuffer's B, G, R, A bytes, bottom row
first, by a small compiled loop — and Pillow only writes the LZW stream. GIF delays are whole centiseconds:
each frame gets the rounded difference of the rounded frame times, so the total duration stays right at
any fps.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["palette_lut", "GifWriter", "PALETTE_SAMPLES"]

PALETTE_SAMPLES = 16   # frames whose mosaic gives the palette


def palette_lut(frames):
    """One palette (255, 3) uint8 for frames (a sequence of (h, w, 3) uint8 RGB) and a lookup table (32768,)
    uint8 from the 15-bit colour cell (r >> 3) << 10 | (g >> 3) << 5 | b >> 3 to its palette index.

    The palette is Pillow's median cut (255 colours) of a mosaic of up to PALETTE_SAMPLES frames taken
    evenly through the sequence, at half resolution; each cell maps to the palette entry nearest its centre
    (a k-d tree query), and a cell that holds a palette colour maps to that colour, so exact colours stay
    exact."""
    from PIL import Image
    from scipy.spatial import cKDTree
    step = max(1, len(frames) // PALETTE_SAMPLES)
    mosaic = np.concatenate([np.asarray(f)[::2, ::2, :3] for f in frames[::step]], axis=0)
    pal = Image.fromarray(np.ascontiguousarray(mosaic)).quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    n = len(pal.getpalette()) // 3
    palette = np.array(pal.getpalette()[:3 * min(n, 255)], np.int32).reshape(-1, 3)
    c = np.arange(32, dtype=np.float64) * 8 + 4
    cells = np.stack(np.meshgrid(c, c, c, indexing="ij"), -1).reshape(-1, 3)
    lut = cKDTree(palette.astype(np.float64)).query(cells)[1].astype(np.uint8)
    lut[((palette[:, 0] >> 3) << 10) | ((palette[:, 1] >> 3) << 5) | (palette[:, 2] >> 3)] = np.arange(len(palette))
    return palette.astype(np.uint8), lut


@njit(cache=True)
def _bgra_indices(bgra, lut, out):  # pragma: no cover - compiled
    """out[i, j] = lut[cell of bgra[h - 1 - i, j]]: palette indices, top row first, of a framebuffer read
    as B, G, R, A bottom row first."""
    h = bgra.shape[0]
    for i in range(h):
        row = bgra[h - 1 - i]
        for j in range(bgra.shape[1]):
            out[i, j] = lut[((row[j, 2] >> 3) << 10) | ((row[j, 1] >> 3) << 5) | (row[j, 0] >> 3)]
    return out


class GifWriter:
    """Collects frames as palette indices and writes a looping GIF.

    Args:
        palette, lut: from ``palette_lut``.  fps: frames per second of the animation.
    """

    def __init__(self, palette, lut, fps):
        self.palette = palette
        self.lut = np.ascontiguousarray(lut, np.uint8)
        self.fps = float(fps)
        self.frames = []

    def add_rgb(self, frame):
        """A frame (h, w, 3) uint8 RGB, top row first."""
        f = np.asarray(frame)[..., :3].astype(np.uint16)
        self.frames.append(self.lut[((f[..., 0] >> 3) << 10) | ((f[..., 1] >> 3) << 5) | (f[..., 2] >> 3)])

    def add_bgra(self, bgra):
        """A frame (h, w, 4) uint8 as OpenGL reads GL_BGRA: bottom row first."""
        bgra = np.ascontiguousarray(bgra, np.uint8)
        self.frames.append(_bgra_indices(bgra, self.lut, np.empty(bgra.shape[:2], np.uint8)))

    def save(self, path):
        """Write the GIF (looping, one global palette). Returns the number of frames."""
        from PIL import Image
        if not self.frames:
            raise ValueError(f"{path}: no frames to write")
        flat = self.palette.reshape(-1).tolist()
        images, durations = [], []
        for k, idx in enumerate(self.frames):
            im = Image.fromarray(idx)  # mode L; the palette makes it P
            im.putpalette(flat)
            images.append(im)
            durations.append(10 * (round((k + 1) * 100.0 / self.fps) - round(k * 100.0 / self.fps)))  # ms
        images[0].save(path, format="GIF", save_all=True, append_images=images[1:], loop=0, optimize=False,
                       duration=durations)
        return len(images)
