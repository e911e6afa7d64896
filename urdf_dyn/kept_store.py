"""Authenticated results kept on disk between runs: the one store behind every cache of computed values
(the machine checks of ``jobs.disk_cache``, the loaded models of ``urdf_dyn.loading``).

A result lives in ``<root>/<kind>/<40 hex>.pkl`` where ``<root>`` is ``$URDF_DYN_CACHE_DIR``, else
``$XDG_CACHE_HOME/urdf_dyn`` or ``~/.cache/urdf_dyn``. ``URDF_DYN_CACHE=off`` (``urdf-dyn run --no-cache``)
turns every such cache off. Trust (a cache is input a run believes without checking):

- the folder obeys ``urdf_dyn.cache_trust`` (ssh's StrictModes); a folder that does not is not used (one
  warning line; a private folder for this run);
- each entry is authenticated: ``HMAC-SHA256`` (RFC 2104) under a random key kept in the folder's ``key``
  (mode 0600, made on first use), over the file's name, the result's type and the pickled bytes. A file that
  is not this user's, fails the MAC (planted, edited, truncated) or names another type is a miss; the pickle
  is read only after the MAC holds, and then with an unpickler that builds nothing but urdf_dyn's classes,
  numpy arrays and plain containers;
- writes are atomic (a temporary file renamed); the cleanup keeps the ``max_files`` most recently used files
  and removes only files of the store's own names (``<40 hex>.<suffix>`` and its temporaries) that are regular
  files of this user, in the folder itself (links are neither followed nor removed)."""
from __future__ import annotations

import hashlib
import hmac
import io
import os
import pickle
import re
import stat
import tempfile
from pathlib import Path

__all__ = ["enabled", "cache_root", "folder", "library_digest", "mac_key", "mac", "kind_of", "load", "store", "prune",
           "MAGIC"]

MAGIC = b"urdf_dyn checks cache 2\n"
_OWN = re.compile(r"^(?:[0-9a-f]{40}\.[a-z]{2,4}|\.[0-9a-f]{40}\.[a-z]{2,4}\.[A-Za-z0-9_]{1,16}\.tmp)$")
_library = None


def enabled() -> bool:
    """False when ``URDF_DYN_CACHE`` is ``off``, ``0``, ``no`` or ``false`` (any case)."""
    return os.environ.get("URDF_DYN_CACHE", "on").strip().lower() not in ("off", "0", "no", "false")


def cache_root() -> Path:
    """The folder holding every kept kind of result, as configured (not created nor checked here)."""
    root = os.environ.get("URDF_DYN_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "urdf_dyn")
    return Path(root)


def folder(kind: str, what: str) -> Path:
    """``cache_root()/kind`` when the trust rule accepts it (``cache_trust.safe_folder``: made 0700 if missing),
    else a private folder for this process (with one warning line naming ``what`` it holds)."""
    from urdf_dyn.cache_trust import safe_folder
    return Path(safe_folder(cache_root() / kind, what))


def library_digest() -> str:
    """SHA-256 (hex) of every ``.py`` file of the installed ``urdf_dyn`` (paths and bytes) and of the numpy and
    scipy versions; computed once per process (≈ 10 ms)."""
    global _library
    if _library is None:
        from importlib.metadata import PackageNotFoundError, version
        here = Path(__file__).resolve().parent
        vers = []
        for dist in ("numpy", "scipy"):
            try:
                vers.append(f"{dist} {version(dist)}")
            except PackageNotFoundError:
                vers.append(f"{dist} none")
        h = hashlib.sha256(" ".join(vers).encode())
        for f in sorted(here.rglob("*.py")):
            h.update(str(f.relative_to(here)).encode() + b"\0" + f.read_bytes() + b"\0")
        _library = h.hexdigest()
    return _library


def mac_key(where: Path) -> bytes | None:
    """The folder's 32-byte MAC key (``key``, mode 0600, made here when missing); None when the key file is
    not this user's private regular file or cannot be made (the store is then not used)."""
    from urdf_dyn.cache_trust import untrusted_file
    p = Path(where) / "key"
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


def mac(key: bytes, name: str, kind: str, payload: bytes) -> bytes:
    """HMAC-SHA256 of an entry named ``name`` holding a ``kind`` (its type's qualified name)."""
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
        raise pickle.UnpicklingError(f"{module}.{name} is not a type a kept result holds")


def kind_of(obj) -> str:
    """The type name stored with (and checked against) an entry."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def prune(where: Path, max_files: int):
    """Drop the least recently used of the store's own files beyond ``max_files``, and temporary files a
    killed run left (older than an hour: a running write's is newer). Only names the store writes, only
    regular files of this user, only in ``where`` itself: a user's file put there is left alone."""
    import time
    try:
        files, now = [], time.time()
        with os.scandir(where) as entries:
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
        for _, old in sorted(files)[:-max_files]:
            os.unlink(old)
    except OSError:
        pass


def load(p):
    """The result kept at ``p``, or None: nothing kept, the cache off, a file that is not this user's own,
    is truncated, fails its MAC or holds anything but the type stored with it."""
    from urdf_dyn.cache_trust import untrusted_file
    if not enabled():
        return None
    p = Path(p)
    key = mac_key(p.parent)
    if key is None or untrusted_file(p) is not None:
        return None
    try:
        with open(p, "rb") as f:
            blob = f.read()
        if not blob.startswith(MAGIC):
            return None
        tag, rest = blob[len(MAGIC):len(MAGIC) + 32], blob[len(MAGIC) + 32:]
        kind, payload = rest.split(b"\n", 1)
        kind = kind.decode("ascii")
        if not hmac.compare_digest(tag, mac(key, p.name, kind, payload)):
            return None
        out = _Unpickler(io.BytesIO(payload)).load()
    except Exception:       # missing, truncated, not ours, or from an incompatible pickle: compute again
        return None
    if kind_of(out) != kind:
        return None
    try:
        os.utime(p)         # most recently used: kept longest
    except OSError:
        pass
    return out


def store(p, result, max_files: int = 128) -> bool:
    """Keep ``result`` at ``p`` with its MAC; False when the cache is off or the folder cannot be written (the
    run goes on without it). Drops the oldest entries of the folder beyond ``max_files``."""
    if not enabled():
        return False
    p, tmp = Path(p), None
    try:
        key = mac_key(p.parent)
        if key is None:
            return False
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        kind = kind_of(result)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + mac(key, p.name, kind, payload) + kind.encode("ascii") + b"\n" + payload)
        os.replace(tmp, p)
        prune(p.parent, max_files)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, UnicodeEncodeError):
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
    return True
