"""An independent closed-loop reference: Pinocchio's constraint dynamics with one point (3-D) contact per
``<loop>`` element, read from the URDF here — not from urdf_dyn's K and k.

RBDA §8.3: the closed-loop accelerations solve  H q̈ + C = τ + Kᵀλ,  K q̈ = k.  Here Pinocchio builds H, C,
the contact Jacobians and the drift terms from the spanning tree (``pin.buildModelFromUrdf`` ignores the
``<loop>`` elements) and solves the constrained system (``pin.constraintDynamics``, proximal settings for
redundant rows). A revolute cut of a planar linkage is a point contact at the pin: the two rotational rows
a revolute cut adds are identically satisfied when every joint axis is parallel, so the accelerations agree
exactly and the pin forces agree in the plane. A spherical cut is a point contact by definition.

The loop frames come from the URDF text: the predecessor's ``<origin>`` in its link frame, the successor's
``<origin>``, or, when absent, the successor frame that coincides with Fp at the ``<initial_configuration>``
(computed with Pinocchio's forward kinematics).
"""
from __future__ import annotations

import numpy as np
from lxml import etree

__all__ = ["PinLoops"]


def _se3(pin, origin):
    if origin is None:
        return pin.SE3.Identity()
    xyz = np.array([float(x) for x in (origin.get("xyz") or "0 0 0").split()])
    rpy = np.array([float(x) for x in (origin.get("rpy") or "0 0 0").split()])
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)


class PinLoops:
    """The reference for one URDF file (plain URDF with ``<loop>`` elements of type revolute/spherical)."""

    def __init__(self, path, joint_names):
        import pinocchio as pin
        self.pin = pin
        self.pm = pin.buildModelFromUrdf(str(path))
        self.pd = self.pm.createData()
        root = etree.parse(str(path)).getroot()
        self.names = list(joint_names)  # urdf_dyn's joint order
        self.jv = {self.pm.names[i]: self.pm.joints[i] for i in range(1, self.pm.njoints)}
        q_init = np.zeros(len(self.names))
        ic = root.find("initial_configuration")
        for jp in ic.findall("joint_position") if ic is not None else ():
            q_init[self.names.index(jp.get("joint"))] = float(jp.get("value"))
        pin.framesForwardKinematics(self.pm, self.pd, self.pin_q(q_init))
        self.loops, self.models = [], pin.StdVec_RigidConstraintModel()
        for lp in root.findall("loop"):
            if lp.get("type") not in ("revolute", "spherical"):
                raise ValueError(f"reference: loop type {lp.get('type')} not covered")
            pe, se = lp.find("predecessor"), lp.find("successor")
            body = pin.FrameType.BODY
            fp, fs = self.pm.getFrameId(pe.get("link"), body), self.pm.getFrameId(se.get("link"), body)
            Fp, Fs = self.pm.frames[fp], self.pm.frames[fs]
            T_P = Fp.placement * _se3(pin, pe.find("origin"))
            if se.find("origin") is not None:
                T_S = Fs.placement * _se3(pin, se.find("origin"))
            else:  # Fs coincides with Fp at the initial configuration
                oMp = self.pd.oMi[Fp.parentJoint] * T_P
                T_S = self.pd.oMi[Fs.parentJoint].inverse() * oMp
            self.models.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, self.pm, Fp.parentJoint, T_P,
                                                        Fs.parentJoint, T_S, pin.ReferenceFrame.LOCAL))
            self.loops.append(lp.get("name"))
        self.datas = pin.StdVec_RigidConstraintData()
        for cm in self.models:
            self.datas.append(cm.createData())
        pin.initConstraintDynamics(self.pm, self.pd, self.models, self.datas)

    def pin_q(self, q):
        """urdf_dyn's q (our joint order) -> Pinocchio's configuration (continuous joints: cos, sin)."""
        out = np.zeros(self.pm.nq)
        for n, x in zip(self.names, q):
            j = self.jv[n]
            out[j.idx_q:j.idx_q + j.nq] = [np.cos(x), np.sin(x)] if j.nq == 2 else [x]
        return out

    def _v(self, v):
        out = np.zeros(self.pm.nv)
        for n, x in zip(self.names, v):
            out[self.jv[n].idx_v] = x
        return out

    def accelerations(self, q, qd, tau):
        """(q̈ (nv,) in urdf_dyn's joint order, {loop: force (3,) in Fp, N}) from pin.constraintDynamics."""
        pin = self.pin
        prox = pin.ProximalSettings(1e-14, 1e-10, 500)
        a = pin.constraintDynamics(self.pm, self.pd, self.pin_q(q), self._v(qd), self._v(tau), self.models,
                                   self.datas, prox)
        qdd = np.array([a[self.jv[n].idx_v] for n in self.names])
        return qdd, {n: np.array(d.contact_force.linear) for n, d in zip(self.loops, self.datas)}
