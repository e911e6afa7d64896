"""A progress bar while numba compiles: what the first run of a machine (an empty kernel cache) spends its
time on, said as it happens instead of a silent minute.

``show_compiles()`` asks ``urdf_dyn.numba_cache`` to pass numba's compile events (``numba.core.event``,
``"numba:compile"``) to a tqdm bar on stderr: ``compiling <module>.<kernel>`` and the count of kernels done.
The bar appears only once a compilation has taken more than a second (a warm run, whose kernels load from
the cache, shows nothing) and only on a terminal (tqdm's ``disable=None``); it is closed at exit."""
from __future__ import annotations

import atexit
import threading
import time

__all__ = ["show_compiles", "CompileBar"]

DELAY = 1.0
"""Seconds a compilation runs before the bar is shown."""


class CompileBar:
    """The numba listener: a tqdm bar (made on first use) naming the kernel being compiled (the innermost of
    nested compilations) and counting those done; shown after ``DELAY`` seconds of compiling."""

    def __init__(self, file=None, disable=None):
        self.file, self.disable = file, disable
        self.bar = None
        self.stack = []
        self.done = 0
        self.lock = threading.Lock()
        self.timer = None

    def listener(self):
        from numba.core import event
        outer = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                outer.start(_name(ev))

            def on_end(self, ev):
                outer.end()
        return _Listener()

    def start(self, name):
        with self.lock:
            self.stack.append((name, time.monotonic()))
            if self.bar is None:
                import sys

                from tqdm import tqdm
                self.bar = tqdm(total=None, unit=" kernels", file=self.file or sys.stderr, disable=self.disable,
                                delay=DELAY, leave=False, bar_format="{desc} ({n_fmt} done, {elapsed})")
                atexit.register(self.close)
            self.bar.set_description_str(f"compiling {name}", refresh=False)
            if self.timer is None:
                self.timer = threading.Timer(DELAY, self._show)
                self.timer.daemon = True
                self.timer.start()

    def _show(self):
        with self.lock:
            self.timer = None
            if self.stack and self.bar is not None and time.monotonic() - self.stack[0][1] >= DELAY * 0.99:
                self.bar.refresh()

    def end(self):
        with self.lock:
            if self.stack:
                self.stack.pop()
            self.done += 1
            if self.bar is not None:
                if self.stack:
                    self.bar.set_description_str(f"compiling {self.stack[-1][0]}", refresh=False)
                self.bar.update(1)

    def close(self):
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
            if self.bar is not None:
                self.bar.close()


def _name(ev) -> str:
    d = (ev.data or {}).get("dispatcher")
    f = getattr(d, "py_func", None)
    if f is None:
        return "a kernel"
    mod = f.__module__.removeprefix("urdf_dyn.")
    return f"{mod}.{f.__qualname__}"


def show_compiles(file=None, disable=None) -> CompileBar:
    """Show numba's compilations in a bar (see the module's text); returns the bar's owner."""
    from urdf_dyn.numba_cache import on_compile
    bar = CompileBar(file, disable)
    on_compile(bar.listener)
    return bar
