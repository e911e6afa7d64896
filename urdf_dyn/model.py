"""The immutable Model and its per-evaluation workspace Data: a kinematic tree in Featherstone's numbering (RBDA §4.1–4.2).

Bodies are numbered 1..NB so that the parent λ(i) < i; body 0 is the URDF root link (fixed base). Each
body i is the child link of one movable URDF joint i (revolute, continuous or prismatic) and carries the
inertia of every link attached to it by ``fixed`` joints. Every URDF link stays addressable through
``model.links[name]`` as (body, pose of the link frame in the body frame).

Arrays are indexed by body, length NB+1 with entry 0 for the base; velocity-space vectors (q̇, q̈, τ, limits)
have length nv = NB and follow ``model.joint_names``. A floating (free-flyer) or planar joint is NB = 6 or 3
kernel bodies, one per velocity coordinate (``algorithms.joints``), named ``<joint>.x, .y, .z, .rx, .ry,
.rz`` (floating) or ``<joint>.x, .y, .rz`` (planar) in ``joint_names``. Positions q have nq ≥ nv entries named
by ``model.q_names``: a floating joint's are (x, y, z, qx, qy, qz, qw) — position [m] of the child link in
the parent frame and its orientation as a unit quaternion, Pinocchio's layout — so nq = nv + 1 per floating
joint; ``model.neutral()`` is the zero configuration. Algorithms never mutate a Model: its arrays are
read-only, and derived models (e.g. with a payload) are new objects.
"""
from __future__ import annotations

import dataclasses
import functools
import threading
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import numpy as np

from urdf_dyn.algorithms.joints import BALL as _BALL, FREE as _FREE, PLANAR as _PLANAR, PRISMATIC, SUB_P, q_indices
from urdf_dyn.algorithms.layout import LOOP_ARGS, LOOPS
from urdf_dyn.algorithms.spatial import mcI, pose_to_plux
from urdf_dyn.elements import Coupling, LinkFrame, LoopJoint, Mimic, Transmission

__all__ = ["LinkFrame", "Mimic", "Transmission", "LoopJoint", "Model", "Data", "Coupling", "default_data"]


