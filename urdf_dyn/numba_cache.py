"""numba's on-disk cache of urdf_dyn's kernels, portable across checkouts and installs of the same sources.

numba (≥ 0.60) already checks a cached kernel against a hash of its source file, but files it under a folder
named by the hash of the source file's absolute directory, so a second clone, a CI checkout or a reinstall
of identical sources compiles everything again. ``install()`` puts a locator first in numba's list that,
for urdf_dyn's own files only, names the folder by the file's path inside the package
(``urdf_dyn/algorithms``…) under ``NUMBA_CACHE_DIR`` (which ``urdf_dyn/__init__`` keys by a hash of the
kernel modules' contents). Every other file keeps numba's own locators. Called by each kernel module
before its first ``@njit(cache=True)``; without numba's private ``CacheImpl`` (another numba version) it
does nothing and the cache is per checkout as before.

numba unpickles its index and data files, so the folder is read only when it obeys the cache trust rule
(``urdf_dyn.cache_trust``: this user's, writable by no one else — else one warning line and a private folder
for this run); and a cache file of urdf_dyn's that cannot be read (truncated, garbage: numba raises from
``pickle``) is a cache miss with one warning line naming the folder: the kernel is compiled again and the
entry rewritten, instead of every run failing until the user deletes the folder.

While numba compiles (its ``"numba:compile"`` events, outermost to end), Python's cyclic garbage collector
runs its youngest generation every ``collector.THRESHOLDS[0]`` allocations instead of every 700
(``collector.raised``, restored after): numba's compiler makes millions of small objects in reference
cycles (its IR, whose variables point to their scope, copied whole at every ``inline="always"`` call site),
so the default thresholds ran ≈ 23 full collections over the whole heap while the main job's kernels
compiled, ≈ 4.7 of its ≈ 32 CPU-s (``gc.callbacks``; ≈ 1.5 CPU-s and one full collection with these
thresholds, ≈ 40 MB more peak memory, ``benchmarks/RESULTS_first_minute.md``). A run whose kernels load from
the cache compiles nothing here.
"""
from __future__ import annotations

import os

__all__ = ["install", "on_compile", "forget_listeners", "on_miss", "kernels_ready", "MARKER"]

#: the file in ``NUMBA_CACHE_DIR`` that says the main job's kernels (``cli.kernel_list``) are all in the cache
#: (written by ``cli.compile_ahead`` once its workers have compiled them)
MARKER = "compiled_ahead"

_PKG = os.path.dirname(os.path.abspath(__file__))
_done = False
_listeners: list = []
_told: list = []          # the listeners ``on_compile`` registered with numba
_miss = None


def kernels_ready() -> bool:
    """Whether a process forked from this one now would find the main job's kernels without compiling them
    itself: they are all in the cache (``MARKER``), or a miss hook is installed (``on_miss``: a first run's
    compile workers are compiling them, and a forked process waits for them, ``cli.compile_ahead``). False on
    a cold cache that this process compiles itself: a forked process would compile the same kernels beside
    it."""
    if _miss is not None:
        return True
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return bool(folder) and os.path.exists(os.path.join(folder, MARKER))


def on_miss(hook):
    """Have ``hook(py_func)`` called when one of urdf_dyn's kernels is not in the cache, before numba compiles
    it here; a hook that returns True has waited for another process to compile it (``cli.compile_ahead``):
    the cache is read once more. ``None`` removes the hook."""
    global _miss
    _miss = hook


def on_compile(listener):
    """Have ``listener`` (a ``numba.core.event.Listener``, or a callable returning one — called once numba is
    imported, so that asking for it does not import numba) told of every compilation (numba's
    ``"numba:compile"`` event; its data names the dispatcher). Registered when the first kernel module is
    imported (``install``), or at once if that has happened."""
    _listeners.append(listener)
    if _done:
        _register()


def _register():
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a dependency
        return
    while _listeners:
        obj = _listeners.pop(0)
        listener = obj if isinstance(obj, event.Listener) else obj()
        event.register("numba:compile", listener)
        if obj is not _gc_thresholds:
            _told.append(listener)


