"""Results kept on disk between runs: the sizing job's geometry-only machine checks (ISO 6015, the lift chart,
the working ranges, the stall envelopes), which depend only on the robot and a few scenario sections and take
most of a warm run's time (issue 27: 3.3 s of the main job's 7 s).

A result is stored pickled under ``<cache>/checks/<key>.pkl``, where ``<cache>`` is ``$URDF_DYN_CACHE_DIR``,
else ``$XDG_CACHE_HOME/urdf_dyn`` or ``~/.cache/urdf_dyn`` (beside the numba kernels), and the key is the
SHA-256 of the caller's key (what the check reads: ``jobs.sizing_checks.geometry_key``), of the model's
content (``model_digest``: the expanded URDF text and every array the algorithms read, so an edit to an
included xacro file or a pin table changes it), of the library's own sources (every ``.py`` file of
``urdf_dyn``: an upgrade or an edit never serves a result computed by other code) and of the numpy and scipy
versions. ``URDF_DYN_CACHE=off`` (``urdf-dyn run --no-cache``) turns it off; a file that cannot be read
or unpickled is ignored and recomputed; writes are atomic (a temporary file renamed); the folder keeps the
``MAX_FILES`` most recently used files.

The plots drawn from those results are kept beside them (``kept_plot_path``): a plot is a function of its
result alone, so a run that takes the result from here copies its plot too. Only the user's own cache folder is read (pickle runs code: never point
``URDF_DYN_CACHE_DIR`` at a folder others can write)."""
from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["enabled", "cache_dir", "model_digest", "library_digest", "path_of", "load", "store", "kept_plot_path",
           "copy_out", "keep_file", "MAX_FILES"]

MAX_FILES = 128         # results and plots kept (the stall envelopes are ≈ 13 MB; the others < 1 MB)
_library = None


def enabled() -> bool:
    """False when ``URDF_DYN_CACHE`` is ``off``, ``0``, ``no`` or ``false`` (any case)."""
    return os.environ.get("URDF_DYN_CACHE", "on").strip().lower() not in ("off", "0", "no", "false")


def cache_dir() -> Path:
    """The folder of the kept results (not created here)."""
    root = os.environ.get("URDF_DYN_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "urdf_dyn")
    return Path(root) / "checks"


def library_digest() -> str:
    """SHA-256 (hex) of every ``.py`` file of the installed ``urdf_dyn`` (paths and bytes) and of the numpy and
    scipy versions; computed once per process (≈ 10 ms)."""
    global _library
    if _library is None:
        import scipy
        here = Path(__file__).resolve().parents[1]
        h = hashlib.sha256(f"numpy {np.__version__} scipy {scipy.__version__}".encode())
        for f in sorted(here.rglob("*.py")):
            h.update(str(f.relative_to(here)).encode() + b"\0" + f.read_bytes() + b"\0")
        _library = h.hexdigest()
    return _library


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
    return cache_dir() / f"{h.hexdigest()[:40]}.pkl"


def kept_plot_path(result_path, name: str) -> Path:
    """Where the plot ``name`` (a file name, e.g. "lift_chart.png") drawn from the result kept at
    ``result_path`` is kept: keyed also by matplotlib's version (the library's plotting code is in the
    result's key already)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:
        mpl = "none"
    h = hashlib.sha256(f"{Path(result_path).name}\0{name}\0matplotlib {mpl}".encode())
    return cache_dir() / f"{h.hexdigest()[:40]}{Path(name).suffix}"


def copy_out(kept, path) -> bool:
    """Copy the kept file ``kept`` to ``path`` (atomically); False when there is none or the cache is off."""
    if not enabled() or not Path(kept).is_file():
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
        Path(kept).parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=Path(kept).parent, suffix=".tmp")
        os.close(fd)
        shutil.copyfile(path, tmp)
        os.replace(tmp, kept)
    except OSError:
        return False
    _prune(Path(kept).parent)
    return True


def _prune(folder: Path):
    """Drop the least recently used files beyond ``MAX_FILES``, and temporary files a killed run left (older
    than an hour: a running write's is newer)."""
    import time
    try:
        files, now = [], time.time()
        for f in folder.iterdir():
            if f.suffix != ".tmp":
                files.append(f)
            elif now - f.stat().st_mtime > 3600:
                f.unlink(missing_ok=True)
        for old in sorted(files, key=lambda x: x.stat().st_mtime)[:-MAX_FILES]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def load(p):
    """The result kept at ``p`` (``path_of``), or None (nothing kept, the cache off, or a file that cannot be
    read)."""
    if not enabled():
        return None
    try:
        with open(p, "rb") as f:
            out = pickle.load(f)
    except Exception:       # missing, truncated or from an incompatible pickle: compute again
        return None
    try:
        os.utime(p)         # most recently used: kept longest
    except OSError:
        pass
    return out


def store(p, result) -> bool:
    """Keep ``result`` at ``p`` (``path_of``); False when the cache is off or the folder cannot be written (the
    run goes on without it). Drops the oldest results beyond ``MAX_FILES``."""
    if not enabled():
        return False
    p, tmp = Path(p), None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, p)
        _prune(p.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
    return True
