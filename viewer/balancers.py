"""The balancers of a model as the viewers draw them: each one a line between its two pins, labelled with
its name and force at the pose drawn.

A balancer (``model.balancers``: the gas and coil springs of ``urdf_dyn.algorithms.force_elements``,
declared as ``<balancer>`` in the URDF or ``robot.balancers`` in a scenario) holds its pins in the frames of
its two bodies (``Balancer.point_a`` in body ``body_a``, ``point_b`` in ``body_b``, [m]). The viewers pose
them from the body poses the scene already computed for the frame (``scene.RobotScene.body_T``: no second
kinematics), and take the force from the element's own law at that pin length (``Balancer.force``): the
force the dynamics applies at the frame's q (a run's actuator forces include it as a passive force), a few
microseconds a balancer. NumPy only (no OpenGL, no viser): shared by the window/GIF viewer (``gloverlay``,
``hud``) and the browser viewer (``webscene``, ``webapp``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from urdf_dyn import StateError

__all__ = ["BalancerState", "balancer_states", "balancer_label"]


@dataclass(frozen=True)
class BalancerState:
    """One balancer at one pose: ``name``; ``a``, ``b`` (3,) [m] its pins in the base frame (a on body
    ``body_a``, b on ``body_b``); ``length`` [m] their distance; ``force`` [N] the element's force, positive
    pushing the pins apart (NaN where a gas spring would be compressed to zero volume); ``action`` "push"
    or "pull"."""
    name: str
    a: np.ndarray
    b: np.ndarray
    length: float
    force: float
    action: str


def balancer_states(model, body_T):
    """[BalancerState] of ``model``'s balancers at the body poses ``body_T`` (NB+1, 4, 4) [m] (base frame;
    ``RobotScene.body_T``), in ``model.balancers``' order; [] for a model without balancers."""
    out = []
    for bal in model.balancers:
        Ta, Tb = body_T[bal.body_a], body_T[bal.body_b]
        a = Ta[:3, :3] @ np.asarray(bal.point_a, float) + Ta[:3, 3]
        b = Tb[:3, :3] @ np.asarray(bal.point_b, float) + Tb[:3, 3]
        L = float(np.linalg.norm(b - a))
        try:
            F = float(bal.force(L))
        except StateError:     # a gas spring compressed to zero volume: drawn, its force undefined
            F = math.nan
        out.append(BalancerState(bal.name, a, b, L, F, bal.action))
    return out


def balancer_label(s):
    """The label of a balancer drawn: its name and force as the force arrows are labelled ("name 1.23e+04 N"),
    or "name: bottomed out" where its force is undefined."""
    if not math.isfinite(s.force):
        return f"{s.name}: bottomed out"
    return f"{s.name} {s.force:.3g} N"
