"""What makes the report plots cheaper must not change a pixel: the tick locator that leaves out the ticks an
axis would not draw (``plot_ticks.ShownTicks``, checked against matplotlib's own ``AutoLocator``), the fixed
coordinates of empty axis labels (``plotting.unplaced_labels``), and the garbage collector's settings while a
plot is drawn (``plotting.draw_paused``; in the worker also the heap it inherits frozen)."""
import gc
import json
import sys

import numpy as np
import pytest

from urdf_dyn.reports.plotting import PlotWorker, draw_paused, figure, unplaced_labels

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked: Linux only")


def _pixels(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def _panel(ax, lo, hi, rng):
    y = rng.uniform(lo, hi, 50)
    ax.plot(np.linspace(lo, hi, 50), y, lw=1.0)
    ax.grid(alpha=0.3)
    ax.set_ylabel("y [unit]")


@pytest.mark.parametrize("seed", range(6))
def test_shown_ticks_draw_the_pixels_of_matplotlibs_autolocator(seed):
    """Random data ranges (offsets, tiny and huge spans, negative values, an inverted axis): the figure drawn
    with ShownTicks is pixel-identical to the same figure with matplotlib's AutoLocator, with fewer Tick
    objects wherever AutoLocator reaches past the view."""
    from matplotlib.ticker import AutoLocator
    from urdf_dyn.reports.plot_ticks import ShownTicks
    rng = np.random.default_rng(seed)
    spans = [(rng.uniform(-50, 50), 10 ** rng.uniform(-4, 6)) for _ in range(3)]
    figs, made = [], []
    for shown in (True, False):
        r = np.random.default_rng(seed)
        fig, axes = figure((6, 6), 3, 1)
        for ax, (lo, span) in zip(axes[:, 0], spans):
            _panel(ax, lo, lo + span, r)
        axes[1, 0].invert_yaxis()
        axes[2, 0].set_xlabel("x [unit]")
        for ax in axes[:, 0]:
            assert isinstance(ax.xaxis.get_major_locator(), ShownTicks)
            if not shown:
                ax.xaxis.set_major_locator(AutoLocator())
                ax.yaxis.set_major_locator(AutoLocator())
        figs.append(_pixels(fig))
        made.append(sum(len(ax.xaxis.majorTicks) + len(ax.yaxis.majorTicks) for ax in axes[:, 0]))
    assert np.array_equal(figs[0], figs[1])
    assert made[0] < made[1]


def test_a_non_linear_or_fixed_locator_is_kept():
    from urdf_dyn.reports.plot_ticks import ShownTicks
    from urdf_dyn.reports.plotting import twinx
    fig, axes = figure((6, 4), 1, 2)
    a, b = axes[0]
    a.set_xscale("log")
    b.set_xticks([0, 1, 2], ["a", "b", "c"])
    assert not isinstance(a.xaxis.get_major_locator(), ShownTicks)
    assert not isinstance(b.xaxis.get_major_locator(), ShownTicks)
    assert isinstance(a.yaxis.get_major_locator(), ShownTicks) and a.yaxis.isDefault_majloc
    assert isinstance(twinx(b).yaxis.get_major_locator(), ShownTicks)


def test_unplaced_labels_change_no_pixel():
    """Three axes sharing x, the x label on the lowest only: the two empty x labels get fixed coordinates and
    the figure's pixels are those matplotlib draws when it places them itself."""
    pix = []
    for fix in (True, False):
        rng = np.random.default_rng(3)
        fig, axes = figure((6, 6), 3, 1, sharex=True)
        for ax in axes[:, 0]:
            _panel(ax, 0.0, 21.1, rng)
        axes[2, 0].set_xlabel("time [s]")
        if fix:
            assert unplaced_labels(fig) == 2
        pix.append(_pixels(fig))
    assert np.array_equal(pix[0], pix[1])


def test_draw_paused_pauses_the_collector_and_restores_it():
    seen = []

    def fn(x):
        seen.append(gc.isenabled())
        return 2 * x

    def boom():
        raise ValueError("plot failed")
    was = gc.isenabled()
    try:
        gc.enable()
        assert draw_paused(fn, 21) == 42 and seen == [False] and gc.isenabled()
        with pytest.raises(ValueError, match="plot failed"):
            draw_paused(boom)
        assert gc.isenabled()
        gc.disable()                      # a caller that paused it itself keeps it paused
        assert draw_paused(fn, 1) == 2 and not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _gc_state(path):
    with open(path, "w") as fh:
        json.dump({"frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold()),
                   "enabled": gc.isenabled()}, fh)
    return str(path)


@linux_only
def test_the_worker_freezes_what_it_inherits_and_draws_paused(tmp_path, monkeypatch):
    monkeypatch.delenv("URDF_DYN_PLOT_WORKER", raising=False)
    frozen, threshold, enabled = gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()
    w = PlotWorker()
    assert w.parallel
    w.submit(tmp_path / "gc.json", _gc_state, tmp_path / "gc.json")
    w.wait()
    state = json.loads((tmp_path / "gc.json").read_text())
    assert state == {"frozen": state["frozen"], "threshold": list(threshold), "enabled": False}
    assert state["frozen"] > 10_000                          # the test process's objects, and matplotlib's
    assert (gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()) == (frozen, threshold, enabled)


def test_the_caller_draws_paused(tmp_path):
    w = PlotWorker(parallel=False)
    assert not w.parallel
    w.submit(tmp_path / "gc.json", _gc_state, tmp_path / "gc.json")
    w.wait()
    assert json.loads((tmp_path / "gc.json").read_text())["enabled"] is False
