"""ISO 7135 working ranges against a brute-force sweep of the joint space: a grid over the three strokes, each
pose assembled by ``assemble`` (scipy least squares) and its tooth tip, bucket pivot and stick pivot taken by
``forward_kinematics``. To stay on the URDF's assembly branch (a far warm start can flip the stick or bucket
linkage), every pose starts from the nearest sample of 5 mm continuation sweeps of each stroke from the
initial configuration (each step assembled from the one before; the boom, stick and bucket loops close within
their own linkage, so the sweeps' joints compose); the extremes of the grid, with the constrained
ones found by linear interpolation between grid neighbours (ground line, tip below the pivot) or by bisection
over assembled poses (the vertical stick). None of the module's optimiser, stroke map or Jacobians is used.
The optimiser's figure must be at least the grid's (it is the supremum) and within the grid's resolution."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.machines.working_range import WORKING_RANGE_KEYS, working_range

#: the geometry of robots/excavator_pins.yaml before its calibration, kept as test data: on
#: the calibrated table the boom cylinder is fully retracted 3.3 mm short of its dead centre, where the boom
#: angle changes steeply with the stroke; there the 9-point brute-force stroke grid below misses the reach at
#: ground by 5 cm and the level bottom's ends agree to 6e-6 m only (see the calibration report)
OLD_PINS = ROOT / "tests" / "machines" / "data" / "excavator_pins_6bfaa15.yaml"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
CYLS = ("boom_cyl", "stick_cyl", "bucket_cyl")
TIP = np.array([1.47, 0.0, 0.0, 1.0])
N = 9


@pytest.fixture(scope="module")
def model():
    from urdf_dyn.machines.excavator_builder import excavator_urdf
    return ud.load(excavator_urdf(OLD_PINS))


@pytest.fixture(scope="module")
def wr(model):
    return working_range(model, ("bucket", TIP[:3]), reference={"max_digging_depth_m": {"value": 6.73, "source": "S6"}})


def points(model, q):
    fk = ud.forward_kinematics(model, q)
    return (fk["bucket"] @ TIP)[:3], fk["bucket"][:3, 3], fk["stick"][:3, 3]


class Poses:
    """Assembled poses on the initial configuration's branch at any strokes (module docstring)."""

    def __init__(self, model, step=0.005):
        self.model, self.idx = model, [model.joint_index(c) for c in CYLS]
        self.q0 = model.q_initial()
        self.tables = []
        for i in self.idx:
            lo, hi = model.lower[i] + 1e-3, model.upper[i] - 1e-3
            vals, qs = [], []
            for end in (hi, lo):
                q = self.q0.copy()
                for v in np.r_[np.arange(self.q0[i], end, step if end > self.q0[i] else -step), end]:
                    q[i] = v
                    q = assemble(model, q, hold=ACTS, residual_tol=1e-11)
                    vals.append(v)
                    qs.append(q.copy())
            vals, qs = np.array(vals), np.array(qs)
            group = np.flatnonzero(np.ptp(qs, axis=0) > 1e-12)
            self.tables.append((vals, qs, group))

    def __call__(self, strokes):
        q = self.q0.copy()
        for (vals, qs, group), v in zip(self.tables, strokes):
            q[group] = qs[np.argmin(np.abs(vals - v)), group]
        q[self.idx] = strokes
        return assemble(self.model, q, hold=ACTS, residual_tol=1e-11)


@pytest.fixture(scope="module")
def poses(model):
    return Poses(model)


@pytest.fixture(scope="module")
def grid(model, poses):
    """Tip, bucket pivot and stick pivot (N, N, N, 3) over the stroke grid (1 mm inside the limits)."""
    axes = [np.linspace(model.lower[i] + 1e-3, model.upper[i] - 1e-3, N) for i in poses.idx]
    T, B, S = (np.empty((N, N, N, 3)) for _ in range(3))
    for a in range(N):
        for b in range(N):
            for c in range(N):
                T[a, b, c], B[a, b, c], S[a, b, c] = points(model, poses((axes[0][a], axes[1][b], axes[2][c])))
    return axes, T, B, S


def crossings(f, v):
    """Values of v linearly interpolated where f changes sign between neighbours along the last axis."""
    f0, f1, v0, v1 = f[..., :-1], f[..., 1:], v[..., :-1], v[..., 1:]
    m = (f0 * f1 <= 0) & (f0 != f1)
    w = f0[m] / (f0[m] - f1[m])
    return v0[m] + w * (v1[m] - v0[m])


def test_depth_and_cutting_height_against_the_grid(wr, grid):
    _, T, _, _ = grid
    assert -T[..., 2].min() <= wr.max_digging_depth_m + 1e-9 <= -T[..., 2].min() + 0.05
    assert T[..., 2].max() <= wr.max_cutting_height_m + 1e-9 <= T[..., 2].max() + 0.05


