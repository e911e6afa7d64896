"""The shipped palletizer's arm (robots/fanuc_m900ib700, loops and two J2 gas balancers) against an energy
balance: along a consistent motion with the payload on, the six drives' power Σ u q̇ equals the rate of
change of the kinetic, gravitational and balancer energy (the balancers' closed-form gas energy, not their
forces). Integrated over the cycle to 1e-5 of the energy that flows."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.algorithms.force_elements import balancer_lengths, make_balancer, with_balancers
from urdf_dyn.constraints.motion import consistent_motion
from urdf_dyn.machines.drives import ArmPayload, arm_sizing, load_drive_data
from urdf_dyn.simulation.trajectories import spline_motion

ARM = ROOT / "robots" / "fanuc_m900ib700" / "fanuc_m900ib700_loops.urdf"
DATA = ROOT / "robots" / "fanuc_m900ib700" / "m900ib700_drives.yaml"
GAS = dict(precharge=2.4e6, area=5.03e-3, volume=2.5e-3, reference_length=0.885, exponent=1.3)
NAMES = ["joint_1", "joint_2", "pjoint_1", "joint_4", "joint_5", "joint_6"]


def gas_energy(x, p0=2.4e6, A=5.03e-3, V0=2.5e-3, n=1.3):
    return p0 * V0 ** n / (n - 1) * ((V0 - A * x) ** (1 - n) - V0 ** (1 - n))


def test_drive_power_is_the_energy_rate():
    model = ud.load(ARM)
    model = with_balancers(model, [make_balancer(model, f"b{i}", "gas_spring", "link_1", (0.41, 0, 0.235), "link_2",
                                                 (0, 0, 1.12), "pull", GAS) for i in (0, 1)])
    loaded = model.with_payload("flange", 700.0, (0.4, 0, 0), np.diag([58.3, 79.3, 95.7]))
    W = [[0.0, 0.35, -0.25, 0.0, -1.3208, 0.0], [1.2, 0.62, -0.45, 0.3, -1.1208, -0.8],
         [2.618, 0.40, -0.30, -0.2, -1.2708, -2.618]]
    mo = spline_motion(NAMES, W, [1.5, 1.5], dt=2e-3, kind="quintic")
    Q, QD, QDD = consistent_motion(model, mo, progress=False)
    pl = ArmPayload("flange", 700.0, (0.4, 0, 0), ((58.3, 0, 0), (0, 79.3, 0), (0, 0, 95.7)))
    sz = arm_sizing(model, load_drive_data(DATA), mo.t, Q, QD, QDD, payload=pl)
    cols = [model.joint_index(j) for j in sz.names]
    power = np.sum(sz.u * QD[:, cols], axis=1)
    L = balancer_lengths(model, Q)
    V_bal = sum(gas_energy(L[f"b{i}"] - 0.885) for i in (0, 1))
    E = ud.kinetic_energy(loaded, Q, QD) + ud.potential_energy(loaded, Q) + V_bal
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(mo.t))])
    flow = np.trapezoid(np.abs(power), mo.t)
    assert flow > 1e4                                        # tens of kJ flow through the drives
    assert np.abs(work - (E - E[0])).max() < 1e-5 * flow
    assert np.ptp(V_bal) > 100.0                             # the balancers store and return energy here
    # the balancers pull (their gas is compressed as the arm leans): negative force, and less J2 torque
    Lb, F = sz.balancers["b0"]
    assert np.all(F < 0)
    bare = arm_sizing(ud.load(ARM), load_drive_data(DATA), mo.t, Q, QD, QDD, payload=pl)
    j2 = sz.names.index("joint_2")
    assert np.abs(sz.u[:, j2]).max() < np.abs(bare.u[:, j2]).max()
