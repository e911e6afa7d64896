"""Animated GIF with one palette for the whole animation.

Pillow's per-frame quantisation (median cut of every frame) cost 4 s of the dig cycle's 9 s export. Here
the palette is computed once, from a mosaic of a few frames spread through the animation, together with a
lookup table from 15-bit RGB (5 bits a channel) to the nearest palette entry; a frame is then mapped to
palette indices in one pass over its pixels — straight from the framebuffer's B, G, R, A bytes, bottom row
first, by a small compiled loop — and Pillow only writes the LZW stream. GIF delays are whole centiseconds:
each frame gets the rounded difference of the rounded frame times, so the total duration stays right at
any fps.

The mapping and Pillow's frame handling (difference boxes against the previous frame, then LZW) run in one
worker thread (``concurrent.futures``) while the caller draws the next frames: the compiled mapping and
Pillow's C code release the GIL, and so does the caller's ``glReadPixels``, so drawing and encoding overlap
on two cores. Each frame's LZW stream is written as soon as the next frame has come (``_stream``: Pillow's
own steps for ``save_all``, which would otherwise encode every frame after the last one had arrived).
"""
from __future__ import annotations

import io
import itertools
import queue
import sys
import weakref
from concurrent.futures import ThreadPoolExecutor

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


# shifts that bring the top 5 bits of R, G, B of a B, G, R, A pixel read as one native uint32 to the 15-bit cell
_CELL_SHIFTS = (9, 6, 3) if sys.byteorder == "little" else (1, 14, 27)


@njit(cache=True, nogil=True)
def _bgra_indices(bgra, lut, out):  # pragma: no cover - compiled
    """out[i, j] = lut[cell of bgra[h - 1 - i, j]]: palette indices, top row first, of a framebuffer read
    as B, G, R, A bottom row first. Each pixel is read as one uint32, and a pixel equal to the one before it
    in its row takes that one's index (most of a frame is background): 0.36 instead of 0.52 ms a 640x480 frame."""
    h, w = bgra.shape[0], bgra.shape[1]
    px = bgra.view(np.uint32)                      # (h, w, 1)
    sr, sg, sb = _CELL_SHIFTS
    for i in range(h):
        row = px[h - 1 - i]
        o = out[i]
        last = row[0, 0] ^ np.uint32(1)            # not the first pixel: its index is looked up
        v = np.uint8(0)
        for j in range(w):
            p = row[j, 0]
            if p != last:
                last = p
                v = lut[((p >> sr) & 0x7C00) | ((p >> sg) & 0x3E0) | ((p >> sb) & 0x1F)]
            o[j] = v
    return out


def _delay_ms(k, fps):
    """Delay [ms] of frame k: the difference of the rounded frame times [cs] (module docstring)."""
    return 10 * (round((k + 1) * 100.0 / fps) - round(k * 100.0 / fps))


def _frames(items, palette, lut, fps):
    """Pillow images (mode P, one palette, delay in ``info``) of the frames put on ``items`` (a queue of
    ("bgra" | "index", array), ended by None), mapped to palette indices as they arrive."""
    from PIL import Image
    flat = palette.reshape(-1).tolist()
    k = 0
    while True:
        item = items.get()
        if item is None:
            return
        kind, a = item
        idx = _bgra_indices(a, lut, np.empty(a.shape[:2], np.uint8)) if kind == "bgra" else a
        im = Image.fromarray(idx)  # mode L; the palette makes it P
        im.putpalette(flat)
        im.info["duration"] = _delay_ms(k, fps)
        k += 1
        yield im


def _encode(items, palette, lut, fps):
    """GIF bytes of the frames put on ``items`` (``_frames``), looping, one global palette; b"" if none."""
    frames = _frames(items, palette, lut, fps)
    first = next(frames, None)
    if first is None:
        return b""
    buf = io.BytesIO()
    if not _stream(buf, first, frames):
        first.save(buf, format="GIF", save_all=True, append_images=frames, loop=0, optimize=False)
    return buf.getvalue()


_PILLOW_STEPS = ("_normalize_mode", "_normalize_palette", "_getbbox", "_get_global_header", "_write_frame_data")


