"""Motions to size against: a motion of the independent coordinates y (e.g. swing and cylinder strokes)
mapped to consistent spanning-tree states (q, q̇, q̈) through assembly and the explicit constraint
(RBDA eqs. 3.11, 8.42): q = γ(y) by least squares holding y (warm-started from the previous sample,
which tracks the assembly branch continuously), q̇ = G ẏ, q̈ = G ÿ + g."""
from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from urdf_dyn.constraints.assembly import assemble

from urdf_dyn.constraints.explicit import explicit_constraint
from urdf_dyn.errors import LaunchError, ModelError
from urdf_dyn.applications.trajectories import PiecewiseQuinticTrajectory, SplineTrajectory

__all__ = ["CoordinateMotion", "consistent_motion", "spline_motion", "csv_motion"]


@dataclass
class CoordinateMotion:
    """A motion of named coordinates: ``names`` (k,), ``t`` (N,) [s], y, yd, ydd (N, k) [rad | m, /s, /s²]."""
    names: tuple
    t: np.ndarray
    y: np.ndarray
    yd: np.ndarray
    ydd: np.ndarray


def spline_motion(names, waypoints, durations, dt=0.01, kind="spline") -> CoordinateMotion:
    """A motion through ``waypoints`` (K, k) with segment ``durations`` (K−1,) [s], sampled every ``dt``
    [s]: ``kind`` "spline" (cubic, zero end velocities) or "quintic" (minimum-jerk segments, at rest at
    each waypoint, no overshoot)."""
    if kind not in ("spline", "quintic"):
        raise ValueError(f"unknown motion kind {kind!r}: use 'spline' or 'quintic'")
    traj = (SplineTrajectory if kind == "spline" else PiecewiseQuinticTrajectory)(waypoints, durations)
    t = np.arange(0.0, traj.t_end + 0.5 * dt, dt)
    t[-1] = min(t[-1], traj.t_end)
    y, yd, ydd = traj(t)
    return CoordinateMotion(tuple(names), t, y, yd, ydd)


def csv_motion(path, names=None, dt=None) -> CoordinateMotion:
    """A recorded motion from a CSV with a header row: ``t`` then one column per coordinate (a subset
    selected by ``names``). Velocities and accelerations come from a cubic spline through the samples
    (resampled every ``dt`` [s] if given). Raises LaunchError naming the file and line on bad data."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows or not rows[0] or rows[0][0].strip() != "t":
        raise LaunchError(f"{path}:1: the first column must be 't' (header row: t, coordinate names...)")
    header = [h.strip() for h in rows[0]]
    data = []
    for i, r in enumerate(rows[1:], start=2):
        if not r:
            continue
        try:
            vals = [float(x) for x in r]
        except ValueError:
            raise LaunchError(f"{path}:{i}: not a number in {r}") from None
        if len(vals) != len(header) or not np.all(np.isfinite(vals)):
            raise LaunchError(f"{path}:{i}: expected {len(header)} finite numbers")
        data.append(vals)
    data = np.array(data)
    if len(data) < 4 or np.any(np.diff(data[:, 0]) <= 0):
        raise LaunchError(f"{path}: need at least 4 samples with strictly increasing t")
    names = tuple(names or header[1:])
    missing = [n for n in names if n not in header]
    if missing:
        raise LaunchError(f"{path}: no column for {', '.join(missing)} (columns: {', '.join(header)})")
    cols = [header.index(n) for n in names]
    sp = CubicSpline(data[:, 0], data[:, cols], axis=0)
    t = data[:, 0] if dt is None else np.arange(data[0, 0], data[-1, 0] + 0.5 * dt, dt)
    t = np.minimum(t, data[-1, 0])
    return CoordinateMotion(names, t, sp(t), sp(t, 1), sp(t, 2))


def consistent_motion(model, motion: CoordinateMotion, q_start=None, progress=None):
    """(Q, QD, QDD) (N, nv) consistent with the loops for a motion of independent coordinates.

    ``q_start`` (default the URDF's initial configuration) picks the assembly branch at the first sample.
    Raises ModelError naming the time at which the loops cannot be closed (a stroke out of reach)."""
    from tqdm.auto import tqdm
    n = model.nv
    idx = [model.joint_index(j) for j in motion.names]
    q = model.q_initial() if q_start is None else np.array(q_start, float)
    Q, QD, QDD = (np.zeros((len(motion.t), n)) for _ in range(3))
    for i in tqdm(range(len(motion.t)), disable=None if progress is None else not progress, leave=False,
                  unit="sample", desc="assembling"):
        q = q.copy()
        q[idx] = motion.y[i]
        if model.has_constraints:
            try:
                q = assemble(model, q, hold=motion.names)
            except ModelError as e:
                raise ModelError(f"at t = {motion.t[i]:.4g} s: {e.reason}", file=model.source) from None
            G = explicit_constraint(model, q, np.zeros(n), independent=motion.names).G
            qd = G @ motion.yd[i]
            ec = explicit_constraint(model, q, qd, independent=motion.names)
            qdd = ec.G @ motion.ydd[i] + ec.g
        else:
            qd, qdd = np.zeros(n), np.zeros(n)
            qd[idx], qdd[idx] = motion.yd[i], motion.ydd[i]
        Q[i], QD[i], QDD[i] = q, qd, qdd
    return Q, QD, QDD
