"""urdf_dyn: rigid-body dynamics of robots loaded from URDF (with loop closures), after Featherstone's
*Rigid Body Dynamics Algorithms* (RBDA).

The public API is this package's namespace (``__all__``, about 50 names): ``load`` and the ``Model``, the
tree algorithms (RNEA, CRBA, ABA, kinematics, configuration space), closed-loop dynamics (loop constraints,
forward and inverse dynamics, consistent motions, actuator forces), simulation (``simulate`` with its
``SimulateOptions``, controllers, trajectories), ``package://`` resolution and MCAP recordings,
``run_scenario`` for scenario files, and the errors. Everything else is public in its own module: the format
converters in ``urdf_dyn.io`` (``io.sdf.parse_sdf``, ``io.mjcf.parse_mjcf``, ``io.mjcf_export.export_mjcf``,
``io.mimic_loops.close_mimic_loops``, ...), the balancers in ``urdf_dyn.algorithms.force_elements``, the readable
loop references in ``urdf_dyn.constraints``; machine analysis (excavator and arm sizing: soil, loads,
hydraulics, ISO 6015, lift chart, stability, motors, ...) is ``urdf_dyn.machines`` with its own ``__all__``.
The layers, bottom up (``docs/architecture.md``):

- ``urdf_dyn.algorithms`` — spatial algebra, joint models, tree algorithms (RNEA, CRBA, ABA, FK, Jacobians);
- ``urdf_dyn.model`` — the immutable ``Model`` and its per-evaluation workspace ``Data``;
- ``urdf_dyn.io`` — readers and writers of robot descriptions (URDF/xacro, SDF, MJCF, MCAP, ``package://``);
- ``urdf_dyn.constraints`` — closed-loop dynamics: loop constraints, forward and inverse dynamics, motions,
  actuators, assembly;
- ``urdf_dyn.loading`` — ``load()``;
- ``urdf_dyn.simulation``, ``urdf_dyn.gauss`` — simulation, controllers, trajectories; Gauss's principle;
- ``urdf_dyn.machines`` — machine analysis on the dynamics;
- ``urdf_dyn.reports`` — every file a run writes;
- ``urdf_dyn.launch``, ``urdf_dyn.jobs``, ``urdf_dyn.cli`` — scenario files, their jobs, the ``urdf-dyn`` command.

Names that left this namespace answer with a FutureWarning naming their new place for one release
(``urdf_dyn._deprecated``). Names are imported on
first use (PEP 562), so ``import urdf_dyn`` stays fast.
"""
from __future__ import annotations

import importlib
import importlib.util
import os

#: the modules holding compiled (numba) code; a kernel compiled into another embeds the callee's code, and
#: numba's cache checks only the caller's own file, so the cache folder is keyed by all of these together
_KERNEL_MODULES = ("algorithms/spatial.py", "algorithms/joints.py", "algorithms/layout.py", "algorithms/_kernels.py",
                   "algorithms/_calls.py", "constraints/_kernels.py", "constraints/_linalg.py",
                   "constraints/_sample.py", "constraints/_path.py")


def _kernel_key() -> str:
    """A short digest of the kernel modules' contents (≈ 150 kB read): the same for every checkout or install
    of the same sources, so that they share one cache folder (``urdf_dyn.numba_cache``)."""
    import hashlib
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha1()
    for rel in _KERNEL_MODULES:
        try:
            with open(os.path.join(here, rel), "rb") as f:
                h.update(rel.encode() + b":" + f.read())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:12]


# Compiled kernels are cached where any install can write (a site-packages tree may be read-only): the
# user's cache folder, unless NUMBA_CACHE_DIR says otherwise, in a subfolder per version of the kernel
# modules (so that an upgrade or an edit never runs a caller compiled against an older callee). Set before
# numba is first imported.
if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                 os.path.join(os.path.expanduser("~"), ".cache"),
                                                 "urdf_dyn", "numba", _kernel_key())
    import sys as _sys
    if "numba" in _sys.modules:     # imported before us: numba read its config already; the kernels' caches
        _sys.modules["numba"].config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]   # are made at their import

__version__ = "0.1.0"

