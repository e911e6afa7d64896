"""Every deprecated name of urdf_dyn, in one place: old name → its replacement, kept for one release.

A module that still answers to an old name defines ``__getattr__ = deprecated_getattr(__name__)``; reading the
old name emits a ``FutureWarning`` that names the replacement and returns it. The replacements are strings,
imported on first use, so this module imports nothing of urdf_dyn (layer 0) and the hot signatures carry no
deprecation code. Keywords renamed in a signature are ``renamed_keywords``; settings that became one options
record, ``options_from_keywords``."""
from __future__ import annotations

import importlib
import warnings

__all__ = ["DEPRECATED", "deprecated_getattr", "REMOVED_IN", "options_from_keywords", "renamed_keywords"]

#: the release that removes the names below
REMOVED_IN = "0.2"

#: {module: {old name: (module of the replacement, its name, why)}}
_MACHINES = "machine analysis lives in urdf_dyn.machines"
_CORE = "the top level keeps the dynamics' about 50 names; converters and references live in their module"
DEPRECATED = {
    "urdf_dyn": {
        "Motor": ("urdf_dyn.machines", "Motor", _MACHINES),
        "Drive": ("urdf_dyn.machines", "Drive", _MACHINES),
        "motor_sizing": ("urdf_dyn.machines", "motor_sizing", _MACHINES),
        "load_motor_catalogue": ("urdf_dyn.machines", "load_motor_catalogue", _MACHINES),
        "digging_forces": ("urdf_dyn.machines", "digging_forces", _MACHINES),
        "digging_forces_at": ("urdf_dyn.machines", "digging_forces_at", _MACHINES),
        "lift_chart": ("urdf_dyn.machines", "lift_chart", _MACHINES),
        "LiftChartOptions": ("urdf_dyn.machines", "LiftChartOptions", _MACHINES),
        "working_range": ("urdf_dyn.machines", "working_range", _MACHINES),
        "base_reaction": ("urdf_dyn.machines", "base_reaction", _MACHINES),
        "zmp_margin": ("urdf_dyn.machines", "zmp_margin", _MACHINES),
        "tipping_polygon": ("urdf_dyn.machines", "tipping_polygon", _MACHINES),
        "tipping_load": ("urdf_dyn.machines", "tipping_load", _MACHINES),
        "StabilityWarning": ("urdf_dyn.machines", "StabilityWarning", _MACHINES),
        "soil_preset": ("urdf_dyn.machines", "soil_preset", _MACHINES),
        "soil_cutting": ("urdf_dyn.machines", "soil_cutting", _MACHINES),
        "fee_force": ("urdf_dyn.machines", "fee_force", _MACHINES),
        "Soil": ("urdf_dyn.machines", "Soil", _MACHINES),
        "point_wrench": ("urdf_dyn.machines", "point_wrench", _MACHINES),
        "payload_wrench": ("urdf_dyn.machines", "payload_wrench", _MACHINES),
        "point_acceleration": ("urdf_dyn.machines", "point_acceleration", _MACHINES),
        "size_motion": ("urdf_dyn.machines", "size_motion", _MACHINES),
        "Cylinder": ("urdf_dyn.machines", "Cylinder", _MACHINES),
        "excavator_urdf": ("urdf_dyn.machines", "excavator_urdf", _MACHINES),
        "write_excavator_urdf": ("urdf_dyn.machines", "write_excavator_urdf", _MACHINES),
        "load_pin_table": ("urdf_dyn.machines", "load_pin_table", _MACHINES),
        "PinTable": ("urdf_dyn.machines", "PinTable", _MACHINES),
        "calibrate": ("urdf_dyn.machines", "calibrate", _MACHINES),
        "Calibration": ("urdf_dyn.machines", "Calibration", _MACHINES),
        "hydraulics": ("urdf_dyn.machines", "hydraulics", _MACHINES),
        "HydraulicMotor": ("urdf_dyn.machines", "HydraulicMotor", _MACHINES),
        "load_from_args": ("urdf_dyn.cli.main", "load_from_args", "a helper of the command line, not the library"),
        "run_sweep_file": ("urdf_dyn.jobs.sweep_job", "run_sweep_file", "a job entry: run it with run_scenario"),
        "Passive": ("urdf_dyn.simulation.controllers", "ZeroTorque", "retired: passive forces are the model's"),
        "LaunchError": ("urdf_dyn.errors", "ScenarioError", "the user's name is scenario"),
        "run_launch": ("urdf_dyn.launch.registry", "run_scenario", "the user's name is scenario"),
        **{n: (m, n, _CORE) for m, names in {
            "urdf_dyn.io.sdf": ("parse_sdf", "cut_joints"), "urdf_dyn.io.mjcf": ("parse_mjcf",),
            "urdf_dyn.io.mjcf_export": ("export_mjcf", "to_mjspec"),
            "urdf_dyn.io.mimic_loops": ("close_mimic_loops", "MimicLoops"),
            "urdf_dyn.algorithms.force_elements": ("Balancer", "make_balancer", "with_balancers",
                                                   "balancer_generalized_forces", "balancer_lengths"),
            "urdf_dyn.constraints.loops": ("loop_jacobian",),
            "urdf_dyn.constraints.explicit": ("UserLoopClosure",),
            "urdf_dyn.constraints.couplings": ("coupling_rows",)}.items() for n in names},
        "run_document": ("urdf_dyn.launch.registry", "run_document", "a job entry (the sweep's): run_scenario runs a file"),
    },
    "urdf_dyn.errors": {
        "LaunchError": ("urdf_dyn.errors", "ScenarioError", "the user's name is scenario"),
    },
    "urdf_dyn.launch": {
        "Launch": ("urdf_dyn.launch.document", "Scenario", "the user's name is scenario"),
        "read_launch": ("urdf_dyn.launch.document", "read_scenario", "the user's name is scenario"),
        "run_launch": ("urdf_dyn.launch.registry", "run_scenario", "the user's name is scenario"),
    },
    "urdf_dyn.launch.document": {
        "Launch": ("urdf_dyn.launch.document", "Scenario", "the user's name is scenario"),
        "read_launch": ("urdf_dyn.launch.document", "read_scenario", "the user's name is scenario"),
    },
    "urdf_dyn.launch.registry": {
        "run_launch": ("urdf_dyn.launch.registry", "run_scenario", "the user's name is scenario"),
    },
}


