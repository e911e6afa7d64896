"""The cache of the geometry-only machine checks, as one explicit object that a run is given
(``compute(plan, cache)``): no module globals, thread-locals or memos.

A machine kind's geometry-only checks (the excavator's ISO 6015 digging forces, lift chart, working ranges
and stall envelopes) depend only on the robot and a few scenario sections, never on the motion, the loads or
the payload. ``GeometryCache`` keeps them in two tiers:

- **memory** (``memory=True``: a sweep's worker process holds one cache for all its cases): each result is
  held pickled under its key — the SHA-256 of the robot file's bytes, the ``robot`` section and the sections
  the check reads (the kind's ``geometry_sections``) — and every later case unpickles its own copy of its
  objects, lists and dicts (a case that changes its copy cannot change another's); its numeric arrays are
  held once beside the pickle, read-only, and shared by the copies (``pickle.Pickler.persistent_id``): a
  case that writes into one gets a ValueError instead of changing another case's result, and unpickling
  a result of thousands of small arrays (the stall envelopes' free bodies) costs its objects only; at most
  ``size`` entries, least recently used dropped;
- **disk** (``disk=True``, the default unless ``URDF_DYN_CACHE=off``): ``jobs.disk_cache`` keeps results
  between runs, keyed also by the model's content and the library's sources; the plots drawn from a result
  kept there are kept beside it and copied out by a later run (``copy_kept_plots``, ``keep_plots``).

``ahead`` starts a result that neither tier holds in a process forked beside the job (``jobs.beside``), and
the later ``get`` with the same arguments takes it from there instead of computing it: the sizing job does so
for its longest checks right after its plan (``MachineKind.ahead``).

Errors are never stored. ``served_from_disk`` lists the checks this cache took from the disk (in order);
``stats`` counts the memory tier's hits and misses; ``export``/``install`` hand the memory tier's results
between the processes of a sweep."""
from __future__ import annotations

import hashlib
import io
import json
import pickle
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from urdf_dyn.jobs import disk_cache

__all__ = ["GeometryCache", "geometry_key"]


def _section(doc, path):
    node = doc
    for k in path.split("."):
        node = getattr(node, k, None) if node is not None else None
    if hasattr(node, "model_dump"):
        return node.model_dump(mode="json")
    if isinstance(node, dict):
        return {k: (v.model_dump(mode="json") if hasattr(v, "model_dump") else v) for k, v in node.items()}
    return node


def geometry_key(scenario, check: str, sections, extra=None) -> str:
    """SHA-256 (hex) of what the geometry-only ``check`` depends on: the robot file's bytes, the ``robot``
    section, the scenario sections ``sections`` (dotted paths, whole sections so that any key inside them
    changes the key) and ``extra`` (JSON-able)."""
    robot = scenario.doc.robot
    f = (scenario.path.parent / robot.file).resolve()
    try:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
    except OSError:
        digest = "missing"
    parts = {"check": check, "robot_file": str(f), "robot_sha256": digest, "robot": _section(scenario.doc, "robot"),
             "sections": {k: _section(scenario.doc, k) for k in sections}, "extra": extra}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class _ArraysApart(pickle.Pickler):
    """Pickles a result with its numeric arrays left out: each one copied once, read-only, into ``arrays``
    and pickled as its index there (``persistent_id``)."""

    def __init__(self, f, arrays: list):
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays, self._index = arrays, {}

    def persistent_id(self, obj):
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            return None
        k = self._index.get(id(obj))            # the same array twice: one copy (pickle's own memo would)
        if k is None:
            a = obj.copy()
            a.flags.writeable = False
            self.arrays.append(a)
            k = self._index[id(obj)] = len(self.arrays) - 1
        return k


class _ArraysShared(pickle.Unpickler):
    """Unpickles what ``_ArraysApart`` pickled: new objects, the kept read-only arrays."""

    def __init__(self, data: bytes, arrays: tuple):
        super().__init__(io.BytesIO(data))
        self.arrays = arrays

    def persistent_load(self, pid):
        return self.arrays[pid]


def _apart(result) -> tuple:
    """(pickle without the arrays, the arrays) of ``result`` (``_ArraysApart``)."""
    f, arrays = io.BytesIO(), []
    _ArraysApart(f, arrays).dump(result)
    return f.getvalue(), tuple(arrays)


def _copy(entry: tuple):
    """A new copy of a result kept as ``_apart(result)``: its own objects, the shared read-only arrays."""
    return _ArraysShared(*entry).load()


