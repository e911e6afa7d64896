"""urdf_dyn: rigid-body dynamics of robots loaded from URDF (with loop closures), after Featherstone's
*Rigid Body Dynamics Algorithms* (RBDA)."""
from .dynamics import (bias_force, forward_dynamics, gravity_torques, inverse_dynamics, kinetic_energy,
                       mass_matrix, potential_energy)
from .errors import (LaunchError, ModelError, ModelWarning, PackageNotFoundError, SimulationError, StateError, UnsupportedError,
                     UrdfDynError, XacroError, XMLError)
from .kinematics import forward_kinematics, link_jacobian, link_pose
from .model import Model
from .urdf import load

__version__ = "0.1.0"
__all__ = [
    "load", "Model", "inverse_dynamics", "mass_matrix", "bias_force", "gravity_torques", "forward_dynamics",
    "kinetic_energy", "potential_energy", "forward_kinematics", "link_pose", "link_jacobian",
    "UrdfDynError", "ModelError", "ModelWarning", "XMLError", "XacroError", "PackageNotFoundError", "UnsupportedError",
    "StateError", "LaunchError", "SimulationError",
]
