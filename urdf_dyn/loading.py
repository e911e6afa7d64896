"""``load``: a robot description file -> a checked, immutable Model.

The readers in ``urdf_dyn.io`` only parse; this module adds the checks that need the constraint solvers
(the loops can be closed near the initial configuration), so that the input layer never imports them.
"""
from __future__ import annotations

from urdf_dyn.constraints.assembly import check_assembly
from urdf_dyn.io.urdf import parse_urdf

__all__ = ["load"]


def load(source, package_dirs=None, xacro_args=None, gravity=(0.0, 0.0, -9.81), trust_xacro=False, strict=False):
    """Load a robot description into a Model.

    Args:
        source: path of a ``.urdf`` or ``.xacro`` file, or the XML text itself (a string starting with ``<``).
        package_dirs: where ``package://`` and ``$(find pkg)`` point: a mapping {package: folder}, or a list of
            folders containing packages. ``ROS_PACKAGE_PATH`` and the folders above the file are searched too.
        xacro_args: mapping of xacro arguments (``name:=value``).
        gravity: (3,) gravitational acceleration [m/s²] in the root link frame (REP-103: z up).
        trust_xacro: let xacro evaluate ``${...}`` and ``$(eval ...)`` as Python — this RUNS CODE from the
            file; only for descriptions you trust. By default a restricted evaluator allows arithmetic,
            comparisons, math functions and xacro properties only (``urdf_dyn.io.xacro_safe``).
        strict: refuse what urdfdom and Pinocchio accept and urdf_dyn otherwise loads with a located
            ``ModelWarning`` (XML quirks, near-PSD inertias, unknown metadata; README "Errors and warnings").

    Returns:
        An immutable ``urdf_dyn.Model``.

    Raises:
        ModelError and subclasses (XMLError, XacroError, PackageNotFoundError, UnsupportedError), each naming
        the file, line and element at fault — also when the ``<loop>`` elements cannot be assembled near the
        initial configuration.
    """
    model = parse_urdf(source, package_dirs=package_dirs, xacro_args=xacro_args, gravity=gravity,
                       trust_xacro=trust_xacro, strict=strict)
    if model.loops:
        check_assembly(model)
    return model
