"""Why a loop is open, and what closes it: the per-loop gap (position [m] and angle [rad] between the loop
frames Fp and Fs), the nearest fix of a loop's ``<origin>``s found by search, and loops whose constraint rows
duplicate ``<mimic>`` rows.

Gap of loop joint k at q: the pose of Fs in Fp, (R, p), reduced to what the joint constrains (RBDA §8.1,
eq. 8.23): d = (rot, p) with rot = a × R a for a joint turning about a (revolute, continuous, cylindrical,
planar) and the rotation vector log(R) otherwise; the constrained part T Tᵀ d gives ``position`` = ‖its
linear part‖ and ``angle`` = ‖its angular part‖ (sin of the misalignment for a hinge).

Nearest fix (``nearest_fix``): the likely typing mistakes in an ``<origin>`` — one coordinate of xyz or rpy
with the wrong sign, or two xyz coordinates swapped — tried on the loop's predecessor and successor
origins, one at a time; the one that closes the loop at the same configuration is named, e.g.
"predecessor xyz z = -1.12 instead of +1.12".

Redundant rows (``mimic_duplicates``): a loop whose rows and the ``<mimic>`` rows are linearly dependent
together (K's rows, RBDA §8.10) — the parallelogram written both as a ``<loop>`` and as mimics. Then the
constraint force split between them is undetermined (any λ + null(Kᵀ) balances the same motion) and the
minimum-norm split is no pin force.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from urdf_dyn.algorithms.kinematics import body_poses
from urdf_dyn.errors import ModelError

__all__ = ["LoopGap", "LoopClosureError", "loop_gaps", "nearest_fix", "mimic_duplicates", "declared_independent",
           "loop_origins"]

_TURNING = ("revolute", "continuous", "cylindrical", "planar")


class LoopClosureError(ModelError):
    """A ``<loop>`` cannot be closed near the initial configuration. ``loop``: its name; ``gap``: its
    ``LoopGap`` at the initial configuration; ``fix``: the nearest fix found (text) or None."""

    def __init__(self, message, loop=None, gap=None, fix=None, **where):
        self.loop, self.gap, self.fix = loop, gap, fix
        super().__init__(message, **where)


@dataclass(frozen=True)
class LoopGap:
    """One loop joint's closure at a configuration: ``name``, ``type``, the ``predecessor`` and
    ``successor`` links, ``Fp`` and ``Fs`` (4×4) the loop frames in the base frame, ``position`` [m] and
    ``angle`` [rad] the constrained gap (module docstring)."""
    name: str
    type: str
    predecessor: str
    successor: str
    Fp: np.ndarray
    Fs: np.ndarray
    position: float
    angle: float

    @property
    def size(self) -> float:
        """max(position, angle): the number compared with a tolerance [m, rad]."""
        return max(self.position, self.angle)


def _gap(lp, Tp_body, Ts_body):
    Fp, Fs = Tp_body @ np.asarray(lp.T_P), Ts_body @ np.asarray(lp.T_S)
    rel = np.linalg.solve(Fp, Fs)
    R, p = rel[:3, :3], rel[:3, 3]
    a = np.asarray(lp.axis)
    if lp.type in _TURNING:
        rot = np.cross(a, R @ a)
    elif lp.type == "universal":
        rot = np.array([abs(float(a @ (R @ np.asarray(lp.axis2)))), 0.0, 0.0])
    else:
        rot = Rotation.from_matrix(R).as_rotvec()
    T = np.asarray(lp.T)
    d = T @ (T.T @ np.r_[rot, p]) if lp.type != "universal" else np.r_[rot, T[3:] @ (T[3:].T @ p)]
    return Fp, Fs, float(np.linalg.norm(d[3:])), float(np.linalg.norm(d[:3]))


def loop_gaps(model, q) -> list:
    """[LoopGap] of every loop joint of ``model`` at q (nq,), in ``model.loops`` order."""
    T = body_poses(model, np.asarray(q, float)[None, :])[0]
    out = []
    for lp in model.loops:
        Fp, Fs, pos, ang = _gap(lp, T[lp.p], T[lp.s])
        out.append(LoopGap(lp.name, lp.type, lp.predecessor, lp.successor, Fp, Fs, pos, ang))
    return out


def loop_origins(model, lp) -> dict:
    """{"predecessor": (xyz (3,), rpy (3,)), "successor": ...}: the loop frames in their links' frames, as
    a URDF ``<origin>`` writes them (rpy: fixed-axis roll, pitch, yaw)."""
    out = {}
    for side, link, T in (("predecessor", lp.predecessor, lp.T_P), ("successor", lp.successor, lp.T_S)):
        T_link = np.linalg.solve(np.asarray(model.links[link].T_body_link), np.asarray(T))
        out[side] = (T_link[:3, 3].copy(), Rotation.from_matrix(T_link[:3, :3]).as_euler("xyz"))
    return out


def _num(x):
    return f"{x:+.6g}".replace("+-", "-")


def _candidates(xyz, rpy):
    """(description, xyz', rpy') of the one-mistake variants of an origin (module docstring)."""
    names = "xyz"
    for i in range(3):
        if abs(xyz[i]) > 1e-12:
            x = xyz.copy()
            x[i] = -x[i]
            yield f"xyz {names[i]} = {_num(x[i])} instead of {_num(xyz[i])}", x, rpy
    for i, j in ((0, 1), (0, 2), (1, 2)):
        if abs(xyz[i] - xyz[j]) > 1e-12:
            x = xyz.copy()
            x[i], x[j] = xyz[j], xyz[i]
            yield (f"xyz = ({' '.join(f'{v:.6g}' for v in x)}) instead of ({' '.join(f'{v:.6g}' for v in xyz)}) "
                   f"({names[i]} and {names[j]} swapped)"), x, rpy
    for i, nm in enumerate(("roll", "pitch", "yaw")):
        if abs(rpy[i]) > 1e-9:
            r = rpy.copy()
            r[i] = -r[i]
            yield f"rpy {nm} = {_num(r[i])} instead of {_num(rpy[i])}", xyz, r


def nearest_fix(model, lp, q, accept=None):
    """The one-mistake change of loop joint ``lp``'s origins (module docstring) that closes it best at q,
    as (text, LoopGap after the change), or None when no candidate brings the gap below ``accept`` [m, rad]
    (default: max(1e-6, 1e-3 × the gap now)). Text: "predecessor xyz z = -1.12 instead of +1.12"."""
    T = body_poses(model, np.asarray(q, float)[None, :])[0]
    now = _gap(lp, T[lp.p], T[lp.s])
    accept = max(1e-6, 1e-3 * max(now[2], now[3])) if accept is None else accept
    best = None
    for side, (xyz, rpy) in loop_origins(model, lp).items():
        link = model.links[lp.predecessor if side == "predecessor" else lp.successor]
        for text, x, r in _candidates(xyz, rpy):
            To = np.eye(4)
            To[:3, :3] = Rotation.from_euler("xyz", r).as_matrix()
            To[:3, 3] = x
            Tb = np.asarray(link.T_body_link) @ To
            alt = dataclasses.replace(lp, **({"T_P": Tb} if side == "predecessor" else {"T_S": Tb}))
            Fp, Fs, pos, ang = _gap(alt, T[lp.p], T[lp.s])
            if max(pos, ang) <= accept and (best is None or max(pos, ang) < best[1].size):
                best = (f"{side} {text}", LoopGap(lp.name, lp.type, lp.predecessor, lp.successor, Fp, Fs, pos, ang))
    return best


def _nullity(K, rows, tol):
    if not rows:
        return 0
    s = np.linalg.svd(K[rows], compute_uv=False)
    return len(rows) - int(np.sum(s > tol))


def mimic_duplicates(model, q) -> dict:
    """{loop name: (mimic follower joints)}: the loops whose constraint rows and the ``<mimic>`` rows are
    linearly dependent together at q (module docstring), each with the mimics whose rows its rows span
    (else every mimic of the dependent set). Empty when the model has no loops or no mimics."""
    if not (model.loops and model.mimic):
        return {}
    from urdf_dyn.constraints.loops import LoopState
    K, _, _, labels = LoopState(model, np.asarray(q, float), compiled=False).K_k()
    tol = 1e-9 * max(1.0, float(np.linalg.norm(K, 2)))
    loop_rows, start = {}, 0
    for lp in model.loops:
        loop_rows[lp.name] = list(range(start, start + lp.nc))
        start += lp.nc
    mim = {lab.split(":", 1)[1]: i for i, lab in enumerate(labels) if lab.startswith("mimic:")}
    base = _nullity(K, list(mim.values()), tol)
    out = {}
    for name, rows in loop_rows.items():
        own = _nullity(K, rows, tol)
        if _nullity(K, rows + list(mim.values()), tol) <= own + base:
            continue
        hit = tuple(j for j, r in mim.items() if _nullity(K, rows + [r], tol) > own)
        out[name] = hit or tuple(mim)
    return out


def declared_independent(model) -> tuple:
    """The joints the file marks ``independent="true"`` (URDF+), in q order; () when it marks none (a
    mimic-only model's ``Model.independent`` is then the mimic leaders, a default, not a declaration)."""
    if not model.independent or not re.search(r"\bindependent\s*=", model.urdf_xml or ""):
        return ()
    return tuple(model.independent)
