"""The one rule for the compiled closed-loop path (``constraints.loops.compiled_covers``) and the readable
reference's independence from the kernels.

Oracles: a hand value (a rotor geared 9:1 to a knee by a URDF+ ``<coupling>`` turns 9 times the knee:
rotor 1.8 rad at knee 0.2 rad, and 9 × the knee's velocity and acceleration), on the compiled and the readable
path; the readable ``actuator_forces(compiled=False)`` run with the compiled loop kernel made unusable (so
it cannot lean on it), then held to the compiled path."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints import _kernels as loop_kernels
from urdf_dyn.constraints.inverse import actuator_forces
from urdf_dyn.constraints.loops import compiled_covers
from urdf_dyn.constraints.motion import CoordinateMotion
from urdf_dyn.model import Mimic

from conftest import ROOT

_INERTIA = '<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/>'


def _link(name, m, z, i):
    return (f'<link name="{name}"><inertial><origin xyz="0 0 {z}"/><mass value="{m}"/>'
            f'{_INERTIA.format(i=i)}</inertial></link>')


#: a fixed-base leg: hip and knee about y, the knee's rotor on the thigh geared 9:1 to the knee (no loop)
GEARED_KNEE = f"""<robot name="geared_knee">
  <link name="base"/>
  {_link("thigh", 2.0, -0.15, 0.02)}
  {_link("shank", 1.0, -0.15, 0.01)}
  {_link("rotor", 0.2, 0.0, 1e-4)}
  <joint name="hip" type="revolute"><parent link="base"/><child link="thigh"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="10"/></joint>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/><origin xyz="0 0 -0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="10"/></joint>
  <joint name="knee_rotor" type="continuous" independent="false"><parent link="thigh"/><child link="rotor"/>
    <origin xyz="0 0.05 -0.1"/><axis xyz="0 1 0"/></joint>
  <coupling name="knee_gear" type="rolling"><predecessor link="shank"/><successor link="rotor"/>
    <ratio value="9"/></coupling>
</robot>"""


def _knee_motion():
    t = np.linspace(0.0, 0.1, 6)
    y = np.column_stack([0.3 + 0.5 * t, np.full_like(t, 0.2)])      # hip, knee: the knee held at 0.2 rad
    yd = np.column_stack([np.full_like(t, 0.5), np.zeros_like(t)])
    ydd = np.zeros_like(y)
    return CoordinateMotion(("hip", "knee"), t, y, yd, ydd)


@pytest.mark.parametrize("compiled", [True, False])
def test_coupled_rotor_turns_nine_times_the_knee(compiled):
    """The crash of the compiled path on a coupling (motion.py's copy of the rule left couplings out): with
    and without ``compiled``, the rotor stands at 9 × 0.2 = 1.8 rad, and moves 9 × the knee's velocity and
    acceleration (a second motion moves the knee)."""
    model = ud.load(GEARED_KNEE)
    assert not compiled_covers(model)
    Q, QD, QDD = ud.consistent_motion(model, _knee_motion(), compiled=compiled)
    r, k = model.joint_index("knee_rotor"), model.joint_index("knee")
    assert np.allclose(Q[:, k], 0.2, rtol=0, atol=1e-14)
    assert np.allclose(Q[:, r], 1.8, rtol=0, atol=1e-12)
    t = np.linspace(0.0, 0.1, 6)
    mo = CoordinateMotion(("hip", "knee"), t, np.column_stack([0.3 + 0 * t, 0.2 + 0.4 * t + 1.5 * t * t]),
                          np.column_stack([0 * t, 0.4 + 3.0 * t]), np.column_stack([0 * t, 3.0 + 0 * t]))
    Q, QD, QDD = ud.consistent_motion(model, mo, compiled=compiled)
    assert np.allclose(Q[:, r], 9 * Q[:, k], rtol=0, atol=1e-12)
    assert np.allclose(QD[:, r], 9 * QD[:, k], rtol=0, atol=1e-12)
    assert np.allclose(QDD[:, r], 27.0, rtol=0, atol=1e-11)


def test_the_rule_is_one_rule():
    """What the rule says of the models the paths meet: a coupling, a ``<mimic>``, a damped loop joint
    (dynamics only: a motion is kinematics), and the excavator that the compiled paths serve."""
    assert not compiled_covers(ud.load(GEARED_KNEE))
    exc = ud.load(ROOT / "robots" / "excavator.urdf")
    assert compiled_covers(exc) and compiled_covers(exc, passive=False)
    import dataclasses
    lp = dataclasses.replace(exc.loops[0], damping=5.0)
    damped = dataclasses.replace(exc, loops=(lp,) + exc.loops[1:])
    assert not compiled_covers(damped) and compiled_covers(damped, passive=False)
    mimic = dataclasses.replace(exc, mimic=(Mimic(exc.joint_names[1], exc.joint_names[0]),))
    assert not compiled_covers(mimic)


def test_reference_actuator_forces_do_not_use_the_loop_kernel(monkeypatch):
    """``actuator_forces(compiled=False)`` runs with the compiled loop-terms kernel replaced by one that
    raises: its loop terms are the readable Python's. It then equals the compiled path (≤ 1e-9 relative)."""
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q0 = ud.assemble(model, model.q_initial())
    names = ud.explicit_constraint(model, q0, np.zeros(model.nv)).independent
    y0 = np.array([q0[model.joint_index(j)] for j in names])
    mo = ud.spline_motion(names, [y0, y0 + 0.05, y0], [0.05, 0.05], dt=0.01, kind="quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ud.ActuationWarning)
        fast = actuator_forces(model, Q, QD, QDD)

        def boom(*args, **kwargs):
            raise AssertionError("the readable reference called the compiled loop kernel")
        monkeypatch.setattr(loop_kernels, "loop_terms", boom)
        ref = actuator_forces(model, Q, QD, QDD, compiled=False)
    scale = max(1.0, np.abs(fast.u).max())
    assert np.abs(ref.u - fast.u).max() <= 1e-9 * scale
    assert np.abs(ref.tau_ID - fast.tau_ID).max() <= 1e-9 * max(1.0, np.abs(fast.tau_ID).max())
    for name, f in fast.loop_forces.items():
        assert np.abs(ref.loop_forces[name] - f).max() <= 1e-9 * max(1.0, np.abs(f).max())
