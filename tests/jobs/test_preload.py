"""What the sizing job imports on its start's one busy core: every kind's plot modules, which the job imports
before it forks its plot worker (``reports.plotting.PlotWorker``'s ``preload``), import neither scipy.optimize
nor matplotlib (0.3 s and 0.4 s): scipy.optimize is imported in the functions that call it, matplotlib in
the worker."""
import subprocess
import sys


def test_the_plot_workers_preload_imports_neither_scipy_optimize_nor_matplotlib():
    code = ("import importlib, sys\n"
            "from urdf_dyn.jobs.kinds import KINDS\n"
            "mods = sorted({m for k in KINDS for m in k.plot_modules})\n"
            "for m in mods:\n"
            "    importlib.import_module('urdf_dyn.machines.' + m)\n"
            "print(len(mods), sorted(m for m in ('scipy.optimize', 'matplotlib') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    n, rest = r.stdout.strip().split(" ", 1)
    assert int(n) >= 8 and rest == "[]", r.stdout
