"""A ball joint inside a closed loop: the spatial RSSR four-bar (crank revolute, coupler on a ball joint at the
crank, spherical loop at the rocker) built from ``robots/four_bar_spherical.urdf`` by making its coupler
joint a ball joint. Checks that cannot agree by accident:

- ``assemble`` closes the loop from an open guess (the coupler's quaternion moved, kept unit) and the
  mobility is 2 (the crank and the coupler's spin about its own axis B–C);
- started in the plane with no spin, the RSSR moves as the planar four-bar of the original file (revolute
  coupler joint): the coupler's inertia is symmetric about B–C, so the spin stays zero and the motion planar;
  the crank and rocker angles of the two simulations agree, and the energy is conserved.
"""
import numpy as np

import urdf_dyn as ud
from _robots import ROOT

PLANAR = (ROOT / "robots" / "four_bar_spherical.urdf").read_text()
RSSR = (PLANAR.replace('''<joint name="coupler_joint" type="continuous">
    <parent link="crank"/><child link="coupler"/><origin xyz="0.2 0 0"/><axis xyz="0 -1 0"/>''',
                       '''<joint name="coupler_joint" type="ball">
    <parent link="crank"/><child link="coupler"/><origin xyz="0.2 0 0"/>''')
        .replace('<joint_position joint="coupler_joint" value="-0.6059286678946731"/>', ""))


def test_assemble_closes_a_loop_through_a_ball_joint():
    model = ud.load(RSSR)
    assert (model.nq, model.nv) == (6, 5) and model.joint_types[1] == "ball"
    guess = model.q_initial()                                   # the coupler along the crank: open by ~0.3 m
    assert max(np.linalg.norm(r) for r in ud.loop_residuals(model, guess).values()) > 0.1
    q = ud.assemble(model, guess, hold=["crank_joint"])
    assert max(np.linalg.norm(r) for r in ud.loop_residuals(model, q).values()) < 1e-10
    assert abs(np.linalg.norm(q[1:5]) - 1) < 1e-14 and q[0] == guess[0]
    assert ud.mobility(model, q).dof == 2


def test_rssr_started_in_plane_moves_as_the_planar_four_bar():
    planar, rssr = ud.load(PLANAR), ud.load(RSSR)
    qp = ud.assemble(planar, planar.q_initial())
    th = qp[planar.q_index("coupler_joint")]                    # the coupler turned about −y by th
    q = rssr.q_initial()
    q[0], q[5] = qp[0], qp[2]
    q[1:5] = (0.0, -np.sin(th / 2), 0.0, np.cos(th / 2))
    assert max(np.linalg.norm(r) for r in ud.loop_residuals(rssr, q).values()) < 1e-12
    vp = ud.project_velocity(planar, qp, np.array([2.0, 0.0, 0.0]), hold=["crank_joint"])
    v = np.r_[vp[0], 0.0, -vp[1], 0.0, vp[2]]                   # ω of the coupler: about −y, child frame
    kw = dict(duration=0.4, options=ud.SimulateOptions(dt_out=0.02, passive=False, rtol=1e-10, atol=1e-12, limits=False))
    a, b = ud.simulate(planar, qp, vp, **kw), ud.simulate(rssr, q, v, **kw)
    assert np.abs(a.q[:, 0] - b.q[:, 0]).max() < 1e-6 and np.abs(a.q[:, 2] - b.q[:, 5]).max() < 1e-6
    assert np.ptp(a.q[:, 0]) > 0.5                              # the crank turns
    assert np.ptp(b.energy) < 1e-7 * np.abs(b.energy).max()
    assert b.residuals.max() < 1e-6 and b.meta["quaternion_drift"] < 1e-8
