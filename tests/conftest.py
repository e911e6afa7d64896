"""Shared test set-up: where the repository and the project's shared material are.

The one mechanism for finding ``../shared`` (the robot descriptions and the Cat 320 figures that are not
part of the repository): the environment variable ``URDF_DYN_SHARED`` (the shared folder, holding
``data/``), else the folder ``shared`` beside the repository. Where neither exists (a user's clone), the
tests that need it skip with ``needs_shared``'s reason. Tests live in folders that mirror the package
(``tests/constraints/`` for ``urdf_dyn/constraints/``, ...); helpers importable by every test sit here and
in ``_robots.py``.

The sizing job's disk cache of geometry-only checks (``urdf_dyn.jobs.disk_cache``) is off in the tests
(``URDF_DYN_CACHE=off``, inherited by the CLI's subprocesses), so that no test's result depends on what an
earlier test or run left in the user's cache; tests/jobs/test_sweep_geometry.py turns it on, in a
temporary folder, to test it."""
import os
from pathlib import Path

import pytest

os.environ["URDF_DYN_CACHE"] = "off"

#: the repository root
ROOT = Path(__file__).resolve().parents[1]
#: the shared folder (``URDF_DYN_SHARED``, else ``../shared``) and its third-party data
SHARED_ROOT = Path(os.environ.get("URDF_DYN_SHARED") or ROOT.parent / "shared")
SHARED = SHARED_ROOT / "data"
#: the Cat 320's published figures, each with its source (``cat320_datasheet.json``)
CAT320 = SHARED / "cat320"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is absent (the shared robot files are "
                                  "not part of the repository; set URDF_DYN_SHARED to the shared folder)")
