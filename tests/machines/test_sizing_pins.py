"""Pin loads per pin (urdf_dyn.machines.sizing): the model lumps the boom cylinder pair (count: 2) into one
rod and one loop; each of the two eye pins carries half of that loop's constraint force. Checked against
the loop's constraint wrench taken straight from closed-loop inverse dynamics (``actuator_forces``)."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.inverse import actuator_forces
from urdf_dyn.machines.sizing import Cylinder, pin_counts, size_motion, sizing_table


@pytest.fixture(scope="module")
def model():
    return ud.load(ROOT / "robots" / "excavator.urdf")


def test_pair_gives_two_pins_with_half_the_force(model):
    q = model.q_initial()
    Q = np.tile(q, (2, 1))
    Z = np.zeros_like(Q)
    pair = {"boom_cyl": Cylinder(0.12, 0.085, 2), "stick_cyl": Cylinder(0.14, 0.1)}
    assert pin_counts(model, pair) == {"boom_cylinder_eye": 2}
    res = size_motion(model, [0.0, 0.1], Q, Z, Z, cylinders=pair)
    af = actuator_forces(model, Q, Z, Z, warn=False)
    for name, lf in af.loop_forces.items():
        f_loop = np.linalg.norm(np.reshape(lf, (2, -1))[:, 3:], axis=1)       # the lumped loop's force [N]
        n = 2 if name == "boom_cylinder_eye" else 1
        assert res.pin_count[name] == n
        assert res.pin_force[name] == pytest.approx(f_loop / n, rel=1e-12)
        assert f_loop.max() > 1e3
        # a planar machine's revolute pins carry no moment: round-off is reported as exactly 0
        assert np.all(res.pin_moment[name] == 0.0)
    md = sizing_table(res)
    assert "| boom_cylinder_eye | 2 |" in md and "peak force per pin" in md and "e-1" not in md
