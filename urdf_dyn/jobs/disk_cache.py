"""Results kept on disk between runs: the sizing job's geometry-only machine checks (ISO 6015, the lift chart,
the working ranges, the stall envelopes), which depend only on the robot and a few scenario sections and take
most of a warm run's time (3.3 s of the main job's 7 s).

A result is stored under ``<cache>/checks/<key>.pkl``, where ``<cache>`` is ``$URDF_DYN_CACHE_DIR``,
else ``$XDG_CACHE_HOME/urdf_dyn`` or ``~/.cache/urdf_dyn`` (beside the numba kernels), and the key is the
SHA-256 of the caller's key (what the check reads: ``jobs.sizing_checks.geometry_key``), of the model's
content (``model_digest``: the expanded URDF text and every array the algorithms read, so an edit to an
included xacro file or a pin table changes it), of the library's own sources (every ``.py`` file of
``urdf_dyn``: an upgrade or an edit never serves a result computed by other code) and of the numpy and scipy
versions. ``URDF_DYN_CACHE=off`` (``urdf-dyn run --no-cache``) turns it off; writes are atomic (a temporary
file renamed); the folder keeps the ``MAX_FILES`` most recently used files.

The store itself — trust rule, authenticated entries, the restricted unpickler, atomic writes, the cleanup —
is ``urdf_dyn.kept_store``, shared with the model cache of ``urdf_dyn.loading``. Trust (a cache is input a run
believes without checking):

- the folder obeys ``urdf_dyn.cache_trust`` (ssh's StrictModes: this user's, not a link, writable by no one
  else); a folder that does not is not used (one warning line; a private folder for this run);
- each entry is authenticated: ``HMAC-SHA256`` (RFC 2104) under a random key kept in ``checks/key`` (mode
  0600, made on first use), over the file's name, the result's type and the pickled bytes. A file that
  is not this user's, fails the MAC (planted, edited, truncated) or names another type is a miss and is
  recomputed; the pickle is read only after the MAC holds, and then with an unpickler that builds
  nothing but urdf_dyn's classes, numpy arrays and plain containers;
- the cleanup removes only files of the cache's own names (``<40 hex>.<suffix>`` and its temporaries)
  that are regular files of this user, in the folder itself (links are neither followed nor removed).

The plots drawn from those results are kept beside them (``kept_plot_path``): a plot is a function of its
result alone, so a run that takes the result from here copies its plot too (a kept plot must be this
user's file too)."""
from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

from urdf_dyn import kept_store
from urdf_dyn.kept_store import enabled

__all__ = ["enabled", "cache_dir", "model_digest", "library_digest", "path_of", "load", "store", "kept_plot_path",
           "copy_out", "keep_file", "MAX_FILES"]

MAX_FILES = 128         # results and plots kept (the stall envelopes are ≈ 13 MB; the others < 1 MB)
_library = None         # set to stand for another library version (tests); else kept_store's digest
_MAGIC = kept_store.MAGIC
_key, _mac, _kind = kept_store.mac_key, kept_store.mac, kept_store.kind_of


def cache_dir() -> Path:
    """The folder of the kept results as configured (not created nor checked here: ``_folder`` does)."""
    return kept_store.cache_root() / "checks"


def library_digest() -> str:
    """SHA-256 (hex) of every ``.py`` file of the installed ``urdf_dyn`` and of the numpy and scipy versions
    (``kept_store.library_digest``)."""
    return _library or kept_store.library_digest()


def model_digest(model) -> str:
    """SHA-256 (hex) of what a ``Model`` is: its name, the expanded URDF text it came from, and the arrays
    and records the algorithms read (tree, inertias, limits, gravity, loops, couplings, transmissions,
    independent coordinates)."""
    h = hashlib.sha256()
    h.update(f"{model.name}\0{model.urdf_xml}\0".encode())
    for a in (model.parent, model.jtype, model.axis, model.X_tree, model.T_tree, model.I, model.lower, model.upper,
              model.velocity_limit, model.effort_limit, model.damping, model.friction, model.gravity):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode() + a.tobytes())
    h.update(repr((model.body_names, model.joint_names, model.joint_types, model.independent)).encode())
    h.update(pickle.dumps((model.loops, model.mimic, model.transmissions), protocol=4))
    return h.hexdigest()


def path_of(key: str, model) -> Path:
    """Where the result kept under ``key`` for ``model`` by this library is (or would be)."""
    h = hashlib.sha256(f"{key}\0{model_digest(model)}\0{library_digest()}".encode())
    return _folder() / f"{h.hexdigest()[:40]}.pkl"


def kept_plot_path(result_path, name: str) -> Path:
    """Where the plot ``name`` (a file name of ``reports.manifest.OUTPUTS``) drawn from the result kept at
    ``result_path`` is kept: keyed also by matplotlib's version (the library's plotting code is in the
    result's key already)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:
        mpl = "none"
    h = hashlib.sha256(f"{Path(result_path).name}\0{name}\0matplotlib {mpl}".encode())
    return _folder() / f"{h.hexdigest()[:40]}{Path(name).suffix}"


def _folder() -> Path:
    """``cache_dir()`` when the trust rule accepts it, else a private folder for this process
    (``kept_store.folder``)."""
    return kept_store.folder("checks", "checks cache")


def copy_out(kept, path) -> bool:
    """Copy the kept file ``kept`` to ``path`` (atomically); False when there is none or the cache is off."""
    from urdf_dyn.cache_trust import untrusted_file
    if not enabled() or not Path(kept).is_file() or untrusted_file(kept) is not None:
        return False
    from urdf_dyn.io.files import atomic_path
    try:
        with atomic_path(path) as tmp:
            shutil.copyfile(kept, tmp)
        os.utime(kept)
    except OSError:
        return False
    return True


def keep_file(path, kept) -> bool:
    """Keep a copy of the output ``path`` as ``kept`` (atomically); False when it cannot be written."""
    if not enabled():
        return False
    try:
        fd, tmp = tempfile.mkstemp(dir=Path(kept).parent, prefix=f".{Path(kept).name}.", suffix=".tmp")
        os.close(fd)
        shutil.copyfile(path, tmp)
        os.replace(tmp, kept)
    except OSError:
        return False
    _prune(Path(kept).parent)
    return True


def _prune(folder: Path):
    """Drop the least recently used kept files beyond ``MAX_FILES`` (``kept_store.prune``)."""
    kept_store.prune(folder, MAX_FILES)


def load(p):
    """The result kept at ``p`` (``path_of``), or None: nothing kept, the cache off, a file that is not this
    user's own, is truncated, fails its MAC or holds anything but the type stored with it."""
    return kept_store.load(p)


def store(p, result) -> bool:
    """Keep ``result`` at ``p`` (``path_of``), with its MAC; False when the cache is off or the folder cannot
    be written (the run goes on without it). Drops the oldest results beyond ``MAX_FILES``."""
    return kept_store.store(p, result, MAX_FILES)
