"""The report plots' tick locator: matplotlib's ``AutoLocator`` without the locations outside the view.

``AutoLocator`` (a ``MaxNLocator``, https://matplotlib.org/stable/api/ticker_api.html) returns tick locations
that reach up to a step beyond each end of the view interval; the axis makes a ``Tick`` (three lines and two
texts, ≈ 0.4 ms each) and formats a label for every one of them, then draws only those inside the interval.
``ShownTicks`` gives the axis only the locations it draws — the same locations, tested with the same
tolerance (1e-10 of the interval) — so the drawn ticks and labels are those of ``AutoLocator``: the main job's
twelve plots are byte-identical with it, with 84 of their 478 ``Tick`` objects fewer. The label format is
unchanged: ``ScalarFormatter`` takes its offset and exponent from the visible locations alone and its number of
decimals from the step. Imports matplotlib: imported only to draw (``plotting.figure``)."""
from __future__ import annotations

from matplotlib.ticker import AutoLocator

__all__ = ["ShownTicks", "shown_ticks"]


class ShownTicks(AutoLocator):
    """``AutoLocator`` whose locations are only those inside the axis's view interval (closed, widened by
    1e-10 of its length on each side, as the axis itself tests the locations it draws)."""

    def __call__(self):
        locs = super().__call__()
        lo, hi = sorted(self.axis.get_view_interval())
        tol = (hi - lo) * 1e-10
        return [x for x in locs if lo - tol <= x <= hi + tol]


def shown_ticks(ax):
    """Give each axis of ``ax`` that has matplotlib's default linear locator (``AutoLocator``) a
    ``ShownTicks`` instead; any other locator (log scale, fixed ticks, dates) is kept. The axis still counts
    its locator as the default one (``isDefault_majloc``), so that units and scales may replace it as before.
    Returns ``ax``."""
    for axis in (ax.xaxis, ax.yaxis):
        if type(axis.get_major_locator()) is AutoLocator:
            axis.set_major_locator(ShownTicks())
            axis.isDefault_majloc = True
    return ax
