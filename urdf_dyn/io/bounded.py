"""The one bounded reader of every JSON and CSV file a run folder or a user supplies (a run's ``view.json``, its
CSVs, wrench and motion CSVs, a sweep's stored records).

Each reader checks the file's size before reading it (once), bounds what parsing may build (JSON nesting
depth; a CSV's rows and its longest field), refuses ``NaN``/``Infinity`` where numbers are expected, and
raises ``InputError`` (a ``UrdfDynError`` and ``ValueError``) with one located line — ``file:line`` or
``file: key`` — instead of Python's ``json``/``csv`` messages or a traceback. (These files are not noted as
inputs for ``io.files``: a run's own state — a sweep's records, its CSVs — is rewritten by later runs.)

- ``read_json(path)``: the parsed value; ``MAX_JSON_BYTES``, ``MAX_JSON_DEPTH``; no NaN/Infinity constants;
- ``read_csv_rows(path)``: (header, [(line, row)]) of a CSV with a header row; ``MAX_CSV_BYTES``,
  ``MAX_CSV_ROWS``, ``MAX_FIELD_CHARS``;
- ``read_numeric_csv(path)``: (header, (rows, cols) float array) with every value a finite number, a bad one
  named by line and column;
- ``expect(value, kinds, where)``: ``value`` when it is one of ``kinds`` (JSON's own: dict, list, str, a
  finite number, bool), else InputError naming ``where``."""
from __future__ import annotations

import csv
import json
import itertools
import math
import os

import numpy as np

from urdf_dyn.errors import UrdfDynError

__all__ = ["InputError", "read_json", "read_csv_rows", "read_numeric_csv", "expect", "MAX_JSON_BYTES",
           "MAX_JSON_DEPTH", "MAX_CSV_BYTES", "MAX_CSV_ROWS", "MAX_FIELD_CHARS"]

MAX_JSON_BYTES = 16 << 20
"""A JSON file read here is at most 16 MiB (a run's view.json is < 1 kB; a sweep record < 64 kB)."""
MAX_JSON_DEPTH = 64
"""Nesting depth of a JSON value (the files read here are ≤ 4 deep)."""
MAX_CSV_BYTES = 512 << 20
"""A CSV read here is at most 512 MiB (a run of 10⁶ samples × 20 columns ≈ 200 MB)."""
MAX_CSV_ROWS = 5_000_000
"""Data rows of a CSV."""
MAX_FIELD_CHARS = 1 << 16
"""Characters in one CSV field (a number is < 30; Python's csv refuses 128 kB with an unlocated message)."""


class InputError(UrdfDynError, ValueError):
    """A file read by the bounded reader is too large, too deep or not what is expected (located message)."""


def _size(path, limit, what):
    try:
        size = os.stat(path).st_size
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    if size > limit:
        raise InputError(f"{path}: {size} bytes, more than a {what} may hold ({limit} bytes)")


def _no_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(v, limit):
    """The nesting depth of a parsed JSON value (iterative), or limit + 1 as soon as it passes ``limit``."""
    stack, deepest = [(v, 1)], 0
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((c, d + 1) for c in (x.values() if isinstance(x, dict) else x))
    return deepest


def read_json(path, max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH, what="JSON file", allow_nan=False):
    """The value of the JSON file ``path`` (read once). Raises InputError naming the file (and the line and
    column of a syntax error) for a file over ``max_bytes``, nested deeper than ``max_depth``, not UTF-8,
    not JSON, or holding NaN / Infinity (unless ``allow_nan``: Python's json writes them by default)."""
    _size(path, max_bytes, what)
    try:
        with open(path, "rb") as f:
            text = f.read(max_bytes + 1).decode("utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        value = json.loads(text, parse_constant=None if allow_nan else _no_constant)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})") from None
    except RecursionError:
        raise InputError(f"{path}: nested more than {max_depth} deep") from None
    except ValueError as e:
        raise InputError(f"{path}: {e}") from None
    if _depth(value, max_depth) > max_depth:
        raise InputError(f"{path}: nested more than {max_depth} deep")
    return value


