"""numba's on-disk cache of urdf_dyn's kernels, portable across checkouts and installs of the same sources.

numba (≥ 0.60) already checks a cached kernel against a hash of its source file, but files it under a folder
named by the hash of the source file's absolute directory, so a second clone, a CI checkout or a reinstall
of identical sources compiles everything again. ``install()`` puts a locator first in numba's list that,
for urdf_dyn's own files only, names the folder by the file's path inside the package
(``urdf_dyn/algorithms``…) under ``NUMBA_CACHE_DIR`` (which ``urdf_dyn/__init__`` keys by a hash of the
kernel modules' contents). Every other file keeps numba's own locators. Called by each kernel module
before its first ``@njit(cache=True)``; without numba's private ``CacheImpl`` (another numba version) it
does nothing and the cache is per checkout as before.
"""
from __future__ import annotations

import os

__all__ = ["install"]

_PKG = os.path.dirname(os.path.abspath(__file__))
_done = False


def install():
    """Register the package-relative cache locator (once per process)."""
    global _done
    if _done:
        return
    _done = True
    try:
        from numba.core import caching, config
        base = caching.UserProvidedCacheLocator
        impl = caching.CacheImpl
    except (ImportError, AttributeError):  # pragma: no cover - another numba's layout
        return

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
