"""The elements a description declares besides the tree (RBDA §8.1 loop joints, URDF ``<mimic>``,
``<transmission>``, URDF+ ``<coupling>``) and where each URDF link lives: frozen records that the readers
(``urdf_dyn.io``) build and the ``Model`` (``urdf_dyn.model``, which re-exports them) holds."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LinkFrame", "Mimic", "Transmission", "LoopJoint", "Coupling"]


@dataclass(frozen=True)
class LinkFrame:
    """Where a URDF link lives: ``body`` index and ``T_body_link`` (4×4), the link frame's pose in the body
    frame (identity unless the link hangs on fixed joints)."""
    body: int
    T_body_link: np.ndarray


@dataclass(frozen=True)
class Mimic:
    """A URDF ``<mimic>``: q[joint] = multiplier · q[leader] + offset (RBDA eq. 3.11, explicit form), plus
    ``poly`` = (c2, c3, c4) · (q[leader]², q[leader]³, q[leader]⁴) when urdf_dyn's ``polynomial`` attribute
    gives them (MuJoCo's joint equality ``polycoef``); then the row is nonlinear (``constraints.couplings``)."""
    joint: str
    leader: str
    multiplier: float = 1.0
    offset: float = 0.0
    poly: tuple = ()


@dataclass(frozen=True)
class Transmission:
    """A ROS ``<transmission>``: ``joints`` driven by an actuator with the given mechanical reduction."""
    name: str
    joints: tuple
    mechanical_reduction: float = 1.0
    #: ``"ros1"`` (``<transmission>``) or ``"ros2_control"`` (``<ros2_control>``/``<joint>``/``<param
    #: name="mechanical_reduction">``, or a ``<transmission>`` inside ``<ros2_control>``).
    source: str = "ros1"
    #: rotor (motor) inertia [kg m²] about its axis when the description gives one (``<actuator>
    #: <rotorInertia>`` or a ``rotor_inertia`` parameter), else None.
    rotor_inertia: float | None = None
    #: the actuator's name (``<actuator name>``), "" when not given.
    actuator: str = ""
    #: per joint, c_j of a fixed-tendon transmission (``<joint><coefficient>``, ``io.urdf_plus``): one actuator
    #: whose force u gives τ_j = c_j u; () when it drives each joint on its own.
    coefficients: tuple = ()


@dataclass(frozen=True)
class LoopJoint:
    """A loop-closing joint k between a predecessor body p and a successor body s (RBDA §8.1).

    ``X_P`` (6×6) is the Plücker transform from the predecessor BODY frame to the loop frame Fp, ``X_S``
    from the successor body frame to Fs (RBDA §8.1); ``T_P``, ``T_S`` the same as 4×4 poses of
    Fp, Fs in the body frames. ``S`` (6×m) spans the loop joint's motion freedom and ``T`` (6×n^c) its
    constraint-force subspace, orthonormal, with Tᵀ S = 0, both in Fp coordinates (RBDA §3.5, Table 8.1).
    ``axis`` (3,) in Fp (``axis2`` the second axis of a universal joint, in Fs). ``actuated``: an actuator
    acts along S (e.g. a hydraulic cylinder cut at its prismatic pair)."""
    name: str
    type: str
    predecessor: str
    successor: str
    p: int
    s: int
    T_P: np.ndarray
    T_S: np.ndarray
    X_P: np.ndarray
    X_S: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    S: np.ndarray
    T: np.ndarray
    actuated: bool = False
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    line: int = 0

    @property
    def nc(self) -> int:
        """Number of constraints n^c_k this loop joint imposes (6 − its degrees of freedom)."""
        return self.T.shape[1]


@dataclass(frozen=True)
class Coupling:
    """A URDF+ ``<coupling>`` (generalized_rbda's "rolling" constraint, e.g. a motor rotor geared to its
    link): with N = ``ratio`` and the movable tree joints on the paths from the nearest common ancestor
    (NCA) of the two links down to the predecessor and to the successor,

        N · Σ_{j ∈ NCA→predecessor} q_j − Σ_{j ∈ NCA→successor} q_j = 0,

    i.e. the successor (rotor) turns N times as far as the predecessor (link), both measured from the NCA.
    A linear constraint on q (RBDA eq. 3.11 in implicit form, K = constant row); ``coefficients`` holds
    it as ((joint name, coefficient), ...). ``line``: source line of the element. Type "linear" (no links,
    ratio 1): any constant row Σ c_j q_j = ``offset``, e.g. MuJoCo's equality between fixed tendons."""
    name: str
    type: str
    predecessor: str
    successor: str
    ratio: float
    coefficients: tuple
    line: int = 0
    #: the row's right-hand side b (``type="linear"``: Σ c_j q_j = offset; 0 for "rolling").
    offset: float = 0.0
