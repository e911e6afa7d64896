"""``load``: a robot description file -> a checked, immutable Model.

The readers in ``urdf_dyn.io`` only parse; this module adds the checks that need the constraint solvers
(the loops can be closed near the initial configuration), so that the input layer never imports them.
"""
from __future__ import annotations

import io
import os
import re
from pathlib import Path

__all__ = ["load"]


def load(source, package_dirs=None, xacro_args=None, gravity=(0.0, 0.0, -9.81), trust_xacro=False, strict=False,
         floating_base=False, check_loops=True, cache=None):
    """Load a robot description into a Model.

    Args:
        source: path of a ``.urdf`` or ``.xacro`` file, an SDF model (``.sdf``: cycles are cut into loops by
            ``urdf_dyn.io.sdf``), an MJCF model (``.xml`` whose root is ``<mujoco>``, or ``.mjcf``: ``connect`` and
            ``weld`` equalities become loops, ``urdf_dyn.io.mjcf``; needs the ``[mujoco]`` extra), or URDF
            text itself (a string starting with ``<``).
        package_dirs: where ``package://`` and ``$(find pkg)`` point: a mapping {package: folder}, or a list of
            folders containing packages. ``ROS_PACKAGE_PATH`` and the folders above the file are searched too.
        xacro_args: mapping of xacro arguments (``name:=value``).
        gravity: (3,) gravitational acceleration [m/s²] in the root link frame (REP-103: z up).
        trust_xacro: let xacro evaluate ``${...}`` and ``$(eval ...)`` as Python — this RUNS CODE from the
            file; only for descriptions you trust. By default a restricted evaluator allows arithmetic,
            comparisons, math functions and xacro properties only (``urdf_dyn.io.xacro_safe``).
        strict: refuse what urdfdom and Pinocchio accept and urdf_dyn otherwise loads with a located
            ``ModelWarning`` (XML quirks, near-PSD inertias, unknown metadata; README "Errors and warnings").
        floating_base: give the root link a 6-dof floating joint ``root_joint`` (Pinocchio's
            ``JointModelFreeFlyer`` root) — for legged robots whose file has none. Then nq = nv + 1 and
            q = (x, y, z, qx, qy, qz, qw, joints...); see ``urdf_dyn.algorithms.configuration``. Refused
            (UnsupportedError) when the root link already has a floating joint (an MJCF ``<freejoint>``).
        check_loops: refuse loops that cannot be closed near the initial configuration (default; False: load
            them open, e.g. to draw the gap, ``urdf_dyn.constraints.closure``).
        cache: keep the Model of a URDF/xacro file on disk and reuse it while nothing it was built from changed
            (``urdf_dyn.model_cache``: keyed by the file, every file its build read — xacro includes,
            ``package.xml`` — the arguments and the library's sources; entries authenticated as
            ``urdf_dyn.kept_store`` keeps them). None (default): on unless ``URDF_DYN_CACHE=off``; the
            ModelWarnings of the build are given again on reuse.

    Returns:
        An immutable ``urdf_dyn.Model``.

    Raises:
        ModelError and subclasses (XMLError, XacroError, PackageNotFoundError, UnsupportedError), each naming
        the file, line and element at fault — also when the ``<loop>`` elements cannot be assembled near the
        initial configuration (``LoopClosureError``, naming the loop, its gap and the nearest fix of its
        origins). A ``ModelWarning`` names each loop whose rows duplicate ``<mimic>`` rows.
    """
    kind = _kind(source)
    is_file = isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("<")
    if is_file:
        from urdf_dyn.io.files import note_input
        note_input(source)        # no output of this run may replace it
    if kind == "urdf" and is_file and cache is not False and Path(os.fspath(source)).is_file():
        from urdf_dyn.model_cache import cached
        return cached(source, dict(package_dirs=package_dirs, xacro_args=xacro_args, gravity=gravity,
                                   trust_xacro=trust_xacro, strict=strict, floating_base=floating_base,
                                   check_loops=check_loops),
                      lambda: _build(source, kind, package_dirs, xacro_args, gravity, trust_xacro, strict,
                                     floating_base, check_loops))
    return _build(source, kind, package_dirs, xacro_args, gravity, trust_xacro, strict, floating_base, check_loops)