def frozen(a, dtype=float):
    """A read-only copy of ``a`` as ``dtype``: the Model's arrays are immutable (numba compiles one variant
    per writability, and algorithms must never mutate the model)."""
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Model:
    """A fixed-base kinematic tree ready for the dynamics algorithms.

    Attributes (NB bodies, nv = NB joint coordinates):
        name: robot name from ``<robot name>``.
        source: file the model came from (or ``"<string>"``); ``urdf_xml``: the expanded URDF text.
        parent: (NB+1,) int, λ(i) with parent[0] = -1.
        jtype: (NB+1,) int jcalc type codes (see ``joints.py``), jtype[0] = -1.
        axis: (NB+1, 3) unit joint axes in the joint frames.
        X_tree: (NB+1, 6, 6) Plücker transforms from parent body frame to joint frame (RBDA §4.2).
        T_tree: (NB+1, 4, 4) the same as homogeneous poses (joint frame in parent body frame).
        I: (NB+1, 6, 6) spatial inertias in body frames [kg, kg m, kg m²] (fixed-joint links merged).
        body_names: (NB+1,) the URDF link each body is; joint_names: (NB,) the order of q.
        joint_types: (NB,) URDF joint types.
        lower, upper [rad or m], velocity_limit [rad/s or m/s], effort_limit [N m or N]: (NB,) arrays,
            ±inf where the URDF gives none.
        damping [N m s/rad or N s/m], friction [N m or N]: (NB,) from ``<dynamics>``.
        gravity: (3,) [m/s²] in the base frame, default (0, 0, -9.81) (REP-103, z up).
        links: mapping link name -> LinkFrame; link_masses: link name -> mass [kg].
        mimic, transmissions: parsed ``<mimic>`` and ``<transmission>`` / ``<ros2_control>`` elements.
        couplings: URDF+ ``<coupling>`` elements (``Coupling``), linear joint constraints like mimic.
        loops: LoopJoint tuple (``<loop>`` elements); independent: joints marked ``independent="true"``
            (URDF+), preferred as independent coordinates; initial_configuration: {joint: value} of the
            assembled pose that picks the branch; spring_stiffness/spring_reference: (NB,) joint springs
            τ = −k (q − q_ref) from Gazebo ``<springStiffness>``/``<springReference>``.
        balancers: force elements between two pins (``algorithms.force_elements.Balancer``: gas and coil
            springs), from ``<balancer>`` elements or a scenario; passive forces (``constraints.passive``).
        armature: (nv,) [kg m² for a rotation, kg for a translation] the joint's armature: a rotor's inertia
            reflected through its gearbox (G² J_m), added to the diagonal of the joint-space inertia, H +
            diag(armature), by every algorithm (MuJoCo's joint ``armature``, Pinocchio's ``model.armature``,
            Drake's reflected rotor inertia). From URDF ``<dynamics armature>`` (urdf_dyn's extension) or a
            transmission's ``drake:rotor_inertia`` × ``drake:gear_ratio``²; zeros by default.
    """
    name: str
    source: str
    urdf_xml: str
    parent: np.ndarray
    jtype: np.ndarray
    axis: np.ndarray
    X_tree: np.ndarray
    T_tree: np.ndarray
    I: np.ndarray
    body_names: tuple
    joint_names: tuple
    joint_types: tuple
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    gravity: np.ndarray
    links: Mapping = field(default_factory=dict)
    link_masses: Mapping = field(default_factory=dict)
    mimic: tuple = ()
    transmissions: tuple = ()
    loops: tuple = ()
    package_dirs: tuple = ()
    independent: tuple = ()
    initial_configuration: Mapping = field(default_factory=dict)
    spring_stiffness: np.ndarray = None
    spring_reference: np.ndarray = None
    couplings: tuple = ()
    armature: np.ndarray = None
    #: the file lists every actuator (MJCF): no transmission means nothing actuated, not URDF's "all joints".
    actuators_declared: bool = False
    balancers: tuple = ()

    def __post_init__(self):
        """Armature: zeros (nv,) when none is given, read-only as every array of the Model; raises ValueError
        for one of another length, negative or not finite."""
        nv = len(self.parent) - 1
        arm = np.zeros(nv) if self.armature is None else np.asarray(self.armature, float)
        if arm.shape != (nv,) or not np.all(np.isfinite(arm)) or np.any(arm < 0):
            raise ValueError(f"{self.name}: armature must be {nv} finite values ≥ 0 [kg m² | kg], one per "
                             f"velocity coordinate; got {np.array2string(arm, threshold=8)}")
        if not isinstance(self.armature, np.ndarray) or self.armature.flags.writeable or self.armature.dtype != float:
            object.__setattr__(self, "armature", frozen(arm))

    @property
    def nc(self) -> int:
        """Total number of constraint equations n^c (before rank reduction), mimic and coupling rows included."""
        return sum(lp.nc for lp in self.loops) + len(self.mimic) + len(self.couplings)

    @functools.cached_property
    def has_damped_loops(self) -> bool:
        """True when a loop joint has damping (its passive force needs the loop Jacobian, formed in Python:
        ``constraints.loops.compiled_covers``)."""
        return any(lp.damping > 0 for lp in self.loops)

    @property
    def has_constraints(self) -> bool:
        """True when the model has loop joints, mimic or URDF+ couplings (closed-loop algorithms apply)."""
        return bool(self.loops or self.mimic or self.couplings)

    def q_initial(self) -> np.ndarray:
        """q (nq,) of ``<initial_configuration>`` (``neutral()`` for the joints it does not name)."""
        q = self.neutral()
        for j, v in self.initial_configuration.items():
            q[self.q_index(j)] = v
        return q

    def neutral(self) -> np.ndarray:
        """The zero configuration q (nq,): zeros, with the identity quaternion (0, 0, 0, 1) of every
        floating and ball joint (Pinocchio's ``neutral``)."""
        q = np.zeros(self.nq)
        for kind, k, _, _ in self.multi_dof_joints:
            if kind != "planar":
                q[k + (6 if kind == "floating" else 3)] = 1.0
        return q

    @functools.cached_property
    def multi_dof_joints(self) -> tuple:
        """The floating, planar and ball joints: ((kind "floating" | "planar" | "ball", index of the first
        position in q, index of the first velocity in v, joint name), ...) in tree order."""
        kinds = {_FREE: "floating", _PLANAR: "planar", _BALL: "ball"}
        return tuple((kinds[int(self.jtype[i])], int(self.iq[i]), i - 1, self.joint_names[i - 1].rsplit(".", 1)[0])
                     for i in range(1, self.NB + 1) if int(self.jtype[i]) in kinds)

    @functools.cached_property
    def quaternions(self) -> tuple:
        """((index in q of qx, kind "floating" | "ball", joint name), ...): every quaternion (x, y, z, w) =
        q[k:k + 4] of the configuration, in tree order."""
        return tuple((k + (3 if kind == "floating" else 0), kind, name)
                     for kind, k, _, name in self.multi_dof_joints if kind != "planar")

    @functools.cached_property
    def one_dof_indices(self) -> tuple:
        """(q indices (k,), v indices (k,)) of the 1-dof joints, whose position and velocity are q[i] and
        v[j] with q̇ = v (every joint on a fixed-base model)."""
        rows = [i for i in range(1, self.NB + 1) if self.iq[i] >= 0 and int(self.jtype[i]) not in (_FREE, _PLANAR, _BALL)]
        return frozen(np.asarray(self.iq)[rows], np.int64), frozen(np.asarray(rows, int) - 1, np.int64)

    @functools.cached_property
    def is_fixed_base(self) -> bool:
        """True when every tree joint has one degree of freedom (nq = nv, q̇ = v): no floating, planar or ball
        joint."""
        return not self.multi_dof_joints

    @functools.cached_property
    def iq(self) -> np.ndarray:
        """(NB+1,) index in q of each body's first position coordinate; −1 for the base and for the
        sub-bodies of a multi-dof joint (``algorithms.joints.q_indices``)."""
        return frozen(q_indices(np.asarray(self.jtype, np.int64)), np.int64)

    @functools.cached_property
    def q_names(self) -> tuple:
        """(nq,) names of the position coordinates: the joint names for 1-dof joints, ``<joint>.x … .qw``
        for a floating joint, ``<joint>.qx … .qw`` for a ball joint, ``<joint>.x, .y, .rz`` for a planar joint."""
        out = []
        for i in range(1, self.NB + 1):
            t, name = int(self.jtype[i]), self.joint_names[i - 1]
            base = name.rsplit(".", 1)[0]
            if t == _FREE:
                out += [f"{base}.{c}" for c in ("x", "y", "z", "qx", "qy", "qz", "qw")]
            elif t == _BALL:
                out += [f"{base}.{c}" for c in ("qx", "qy", "qz", "qw")]
            elif t == _PLANAR:
                out += [f"{base}.{c}" for c in ("x", "y", "rz")]
            elif self.iq[i] >= 0:
                out.append(name)
        return tuple(out)

    @functools.cached_property
    def is_linear(self) -> np.ndarray:
        """(nv,) bool: True where the velocity coordinate is a translation (m/s; force in N), False for a
        rotation (rad/s; N m) — prismatic joints and the linear coordinates of floating and planar joints."""
        return frozen(np.isin(np.asarray(self.jtype[1:]), (PRISMATIC, _FREE, _PLANAR, SUB_P)), bool)

    @functools.cached_property
    def q_units(self) -> tuple:
        """(nq,) unit of each position coordinate (``q_names``): "m", "rad", or "1" for quaternion components."""
        out = []
        for i in range(1, self.NB + 1):
            t = int(self.jtype[i])
            if t == _FREE:
                out += ["m"] * 3 + ["1"] * 4
            elif t == _BALL:
                out += ["1"] * 4
            elif t == _PLANAR:
                out += ["m", "m", "rad"]
            elif self.iq[i] >= 0:
                out.append("m" if self.is_linear[i - 1] else "rad")
        return tuple(out)

    def q_index(self, name: str) -> int:
        """Index in q of 1-dof joint ``name`` (equals ``joint_index`` on a fixed-base model). Raises
        KeyError naming the known joints."""
        i = self.joint_index(name)
        k = int(self.iq[i + 1])
        if k < 0 or int(self.jtype[i + 1]) in (_FREE, _PLANAR, _BALL):
            raise KeyError(f"{name!r} is a coordinate of a multi-dof joint; its position is q[{self.iq[i + 1]}...]")
        return k

    # -- sizes -----------------------------------------------------------------------------------------
    @functools.cached_property
    def NB(self) -> int:
        """Number of moving bodies."""
        return len(self.parent) - 1

    @functools.cached_property
    def nq(self) -> int:
        """Number of joint positions: nv plus one per floating or ball joint (its quaternion)."""
        return self.NB + sum(kind != "planar" for kind, *_ in self.multi_dof_joints)

    @functools.cached_property
    def nv(self) -> int:
        """Number of joint velocities: one per kernel body."""
        return self.NB

    @property
    def link_names(self) -> tuple:
        return tuple(self.links.keys())

    @property
    def total_mass(self) -> float:
        """Total mass [kg] of all links, the root link included."""
        return float(sum(self.link_masses.values()))

    @property
    def a_grav(self) -> np.ndarray:
        """Spatial gravitational acceleration ``[0; g]`` (6,) in base coordinates (RBDA §5.3)."""
        a = np.zeros(6)
        a[3:] = self.gravity
        return a

    @property
    def actuated_joints(self) -> tuple:
        """Tree joints driven on their own by a ``<transmission>`` (a fixed-tendon transmission's joints are
        not: its one actuator drives them together, ``Transmission.coefficients``); if the file declares no
        transmission, every tree joint except the coordinates of a floating joint (a free-flying base is not
        driven) and the joints ``undriven_joints`` names (mimic followers, passive loop joints) — unless
        ``actuators_declared`` (an MJCF file without actuators): then none."""
        if not self.transmissions:
            if self.actuators_declared:
                return ()
            skip = self.undriven_joints
            return tuple(j for j, t in zip(self.joint_names, self.joint_types) if t != "floating" and j not in skip)
        named = {j for t in self.transmissions if not t.coefficients for j in t.joints}
        return tuple(j for j in self.joint_names if j in named)

    @functools.cached_property
    def undriven_joints(self) -> Mapping:
        """{joint: why} the tree joints that carry no actuator when the file has no ``<transmission>``: a
        ``<mimic>`` follower is driven through its leader ("mimic follower of L"); on a model whose file
        marks joints ``independent``, a joint on a loop's closed chain (the paths from the loop's predecessor
        and successor bodies up to their nearest common ancestor, RBDA §8.1) that is not independent is a
        passive pin ("passive joint of loop K")."""
        out = {m.joint: f"mimic follower of {m.leader}" for m in self.mimic}
        if self.loops and self.independent:
            for lp in self.loops:
                for j in self.loop_chain(lp):
                    if j not in self.independent and self.joint_types[self.joint_index(j)] != "floating":
                        out.setdefault(j, f"passive joint of loop {lp.name}")
        return MappingProxyType(out)

    def loop_chain(self, lp) -> tuple:
        """The tree joints on the closed chain of loop joint ``lp``: from its predecessor and successor bodies
        up to their nearest common ancestor (RBDA §8.1)."""
        a, b, out = int(lp.p), int(lp.s), []
        while a != b:                       # λ(i) < i: the larger index is the deeper body
            i = max(a, b)
            out.append(self.joint_names[i - 1])
            a, b = (int(self.parent[a]), b) if a > b else (a, int(self.parent[b]))
        return tuple(out)

    def joint_index(self, name: str) -> int:
        """Index of tree joint ``name`` in q. Raises KeyError naming the known joints."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"no movable joint named {name!r}; joints are: {', '.join(self.joint_names)}") from None

    def link(self, name: str) -> LinkFrame:
        """The LinkFrame of link ``name``. Raises KeyError naming the known links."""
        try:
            return self.links[name]
        except KeyError:
            raise KeyError(f"no link named {name!r}; links are: {', '.join(self.links)}") from None

    # -- packed arrays for the compiled kernels (computed once per Model, on first use) -------------------
    @functools.cached_property
    def a0(self) -> np.ndarray:
        """−a_grav (6,): the fictitious base acceleration RNEA and ABA start from (RBDA §5.3)."""
        return frozen(-self.a_grav)

    @functools.cached_property
    def kernel_pack(self) -> tuple:
        """(ib, fb): the tree packed into one int64 and one float64 array for the compiled kernels as
        ``algorithms.layout.TREE`` declares them (``TREE.views(ib, fb, {"n": NB + 1})`` names the parts), every
        1-dof body in a frame whose z axis is its joint axis (``algorithms._kernels.pack``), the joint armature
        included, so that a single call passes two model arguments, not ten."""
        from urdf_dyn.algorithms._calls import pack
        ib, fb = pack(self.parent, self.jtype, self.axis, self.X_tree, self.I, self.a0, self.armature)
        return frozen(ib, np.int64), frozen(fb)

    @functools.cached_property
    def kernel_single(self) -> tuple:
        """((nv,), (nv, nv), ib, fb): what one single-state call of a tree function needs, in one lookup (the
        shapes its plain-array fast path allocates, and ``kernel_pack``; the compiled entry checks the sizes)."""
        return (self.nv,), (self.nv, self.nv), *self.kernel_pack

    @functools.cached_property
    def f_ext_zero(self) -> np.ndarray:
        """(1, NB+1, 6) zeros: 'no external forces' for the kernels."""
        return frozen(np.zeros((1, self.NB + 1, 6)))

    @functools.cached_property
    def loop_pack(self):
        """The loop joints laid out for the compiled loop kernels (``constraints._kernels``) as
        ``algorithms.layout.LOOPS`` declares them (one int64 and one float64 array, read-only views by name),
        or None when a loop is universal (its T depends on the configuration): a mapping with p, s (L,) body
        indices; XP, XS (L, 6, 6); axis (L, 3); mode (L,) 0 = rotation error a × (R a) (joints turning about
        a), 1 = rotation vector; row_loop (R,) the loop of each constraint row; row_T (R, 6) its direction in
        Fp; labels (R,) ``"<loop>[c]"``; args: the eight arrays in the kernels' argument order (``LOOP_ARGS``)."""
        if any(lp.type == "universal" for lp in self.loops):
            return None
        rows, row_T, labels = [], [], []
        for i, lp in enumerate(self.loops):
            for c in range(lp.nc):
                rows.append(i)
                row_T.append(np.asarray(lp.T)[:, c])
                labels.append(f"{lp.name}[{c}]")
        lps = self.loops
        sizes = {"L": len(lps), "R": len(rows)}
        views = LOOPS.views(*LOOPS.pack(dict(
            p=[lp.p for lp in lps], s=[lp.s for lp in lps],
            mode=[0 if lp.type in ("revolute", "continuous", "cylindrical", "planar") else 1 for lp in lps],
            row_loop=rows, XP=[lp.X_P for lp in lps], XS=[lp.X_S for lp in lps], axis=[lp.axis for lp in lps],
            row_T=row_T), sizes), sizes)
        return MappingProxyType({**views, "labels": tuple(labels), "args": tuple(views[k] for k in LOOP_ARGS)})

    @functools.cached_property
    def thread_data(self) -> threading.local:
        """Per-thread holder of the ``Data`` that single-state calls use when given none (``default_data``):
        the workspaces are the Data's, never the Model's own description."""
        return threading.local()

    def __getstate__(self):
        """Pickled (e.g. sent to a sweep's worker) without the per-thread workspaces (``thread_data``)."""
        state = dict(self.__dict__)
        state.pop("thread_data", None)
        return state

    # -- derived models --------------------------------------------------------------------------------
    def with_gravity(self, gravity) -> "Model":
        """A copy with another gravity vector (3,) [m/s²]."""
        return dataclasses.replace(self, gravity=frozen(gravity))

    def with_payload(self, link: str, mass: float, com=(0.0, 0.0, 0.0), inertia=None) -> "Model":
        """A copy with a point or rigid payload added to ``link``: ``mass`` [kg] at ``com`` (3,) [m] in the
        link frame, rotational inertia ``inertia`` (3×3) [kg m²] about its centre of mass (default 0)."""
        lf = self.link(link)
        Ic = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, float)
        I_link = mcI(float(mass), np.asarray(com, float), Ic)
        X = pose_to_plux(np.ascontiguousarray(lf.T_body_link))  # body -> link
        I = np.array(self.I)
        I[lf.body] += X.T @ I_link @ X
        masses = dict(self.link_masses)
        masses[link] = masses.get(link, 0.0) + float(mass)
        return dataclasses.replace(self, I=frozen(I), link_masses=MappingProxyType(masses))


