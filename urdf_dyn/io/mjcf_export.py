"""Model → MJCF (MuJoCo), loops included, built with MuJoCo's ``MjSpec`` (the ``[mujoco]`` extra).

- Each tree body becomes a ``<body>`` placed at the configuration ``q_ref`` (default: the assembled
  ``<initial_configuration>``), with its joint (``hinge``/``slide``; ``ref`` = q_ref, so MuJoCo's qpos equals
  urdf_dyn's q) and its inertia (``fullinertia`` about the centre of mass, the same spatial inertia). The
  root link is a static body of the same name; fixed-joint links are already merged into their bodies.
- Loop joints: ``spherical`` → one ``connect`` equality at Fp; ``revolute``/``continuous`` → two ``connect``
  equalities at Fp ± ``connect_spacing``·axis (a ball is not enough: two points on the axis remove 5
  freedoms, the sixth equation is redundant, as MuJoCo's solver allows); ``fixed`` → ``weld``. Other loop
  types have no MuJoCo equality and raise UnsupportedError.
- ``<mimic>`` → ``joint`` equality (polycoef with MuJoCo's ref offsets); a URDF+ ``<coupling>`` (Σ c_j q_j =
  offset) → a fixed tendon and a ``tendon`` equality on it.
- Actuated tree joints (``model.actuated_joints``) → ``motor`` actuators (gear 1, ctrlrange ± effort limit);
  fixed-tendon transmissions (``Transmission.coefficients``) → a fixed ``<tendon>`` and a motor on it.
- Soft constraints: equalities get ``solref``/``solimp`` (default (0.0002, 1) and (0.9999, 0.9999, 0.001):
  stiff; MuJoCo's accelerations then approach the exact closed-loop ones, see tests/test_mjcf.py).
- Bodies with zero mass or inertia (massless links of ball joints, point masses) are bounded by MuJoCo's
  ``boundmass``/``boundinertia`` (1e-9 kg, 1e-12 kg m²), which changes H by at most that much.
"""
from __future__ import annotations

import numpy as np
from numpy.polynomial import Polynomial

from urdf_dyn.algorithms.kinematics import body_poses
from urdf_dyn.errors import UnsupportedError
from urdf_dyn.io.files import atomic_path
from urdf_dyn.io.mjcf import require_mujoco

__all__ = ["to_mjspec", "export_mjcf", "check_soft"]

_JTYPE = {"revolute": "mjJNT_HINGE", "continuous": "mjJNT_HINGE", "prismatic": "mjJNT_SLIDE"}


def _quat(R):
    from scipy.spatial.transform import Rotation
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return [w, x, y, z]


def _set_coef(joint, attr, value):
    """Set a joint's damping or stiffness: a scalar (MuJoCo 3) or the linear coefficient of MuJoCo 4's
    polynomial (the higher coefficients stay 0)."""
    if np.ndim(getattr(joint, attr)):
        coef = np.zeros(np.shape(getattr(joint, attr)))
        coef[0] = value
        setattr(joint, attr, coef)
    else:
        setattr(joint, attr, float(value))


def _inertia(I6):
    """mass, centre of mass c (3,), rotational inertia about c (3×3) of a 6×6 spatial inertia (RBDA eq. 2.63)."""
    m = I6[3, 3]
    if m <= 0:  # a massless rotor: rotational inertia only
        return 0.0, np.zeros(3), np.array(I6[:3, :3])
    S = I6[:3, 3:] / m  # = skew(c)
    c = np.array([S[2, 1], S[0, 2], S[1, 0]])
    Cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    return m, c, I6[:3, :3] - m * Cx @ Cx.T


def check_soft(solref, solimp, timestep):
    """``solref`` (2 finite numbers, both > 0: timeconst [s], dampratio; or both <= 0: −stiffness, −damping,
    MuJoCo's "direct" form), ``solimp`` (3 finite numbers, d0 and d_width in (0, 1), width > 0) and
    ``timestep`` (finite, > 0) as MuJoCo reads them (mujoco.readthedocs.io, "Solver parameters"); raises
    ValueError naming the argument: MuJoCo itself writes NaN as no value and inf as 0."""
    import math
    for name, v, n in (("solref", solref, 2), ("solimp", solimp, 3), ("timestep", [timestep], 1)):
        try:
            vals = [float(x) for x in v]
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected {n} numbers, got {v!r}") from None
        if len(vals) != n or not all(math.isfinite(x) for x in vals):
            raise ValueError(f"{name}: expected {n} finite numbers, got {v!r}")
    r = [float(x) for x in solref]
    if not (min(r) > 0 or max(r) <= 0) or r == [0.0, 0.0]:
        raise ValueError(f"solref {tuple(r)}: give timeconst, dampratio both > 0 (or −stiffness, −damping both "
                         "<= 0)")
    d0, dw, w = (float(x) for x in solimp)
    if not (0 < d0 < 1 and 0 < dw < 1 and w > 0):
        raise ValueError(f"solimp {tuple(solimp)}: need 0 < d0 < 1, 0 < d_width < 1, width > 0")
    if not float(timestep) > 0:
        raise ValueError(f"timestep {timestep!r}: must be > 0")