def forget_listeners():
    """Unregister the listeners ``on_compile`` registered, and drop those it has yet to: a compile worker
    forked from the job (``cli.compile_ahead``) must not draw the job's compile bar. The collector's
    thresholds stay."""
    _listeners[:] = [x for x in _listeners if x is _gc_thresholds]
    if _told:
        from numba.core import event
        while _told:
            try:
                event.unregister("numba:compile", _told.pop())
            except ValueError:          # unregistered meanwhile by its owner
                pass


def _gc_thresholds():
    """A numba event listener that holds a ``collector.raised()`` block open from the start of each
    compilation to its end (``raised`` nests: the thresholds found at the outermost one's start come back at
    its end). numba compiles under one lock, and a nested compilation (a callee, an overload) runs in its
    caller's thread, so one stack of blocks serves."""
    from numba.core import event

    from urdf_dyn.collector import raised

    class _Listener(event.Listener):
        def __init__(self):
            self.blocks = []

        def on_start(self, ev):
            block = raised()
            block.__enter__()
            self.blocks.append(block)

        def on_end(self, ev):
            if self.blocks:               # none when the listener came in the middle of a compilation
                self.blocks.pop().__exit__(None, None, None)
    return _Listener()


def install():
    """Register the package-relative cache locator and the collector's thresholds while compiling (once per
    process)."""
    global _done
    if _done:
        return
    _done = True
    _listeners.append(_gc_thresholds)
    _register()
    try:
        from numba.core import caching, config
        base = caching.UserProvidedCacheLocator
        impl = caching.CacheImpl
    except (ImportError, AttributeError):  # pragma: no cover - another numba's layout
        return
    if config.CACHE_DIR:
        from urdf_dyn.cache_trust import safe_folder
        config.CACHE_DIR = safe_folder(config.CACHE_DIR, "numba cache")
    _corrupt_is_a_miss(caching, config)

    class PackageCacheLocator(base):
        """numba's user-provided-directory locator, with the folder named by the path in the package."""

        @classmethod
        def get_suitable_cache_subpath(cls, py_file):
            rel = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), os.path.dirname(_PKG))
            return rel.replace(os.sep, "_")

        @classmethod
        def from_function(cls, py_func, py_file):
            if not config.CACHE_DIR or not os.path.abspath(py_file).startswith(_PKG + os.sep):
                return None
            return super().from_function(py_func, py_file)

    impl._locator_classes = [PackageCacheLocator] + list(impl._locator_classes)


def _ours(config, path) -> bool:
    root = config.CACHE_DIR
    return bool(root) and os.path.abspath(path).startswith(os.path.abspath(root) + os.sep)


def _corrupt_is_a_miss(caching, config):
    """Wrap numba's index read and its cache load so that, in urdf_dyn's cache folder only, a file that
    cannot be read is an empty index / a miss (one warning line naming the folder); elsewhere numba's own
    behaviour is kept."""
    from urdf_dyn.cache_trust import warn_once
    files = getattr(caching, "IndexDataCacheFile", None)
    cache = getattr(caching, "Cache", None)
    if files is None or cache is None or getattr(files, "_urdf_dyn_wrapped", False):
        return

    said = set()

    def say(folder, e):
        if folder in said:          # one line per folder, whatever number of its files fail
            return
        said.add(folder)
        warn_once(f"numba cache {folder}: a cache file cannot be read ({type(e).__name__}: "
                  f"{str(e)[:80]}); compiling again and rewriting it")

    read_index = files._load_index

    def _load_index(self):
        try:
            return read_index(self)
        except Exception as e:      # noqa: BLE001 - pickle raises anything on garbage
            if not _ours(config, self._index_path):
                raise
            say(self._cache_path, e)
            return {}

    load = cache.load_overload

    def load_overload(self, sig, target_context):
        try:
            got = load(self, sig, target_context)
        except Exception as e:      # noqa: BLE001 - a truncated data file fails in pickle or in rebuild
            folder = self._cache_path if hasattr(self, "_cache_path") else ""
            if not _ours(config, os.path.join(folder, "x")):
                raise
            say(folder, e)
            return None
        if got is None and _miss is not None and _miss(getattr(self, "_py_func", None)):
            return load_overload(self, sig, target_context)     # compiled meanwhile by another process
        return got

    files._load_index = _load_index
    cache.load_overload = load_overload
    files._urdf_dyn_wrapped = True
