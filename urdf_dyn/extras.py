"""Optional dependencies: the core install carries only what the main job imports; the rest are extras.

A function that needs an extra imports it through ``require``, which turns a missing package into one
``MissingExtraError`` line naming the extra to install (the CLI prints it and exits with status 2):

    error: the load-case sweep needs dask.distributed, which is not installed: pip install 'urdf_dyn[sweep]'

Extras (pyproject.toml ``[project.optional-dependencies]``): ``sweep`` (dask.distributed, pyarrow), ``ros``
(mcap, mcap-ros2-support), ``gauss`` (sympy), ``viewer``, ``mujoco``, ``all`` (every one of them).
"""
from __future__ import annotations

import importlib

from urdf_dyn.errors import UrdfDynError

__all__ = ["MissingExtraError", "require", "EXTRAS"]

#: module imported -> the extra that installs it
EXTRAS = {"distributed": "sweep", "dask": "sweep", "pyarrow": "sweep", "mcap": "ros", "mcap_ros2": "ros",
          "sympy": "gauss", "mujoco": "mujoco", "trimesh": "viewer"}


class MissingExtraError(UrdfDynError, ImportError):
    """An optional dependency is not installed; ``extra`` names the pip extra that installs it."""

    def __init__(self, what, module, extra):
        self.module, self.extra = module, extra
        super().__init__(f"{what} needs {module}, which is not installed: pip install 'urdf_dyn[{extra}]'")


def require(module, what):
    """Import and return ``module`` (a dotted name), or raise MissingExtraError naming its extra when it (or
    a package it imports) is missing. ``what``: the feature that needs it, for the message."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        missing = (getattr(e, "name", None) or top).split(".")[0]
        if missing not in EXTRAS and top not in EXTRAS:
            raise
        raise MissingExtraError(what, top if top in EXTRAS else missing,
                                EXTRAS.get(top) or EXTRAS[missing]) from None
