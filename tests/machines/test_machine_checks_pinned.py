"""Regression pins of the main job's machine checks (ISO 6015 digging forces, ISO 10567 lift chart), at the
main job's settings (scenarios/excavator_dig.scenario.yaml: 35 MPa relief, tip 1.47 m; lift mode 38 MPa, Cat's
chart grid). The numbers were computed by the code of commit 7c99835 (scipy least-squares assembly of every
pose, ``explicit_constraint`` per pose) BEFORE it was made fast, so that the speed-up cannot move them by
more than 1e-6 relative. Their correctness is proven elsewhere against independent oracles (virtual work by
finite differences, hand moment balances: tests/test_iso6015.py, tests/test_lift_chart.py); this file only
guards that those results stay what they were."""
import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.machines.iso6015 import digging_forces
from urdf_dyn.machines.lift_chart import LiftChartOptions, lift_chart
from urdf_dyn.machines.stability import tipping_polygon
from urdf_dyn.machines.sizing import Cylinder

#: the geometry these numbers belong to: robots/excavator_pins.yaml before its calibration,
#: kept as test data; its URDF is byte for byte the robots/excavator.urdf of that time
#: (tests/machines/test_pin_table.py: the builder against the generator's URDF)
OLD_PINS = ROOT / "tests" / "machines" / "data" / "excavator_pins_6bfaa15.yaml"
CYL = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
       "bucket_cyl": Cylinder(0.120, 0.085, 1)}
RTOL = 1e-6
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
#: the main job's lift chart: Cat's chart grid, lift mode 38 MPa, the roller-rail tipping lines (S5/S6)
OPTS = LiftChartOptions(radii=(3.0, 4.5, 6.0, 7.5, 9.0), heights=(7.5, 6.0, 4.5, 3.0, 1.5, 0.0, -1.5, -3.0, -4.5),
                        footprint=tipping_polygon(3.65, 2.38), lift_pressure=38e6)


@pytest.fixture(scope="module")
def model():
    from urdf_dyn.machines.excavator_builder import excavator_urdf
    return ud.load(excavator_urdf(OLD_PINS))


def close(a, b):
    return abs(a - b) <= RTOL * abs(b)


def test_digging_forces_pinned(model):
    """The envelope grid without holding limits is 7c99835's to 1e-6 (the sums below). The ISO figures moved
    when the holding circuits were modelled (the largest holdable force over the stroke space, refined by zooming grids instead of 1-D
    sweeps with a least-holding-pressure pose): recomputed by branch iso; the 7c99835 figures were
    131 256.3 / 115 875.1 N (the new search finds a slightly better bucket optimum and, for the arm, uses the
    bucket stroke of its own bucket optimum). No binding-limit name is pinned at a pose where two limits are
    within 1e-3 of each other (a tie)."""
    # the arm force's bucket as it was positioned then (the bucket force's stroke): these pin the search
    r = digging_forces(model, CYL, 35e6, ("bucket", (1.47, 0.0, 0.0)), arm_bucket="bucket_force")
    assert close(r.bucket_N, 131262.49827629482)     # 131.3 kN, bucket cylinder at relief
    assert close(r.arm_N, 115777.75828804403)        # 115.8 kN
    # among the poses of equal force (the locked boom stroke does not change the bucket force) the one of
    # least holding pressure: the stick cylinder's 382.5 bar is the same for all (the 382 bar), the
    # boom's least is then taken
    assert close(r.pressures_bar["bucket"]["stick_cyl"], 382.4890875646857)
    assert close(r.pressures_bar["bucket"]["boom_cyl"], -271.5319234193952)
    assert r.grid_tip.shape == (9 * 13 * 17, 3)
    assert close(r.grid_bucket_N.sum(), 204585904.6383842)
    assert close(r.grid_arm_N.sum(), 240782937.99131352)
    h = digging_forces(model, CYL, 35e6, ("bucket", (1.47, 0.0, 0.0)), holding_relief=35e6, arm_bucket="bucket_force")
    assert close(h.bucket_N, 129131.51553527165) and close(h.arm_N, 118401.42777056634)
    assert h.limited_by["bucket"] == "bucket_cyl" and close(h.pressures_bar["bucket"]["stick_cyl"], 349.4838430762534)
    assert close(h.grid_bucket_N.sum(), 160863535.03748983) and close(h.grid_arm_N.sum(), 174852313.18334448)


# (height index, radius index): (over front, over side) [kg], limiting cylinder; CAT320 grid
CELLS = {(1, 2): (7038.045543110258, 4075.190258312958, "boom_cyl"),
         (2, 3): (4614.99266010464, 2600.3024320275485, "stick_cyl"),
         (3, 1): (10475.88154368201, 5510.818165955667, "boom_cyl"),
         (5, 0): (9496.983265594738, 8936.410588628474, "stick_cyl"),
         (5, 3): (4222.965991190931, 2247.726941368823, "boom_cyl"),
         (6, 0): (12597.301404638554, 9077.204094856712, "boom_cyl"),
         (7, 2): (5647.290672362185, 3139.4620780045852, "boom_cyl"),
         (8, 1): (3103.09543683572, 3103.09543683572, "boom_cyl")}