def _stream(fp, first, frames):
    """Write the GIF of ``first`` and ``frames`` (mode P, one palette, delays in ``info``) to ``fp`` as Pillow's
    ``save(save_all=True, loop=0, optimize=False)`` does (``GifImagePlugin._write_multiple_frames``: the same
    steps, so the same bytes), but each frame's LZW stream is written as soon as the next different frame has
    come (a frame equal to the one before adds its delay to it), instead of all of them after the last one:
    the encoding overlaps the drawing, and ~0.16 CPU-s of the dig cycle's GIF no longer wait for its last
    frame. Returns False, having consumed nothing, where this Pillow lacks one of those steps (the caller then
    saves as Pillow does); with one distinct frame only, the whole file is Pillow's own."""
    from PIL import GifImagePlugin as G
    if not all(hasattr(G, f) for f in _PILLOW_STEPS):
        return False
    head, base, pending, previous = [first], None, None, None
    for frame in itertools.chain([first], frames):
        im = G._normalize_mode(frame.copy())
        if base is None:                      # Image.save's encoderinfo, with the first frame's info
            base = {"append_images": (), "loop": 0, "optimize": False}
            for k, v in im.info.items():
                if k != "transparency" and isinstance(k, str):
                    base.setdefault(k, v)
        info = dict(base)
        im = G._normalize_palette(im, None, info)
        if "duration" in im.info:
            info["duration"] = im.info["duration"]
        bbox = None
        if previous is not None:
            bbox = G._getbbox(previous, im)[1]
            if not bbox:                      # the same picture: a longer delay of the one before
                if info.get("duration"):
                    pending[2]["duration"] = pending[2].get("duration", 0) + info["duration"]
                if head is not None:
                    head.append(frame)
                continue
        if pending is not None:
            _write_frame(fp, *pending, G)
            head = None
        pending, previous = [im, bbox, info], im
    if head is not None:                      # one distinct picture: Pillow writes a single frame
        head[0].save(fp, format="GIF", save_all=True, append_images=head[1:], loop=0, optimize=False)
        return True
    _write_frame(fp, *pending, G)
    fp.write(b";")
    return True


def _write_frame(fp, im, bbox, info, G):
    """One frame as ``_write_multiple_frames`` writes it: the first after the global header, a later one
    cropped to the box that changed, with its own colour table (no global palette was passed)."""
    if not bbox:
        for s in G._get_global_header(im, info):
            fp.write(s)
        offset = (0, 0)
    else:
        info["include_color_table"] = True
        if bbox != (0, 0, *im.size):
            im = im.crop(bbox)
        offset = bbox[:2]
    G._write_frame_data(fp, im, offset, info)


class GifWriter:
    """Collects frames and writes a looping GIF; the frames are mapped and encoded by a worker thread as
    they are added (module docstring).

    Args:
        palette, lut: from ``palette_lut``.  fps: frames per second of the animation.
    """

    def __init__(self, palette, lut, fps):
        self.palette = np.asarray(palette, np.uint8)
        self.lut = np.ascontiguousarray(lut, np.uint8)
        self.fps = float(fps)
        self.count = 0
        self._items = queue.Queue(maxsize=16)     # bounds the frames waiting for the worker
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="gif")
        self._job = self._pool.submit(_encode, self._items, self.palette, self.lut, self.fps)
        # a writer dropped without save() must still end its worker (else the interpreter waits for it at exit)
        self._end = weakref.finalize(self, GifWriter._stop, self._items, self._job, self._pool)

    @staticmethod
    def _stop(items, job, pool):
        while not job.done():
            try:
                items.put(None, timeout=0.1)
                break
            except queue.Full:
                continue
        pool.shutdown(wait=False)

    def _put(self, item):
        while True:
            if self._job.done():          # the worker failed: its exception is raised here
                self._job.result()
                raise RuntimeError("the GIF writer has already finished")
            try:
                self._items.put(item, timeout=0.1)
                self.count += 1
                return
            except queue.Full:
                continue

    def indices(self, bgra):
        """Palette indices (h, w) uint8, top row first, of a frame (h, w, 4) uint8 read as GL_BGRA (bottom
        row first)."""
        bgra = np.ascontiguousarray(bgra, np.uint8)
        return _bgra_indices(bgra, self.lut, np.empty(bgra.shape[:2], np.uint8))

    def add_rgb(self, frame):
        """A frame (h, w, 3) uint8 RGB, top row first."""
        f = np.asarray(frame)[..., :3].astype(np.uint16)
        self._put(("index", self.lut[((f[..., 0] >> 3) << 10) | ((f[..., 1] >> 3) << 5) | (f[..., 2] >> 3)]))

    def add_bgra(self, bgra):
        """A frame (h, w, 4) uint8 as OpenGL reads GL_BGRA: bottom row first (the array must not be changed
        afterwards: the worker maps it later)."""
        self._put(("bgra", np.ascontiguousarray(bgra, np.uint8)))

    def save(self, path):
        """Wait for the worker and write the GIF (looping, one global palette) to ``path``. Returns the
        number of frames added. Raises ValueError if there are none."""
        self._end()                               # no more frames; the worker finishes the file
        data = self._job.result()
        if not data:
            raise ValueError(f"{path}: no frames to write")
        with open(path, "wb") as fh:
            fh.write(data)
        return self.count
