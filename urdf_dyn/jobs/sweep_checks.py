"""Bounds and checks of a load-case sweep, made before anything is allocated, connected or run:
the number of values of a range and of cases of a grid, the worker count, a scheduler address (its form,
and that a Dask scheduler answers there), and a stored per-case record (that it is a record of the case its
name says). Each raises ValueError (or ScenarioError for a record) with a message that names what is wrong; the
sweep names the file and key (``urdf_dyn.jobs.sweep``, ``urdf_dyn.jobs.sweep_job``)."""
from __future__ import annotations

import json
import math
import socket
import struct
from pathlib import Path

from urdf_dyn.errors import ScenarioError

__all__ = ["MAX_CASES", "MAX_WORKERS", "MAX_RECORD_BYTES", "count_values", "check_kinds", "count_cases",
           "scheduler_address", "probe_scheduler", "check_record"]

MAX_CASES = 100_000
"""Largest number of cases (and of values of one range) a sweep may have: each case is a validated document
(~1 ms) and a record; 10⁵ cases are a day of excavator sizing on 8 cores, far more than a design study needs."""
MAX_WORKERS = 256
"""Largest LocalCluster: each worker is a Python process (~150 MB); more than the machine's cores only waits."""
MAX_RECORD_BYTES = 1 << 20
"""A stored per-case record is at most 1 MiB (a record is a few kB: metrics of each actuator)."""
_HANDSHAKE_BYTES = 1 << 20  # a Dask handshake (a small dict) is some hundred bytes


def count_values(spec) -> int:
    """How many values a range {start, stop, step | num} (stop included) holds, without making them; a list:
    its length. Raises ValueError for more than ``MAX_CASES`` or a malformed range."""
    if not isinstance(spec, dict):
        return len(spec)
    try:
        a, b = float(spec["start"]), float(spec["stop"])
        if spec.get("num") is not None:
            n = int(spec["num"])
        else:
            step = float(spec["step"])
            n = 1 if not step else math.floor(abs(b - a) / abs(step) + 0.5) + 1
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"a range needs numbers start, stop and step or num ({e})") from None
    if not (math.isfinite(a) and math.isfinite(b)) or n < 1:
        raise ValueError(f"range {spec} holds no values")
    if n > MAX_CASES:
        raise ValueError(f"range {spec} asks for {n:.3g} values, more than the {MAX_CASES} cases a sweep may have")
    return n


def _kind(v) -> str:
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return "numbers"
    if isinstance(v, str):
        return "text"
    return "lists" if isinstance(v, list) else "mappings" if isinstance(v, dict) else type(v).__name__


def check_kinds(values) -> None:
    """A parameter's values are all of one kind (numbers, text, true/false, lists or mappings), so that its
    column of the results table has one type. Raises ValueError naming the first value of another kind."""
    kinds = [_kind(v) for v in values]
    for v, k in zip(values, kinds):
        if k != kinds[0]:
            raise ValueError(f"values mix {kinds[0]} and {k} ({values[0]!r} and {v!r}): give one kind")


def count_cases(lengths) -> int:
    """The product of the axes' lengths; raises ValueError past ``MAX_CASES`` (before any case is built)."""
    n = math.prod(lengths)
    if n > MAX_CASES:
        raise ValueError(f"the grid has {n:.3g} cases ({' x '.join(str(x) for x in lengths)}), more than the "
                         f"{MAX_CASES} a sweep may have: zip parameters that vary together, or split the sweep")
    return n


def scheduler_address(address: str) -> str:
    """``tcp://host:port`` from ``host:port`` or a full address; raises ValueError for a malformed host or a
    port outside 1..65535."""
    from urllib.parse import urlsplit
    text = str(address).strip()
    full = text if "://" in text else f"tcp://{text}"
    u = urlsplit(full)
    if u.scheme not in ("tcp", "tls"):
        raise ValueError(f"{text!r}: scheme {u.scheme!r} is not tcp:// or tls://")
    try:
        port = u.port
    except ValueError:
        raise ValueError(f"{text!r}: the port must be a whole number in 1..65535") from None
    if not u.hostname or port is None or not 1 <= port <= 65535 or u.path not in ("", "/"):
        raise ValueError(f"{text!r}: expected tcp://HOST:PORT with a port in 1..65535")
    return f"{u.scheme}://{u.netloc}"


