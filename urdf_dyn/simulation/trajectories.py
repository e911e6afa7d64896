"""Reference joint trajectories for controllers and sizing: quintic point-to-point and splines through
waypoints (scipy's CubicSpline with zero end velocities). Each is a callable ``traj(t) -> (q, qd, qdd)``
with arrays (nv,) for a scalar t or (N, nv) for t of shape (N,). Units: s, rad | m."""
from __future__ import annotations


import numpy as np

from urdf_dyn.constraints.motion import CoordinateMotion
from urdf_dyn.errors import ScenarioError

__all__ = ["QuinticTrajectory", "SplineTrajectory", "PiecewiseQuinticTrajectory", "spline_motion", "csv_motion"]


class QuinticTrajectory:
    """Minimum-jerk quintic from ``q_start`` to ``q_end`` (nv,) over ``duration`` [s], zero velocity and
    acceleration at both ends; held at ``q_end`` afterwards."""

    def __init__(self, q_start, q_end, duration: float, t0: float = 0.0):
        if not duration > 0:
            raise ValueError(f"quintic duration must be > 0 s, got {duration}")
        self.q0, self.q1 = np.asarray(q_start, float), np.asarray(q_end, float)
        self.T, self.t0 = float(duration), float(t0)

    @property
    def t_end(self) -> float:
        return self.t0 + self.T

    def __call__(self, t):
        t = np.asarray(t, float)
        s = np.clip((t - self.t0) / self.T, 0.0, 1.0)[..., None]
        inside = ((t - self.t0) / self.T >= 0) & ((t - self.t0) / self.T <= 1)
        p = 10 * s**3 - 15 * s**4 + 6 * s**5
        dp = (30 * s**2 - 60 * s**3 + 30 * s**4) / self.T * inside[..., None]
        ddp = (60 * s - 180 * s**2 + 120 * s**3) / self.T**2 * inside[..., None]
        d = self.q1 - self.q0
        return self.q0 + p * d, dp * d, ddp * d


class SplineTrajectory:
    """Cubic spline through ``waypoints`` (K, nv) reached at cumulative ``durations`` (K-1,) [s] (or at
    explicit ``times`` (K,)), with zero velocity at the first and last waypoint ("clamped")."""

    def __init__(self, waypoints, durations=None, times=None, t0: float = 0.0):
        W = np.atleast_2d(np.asarray(waypoints, float))
        if W.shape[0] < 2:
            raise ValueError("a spline needs at least two waypoints")
        if times is None:
            d = np.asarray(durations, float).ravel()
            if d.shape != (W.shape[0] - 1,) or np.any(d <= 0):
                raise ValueError(f"need {W.shape[0] - 1} positive durations between {W.shape[0]} waypoints, got {d}")
            times = t0 + np.concatenate([[0.0], np.cumsum(d)])
        times = np.asarray(times, float)
        if times.shape != (W.shape[0],) or np.any(np.diff(times) <= 0):
            raise ValueError("waypoint times must be strictly increasing, one per waypoint")
        self.times, self.waypoints = times, W
        from scipy.interpolate import CubicSpline   # on use: 60 ms of import the quintic motions never need
        self._s = CubicSpline(times, W, axis=0, bc_type="clamped")

    @property
    def t_end(self) -> float:
        return float(self.times[-1])

    def __call__(self, t):
        t = np.clip(np.asarray(t, float), self.times[0], self.times[-1])
        return self._s(t), self._s(t, 1), self._s(t, 2)


class PiecewiseQuinticTrajectory:
    """Minimum-jerk quintic segments through ``waypoints`` (K, nv) with segment ``durations`` (K−1,) [s]:
    every joint comes to rest (zero velocity and acceleration) at each waypoint, so the motion never
    overshoots a waypoint (unlike a spline) — the choice for motions that must stay inside stroke limits."""

    def __init__(self, waypoints, durations, t0: float = 0.0):
        W = np.atleast_2d(np.asarray(waypoints, float))
        d = np.asarray(durations, float).ravel()
        if W.shape[0] < 2 or d.shape != (W.shape[0] - 1,) or np.any(d <= 0):
            raise ValueError(f"need {max(W.shape[0] - 1, 1)} positive durations between {W.shape[0]} waypoints")
        self.times = t0 + np.concatenate([[0.0], np.cumsum(d)])
        self.segments = [QuinticTrajectory(W[i], W[i + 1], d[i], self.times[i]) for i in range(len(d))]
        self.waypoints = W

    @property
    def t_end(self) -> float:
        return float(self.times[-1])

    def __call__(self, t):
        t = np.asarray(t, float)
        k = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.segments) - 1)
        if t.ndim == 0:
            return self.segments[int(k)](t)
        out = [np.zeros(t.shape + self.waypoints.shape[1:]) for _ in range(3)]
        for i, seg in enumerate(self.segments):
            m = k == i
            if np.any(m):
                for o, v in zip(out, seg(t[m])):
                    o[m] = v
        return tuple(out)


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
    (resampled every ``dt`` [s] if given). Raises ScenarioError naming the file and line on bad data."""
    from urdf_dyn.io.bounded import InputError, read_numeric_csv
    try:
        header, data = read_numeric_csv(path, min_rows=0)   # bounded; each value a finite number (file:line)
    except InputError as e:
        raise ScenarioError(str(e)) from None
    if not header or header[0] != "t":
        raise ScenarioError(f"{path}:1: the first column must be 't' (header row: t, coordinate names...)")
    if len(data) < 4 or np.any(np.diff(data[:, 0]) <= 0):
        raise ScenarioError(f"{path}: need at least 4 samples with strictly increasing t")
    names = tuple(names or header[1:])
    missing = [n for n in names if n not in header]
    if missing:
        raise ScenarioError(f"{path}: no column for {', '.join(missing)} (columns: {', '.join(header)})")
    cols = [header.index(n) for n in names]
    from scipy.interpolate import CubicSpline   # on use: 60 ms of import the quintic motions never need
    sp = CubicSpline(data[:, 0], data[:, cols], axis=0)
    t = data[:, 0] if dt is None else np.arange(data[0, 0], data[-1, 0] + 0.5 * dt, dt)
    t = np.minimum(t, data[-1, 0])
    return CoordinateMotion(names, t, sp(t), sp(t, 1), sp(t, 2))
