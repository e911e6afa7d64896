"""Models built once and kept by content: ``urdf_dyn.load`` of a URDF/xacro file reuses the Model an earlier
run built while nothing it was built from has changed (reading the description through yourdfpy, which
imports trimesh and scipy, and checking its loops take about a second of a warm run).

The key, in two steps (as ccache's "direct mode" keys a compilation by its source and the headers it read):

1. the *request*: the file's path (as given and absolute) and bytes, the working folder, the arguments of
   ``load`` (package folders, xacro arguments, gravity, flags), ``ROS_PACKAGE_PATH``, the versions of the
   libraries that read it (yourdfpy, xacro, lxml) and the library's own sources
   (``kept_store.library_digest``). Under it is kept the list of every file the build read (the description,
   each ``xacro:include``, each ``package.xml`` that ``$(find)``/``package://`` looked at), as absolute paths;
2. the *content*: the request's key and the SHA-256 of each of those files as they are now. Under it is kept
   the Model and the ModelWarnings its build gave, which are given again (same text and category) on reuse.

An edited include changes the content key: the Model is built again (and kept beside the old one). The files
a build read are seen through Python's audit hook on ``open`` (PEP 578), counting only regular files outside
the Python installation, the library and the caches. Meshes are not read by ``load`` (they do not change the
Model); the viewer reads them itself. SDF and MJCF files and URDF text are not kept.

Entries are ``urdf_dyn.kept_store``'s: a trusted folder ``<cache>/models`` (``cache_trust``), HMAC-authenticated
pickles read with a restricted unpickler. ``URDF_DYN_CACHE=off`` (``urdf-dyn run --no-cache``) builds anew."""
from __future__ import annotations

import contextvars
import functools
import hashlib
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from urdf_dyn import kept_store

__all__ = ["cached", "request_key", "content_key", "MAX_MODELS"]

MAX_MODELS = 64          # models and file lists kept (the excavator's Model pickles to ≈ 60 kB)
_reads: contextvars.ContextVar = contextvars.ContextVar("urdf_dyn_model_reads", default=None)
_hooked = False


@dataclass(frozen=True)
class KeptModel:
    """A kept Model — its class and its own attributes (``__dict__`` without the ``cached_property`` values
    derived from them, which are computed again on use) — and the warnings its build gave: ``warnings`` is
    ((message, category module, category name), ...)."""
    cls: type
    state: dict
    warnings: tuple
    proxies: tuple = ()     # attributes that are read-only mappings (``types.MappingProxyType``), kept as dicts

    @classmethod
    def of(cls, model, said) -> KeptModel:
        derived = {k for k, v in vars(type(model)).items() if isinstance(v, functools.cached_property)}
        state = {k: v for k, v in vars(model).items() if k not in derived}
        proxies = tuple(k for k, v in state.items() if isinstance(v, MappingProxyType))
        state.update({k: dict(state[k]) for k in proxies})
        return cls(type(model), state, said, proxies)

    def model(self):
        """The Model, as pickle would rebuild it (``__init__`` is not run again)."""
        out = self.cls.__new__(self.cls)
        out.__dict__.update(self.state)
        out.__dict__.update({k: MappingProxyType(self.state[k]) for k in self.proxies})
        _read_only(self.state)
        return out


def _read_only(v, depth=0):
    """Every array of a kept Model read-only again, as the Model's own are (pickle makes them writeable)."""
    import numpy as np
    if isinstance(v, np.ndarray):
        v.setflags(write=False)
    elif depth > 8:
        return
    elif isinstance(v, (list, tuple)):
        for x in v:
            _read_only(x, depth + 1)
    elif isinstance(v, dict):
        for x in v.values():
            _read_only(x, depth + 1)
    elif type(v).__module__.startswith("urdf_dyn") and hasattr(v, "__dict__"):
        for x in vars(v).values():
            _read_only(x, depth + 1)


def _on_audit(event, args):
    if event == "open":
        seen = _reads.get()
        if seen is not None and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                seen.add(os.path.abspath(os.fsdecode(args[0])))
            except (TypeError, ValueError):
                pass