def test_reach_at_ground_against_the_grid(wr, grid):
    """The tip's x where it crosses z = 0 between grid neighbours along any stroke."""
    _, T, _, _ = grid
    best = max(crossings(np.moveaxis(T[..., 2], k, -1), np.moveaxis(T[..., 0], k, -1)).max() for k in range(3))
    assert best - 0.02 <= wr.max_reach_ground_m <= best + 0.05
    assert abs(wr.points["max_reach_ground_m"][2]) < 1e-6


def test_loading_height_against_the_grid(model, wr, grid, poses):
    """The tip hanging straight below the bucket pivot (x_tip = x_pivot, tip lower): sign changes along the
    bucket stroke between grid neighbours, the five highest (by linear interpolation) bisected exactly over
    assembled poses; the highest."""
    axes, T, B, _ = grid
    f = np.where(T[..., 2] < B[..., 2], T[..., 0] - B[..., 0], np.nan)
    cells = []
    for a in range(N):
        for b in range(N):
            for c in range(N - 1):
                f0, f1 = f[a, b, c], f[a, b, c + 1]
                if f0 * f1 <= 0 and f0 != f1:
                    w = f0 / (f0 - f1)
                    cells.append((T[a, b, c, 2] + w * (T[a, b, c + 1, 2] - T[a, b, c, 2]), a, b, c))
    best = -np.inf
    for _, a, b, c in sorted(cells, reverse=True)[:5]:
        lo, hi = axes[2][c], axes[2][c + 1]

        def g(x):
            t, bp, _ = points(model, poses((axes[0][a], axes[1][b], x)))
            return t[0] - bp[0], t[2]
        flo = g(lo)[0]
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if np.sign(g(mid)[0]) == np.sign(flo):
                lo = mid
            else:
                hi = mid
        best = max(best, g(0.5 * (lo + hi))[1])
    assert best - 1e-6 <= wr.max_loading_height_m <= best + 0.05


def test_vertical_wall_against_bisection(model, wr, grid, poses):
    """For each boom stroke of the grid: the stick stroke that makes the stick vertical (its pivot above the
    bucket pivot) and the bucket stroke that puts the tip level with the bucket pivot, both by bisection over
    assembled poses; the deepest tip."""
    axes = grid[0]

    def bisect(f, x, k, lo, hi):
        x = list(x)
        x[k] = lo
        flo = f(poses(x))
        for _ in range(30):
            x[k] = 0.5 * (lo + hi)
            if np.sign(f(poses(x))) == np.sign(flo):
                lo = x[k]
            else:
                hi = x[k]
        x[k] = 0.5 * (lo + hi)
        return x

    stick = lambda q: points(model, q)[2][0] - points(model, q)[1][0]            # noqa: E731
    level = lambda q: points(model, q)[0][2] - points(model, q)[1][2]            # noqa: E731
    deepest = np.inf
    fine = [np.linspace(a[0], a[-1], 2 * N - 1) for a in axes]
    for k_fix, k_var in ((0, 1), (1, 0)):        # boom on its grid, stick bisected; and the other way round
        for v in fine[k_fix]:
            x0 = [0.0, 0.0, 0.0]
            x0[k_fix] = v
            fs = []
            for u in axes[k_var]:
                x0[k_var] = u
                fs.append(stick(poses(x0)))
            for j in range(N - 1):
                if np.sign(fs[j]) == np.sign(fs[j + 1]):
                    continue
                x = bisect(stick, x0, k_var, axes[k_var][j], axes[k_var][j + 1])
                fl = [level(poses((x[0], x[1], sk))) for sk in axes[2]]
                for k in range(N - 1):
                    if np.sign(fl[k]) != np.sign(fl[k + 1]):
                        t, bp, sp = points(model, poses(bisect(level, x, 2, axes[2][k], axes[2][k + 1])))
                        if sp[2] > bp[2]:
                            deepest = min(deepest, t[2])
    assert np.isfinite(deepest)
    assert -deepest - 1e-6 <= wr.vertical_wall_depth_m <= -deepest + 0.1


def test_level_bottom_against_the_grid(wr, grid):
    """At depths down the pit, the reachable x-extent from the grid's crossings of z = −d; the deepest with
    2.44 m of level bottom."""
    _, T, _, _ = grid
    best = 0.0
    for d in np.arange(3.0, 6.5, 0.01):
        xs = np.concatenate([crossings(np.moveaxis(T[..., 2] + d, k, -1), np.moveaxis(T[..., 0], k, -1))
                             for k in range(3)])
        if len(xs) and xs.max() - xs.min() >= 2.44:
            best = d
    assert best - 0.02 <= wr.level_bottom_2440_depth_m <= best + 0.15
    a, b = wr.points["level_bottom_start"], wr.points["level_bottom_end"]
    assert abs(b[0] - a[0] - 2.44) < 1e-4 and abs(a[2] - b[2]) < 1e-6


def test_report_table_plot_and_keys(wr, tmp_path):
    assert set(wr.to_dict()) == set(WORKING_RANGE_KEYS)
    assert "6.73 m" in wr.table() and "S6" in wr.table()
    from urdf_dyn.reports.check_plots import plot_working_range
    plot_working_range(wr, tmp_path / "wr.png")
    assert (tmp_path / "wr.png").stat().st_size > 10_000