def deprecated_getattr(module: str, stacklevel: int = 2):
    """A module ``__getattr__`` answering the old names ``DEPRECATED[module]`` with a FutureWarning
    (``stacklevel``: 3 when called from another module ``__getattr__``, so the warning names the user's line)."""
    table = DEPRECATED.get(module, {})

    def __getattr__(name):
        if name not in table:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, new, why = table[name]
        warnings.warn(f"{module}.{name} is deprecated ({why}): use {where}.{new}; the old name goes in "
                      f"urdf_dyn {REMOVED_IN}", FutureWarning, stacklevel=stacklevel)
        return getattr(importlib.import_module(where), new)
    return __getattr__


def options_from_keywords(name: str, cls, options, given: dict, stacklevel: int = 3):
    """The options record of a function that takes its settings as one dataclass ``cls`` (``simulate``:
    ``SimulateOptions``): ``options`` itself when ``given`` (the keywords outside its signature) is empty;
    else, for one release, ``cls(**given)`` — the settings' former spelling, one keyword each — with a
    FutureWarning naming the new call. Raises TypeError for ``options`` that is not a ``cls``, for a keyword
    that is not a field of ``cls``, and for both ``options`` and keywords."""
    import dataclasses
    if options is not None and not isinstance(options, cls):
        raise TypeError(f"{name}(): options must be a {cls.__name__}, got {type(options).__name__} (the settings "
                        f"are its fields: {name}(..., options={cls.__name__}(...)))")
    if not given:
        return options
    fields = {f.name for f in dataclasses.fields(cls)}
    for k in given:
        if k not in fields:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
    if options is not None:
        raise TypeError(f"{name}() got options= and the keywords {', '.join(given)}: give the settings in one place")
    call = ", ".join(f"{k}=..." for k in given)
    warnings.warn(f"{name}(): settings as keywords are deprecated: use {name}(..., options={cls.__name__}({call})); "
                  f"the keywords go in urdf_dyn {REMOVED_IN}", FutureWarning, stacklevel=stacklevel)
    return cls(**given)


def _renamed(name: str, table: dict, kwargs: dict) -> dict:
    """``kwargs`` with the former keywords of ``table`` {old: new} renamed, a FutureWarning naming each (the
    caller's line: the user's, two frames up). Giving both names is a TypeError."""
    kwargs = dict(kwargs)
    for old, new in table.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{name}() got both {old}= and its new name {new}=")
            warnings.warn(f"{name}(): the keyword {old}= is now {new}=", FutureWarning, stacklevel=3)
            kwargs[new] = kwargs.pop(old)
    return kwargs


def renamed_keywords(**old_to_new):
    """Decorator: keyword arguments given under a former name (``old=value``) are passed as ``new=value``,
    with a FutureWarning naming both (docs/architecture.md, "Keyword names": one spelling per idea), for one
    release. Giving both names is a TypeError.

    The entry it returns belongs to the decorated function's own module — its globals are that module's, as
    ``dataclasses`` makes the ``__init__`` it writes a function of the class's module — so that at run time a
    module calls its own function, and this module (layer 0) is called, downward, only when a former name is
    given; it never holds a higher layer's function and calls it back."""
    import functools
    import types

    table = dict(old_to_new)
    olds = frozenset(table)
    rename = _renamed

    def wrap(fn):
        def entry(*args, **kwargs):
            if kwargs and not olds.isdisjoint(kwargs):       # the usual call: nothing to rename
                kwargs = rename(fn.__name__, table, kwargs)
            return fn(*args, **kwargs)
        own = types.FunctionType(entry.__code__, fn.__globals__, fn.__name__, None, entry.__closure__)
        return functools.update_wrapper(own, fn)
    return wrap