MAX_REACH = (5.940434737548893, 7.065275761035717, 7.742016389667126, 8.082386137575707, 8.129817855521129,
             7.8897341450631515, 7.333162778301787, 6.37511224365577, 4.769683930180537)


def test_lift_chart_pinned(model):
    c = lift_chart(model, CYL, OPTS)
    for (i, j), (f, s, lim) in CELLS.items():
        assert close(c.front[i, j], f) and close(c.side[i, j], s) and c.limiting[i, j] == lim, (i, j)
    assert np.count_nonzero(~np.isnan(c.front)) == 20      # reachable cells of Cat's 5 x 9 grid
    assert np.allclose(c.max_reach_m, MAX_REACH, rtol=RTOL, atol=0)


def test_fast_levers_and_assembly_match_the_reference(model):
    """The batched levers (``_levers``: J_tip from body poses, G from K's free columns) against
    ``tip_lever`` (``link_jacobian`` and ``explicit_constraint``'s complete-pivot G, RBDA §8.8), and the
    Gauss–Newton assembly of ``StrokeMap`` against ``assemble`` (scipy least squares), at random strokes."""
    from urdf_dyn.machines.stroke_map import StrokeMap, tip_lever
    from urdf_dyn.machines.stroke_map import tip_levers as _levers
    from urdf_dyn.constraints.assembly import assemble
    tip = ("bucket", (1.47, 0.0, 0.0))
    smap = StrokeMap(model, model.q_initial(), ("boom_cyl", "stick_cyl", "bucket_cyl"), ACTS)
    rng = np.random.default_rng(3)
    Q = []
    for _ in range(6):
        x = {c: rng.uniform(*smap.limits(c)) for c in ("boom_cyl", "stick_cyl", "bucket_cyl")}
        q = smap.pose(x)
        ref = assemble(model, q + 1e-4 * (rng.random(model.nv) - 0.5) * (np.isin(
            np.arange(model.nv), [model.joint_index(a) for a in ACTS]) == 0), hold=ACTS)
        assert np.max(np.abs(q - ref)) <= 1e-9
        Q.append(q)
    for q, lv in zip(Q, _levers(model, np.array(Q), ACTS, tip)):
        r = tip_lever(model, q, ACTS, tip)
        assert np.allclose(lv.tip, r.tip, rtol=0, atol=1e-12)
        assert np.max(np.abs(lv.J - r.J)) <= 1e-9 * np.max(np.abs(r.J))


def test_lift_chart_solvers_on_the_interpolated_map_keep_the_assembled_results(model):
    """The lift chart's solvers run on poses interpolated from 1 mm sweeps (cubic Hermite with dq/dx from
    the compiled path) and assemble only their results: they must land where the scipy solvers on assembled
    poses of 7c99835 did (the pins above) to 5e-9 relative, not just 1e-6."""
    c = lift_chart(model, CYL, OPTS)
    for (i, j), (f, s, lim) in CELLS.items():
        assert abs(c.front[i, j] - f) <= 5e-9 * f and abs(c.side[i, j] - s) <= 5e-9 * s, (i, j)
    assert np.allclose(c.max_reach_m, MAX_REACH, rtol=5e-9, atol=0)


def test_stroke_sweeps_interpolate_to_assembled_poses_and_g_columns(model):
    """StrokeMap's sweeps (compiled trajectory path) against independent evaluations: the Hermite
    interpolation at random strokes against the pose assembled there (``pose``: Gauss-Newton on the loop
    residuals), and its dq/dx columns against G of ``explicit_constraint`` (complete pivoting, RBDA §8.8)
    at that assembled pose."""
    from urdf_dyn.machines.stroke_map import StrokeMap
    smap = StrokeMap(model, model.q_initial(), ("boom_cyl", "stick_cyl", "bucket_cyl"), ACTS, step=0.001)
    rng = np.random.default_rng(5)
    for _ in range(20):
        x = {c: rng.uniform(*smap.limits(c)) for c in ("boom_cyl", "stick_cyl", "bucket_cyl")}
        qi, cols = smap.interpolate(x)
        q = smap.pose(x)
        assert np.max(np.abs(qi - q)) <= 1e-9
        G = ud.explicit_constraint(model, q, np.zeros(model.nv), independent=ACTS).G
        for c, col in cols.items():
            g = G[:, ACTS.index(c)]
            assert np.max(np.abs(col - g)) <= 1e-6 * np.max(np.abs(g)), c
