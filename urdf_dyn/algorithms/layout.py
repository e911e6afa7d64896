"""Declared layouts of the arrays the compiled kernels read: one flat int64 and one flat float64 array, each
field a named slice of declared dtype and shape, MuJoCo's ``mjModel`` pattern (one flat struct of arrays,
its sizes in the struct). A ``Layout`` generates the packer (``pack``), the offsets the compiled views use
(``coefficients`` for the tree, a header for ``pack(header=True)``) and the Python views (``views``), so that
no offset is kept by hand.

The three layouts of the package:

- ``TREE``: the tree in the kernels' frames (``Model.kernel_pack``, ``algorithms._kernels.pack``), n = NB + 1
  bodies; ``_kernels._unpack`` views it through ``TREE.coefficients`` (compile-time constants: each field
  starts at c·n, c a multiple of its row length, so that three reshapes of the float array and slices view
  every field);
- ``LOOPS``: the loop joints' rows (``Model.loop_pack``), L loops and R constraint rows; ``LOOP_ARGS`` is the
  order in which the loop kernels (``constraints._kernels``, ``_sample``, ``_path``) take them;
- ``ONE``: the model side of a single-state kernel (``constraints._sample.one_pack``), whose sizes vary per
  model and actuator set: packed with a header of offsets that its compiled views read
  (``_sample._ip``/``_fp``, field indices ``ONE.index``).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

__all__ = ["Field", "Layout", "TREE", "LOOPS", "LOOP_ARGS", "ONE"]


@dataclass(frozen=True)
class Field:
    """One array of a layout: ``name``, ``dtype`` ("i8" int64 or "f8" float64) and ``shape``, a tuple of ints
    and size names (e.g. ("n", 3, 3): one 3×3 block per body)."""
    name: str
    dtype: str
    shape: tuple


class Layout:
    """A flat struct of arrays declared by its fields (``Field``, in storage order).

    ``pad``: the float array's length is rounded up to a multiple of it (the tree pads to 18 so that it can be
    reshaped into rows of 3, 6 and 3×3). Raises ValueError for a dtype other than "i8"/"f8" or a repeated name."""

    def __init__(self, name, fields, pad=1):
        self.name, self.fields, self.pad = name, tuple(Field(*f) for f in fields), int(pad)
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names) or any(f.dtype not in ("i8", "f8") for f in self.fields):
            raise ValueError(f"layout {name!r}: repeated field names or a dtype other than i8/f8")
        self._by_name = {f.name: f for f in self.fields}
        self.ints = tuple(f.name for f in self.fields if f.dtype == "i8")
        self.floats = tuple(f.name for f in self.fields if f.dtype == "f8")

    def index(self, name) -> int:
        """Position of field ``name`` among the fields of its dtype (the header's order, ``pack(header=True)``)."""
        f = self._by_name[name]
        return (self.ints if f.dtype == "i8" else self.floats).index(name)

    def shape(self, name, sizes) -> tuple:
        """The shape of field ``name`` for the sizes {size name: int}."""
        return tuple(sizes[d] if isinstance(d, str) else d for d in self._by_name[name].shape)

    def offsets(self, sizes) -> dict:
        """{name: (start, stop)} of every field in its dtype's array, and the two arrays' lengths under the keys
        "i8" and "f8" (the float length padded to ``pad``)."""
        out, at = {}, {"i8": 0, "f8": 0}
        for f in self.fields:
            n = int(np.prod(self.shape(f.name, sizes), dtype=np.int64))
            out[f.name] = (at[f.dtype], at[f.dtype] + n)
            at[f.dtype] += n
        out["i8"], out["f8"] = at["i8"], -(-at["f8"] // self.pad) * self.pad
        return out

    def coefficients(self, size):
        """{name: c}: each float field starts at c · ``size`` when every field before it has ``size`` as its
        first dimension; a field of row length r must have r | c, so that a reshape of the array into rows
        of r views it (``_kernels._unpack``). Also "end": (c, fixed) of the float array's used length
        c · size + fixed. Raises ValueError for a layout that does not qualify."""
        out, c, fixed = {}, 0, 0
        for f in (self._by_name[n] for n in self.floats):
            if fixed:
                raise ValueError(f"layout {self.name!r}: {f.name} follows a field of fixed size")
            row = int(np.prod([d for d in f.shape[1:]], dtype=np.int64))
            if f.shape and f.shape[0] == size:
                if c % row:
                    raise ValueError(f"layout {self.name!r}: {f.name} starts at {c}·{size}, not a multiple of {row}")
                out[f.name] = c
                c += row
            else:
                out[f.name] = c
                fixed += int(np.prod(f.shape, dtype=np.int64))
        out["end"] = (c, fixed)
        return out

    def sizes_of(self, arrays) -> dict:
        """The sizes {size name: int} that the given arrays {name: array} imply; raises ValueError where two
        disagree or an array's rank or fixed dimension is not the declared one."""
        sizes = {}
        for name, a in arrays.items():
            f = self._by_name[name]
            shp = np.shape(a)
            if len(shp) != len(f.shape):
                raise ValueError(f"layout {self.name!r}: {name} has shape {shp}, declared {f.shape}")
            for d, k in zip(f.shape, shp):
                if isinstance(d, str):
                    if sizes.setdefault(d, k) != k:
                        raise ValueError(f"layout {self.name!r}: size {d} is {sizes[d]} and {k}")
                elif d != k:
                    raise ValueError(f"layout {self.name!r}: {name} has shape {shp}, declared {f.shape}")
        return sizes

    def pack(self, arrays, sizes=None, header=False):
        """(ints, floats): the arrays {name: array-like} of every field copied into one int64 and one float64
        array, read-only (numba compiles one variant per writability: the Model's arrays are all read-only).
        ``sizes`` default from the arrays (``sizes_of``). With ``header``, ints starts with
        [number of int fields, number of float fields, the int fields' offsets (+ the end), the float fields'
        offsets (+ the end)], the int offsets counted from the start of ints: what ``_sample._ip``/``_fp`` read."""
        sizes = self.sizes_of(arrays) if sizes is None else sizes
        off = self.offsets(sizes)
        head = 2 + len(self.ints) + 1 + len(self.floats) + 1 if header else 0
        ints, floats = np.zeros(head + off["i8"], np.int64), np.zeros(off["f8"])
        for f in self.fields:
            a, o = (ints, head) if f.dtype == "i8" else (floats, 0)
            s, e = off[f.name]
            a[o + s:o + e] = np.asarray(arrays[f.name]).ravel()
        if header:
            ints[:2] = len(self.ints), len(self.floats)
            ints[2:3 + len(self.ints)] = [head + off[n][0] for n in self.ints] + [head + off["i8"]]
            ints[3 + len(self.ints):head] = [off[n][0] for n in self.floats] + [off["f8"]]
        ints.setflags(write=False)
        floats.setflags(write=False)
        return ints, floats

    def views(self, ints, floats, sizes, header=False):
        """{name: read-only view of the field, in its declared shape} of arrays packed by ``pack``."""
        off = self.offsets(sizes)
        head = 2 + len(self.ints) + 1 + len(self.floats) + 1 if header else 0
        out = {}
        for f in self.fields:
            a, o = (ints, head) if f.dtype == "i8" else (floats, 0)
            s, e = off[f.name]
            v = a[o + s:o + e].reshape(self.shape(f.name, sizes))
            v.flags.writeable = False
            out[f.name] = v
        return MappingProxyType(out)


#: the tree in the kernels' frames (``algorithms._kernels.pack``), n = NB + 1 bodies (entry 0: the base).
#: ints: λ(i), the jcalc code, the first q index; floats: ^iX_λ's rotation E and translation r of X_tree, the
#: rotational inertia Ī about the body origin, the body frame's turn E_c onto the joint axis, the axis, S,
#: h = m c, m, the joint armature (0 for the base), and a0 = −a_grav.
TREE = Layout("tree", [("parent", "i8", ("n",)), ("jtype", "i8", ("n",)), ("iq", "i8", ("n",)),
                       ("E_tree", "f8", ("n", 3, 3)), ("I_bar", "f8", ("n", 3, 3)), ("E_c", "f8", ("n", 3, 3)),
                       ("axis", "f8", ("n", 3)), ("S", "f8", ("n", 6)), ("r_tree", "f8", ("n", 3)),
                       ("h", "f8", ("n", 3)), ("m", "f8", ("n",)), ("armature", "f8", ("n",)),
                       ("a0", "f8", (6,))], pad=18)

#: the loop joints (``Model.loop_pack``): per loop its predecessor and successor body, its rotational-error
#: mode (0: a × (R a) about the axis, 1: rotation vector), X_P, X_S (Plücker, body → loop frame), its axis in
#: Fp; per constraint row its loop and direction T in Fp. L loops, R rows.
LOOPS = Layout("loops", [("p", "i8", ("L",)), ("s", "i8", ("L",)), ("mode", "i8", ("L",)),
                         ("row_loop", "i8", ("R",)), ("XP", "f8", ("L", 6, 6)), ("XS", "f8", ("L", 6, 6)),
                         ("axis", "f8", ("L", 3)), ("row_T", "f8", ("R", 6))])

#: the order in which the loop kernels take ``LOOPS``' fields (lp_p, lp_s, lp_XP, lp_XS, lp_axis, lp_mode,
#: row_loop, row_T)
LOOP_ARGS = ("p", "s", "XP", "XS", "axis", "mode", "row_loop", "row_T")

#: the model side of a single-state closed-loop kernel (``constraints._sample.one_pack``): n = NB + 1 bodies,
#: L loops, RA rows (the constraint rows, then one per actuated loop joint), the tree's packed arrays (ib of
#: length 3n, fb of length F), the passive-force arrays (nd entries each: 0 where none), p actuators; misc =
#: (constraint rows, the workspace's tree (E, r) offset, its W^-½ offset, the actuator columns' offset); k
#: settings (``actuation_one``: rank tolerance, check, consistency tolerance; none for ``forward_one``).
ONE = Layout("one", [("parent", "i8", ("n",)), ("jtype", "i8", ("n",)), ("ib", "i8", ("3n",)),
                     ("lp_p", "i8", ("L",)), ("lp_s", "i8", ("L",)), ("lp_mode", "i8", ("L",)),
                     ("row_loop", "i8", ("RA",)), ("misc", "i8", (4,)),
                     ("axis", "f8", ("n", 3)), ("fb", "f8", ("F",)), ("XP", "f8", ("L", 6, 6)),
                     ("XS", "f8", ("L", 6, 6)), ("lp_axis", "f8", ("L", 3)), ("row_T", "f8", ("RA", 6)),
                     ("damping", "f8", ("nd",)), ("stiffness", "f8", ("ns",)), ("q_ref", "f8", ("ns",)),
                     ("f_ext", "f8", (1, "n", 6)), ("lim", "f8", ("p",)), ("scalars", "f8", ("k",))])