def to_mjspec(model, q_ref=None, solref=(0.0002, 1.0), solimp=(0.9999, 0.9999, 0.001), connect_spacing=0.1,
              timestep=0.001):
    """Build an ``mujoco.MjSpec`` of ``model`` (see the module docstring).

    Args:
        model: a urdf_dyn Model.
        q_ref: (nv,) configuration the bodies are placed at and the joints' ``ref`` (default ``q_initial()``;
            it must close the loops, since MuJoCo takes connect/weld anchors from it).
        solref, solimp: MuJoCo soft-constraint parameters of the equalities (timeconst [s], dampratio; solimp).
        connect_spacing: [m] half-distance between the two ``connect`` points of a revolute loop.
        timestep: [s] ``<option timestep>``.

    Returns:
        The MjSpec (``spec.compile()`` gives the mjModel, ``spec.to_xml()`` the MJCF).

    Raises:
        ValueError for a ``solref``, ``solimp`` or ``timestep`` MuJoCo cannot use (``check_soft``);
        ModelError if MuJoCo is not installed; UnsupportedError for loop types MuJoCo cannot express
        (prismatic, cylindrical, universal, planar loops; actuated loop joints) and, not yet written, for
        floating and planar tree joints.
    """
    check_soft(solref, solimp, timestep)
    if not model.is_fixed_base:
        bad = sorted({t for t in model.joint_types if t in ("floating", "planar")})
        raise UnsupportedError(f"MJCF export of {' and '.join(bad)} joints is not implemented yet (a floating "
                               "joint would be a <freejoint>)", file=model.source)
    mujoco = require_mujoco("MJCF export")
    q_ref = model.q_initial() if q_ref is None else np.asarray(q_ref, float)
    T_world = body_poses(model, q_ref[None, :])[0]
    spec = mujoco.MjSpec()
    spec.modelname = model.name
    spec.compiler.fusestatic = False
    spec.compiler.degree = False  # ref and range are in radians (MJCF defaults to degrees)
    spec.compiler.boundmass = 1e-9
    spec.compiler.boundinertia = 1e-12
    spec.option.gravity = np.asarray(model.gravity, float)
    spec.option.timestep = timestep
    bodies = {}

    def add(parent, i, T_rel):
        name = model.body_names[i] if (i or model.body_names[0] != "world") else "world__root"  # MuJoCo's own
        b = parent.add_body(name=name, pos=T_rel[:3, 3], quat=_quat(T_rel[:3, :3]))
        m, c, Ic = _inertia(np.asarray(model.I[i]))
        b.explicitinertial = True
        b.mass = m
        b.ipos = c
        b.fullinertia = [Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2]]
        return b

    bodies[0] = add(spec.worldbody, 0, np.eye(4))
    for i in range(1, model.NB + 1):
        p = int(model.parent[i])
        jt = model.joint_types[i - 1]
        b = add(bodies[p], i, np.linalg.inv(T_world[p]) @ T_world[i])
        j = b.add_joint(name=model.joint_names[i - 1], type=getattr(mujoco.mjtJoint, _JTYPE[jt]),
                        axis=np.asarray(model.axis[i], float), ref=float(q_ref[i - 1]))
        lo, up = float(model.lower[i - 1]), float(model.upper[i - 1])
        if np.isfinite(lo) and np.isfinite(up) and jt != "continuous":
            j.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            j.range = [lo, up]
        else:
            j.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        _set_coef(j, "damping", model.damping[i - 1])
        j.frictionloss = float(model.friction[i - 1])
        if model.spring_stiffness is not None and model.spring_stiffness[i - 1]:
            _set_coef(j, "stiffness", model.spring_stiffness[i - 1])
            j.springref = float(model.spring_reference[i - 1])
        bodies[i] = b

    def equality(kind, name, b1, b2, data=None):
        e = spec.add_equality(name=name, type=getattr(mujoco.mjtEq, kind), objtype=mujoco.mjtObj.mjOBJ_BODY,
                              name1=model.body_names[b1], name2=model.body_names[b2])
        if data is not None:
            d = np.array(e.data)
            d[:len(data)] = data
            e.data = d
        e.solref, e.solimp = list(solref), list(solimp) + [0.5, 2.0]
        return e

    for lp in model.loops:
        if lp.actuated:
            raise UnsupportedError(f"loop {lp.name!r} is actuated: MuJoCo equalities cannot carry an actuator; "
                                   "cut the mechanism at a passive joint", file=model.source)
        TP = np.asarray(lp.T_P)
        if lp.type == "spherical":
            equality("mjEQ_CONNECT", lp.name, lp.p, lp.s, TP[:3, 3])
        elif lp.type in ("revolute", "continuous"):
            a = TP[:3, :3] @ np.asarray(lp.axis)  # the axis in the predecessor body frame
            for k, sgn in (("a", 1.0), ("b", -1.0)):
                equality("mjEQ_CONNECT", f"{lp.name}_{k}", lp.p, lp.s, TP[:3, 3] + sgn * connect_spacing * a)
        elif lp.type == "fixed":
            T_rel = np.linalg.inv(T_world[lp.p]) @ T_world[lp.s]  # successor in predecessor at q_ref
            equality("mjEQ_WELD", lp.name, lp.p, lp.s, np.r_[np.zeros(3), T_rel[:3, 3], _quat(T_rel[:3, :3]), 1.0])
        else:
            raise UnsupportedError(f"loop {lp.name!r} of type {lp.type!r} has no MuJoCo equality (connect: "
                                   "spherical, revolute; weld: fixed)", file=model.source)
    for mm in model.mimic:
        f, ld = model.joint_index(mm.joint), model.joint_index(mm.leader)
        # MuJoCo's polycoef is about qpos0 = q_ref: p(q_ref[ld] + x) − q_ref[f] as a polynomial in x
        c = (Polynomial([mm.offset, mm.multiplier, *mm.poly])(Polynomial([q_ref[ld], 1.0]))).coef
        c = np.r_[c, np.zeros(5)][:5]
        c[0] -= q_ref[f]
        e = spec.add_equality(name=f"mimic_{mm.joint}", type=mujoco.mjtEq.mjEQ_JOINT,
                              objtype=mujoco.mjtObj.mjOBJ_JOINT, name1=mm.joint, name2=mm.leader)
        d = np.zeros(len(e.data))
        d[:5] = c
        e.data = d
        e.solref, e.solimp = list(solref), list(solimp) + [0.5, 2.0]
    for cp in model.couplings:  # Σ c_j q_j = offset: a fixed tendon, and L − L₀ = offset − Σ c_j q_ref_j on it
        ten = spec.add_tendon(name=f"coupling_{cp.name}")
        for jn, c in cp.coefficients:
            ten.wrap_joint(jn, c)
        e = spec.add_equality(name=f"coupling_{cp.name}", type=mujoco.mjtEq.mjEQ_TENDON,
                              objtype=mujoco.mjtObj.mjOBJ_TENDON, name1=f"coupling_{cp.name}")
        d = np.zeros(len(e.data))
        d[0] = cp.offset - sum(c * q_ref[model.joint_index(jn)] for jn, c in cp.coefficients)
        e.data = d
        e.solref, e.solimp = list(solref), list(solimp) + [0.5, 2.0]
    for jn in model.actuated_joints:
        k = model.joint_index(jn)
        act = spec.add_actuator(name=jn, target=jn, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_motor()
        eff = float(model.effort_limit[k])
        if np.isfinite(eff):
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.ctrlrange = [-eff, eff]
    for t in model.transmissions:  # a fixed-tendon transmission: MuJoCo's fixed tendon and a motor on it
        if t.coefficients:
            ten = spec.add_tendon(name=t.name)
            for jn, c in zip(t.joints, t.coefficients):
                ten.wrap_joint(jn, c)
            spec.add_actuator(name=t.name, target=t.name, trntype=mujoco.mjtTrn.mjTRN_TENDON).set_to_motor()
    return spec


def export_mjcf(model, path, **kw):
    """Write ``model`` as an MJCF file (``to_mjspec`` options in ``kw``); returns the compiled ``mjModel``.

    Raises the errors of ``to_mjspec``; the file is written atomically.
    """
    spec = to_mjspec(model, **kw)
    mj = spec.compile()
    xml = spec.to_xml()
    with atomic_path(path) as tmp:
        with open(tmp, "w") as f:
            f.write(xml)
    return mj