class GeometryCache:
    """The geometry-only checks' results of one run (``memory=False``) or of every case a sweep worker runs
    (``memory=True``); ``disk`` None follows ``URDF_DYN_CACHE`` (``jobs.disk_cache.enabled``). Thread-safe (a
    Dask worker may run cases in threads)."""

    def __init__(self, memory: bool = False, disk: bool | None = None, size: int = 32):
        self.memory, self.size = memory, size
        self.disk = disk_cache.enabled() if disk is None else disk
        self._entries: "OrderedDict[str, tuple]" = OrderedDict()     # key -> _apart(result)
        self._hits = self._misses = 0
        self._from_disk: list = []
        self._kept: dict = {}          # check -> its result's file in the disk cache (this run)
        self._pending: dict = {}       # key -> a result being computed beside the job (``ahead``)
        self._lock = threading.Lock()

    def get(self, scenario, check: str, sections, compute, extra=None, model=None):
        """``compute()`` — or a copy of the result stored under ``geometry_key(scenario, check, sections,
        extra)`` in the memory tier, or (with ``model`` given and the disk tier on) the result an earlier run
        kept on disk for the same key, model content and library sources. A result computed here is kept in
        both tiers that are on."""
        on_disk = model is not None and self.disk
        if not self.memory and not on_disk:
            if self._pending:
                compute = self._taken(geometry_key(scenario, check, sections, extra), compute)
            return compute()
        key = geometry_key(scenario, check, sections, extra)
        compute = self._taken(key, compute)
        if self.memory:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    self._hits += 1
                    self._entries.move_to_end(key)
                else:
                    self._misses += 1
            if entry is not None:
                return _copy(entry)
        kept = disk_cache.path_of(key, model) if on_disk else None
        result = disk_cache.load(kept) if on_disk else None
        if result is not None:
            with self._lock:
                self._from_disk.append(check)
                self._kept[check] = kept
        else:
            result = compute()
            if on_disk and disk_cache.store(kept, result):
                with self._lock:
                    self._kept[check] = kept
        if self.memory:
            entry = _apart(result)         # copies: the result returned here stays as computed (writeable)
            with self._lock:
                self._entries[key] = entry
                self._trim()
        return result

    def ahead(self, scenario, check: str, sections, compute, start, extra=None, model=None) -> bool:
        """Have ``start(compute)`` compute the result ``get`` will be asked for with the same arguments, unless
        a tier holds it already: ``start`` (``jobs.beside.Beside.start``) forks a process that computes it
        beside the job and returns a ``jobs.beside.Pending`` (or None: then nothing is started and ``get``
        computes it). ``get`` takes the pending result (waiting for it) instead of computing it, and keeps it
        as one it computed. Returns whether a computation was started."""
        key = geometry_key(scenario, check, sections, extra)
        with self._lock:
            started = self._pending.get(key)
            if (started is not None and started.pid is not None) or (self.memory and key in self._entries):
                return False              # started and still to be taken (one ended without a take: again)
        if model is not None and self.disk and disk_cache.path_of(key, model).is_file():
            return False                  # kept on disk (``get`` checks it; a bad file is computed there)
        pending = start(compute)
        if pending is None:
            return False
        with self._lock:
            self._pending[key] = pending
        return True

    def _taken(self, key, compute):
        """``compute``, or the pending result under ``key`` (``ahead``) with ``compute`` as its fallback."""
        with self._lock:
            pending = self._pending.pop(key, None)
        return compute if pending is None else (lambda: pending.take(compute))

    def _trim(self):
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def begin_run(self):
        """Forget which checks the last run took from the disk (a run calls it at its start)."""
        with self._lock:
            self._from_disk.clear()
            self._kept.clear()

    def served_from_disk(self) -> list:
        """The checks this run took from the disk tier, in order."""
        with self._lock:
            return list(self._from_disk)

    def kept_result(self, check: str):
        """The disk-cache file of ``check``'s result of this run (None if not kept)."""
        with self._lock:
            return self._kept.get(check)

    def copy_kept_plots(self, files: dict) -> set:
        """Copy into place the plot an earlier run kept beside each check's result: ``files`` {check: path of
        its plot in this run's folder}. Returns the checks whose plot was copied (a plot is a function of its
        result alone, so a result taken from the disk brings its plot)."""
        done = set()
        for check, path in files.items():
            kept = self.kept_result(check)
            if kept is not None and disk_cache.copy_out(disk_cache.kept_plot_path(kept, Path(path).name), path):
                done.add(check)
        return done

    def keep_plots(self, files: dict):
        """Keep beside each check's result on disk the plot drawn in this run (``files`` {check: path})."""
        for check, path in files.items():
            kept = self.kept_result(check)
            if kept is not None and Path(path).is_file():
                disk_cache.keep_file(path, disk_cache.kept_plot_path(kept, Path(path).name))

    def stats(self) -> dict:
        """{"hits", "misses", "entries"} of the memory tier."""
        with self._lock:
            return {"hits": self._hits, "misses": self._misses, "entries": len(self._entries)}

    def export(self) -> dict:
        """The memory tier: {key: pickled result, arrays included} (to hand to the other processes of a
        sweep)."""
        with self._lock:
            entries = dict(self._entries)
        return {k: pickle.dumps(_copy(v), protocol=pickle.HIGHEST_PROTOCOL) for k, v in entries.items()}

    def install(self, blobs: dict) -> int:
        """Add ``blobs`` (``export`` of another process of the same sweep) to the memory tier; returns how many
        were new. The keys say what each result was computed from, so a result serves only equal inputs."""
        new = 0
        for k, v in blobs.items():
            with self._lock:
                if k in self._entries:
                    continue
            entry = _apart(pickle.loads(v))
            with self._lock:
                if k not in self._entries:
                    self._entries[k], new = entry, new + 1
                    self._trim()
        return new
