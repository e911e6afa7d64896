"""The bar shown while numba compiles (``urdf_dyn.cli.compiling``): it names the kernel being compiled once a
compilation has taken longer than the delay, says nothing for quick ones, and follows numba's real events."""
from __future__ import annotations

import io
import time

import urdf_dyn.cli.compiling as compiling


def test_a_long_compilation_is_named_and_a_quick_one_is_not(monkeypatch):
    monkeypatch.setattr(compiling, "DELAY", 0.2)
    quick = io.StringIO()
    bar = compiling.CompileBar(file=quick, disable=False)
    bar.start("algorithms._kernels.rnea")
    bar.end()
    time.sleep(0.4)
    bar.close()
    assert "compiling" not in quick.getvalue()
    slow = io.StringIO()
    bar = compiling.CompileBar(file=slow, disable=False)
    bar.start("constraints._path.actuation_path")
    bar.start("constraints._linalg.lu_solve")          # nested: the innermost is named
    time.sleep(0.5)
    assert "compiling constraints._linalg.lu_solve" in slow.getvalue()
    bar.end()
    bar.end()
    bar.close()
    assert "(1 done" in slow.getvalue() and bar.done == 2


def test_numbas_own_events_reach_the_bar(monkeypatch):
    import numba

    from urdf_dyn import numba_cache
    seen = []

    class Bar(compiling.CompileBar):
        def start(self, name):
            seen.append(name)
            super().start(name)

    numba_cache.install()
    bar = Bar(file=io.StringIO(), disable=False)
    numba_cache.on_compile(bar.listener)
    try:
        @numba.njit
        def twice_the_input(x):
            return 2 * x
        assert twice_the_input(3) == 6
    finally:
        from numba.core import event
        for lsn in list(event._registered.get("numba:compile", [])):
            if type(lsn).__qualname__.startswith("CompileBar.listener"):
                event.unregister("numba:compile", lsn)
        bar.close()
    assert any(n.endswith("twice_the_input") for n in seen), seen
