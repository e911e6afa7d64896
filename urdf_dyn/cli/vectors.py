"""The command line's joint-space vectors (``--q``, ``--qd``, ``--qdd``, ``--tau``, ``--q0``, ``--qd0``): values in
coordinate order or ``joint=value`` pairs, each error naming the option."""
from __future__ import annotations

import numpy as np

from urdf_dyn.errors import StateError

__all__ = ["vector"]


def vector(model, text, name, default_zero=True):
    """Parse '0.1,0.2 ...' (coordinate order) or 'joint=value,...' into (nq,) for --q (``model.q_names``,
    unnamed entries at ``model.neutral()``), (nv,) otherwise (``model.joint_names``). Raises StateError naming
    the option (``--q0``…) for a malformed entry, an unknown joint, or a floating joint's quaternion that is
    zero (not a rotation: named with the joint)."""
    is_q = name in ("q", "q0")
    names = model.q_names if is_q else model.joint_names
    base = model.neutral() if is_q else np.zeros(model.nv)
    if text is None:
        if default_zero:
            return base
        raise StateError(f"--{name} is required")
    items = [t for t in text.replace(",", " ").split() if t]
    out = _parse_vector(model, text, name, names, base, items)
    for kind, k, *_ in (model.multi_dof_joints if is_q else ()):   # a floating joint's quaternion is a rotation
        if kind == "floating" and not 1e-9 < float(np.linalg.norm(out[k + 3:k + 7])) < np.inf:
            joint = names[k].rsplit(".", 1)[0]
            raise StateError(f"--{name}: the quaternion (qx, qy, qz, qw) of floating joint {joint!r} is "
                             f"{tuple(float(v) for v in out[k + 3:k + 7])}: give a unit quaternion "
                             f"(e.g. {joint}.qw=1)")
    return out


def _parse_vector(model, text, name, names, base, items):
    out = base
    if items and all("=" in t for t in items):
        for t in items:
            j, v = t.split("=", 1)
            if j not in names:
                raise StateError(f"--{name}: no movable joint named {j!r}; joints are: {', '.join(names)}")
            try:
                out[names.index(j)] = float(v)
            except ValueError:
                raise StateError(f"--{name}: {v!r} is not a number") from None
        return out
    try:
        vals = [float(t) for t in items]
    except ValueError:
        raise StateError(f"--{name}: expected {len(names)} numbers or joint=value pairs, got {text!r}") from None
    if len(vals) != len(names):
        raise StateError(f"--{name}: expected {len(names)} values (coordinates: {', '.join(names)}), "
                         f"got {len(vals)}")
    return np.array(vals)
