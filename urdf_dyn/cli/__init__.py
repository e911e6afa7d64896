"""The ``urdf-dyn`` command line (``urdf_dyn.cli.main``)."""
from urdf_dyn.cli.main import load_from_args, main

__all__ = ["main", "load_from_args"]