def _build(source, kind, package_dirs, xacro_args, gravity, trust_xacro, strict, floating_base, check_loops):
    """The Model of ``source`` read and checked (no cache). The readers and the solvers are imported here, on
    use: a Model taken from the cache needs neither yourdfpy (trimesh, scipy) nor the assembly solver."""
    from urdf_dyn.constraints.assembly import check_assembly
    if kind == "sdf":
        from urdf_dyn.io.sdf import parse_sdf
        model = parse_sdf(source, package_dirs=package_dirs, gravity=gravity, floating_base=floating_base)
    elif kind == "mjcf":
        from urdf_dyn.io.mjcf import parse_mjcf
        model = parse_mjcf(source, gravity=gravity, floating_base=floating_base)
    else:
        from urdf_dyn.io.urdf import parse_urdf
        model = parse_urdf(source, package_dirs=package_dirs, xacro_args=xacro_args, gravity=gravity,
                           trust_xacro=trust_xacro, strict=strict, floating_base=floating_base)
    if model.loops:
        if check_loops:
            _check_mjcf_assembly(model) if kind == "mjcf" else check_assembly(model)
        if model.mimic:
            _warn_duplicates(model)
    return model


def _warn_duplicates(model):
    """A located ModelWarning per loop whose constraint rows duplicate ``<mimic>`` rows
    (``constraints.closure.mimic_duplicates``, at the initial configuration)."""
    import warnings

    from urdf_dyn.constraints.closure import mimic_duplicates
    from urdf_dyn.errors import ModelError, ModelWarning
    for name, mimics in mimic_duplicates(model, model.q_initial()).items():
        lp = next(lp for lp in model.loops if lp.name == name)
        warnings.warn(str(ModelError(
            f"loop {name} duplicates the <mimic> of {', '.join(mimics)}: the constraints are rank-deficient, so "
            "the force split between the loop and the mimic is undetermined and its pin forces are not reported; "
            "drop the <mimic>s the loop replaces", file=model.source, line=lp.line or None,
            element=f'<loop name="{name}">')), ModelWarning, stacklevel=3)


def _check_mjcf_assembly(model):
    """``check_assembly`` for a model read from MJCF: its error names the equality (whose line in the user's
    file the loop carries) and says what to check there."""
    from urdf_dyn.constraints.assembly import check_assembly
    check_assembly(model, element="equality",
                   advice="MuJoCo's compiler closes connect and weld equalities between bodies at qpos0; check the "
                          "positions of the equality's sites")


def _kind(source) -> str:
    """'sdf', 'mjcf' or 'urdf' from the file suffix (XML text and ``.xml`` files by their root element)."""
    if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("<")):
        data = source if isinstance(source, bytes) else source.encode()
        stream = io.BytesIO(re.sub(rb"^\s*<\?\s+xml[^>]*\?>", b"", data, count=1))  # '<? xml ?>': see io.sdf
    else:
        path = Path(os.fspath(source))
        suffix = path.suffix.lower()
        if suffix in (".sdf", ".mjcf"):
            return suffix[1:]
        if suffix != ".xml" or not path.is_file():
            return "urdf"
        with open(path, "rb") as f:  # iterparse given a path leaves its file open when it stops early
            return {"mujoco": "mjcf", "sdf": "sdf"}.get(_root_tag(f), "urdf")
    return {"mujoco": "mjcf", "sdf": "sdf"}.get(_root_tag(stream), "urdf")


def _root_tag(stream):
    """The root element's tag, read incrementally (comments and declarations skipped); None if the XML is
    broken (the reader then reports it with its line)."""
    from lxml import etree
    try:
        for _, el in etree.iterparse(stream, events=("start",), resolve_entities=False, no_network=True,
                                     load_dtd=False):
            return el.tag if isinstance(el.tag, str) else None
    except etree.XMLSyntaxError:
        return None
    return None
