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

Trust (a cache is input a run believes without checking):

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
import hmac
import io
import os
import pickle
import re
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["enabled", "cache_dir", "model_digest", "library_digest", "path_of", "load", "store", "kept_plot_path",
           "copy_out", "keep_file", "MAX_FILES"]

MAX_FILES = 128         # results and plots kept (the stall envelopes are ≈ 13 MB; the others < 1 MB)
_library = None
_MAGIC = b"urdf_dyn checks cache 2\n"
_OWN = re.compile(r"^(?:[0-9a-f]{40}\.[a-z]{2,4}|\.[0-9a-f]{40}\.[a-z]{2,4}\.[A-Za-z0-9_]{1,16}\.tmp)$")


def enabled() -> bool:
    """False when ``URDF_DYN_CACHE`` is ``off``, ``0``, ``no`` or ``false`` (any case)."""
    return os.environ.get("URDF_DYN_CACHE", "on").strip().lower() not in ("off", "0", "no", "false")


def cache_dir() -> Path:
    """The folder of the kept results as configured (not created nor checked here: ``_folder`` does)."""
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
    return _folder() / f"{h.hexdigest()[:40]}.pkl"


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
    return _folder() / f"{h.hexdigest()[:40]}{Path(name).suffix}"


def _folder() -> Path:
    """``cache_dir()`` when the trust rule accepts it (``cache_trust.safe_folder``: made 0700 if missing),
    else a private folder for this process (with one warning line)."""
    from urdf_dyn.cache_trust import safe_folder
    return Path(safe_folder(cache_dir(), "checks cache"))


def _key(folder: Path) -> bytes | None:
    """The folder's 32-byte MAC key (``key``, mode 0600, made here when missing); None when the key file is
    not this user's private regular file or cannot be made (the cache is then not used)."""
    from urdf_dyn.cache_trust import untrusted_file
    p = folder / "key"
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(32))
    if untrusted_file(p) is not None:
        return None
    try:
        st = os.lstat(p)
        if stat.S_IMODE(st.st_mode) & 0o077:
            return None
        with open(p, "rb") as f:
            key = f.read(64)
    except OSError:
        return None
    return key if len(key) == 32 else None


def _mac(key: bytes, name: str, kind: str, payload: bytes) -> bytes:
    return hmac.new(key, f"{name}\0{kind}\0".encode() + payload, hashlib.sha256).digest()


class _Unpickler(pickle.Unpickler):
    """Builds urdf_dyn's own classes, numpy arrays and scalars and plain containers; refuses any other global
    (a function, ``os.system``…), so a valid MAC under a stolen key still cannot run a program."""

    _NUMPY = {"_reconstruct", "scalar", "_frombuffer", "ndarray", "dtype"}
    _BUILTINS = {"set", "frozenset", "complex", "slice", "range", "tuple", "list", "dict", "bytearray"}

    def find_class(self, module, name):
        if module.split(".")[0] == "numpy" and name in self._NUMPY or module.startswith("numpy.dtypes"):
            return super().find_class(module, name)
        if module == "builtins" and name in self._BUILTINS or (module, name) == ("collections", "OrderedDict"):
            return super().find_class(module, name)
        if module == "urdf_dyn" or module.startswith("urdf_dyn."):
            obj = super().find_class(module, name)
            if isinstance(obj, type):
                return obj
        raise pickle.UnpicklingError(f"{module}.{name} is not a type a cached check holds")


def _kind(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


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
    """Drop the least recently used of the cache's own files beyond ``MAX_FILES``, and temporary files a
    killed run left (older than an hour: a running write's is newer). Only names the cache writes
    (``_OWN``), only regular files of this user, only in ``folder`` itself (a link is never followed or
    removed): a user's file put there is left alone."""
    import time
    try:
        files, now = [], time.time()
        with os.scandir(folder) as entries:
            for e in entries:
                if not _OWN.match(e.name) or not e.is_file(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
                if st.st_uid != os.getuid():
                    continue
                if not e.name.endswith(".tmp"):
                    files.append((st.st_mtime, e.path))
                elif now - st.st_mtime > 3600:
                    os.unlink(e.path)
        for _, old in sorted(files)[:-MAX_FILES]:
            os.unlink(old)
    except OSError:
        pass


def load(p):
    """The result kept at ``p`` (``path_of``), or None: nothing kept, the cache off, a file that is not this
    user's own, is truncated, fails its MAC or holds anything but the type stored with it."""
    from urdf_dyn.cache_trust import untrusted_file
    if not enabled():
        return None
    p = Path(p)
    key = _key(p.parent)
    if key is None or untrusted_file(p) is not None:
        return None
    try:
        with open(p, "rb") as f:
            blob = f.read()
        if not blob.startswith(_MAGIC):
            return None
        mac, rest = blob[len(_MAGIC):len(_MAGIC) + 32], blob[len(_MAGIC) + 32:]
        kind, payload = rest.split(b"\n", 1)
        kind = kind.decode("ascii")
        if not hmac.compare_digest(mac, _mac(key, p.name, kind, payload)):
            return None
        out = _Unpickler(io.BytesIO(payload)).load()
    except Exception:       # missing, truncated, not ours, or from an incompatible pickle: compute again
        return None
    if _kind(out) != kind:
        return None
    try:
        os.utime(p)         # most recently used: kept longest
    except OSError:
        pass
    return out


def store(p, result) -> bool:
    """Keep ``result`` at ``p`` (``path_of``), with its MAC; False when the cache is off or the folder cannot
    be written (the run goes on without it). Drops the oldest results beyond ``MAX_FILES``."""
    if not enabled():
        return False
    p, tmp = Path(p), None
    try:
        key = _key(p.parent)
        if key is None:
            return False
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        kind = _kind(result)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + _mac(key, p.name, kind, payload) + kind.encode("ascii") + b"\n" + payload)
        os.replace(tmp, p)
        _prune(p.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, UnicodeEncodeError):
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
    return True