class Data:
    """Per-evaluation workspace of one Model (Pinocchio's Data, MuJoCo's mjData): what an algorithm may
    remember between calls on the same motion, never the model's own description.

    Attributes:
        model: the Model this workspace belongs to.
        loop_rows: (r,) int64 indices of a maximal independent set of loop-constraint rows, chosen by
            complete pivoting (RBDA §8.8) at the first state that needs it; None until then. Redundant
            rows (planar loops in 3-D) are dropped so that K_r H⁻¹ K_rᵀ is positive definite.
        independent_sets: {requested independent joint names (tuple) or None: (rows, dep, free)} the
            independent set of RBDA §8.8 chosen by complete pivoting at the first state of a motion and
            re-checked at every later one (``constraints.explicit.explicit_constraint``).
        workspaces: {key: workspace} what a single-state call prepares once and reuses at every later call
            with this Data (``workspace``): the compiled entry point, the packed model-side arguments and
            the work arrays, so that one state costs no packing and no allocation beyond its result.
    A Data serves one thread at a time (as Pinocchio's and MuJoCo's): give each thread its own.
    """

    def __init__(self, model: Model):
        self.model = model
        self.loop_rows = None
        self.independent_sets = {}
        self.workspaces = {}

    def workspace(self, key, make):
        """The workspace stored under ``key``, made by ``make()`` on first use (None: not applicable)."""
        try:
            return self.workspaces[key]
        except KeyError:
            w = self.workspaces[key] = make()
            return w


def default_data(model: Model) -> Data:
    """The Data a single-state call uses when the caller passes none: one per Model and thread (held by the
    Model's ``thread_data``), so that repeated calls reuse its workspaces without the caller managing one."""
    local = model.thread_data
    try:
        return local.data
    except AttributeError:
        local.data = Data(model)
        return local.data
