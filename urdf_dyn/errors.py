"""The one error hierarchy of urdf_dyn. Every error a user can trigger with bad input is one of these.

    UrdfDynError
    ├── ModelError            a robot description is wrong (file, line, element and what is wrong)
    │   ├── XMLError          not well-formed XML, or unsafe XML (DOCTYPE/entities, too large)
    │   ├── XacroError        xacro failed to expand the file
    │   ├── PackageNotFoundError   a package:// URI or $(find pkg) could not be resolved
    │   └── UnsupportedError  valid URDF that urdf_dyn does not model (e.g. floating joints)
    ├── StateError (also ValueError)   a state array of the wrong shape, or NaN/inf
    ├── ScenarioError           a launch file is wrong
    └── SimulationError       a simulation stopped early; ``.trajectory`` keeps what was computed

    ModelWarning (a UserWarning): accepted but questionable input, e.g. an inertia that violates the
    triangle inequality (URDF tools accept those) or a transmission naming an unknown joint.
"""
from __future__ import annotations

__all__ = ["UrdfDynError", "ModelError", "XMLError", "XacroError", "PackageNotFoundError", "UnsupportedError",
           "ModelWarning", "StateError", "ScenarioError", "SimulationError"]


class UrdfDynError(Exception):
    """Base class of every error raised by urdf_dyn for bad input or failed runs."""


class ModelError(UrdfDynError):
    """A robot description is invalid. ``file``, ``line`` and ``element`` say where (when known)."""

    def __init__(self, message, file=None, line=None, element=None):
        self.file, self.line, self.element, self.reason = file, line, element, message
        where = ""
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        if element:
            where += f"{element}: "
        super().__init__(where + message)


class XMLError(ModelError):
    """Not well-formed XML, or XML refused for safety (DOCTYPE/entity declarations, size limit)."""


class XacroError(ModelError):
    """xacro could not expand the file."""


class PackageNotFoundError(ModelError):
    """A ``package://`` URI or ``$(find pkg)`` could not be resolved; the message lists the search path."""


class UnsupportedError(ModelError):
    """Valid input that urdf_dyn does not model (e.g. floating_base=True on an SDF or MJCF file)."""


class ModelWarning(UserWarning):
    """A robot description is accepted but questionable (e.g. an inertia violating the triangle
    inequality, a transmission naming an unknown joint). The message names file, line and element."""


class StateError(UrdfDynError, ValueError):
    """A state argument (q, qd, qdd, tau, ...) has the wrong shape or holds NaN/inf."""


class ScenarioError(UrdfDynError):
    """A scenario file is invalid: the message names the file and the key."""


class SimulationError(UrdfDynError):
    """A simulation stopped before its end. ``trajectory`` holds every sample computed until then."""

    def __init__(self, message, trajectory=None):
        super().__init__(message)
        self.trajectory = trajectory


from urdf_dyn._deprecated import deprecated_getattr  # noqa: E402 - the old names, with a FutureWarning

__getattr__ = deprecated_getattr(__name__)
