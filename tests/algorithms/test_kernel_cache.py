"""Where the compiled kernels are cached. numba checks only a cached function's own source file, while a
cached caller embeds the code of the kernels it calls; urdf_dyn therefore caches in a folder keyed by all its
kernel modules (``urdf_dyn._kernel_key``). That must hold even when numba was imported before urdf_dyn (numba
reads NUMBA_CACHE_DIR once, at its own import): otherwise the caches land beside the sources, where an edit of
a callee leaves a stale caller in use."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from conftest import ROOT

CHILD = """
import os, sys
{first}
sys.path.insert(0, {root!r})
import urdf_dyn
from urdf_dyn.constraints import _kernels
print(os.environ["NUMBA_CACHE_DIR"])
print(_kernels.loop_work._cache._cache_path)
"""


def _paths(first, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", CHILD.format(first=first, root=str(ROOT))], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [Path(x) for x in r.stdout.split()]


def test_kernels_cache_in_the_keyed_folder(tmp_path):
    folder, path = _paths("", tmp_path)
    assert folder.parent == tmp_path / "urdf_dyn" / "numba"
    assert folder in path.parents


def test_numba_imported_first_still_uses_the_keyed_folder(tmp_path):
    folder, path = _paths("import numba", tmp_path)
    assert folder.parent == tmp_path / "urdf_dyn" / "numba"
    assert folder in path.parents, f"{path} is outside {folder}: a stale caller could be loaded"


PORTABLE = """
import sys
sys.path.insert(0, {root!r})
import urdf_dyn
assert urdf_dyn.__file__.startswith({root!r}), urdf_dyn.__file__
from urdf_dyn.constraints import _kernels
_kernels.loop_work(3, 2)
s = _kernels.loop_work.stats
print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))
"""


def test_cache_is_shared_by_two_checkouts_of_the_same_sources(tmp_path):
    """A second clone (another absolute path, other mtimes) loads the kernels the first one compiled (
    numba's cache portable across checkouts, ``urdf_dyn.numba_cache``)."""
    import shutil
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out = []
    for name in ("clone_a", "clone_b"):
        shutil.copytree(ROOT / "urdf_dyn", tmp_path / name / "urdf_dyn", ignore=shutil.ignore_patterns("__pycache__"))
        r = subprocess.run([sys.executable, "-c", PORTABLE.format(root=str(tmp_path / name))], env=env,
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        out.append(r.stdout.split())
    assert out[0] == ["0", "1"]          # the first clone compiles
    assert out[1] == ["1", "0"]          # the second loads it


def test_every_compiled_module_keys_the_cache():
    """The cache folder is keyed by the kernel modules' contents (``urdf_dyn._KERNEL_MODULES``): a module
    with compiled code left out would let an edited callee run inside a caller compiled against the old one."""
    import urdf_dyn
    pkg = Path(urdf_dyn.__file__).parent
    import re
    compiled = {p.relative_to(pkg).as_posix() for p in pkg.rglob("*.py")
                if re.search(r"^@(numba\.)?(njit|jit|generated_jit|vectorize)\b", p.read_text(), re.M)}
    assert compiled and compiled <= set(urdf_dyn._KERNEL_MODULES), compiled - set(urdf_dyn._KERNEL_MODULES)



def _zeros_sum(n):
    return np.zeros(n).sum() + n


def test_collector_thresholds_raised_while_compiling_only():
    """numba_cache raises the cyclic collector's thresholds from the start of the outermost compilation to its
    end (nested compilations, here np.zeros' and sum's overloads, keep them raised) and restores the caller's
    after."""
    import gc

    import numba
    from numba.core import event

    from urdf_dyn import numba_cache
    numba_cache.install()
    seen = []

    class Spy(event.Listener):              # registered after numba_cache's, so told after it
        def on_start(self, ev):
            seen.append(gc.get_threshold())

        def on_end(self, ev):
            seen.append(gc.get_threshold())

    before = gc.get_threshold()
    spy = Spy()
    event.register("numba:compile", spy)
    try:
        gc.set_threshold(701, 10, 10)
        assert numba.njit(_zeros_sum)(3) == 3.0
        after = gc.get_threshold()
    finally:
        event.unregister("numba:compile", spy)
        gc.set_threshold(*before)
    assert len(seen) >= 4                   # _zeros_sum and at least one nested compilation
    from urdf_dyn.collector import THRESHOLDS
    assert all(t == THRESHOLDS for t in seen[:-1])
    assert seen[-1] == after == (701, 10, 10)