def read_csv_rows(path, max_bytes=MAX_CSV_BYTES, max_rows=MAX_CSV_ROWS, max_field=MAX_FIELD_CHARS,
                  what="CSV file"):
    """(header [str, stripped], [(line number, row [str])] of the non-empty data rows) of the CSV ``path``.
    Raises InputError naming the file and line for a file over ``max_bytes``, more than ``max_rows`` rows, a
    field over ``max_field`` characters, or text that is not UTF-8; the header is [] for an empty file."""
    _size(path, max_bytes, what)
    old = csv.field_size_limit()
    rows = []
    try:
        csv.field_size_limit(max_field)
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            try:
                header = next(reader, None)
                for row in reader:
                    if row:
                        if len(rows) >= max_rows:
                            raise InputError(f"{path}:{reader.line_num}: more than {max_rows} rows")
                        rows.append((reader.line_num, row))
            except csv.Error as e:
                why = (f"a field longer than {max_field} characters" if "field larger" in str(e) else str(e))
                raise InputError(f"{path}:{reader.line_num}: {why}") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not a text CSV ({e})") from None
    finally:
        csv.field_size_limit(old)
    return [h.strip() for h in header or []], rows


def read_numeric_csv(path, min_rows=1, finite=True, **limits):
    """(header, data (rows, cols) float64) of a CSV whose every value is a finite number. Raises InputError
    naming the file, line and column of a value that is not (``'a'``; ``nan``, ``inf`` unless not ``finite``), of
    a row with
    another number of values than the header, or too few rows (``min_rows``); and those of
    ``read_csv_rows``."""
    header, rows = read_csv_rows(path, **limits)
    if not header:
        raise InputError(f"{path}:1: no header row")
    n = len(header)
    data = None
    if all(len(row) == n for _, row in rows):   # Python's float() of every value at C speed, then one check
        try:
            data = np.fromiter(map(float, itertools.chain.from_iterable(row for _, row in rows)), np.float64,
                               len(rows) * n).reshape(len(rows), n)
        except ValueError:
            data = None
        if data is not None and finite and not np.isfinite(data).all():
            data = None
    if data is None:                              # the first bad row or value, named
        data = np.empty((len(rows), n))
        for k, (line, row) in enumerate(rows):
            if len(row) != n:
                raise InputError(f"{path}:{line}: {len(row)} values for the {n} columns of the header")
            for c, x in enumerate(row):
                try:
                    v = float(x)
                except ValueError:
                    raise InputError(f"{path}:{line}: column {header[c]!r}: {x[:40]!r} is not a number") from None
                if finite and not math.isfinite(v):
                    raise InputError(f"{path}:{line}: column {header[c]!r}: {x.strip()[:40]!r} is not finite")
                data[k, c] = v
    if len(rows) < min_rows:
        raise InputError(f"{path}: {len(rows)} data rows, at least {min_rows} needed")
    return header, data


def expect(value, kinds, where):
    """``value`` if it is of one of ``kinds`` (types; ``float`` accepts a finite int or float, not a bool),
    else InputError naming ``where`` ("FILE: key.sub") and what was found."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    for k in kinds:
        if k is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value):
                return value
            raise InputError(f"{where}: {value!r} is not finite")
        if k is not float and isinstance(value, k) and not (k is int and isinstance(value, bool)):
            return value
    names = {dict: "an object", list: "an array", str: "a string", float: "a number", bool: "true or false",
             int: "a whole number", type(None): "null"}
    found = names.get(type(value), type(value).__name__)
    found = "a number" if isinstance(value, (int, float)) and not isinstance(value, bool) else found
    want = " or ".join(names.get(k, k.__name__) for k in kinds)
    raise InputError(f"{where}: expected {want}, got {found} ({str(value)[:40]!r})")