def _hook():
    global _hooked
    if not _hooked:
        sys.addaudithook(_on_audit)      # cannot be removed; it only looks when a build is being recorded
        _hooked = True


def _excluded() -> tuple:
    import sysconfig
    roots = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
             os.path.dirname(os.path.abspath(kept_store.__file__)), str(kept_store.cache_root()),
             os.environ.get("NUMBA_CACHE_DIR", ""), "/proc", "/sys", "/dev"}
    return tuple(os.path.abspath(r) + os.sep for r in roots if r)


def _inputs(seen) -> tuple:
    """The regular files among those opened, outside Python's and the libraries' own folders (modules and
    their data: their versions are in the key) and the caches; a robot package installed under the
    environment's ``share`` folder (example-robot-data) counts."""
    skip = _excluded()
    out = []
    for p in sorted(seen):
        if (p.startswith(skip) or p.endswith((".py", ".pyc", ".so")) or f"{os.sep}site-packages{os.sep}" in p
                or f"{os.sep}dist-packages{os.sep}" in p or not os.path.isfile(p)):
            continue
        out.append(p)
    return tuple(out)


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for dist in ("yourdfpy", "xacro", "lxml"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist} none")
    return ", ".join(out)


def request_key(source, options: dict) -> str:
    """SHA-256 (hex) of a ``load`` request of the file ``source`` with ``options`` (its keyword arguments)."""
    path = Path(os.fspath(source))
    h = hashlib.sha256(b"urdf_dyn model 1\0")
    for part in (os.fspath(source), str(path.resolve()), os.getcwd(), repr(sorted(options.items(), key=str)),
                 os.environ.get("ROS_PACKAGE_PATH", ""), _versions(), kept_store.library_digest()):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    h.update(path.read_bytes())
    return h.hexdigest()


def content_key(request: str, inputs) -> str | None:
    """SHA-256 (hex) of the request's key and the current bytes of each file in ``inputs``; None when one of
    them is gone or cannot be read (the Model is then built again)."""
    h = hashlib.sha256(f"{request}\0".encode())
    for p in inputs:
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError:
            return None
        h.update(p.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _records(caught) -> tuple:
    return tuple((str(w.message), w.category.__module__, w.category.__qualname__) for w in caught or ())


def _say(kept):
    import importlib
    for message, module, name in kept.warnings:
        try:
            category = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            category = UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)):
            category = UserWarning
        warnings.warn(message, category, stacklevel=4)


def cached(source, options: dict, build):
    """The Model of the file ``source`` loaded with ``options``: the kept one when its inputs are unchanged,
    else ``build()``'s (then kept). ``build`` raising (a bad file) keeps nothing."""
    if not kept_store.enabled():
        return build()
    try:
        request = request_key(source, options)
    except OSError:
        return build()
    where = kept_store.folder("models", "model cache")
    inputs = kept_store.load(where / f"{request[:40]}.pkl")
    if isinstance(inputs, tuple) and all(isinstance(p, str) for p in inputs):
        content = content_key(request, inputs)
        kept = kept_store.load(where / f"{content[:40]}.pkl") if content else None
        if isinstance(kept, KeptModel) and isinstance(kept.state, dict):
            _say(kept)
            return kept.model()
    _hook()
    seen, caught = set(), []
    token = _reads.set(seen)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = build()
    except BaseException:
        _say(KeptModel(type(None), {}, _records(caught)))     # what the build said before it failed, as without a cache
        raise
    finally:
        _reads.reset(token)
    kept = KeptModel.of(model, _records(caught))
    inputs = _inputs(seen | {str(Path(os.fspath(source)).resolve())})
    content = content_key(request, inputs)
    if content is not None:
        kept_store.store(where / f"{request[:40]}.pkl", inputs, MAX_MODELS)
        kept_store.store(where / f"{content[:40]}.pkl", kept, MAX_MODELS)
    _say(kept)
    return model
