"""The three silent mistakes of a closed-loop arm, made loud (urdf_dyn.constraints.closure, .assembly, the
loader and Model.actuated_joints), on a parallelogram written four ways (tests/constraints/data): with
<mimic>s, with a <loop>, with both, and with a sign error in the loop's point; and on the FANUC M-900iB/700
as ROS-Industrial ships it (mimics, no <transmission>, effort="0")."""
import warnings
from pathlib import Path

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.closure import LoopClosureError, loop_gaps, mimic_duplicates, nearest_fix
from urdf_dyn.constraints.inverse import actuator_forces
from urdf_dyn.errors import ModelWarning

from tests.conftest import SHARED, needs_shared

DATA = Path(__file__).parent / "data"
M900 = SHARED / "fanuc_m900ib"


def load(name, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = ud.load(DATA / f"parallelogram_{name}.urdf", **kw)
    return m, [str(x.message) for x in w if issubclass(x.category, ModelWarning)]


def hanging(m, q3, qd3=0.4, qdd3=-1.2):
    """A consistent state of the parallelogram at arm angle q3: rod = -arm, crank = +arm."""
    s = np.array([1.0, -1.0, 1.0])           # arm_joint, rod_joint, crank_joint (q order checked below)
    assert m.joint_names == ("arm_joint", "rod_joint", "crank_joint")
    return s * q3, s * qd3, s * qdd3


# -- mistake 1: no transmissions ------------------------------------------------------------------------------
def test_mimic_followers_and_passive_loop_joints_are_not_actuators():
    """The arm alone drives the parallelogram, however it is written; the one warning says so. Today's code
    counted the followers as actuators and called the mechanism redundantly actuated."""
    for name, why in (("mimic", "mimic followers: rod_joint, crank_joint"), ("loop", None)):
        m, w = load(name)
        assert m.actuated_joints == ("arm_joint",)
        said = [x for x in w if "no <transmission>" in x]
        if why is None:      # the file's independent="true" joint is the actuator: nothing to say
            passive = "passive joint of loop tie_rod_crank_pin"
            assert said == [] and dict(m.undriven_joints) == {"crank_joint": passive, "rod_joint": passive}
        else:
            assert len(said) == 1 and "the actuators are arm_joint" in said[0] and why in said[0], w
        af = actuator_forces(m, *hanging(m, 0.3), warn=False)
        assert af.case == "properly actuated" and af.names == ("arm_joint",)


def test_parallelogram_actuator_torque_against_virtual_work():
    """u of the loop model at a moving state against the virtual-work balance of the tree: with the rod and
    the crank following the arm (q̇ = G ẏ, G = (1, -1, 1)), u = Gᵀ τ_ID(q, q̇, q̈) — the independent oracle of
    the actuated set's answer (RBDA eq. 8.63 with one actuator)."""
    m, _ = load("loop")
    q, qd, qdd = hanging(m, 0.3)
    tau = ud.inverse_dynamics(m, q, qd, qdd)
    u = actuator_forces(m, q, qd, qdd, warn=False).u
    assert u[0] == pytest.approx(np.array([1.0, -1.0, 1.0]) @ tau, rel=1e-9)


@needs_shared
def test_m900ib_without_transmissions_is_driven_by_its_six_axes():
    """The FANUC M-900iB/700 as shipped: its six mimic followers (crank, tie rod, balancers) are not
    actuators; the warning names the actuators and the followers; effort="0" is read as unknown, a warning
    naming the six axes, and no actuator is over a limit of 0."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = ud.load(M900 / "fanuc_m900ib_support/urdf/m900ib700.xacro", package_dirs=[str(M900)])
    axes = tuple(f"joint_{i}" for i in range(1, 7))
    assert m.actuated_joints == axes
    w = [str(x.message) for x in w if issubclass(x.category, ModelWarning)]
    said = [x for x in w if "no <transmission>" in x]
    assert len(said) == 1 and "the actuators are " + ", ".join(axes) in said[0] and "pjoint_1" in said[0]
    zero = [x for x in w if 'effort="0"' in x]
    assert len(zero) == 1 and ", ".join(axes) in zero[0] and "unknown" in zero[0]
    rng = np.random.default_rng(3)
    q = assemble(m, m.q_initial() + 0.2 * np.r_[rng.standard_normal(6), np.zeros(6)], hold=list(axes))
    af = actuator_forces(m, q, np.zeros(m.nv), np.zeros(m.nv), warn=False)
    assert af.case == "properly actuated" and af.names == axes and af.over_limit == ()


# -- mistake 2: loop added, mimics kept -------------------------------------------------------------------------
def test_loop_duplicating_mimics_is_warned_and_its_forces_refused():
    """Both written: a warning at the <loop> naming the loop and the mimic followers; pin_loads refuses to
    report the forces the model leaves undetermined and says why. The loop alone or the mimics alone: none."""
    m, w = load("both")
    assert mimic_duplicates(m, m.q_initial()) == {"tie_rod_crank_pin": ("rod_joint", "crank_joint")}
    dup = [x for x in w if "duplicates the <mimic>" in x]
    assert len(dup) == 1 and "tie_rod_crank_pin" in dup[0] and "rod_joint, crank_joint" in dup[0]
    assert 'parallelogram_both.urdf:' in dup[0] and '<loop name="tie_rod_crank_pin">' in dup[0]
    from urdf_dyn.machines.pins import pin_loads
    q, qd, qdd = hanging(m, 0.3)
    with pytest.raises(ud.ModelError, match="undetermined: loop tie_rod_crank_pin duplicates the <mimic> of "
                                            "rod_joint, crank_joint"):
        pin_loads(m, [0.0], q[None], qd[None], qdd[None])
    for name in ("loop", "mimic"):
        single, w = load(name)
        assert mimic_duplicates(single, single.q_initial()) == {} and not [x for x in w if "duplicates" in x]
    loop, _ = load("loop")   # the loop alone: its pin force is reported, equal to the force balance below
    pl = pin_loads(loop, [0.0], q[None], qd[None], qdd[None])
    assert np.all(np.isfinite(pl.wrench["tie_rod_crank_pin"]))


def test_mimic_duplicates_is_not_fooled_by_a_planar_loops_own_redundancy():
    """A revolute loop in a plane is overconstrained by itself (5 rows, rank 2): that is not a duplicate of
    a mimic. The four-bar (no mimic) and the loop-only parallelogram report none."""
    fb = ud.load(Path(ud.__path__[0]).parent / "robots" / "four_bar.urdf")
    assert mimic_duplicates(fb, fb.q_initial()) == {}


# -- mistake 3: a sign error in the loop's point -----------------------------------------------------------------
def test_sign_error_is_refused_with_the_nearest_fix():
    """z = +1.12 instead of -1.12: the loader refuses the file (it used to assemble it by flipping the crank),
    naming the file, line, loop, its gap and the fix; loaded open, the gap is 2.24 m and the fix closes it."""
    with pytest.raises(LoopClosureError) as e:
        load("sign_error")
    msg = str(e.value)
    assert "parallelogram_sign_error.urdf:" in msg and '<loop name="tie_rod_crank_pin">' in msg
    assert "open by 2.24 m" in msg and "closes if predecessor xyz z = -1.12 instead of +1.12" in msg
    assert e.value.fix == "predecessor xyz z = -1.12 instead of +1.12"
    m, _ = load("sign_error", check_loops=False)
    g, = loop_gaps(m, m.q_initial())
    assert (g.name, g.predecessor, g.successor) == ("tie_rod_crank_pin", "crank", "tie_rod")
    assert g.position == pytest.approx(2.24, abs=1e-12) and g.angle == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(g.Fp[:3, 3], [-0.3, 0, 1.12], atol=1e-12)     # where the wrong point sits
    text, fixed = nearest_fix(m, m.loops[0], m.q_initial())
    assert text == "predecessor xyz z = -1.12 instead of +1.12" and fixed.size < 1e-12
    good, _ = load("loop")                      # the fixed file is exactly the correct one
    assert loop_gaps(good, good.q_initial())[0].size < 1e-12


def test_assemble_never_moves_declared_independent_joints():
    """assemble holds the joints declared independent="true": the sign-error model assembled from a pose
    keeps the arm where it was put (today it moved the driving joints to close the wrong loop)."""
    m, _ = load("sign_error", check_loops=False)
    q0 = m.q_initial() + np.array([0.25, 0.0, 0.0])
    qa = assemble(m, q0)
    assert qa[0] == q0[0]
    assert loop_gaps(m, qa)[0].size < 1e-6
    good, _ = load("loop")
    qg = assemble(good, q0)
    assert qg[0] == q0[0]
    np.testing.assert_allclose(qg, [0.25, -0.25, 0.25], atol=1e-9)      # the parallelogram's own closure


def test_assemble_warns_when_an_independent_coordinate_jumps_branch():
    """Nothing held or declared (the mimic+loop file): a guess far from the closure moves an independent
    coordinate by more than branch_tol, and assemble says which and by how much; a near guess does not."""
    m, _ = load("both")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assemble(m, np.array([0.3, -0.31, 0.29]))
    assert not [x for x in w if "another branch" in str(x.message)]
    with pytest.warns(ud.ConstraintWarning, match=r"moved the independent coordinate\(s\) .* by .*another branch"):
        assemble(m, np.array([2.0, 0.0, 0.0]), branch_tol=0.5)


def test_loader_still_assembles_a_loose_initial_configuration():
    """A loop open only because the <initial_configuration> is rough (no origin typo can close it) still
    loads: the loader assembles it, as before."""
    text = (DATA / "parallelogram_loop.urdf").read_text().replace(
        "</robot>", '<initial_configuration><joint_position joint="arm_joint" value="0.2"/>'
                    '<joint_position joint="rod_joint" value="-0.15"/></initial_configuration></robot>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        m = ud.load(text)
    assert loop_gaps(m, m.q_initial())[0].size > 1e-3
    np.testing.assert_allclose(assemble(m), [0.2, -0.2, 0.2], atol=1e-9)