def probe_scheduler(address: str, timeout: float = 5.0) -> None:
    """Check that a Dask scheduler answers at ``tcp://host:port`` before ``distributed`` connects: a Dask
    comm sends its handshake at once, prefixed by its length (8 bytes, ``struct`` "Q"); ``distributed``
    allocates what that prefix claims, so another service there (an SSH banner reads as exabytes) would
    exhaust memory. Raises ValueError saying what answered. ``tls://`` addresses are not probed."""
    from urllib.parse import urlsplit
    u = urlsplit(scheduler_address(address))
    if u.scheme != "tcp":
        return
    try:
        with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
            s.settimeout(timeout)
            head = b""
            while len(head) < 8:
                chunk = s.recv(8 - len(head))
                if not chunk:
                    raise ValueError(f"{address}: the service closed the connection: not a Dask scheduler")
                head += chunk
    except socket.timeout:
        raise ValueError(f"{address}: no Dask handshake within {timeout:g} s: not a Dask scheduler") from None
    except OSError as e:
        raise ValueError(f"cannot reach {address}: {e.strerror or e}") from None
    (n,) = struct.unpack("Q", head)
    if not 0 < n <= _HANDSHAKE_BYTES:
        raise ValueError(f"{address}: not a Dask scheduler (its first message claims {n} bytes; "
                         f"the bytes {head!r})")


def check_record(path: Path, case) -> dict | None:
    """The stored record of ``case`` at ``path`` (None if there is none), after checking that it is the
    record of this case: a JSON object of at most ``MAX_RECORD_BYTES`` whose hash, job and parameters are
    the case's. Raises ScenarioError naming the file otherwise (a record from another sweep, edited or
    corrupted, is never taken as this case's result)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None

    def bad(why):
        return ScenarioError(f"{path}: {why}; this is not the record of case {case.index} "
                           f"({case.hash}): delete the file to compute the case again")
    if size > MAX_RECORD_BYTES:
        raise bad(f"{size} bytes, more than a record holds ({MAX_RECORD_BYTES})")
    from urdf_dyn.io.bounded import InputError, read_json
    try:
        rec = read_json(path, max_bytes=MAX_RECORD_BYTES, max_depth=32, what="sweep record", allow_nan=True)
    except InputError as e:
        raise bad(f"not a record ({str(e).removeprefix(str(path) + ': ').removeprefix(str(path))})") from None
    if not isinstance(rec, dict):
        raise bad(f"a JSON {type(rec).__name__}, not an object")
    for key, want in (("hash", case.hash), ("job", case.job)):
        if rec.get(key) != want:
            raise bad(f"its {key} is {rec.get(key)!r}")
    if json.dumps(rec.get("params"), sort_keys=True, default=str) != json.dumps(case.params, sort_keys=True,
                                                                                 default=str):
        raise bad(f"its params {rec.get('params')!r} are not the case's {case.params!r}")
    if rec.get("status") not in ("ok", "failed") or not isinstance(rec.get("metrics", {}), dict):
        raise bad("its status or metrics are malformed")
    for k, v in (rec.get("metrics") or {}).items():     # each metric a number (or null): the results table's
        if k in ("units", "sources"):                    # float64 columns take nothing else
            if not isinstance(v, dict):
                raise bad(f"its metrics.{k} is not an object")
        elif v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise bad(f"its metrics.{k} is {v!r}, not a number")
    for k in ("seconds",):
        v = rec.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise bad(f"its {k} is {v!r}, not a number")
    return rec