_EXPORTS = {
    # loading and the model
    "load": "urdf_dyn.loading", "Model": "urdf_dyn.model", "Data": "urdf_dyn.model",
    # tree algorithms
    "inverse_dynamics": "urdf_dyn.algorithms.dynamics", "mass_matrix": "urdf_dyn.algorithms.dynamics",
    "bias_force": "urdf_dyn.algorithms.dynamics", "gravity_torques": "urdf_dyn.algorithms.dynamics",
    "forward_dynamics": "urdf_dyn.algorithms.dynamics", "kinetic_energy": "urdf_dyn.algorithms.dynamics",
    "potential_energy": "urdf_dyn.algorithms.dynamics", "forward_kinematics": "urdf_dyn.algorithms.kinematics",
    "link_pose": "urdf_dyn.algorithms.kinematics", "link_jacobian": "urdf_dyn.algorithms.kinematics",
    "body_poses": "urdf_dyn.algorithms.kinematics", "integrate": "urdf_dyn.algorithms.configuration",
    "difference": "urdf_dyn.algorithms.configuration", "qdot": "urdf_dyn.algorithms.configuration",
    "normalize": "urdf_dyn.algorithms.configuration",
    # package paths and recordings (the viewer's too)
    "PackageResolver": "urdf_dyn.io.packages", "write_mcap": "urdf_dyn.io.mcap", "read_mcap": "urdf_dyn.io.mcap",
    # closed loops: constraints, forward and inverse dynamics, motions, actuators
    "loop_constraints": "urdf_dyn.constraints.loops", "loop_residuals": "urdf_dyn.constraints.loops",
    "mobility": "urdf_dyn.constraints.loops", "ConstraintWarning": "urdf_dyn.constraints.loops",
    "LoopState": "urdf_dyn.constraints.loops",
    "constrained_forward_dynamics": "urdf_dyn.constraints.forward",
    "explicit_constraint": "urdf_dyn.constraints.explicit",
    "assemble": "urdf_dyn.constraints.assembly", "project_velocity": "urdf_dyn.constraints.assembly",
    "passive_forces": "urdf_dyn.constraints.passive", "constrained_inverse_dynamics": "urdf_dyn.constraints.inverse",
    "actuator_forces": "urdf_dyn.constraints.inverse", "actuators_of": "urdf_dyn.constraints.inverse",
    "ActuationWarning": "urdf_dyn.constraints.inverse", "ActuationPlan": "urdf_dyn.constraints.inverse",
    "consistent_motion": "urdf_dyn.constraints.motion", "CoordinateMotion": "urdf_dyn.constraints.motion",
    # simulation
    "simulate": "urdf_dyn.simulation.simulate", "SimulateOptions": "urdf_dyn.simulation.options",
    "Trajectory": "urdf_dyn.simulation.simulate",
    "ZeroTorque": "urdf_dyn.simulation.controllers", "Constant": "urdf_dyn.simulation.controllers",
    "GravityCompensation": "urdf_dyn.simulation.controllers", "ComputedTorque": "urdf_dyn.simulation.controllers",
    "SplineTrajectory": "urdf_dyn.simulation.trajectories", "QuinticTrajectory": "urdf_dyn.simulation.trajectories",
    "spline_motion": "urdf_dyn.simulation.trajectories", "csv_motion": "urdf_dyn.simulation.trajectories",
    # scenarios
    "run_scenario": "urdf_dyn.launch.registry",
    # errors and warnings
    "UrdfDynError": "urdf_dyn.errors", "ModelError": "urdf_dyn.errors", "ModelWarning": "urdf_dyn.errors",
    "XMLError": "urdf_dyn.errors", "XacroError": "urdf_dyn.errors", "PackageNotFoundError": "urdf_dyn.errors",
    "UnsupportedError": "urdf_dyn.errors", "StateError": "urdf_dyn.errors", "ScenarioError": "urdf_dyn.errors",
    "SimulationError": "urdf_dyn.errors",
}

__all__ = list(_EXPORTS)



def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        if name.startswith("__") or importlib.util.find_spec(f"{__name__}.{name}") is not None:
            # a probe of the interpreter or a library (pickle, numba), or of a submodule not imported yet
            # (``from urdf_dyn import kept_store`` asks first): not a deprecated name
            raise AttributeError(f"module 'urdf_dyn' has no attribute {name!r}")
        from urdf_dyn._deprecated import deprecated_getattr     # old names: a FutureWarning, one release
        return deprecated_getattr(__name__, stacklevel=3)(name)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
