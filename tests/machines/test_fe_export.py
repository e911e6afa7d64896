"""Free-body load sets for the structure's FE analysis (urdf_dyn.machines.fe_export): every body of the
excavator in equilibrium at a stall state (each load assembled on its own: joint wrenches from RNEA's backward
pass, the children's reactions, the loop-closure wrenches, the weight from mass and centre of mass, the
external force), the weight pointing down in the world, the bucket pin's load equal to ``pins.pin_loads``'s,
and the CSV and Nastran cards carrying the same numbers."""
import csv

import numpy as np
import pytest

import urdf_dyn as ud
from _robots import ROOT
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.machines.fe_export import free_bodies
from urdf_dyn.reports.fe_report import write_free_body_csv, write_nastran

EXC = ROOT / "robots" / "excavator.urdf"
ACTS = ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")
LIP = np.array([1.368, 0.0, 0.172])


@pytest.fixture(scope="module")
def state():
    model = ud.load(EXC)
    q = model.q_initial()
    for c, x in (("boom_cyl", -0.30), ("stick_cyl", -0.55), ("bucket_cyl", -0.10)):
        q[model.joint_index(c)] = x
    q = assemble(model, q, hold=ACTS, residual_tol=1e-12)
    R = ud.link_pose(model, q, "bucket")[:3, :3]
    f = R.T @ np.array([-250e3, 0.0, 120e3])          # a stall-sized force on the lip, root axes -> bucket
    return model, q, {"bucket": np.r_[np.cross(LIP, f), f]}


def test_every_body_is_in_equilibrium(state):
    model, q, fx = state
    sets = free_bodies(model, "stall", q, f_ext=fx, points={"bucket": LIP})
    assert {fb.body for fb in sets} == set(model.body_names[1:])
    for fb in sets:
        assert np.linalg.norm(fb.residual) <= 1e-9 * max(fb.largest_force, 1.0), (fb.body, fb.residual)
        # the moment about each load's point is the same wrench moved: n_O = n_P + r_P × f
        for ld in fb.loads:
            assert np.allclose(ld.wrench[:3], ld.moment + np.cross(ld.point, ld.wrench[3:]), atol=1e-6)


def test_weight_points_down_and_pins_match_pin_loads(state):
    from urdf_dyn.machines.pins import pin_loads
    model, q, fx = state
    sets = {fb.body: fb for fb in free_bodies(model, "stall", q, f_ext=fx, points={"bucket": LIP})}
    T = ud.forward_kinematics(model, q)
    for b, fb in sets.items():
        w = [ld for ld in fb.loads if ld.name == "weight"]
        if w:
            m = np.asarray(model.I[model.body_names.index(b)])[5, 5]
            assert np.allclose(T[b][:3, :3] @ w[0].wrench[3:], [0, 0, -9.81 * m], atol=1e-6 * m)
        assert all(np.allclose(ld.wrench, 0) for ld in fb.loads if ld.name == "inertia")   # at rest
    z = np.zeros((1, model.nv))
    pl = pin_loads(model, [0.0], q[None], z, z, {"bucket_pivot": "bucket"}, f_ext={"bucket": fx["bucket"][None]})
    j = [ld for ld in sets["bucket"].loads if ld.name == "joint:bucket"][0]
    assert np.allclose(j.wrench, pl.wrench["bucket_pivot"][0], rtol=1e-9, atol=1e-6)
    ext = [ld for ld in sets["bucket"].loads if ld.name == "external:bucket"][0]
    assert np.allclose(ext.point, LIP) and np.allclose(ext.moment, 0.0, atol=1e-6)   # a pure force at the lip


def test_csv_and_nastran_cards(state, tmp_path):
    model, q, fx = state
    sets = free_bodies(model, "stall", q, f_ext=fx, bodies=["boom", "stick", "bucket"], points={"bucket": LIP})
    rows = list(csv.reader(open(write_free_body_csv(sets, tmp_path / "fb.csv"))))
    h = rows[0]
    for fb in sets:
        loads = [r for r in rows[1:] if r[1] == fb.body and r[2] != "residual"]
        f = np.array([[float(r[h.index(k)]) for k in ("fx [N]", "fy [N]", "fz [N]")] for r in loads])
        assert len(loads) == len(fb.loads) and np.linalg.norm(f.sum(axis=0)) <= 1e-6 * fb.largest_force
    text = write_nastran(sets, tmp_path / "fb.bdf").read_text().splitlines()
    forces = [ln.split(",") for ln in text if ln.startswith("FORCE,")]
    assert len(forces) == sum(len(fb.loads) for fb in sets) == len([ln for ln in text if ln.startswith("GRID,")])
    for sid, fb in enumerate(sets, start=1):
        f = np.array([[float(x) for x in c[5:8]] for c in forces if c[1] == str(sid)])
        assert np.linalg.norm(f.sum(axis=0)) <= 1e-9 * fb.largest_force          # 12 digits on the card
    with pytest.raises(KeyError, match="unknown body"):
        free_bodies(model, "x", q, bodies=["arm"])


def test_design_cases_of_the_stall_envelopes(state):
    """Every distinct design case of the stall envelopes' pin design loads gives a free-body set per body in
    equilibrium, and the bucket pivot's joint load in its case is the design load itself."""
    from urdf_dyn.machines.fe_export import design_case_free_bodies
    from urdf_dyn.machines.sizing import Cylinder
    from urdf_dyn.machines.stall import stall_envelopes
    model, _, _ = state
    cyl = {"boom_cyl": Cylinder(0.120, 0.085, 2), "stick_cyl": Cylinder(0.140, 0.100, 1),
           "bucket_cyl": Cylinder(0.120, 0.085, 1)}
    env = stall_envelopes(model, cyl, 38e6, ("bucket", LIP), holding_relief=38e6, n=(3, 4, 4), n_fan=8)
    dl = env.design_loads(model, {"bucket_pivot": "bucket", "boom_foot": "boom", "boom_cylinder_base": "boom_cyl_pin"})
    sets = design_case_free_bodies(model, dl, cyl, 38e6, ("bucket", LIP), holding_relief=38e6,
                                   bodies=["boom", "stick", "bucket", "boom_cyl_barrel"])
    pins = {"bucket_pivot", "boom_foot", "boom_cylinder_base"}
    assert {fb.case for fb in sets} and all(set(fb.case.split("+")) <= pins for fb in sets)
    for fb in sets:
        assert np.linalg.norm(fb.residual) <= 1e-9 * fb.largest_force, (fb.case, fb.body)
        if fb.body == "bucket":        # the tip force rebuilt is the case's own, in its own direction
            ext = [ld for ld in fb.loads if ld.name.startswith("external:")][0]
            c = dl[fb.case.split("+")[0]]["design_case"]
            assert abs(np.linalg.norm(ext.wrench[3:]) - c["tip_force_N"]) <= 1e-6 * c["tip_force_N"], fb.case
        # each pin's joint load in its own case is its design load: the case is rebuilt in its own direction
        # (a fan case is not replaced by the larger of it and the tangent)
        for pin, body in (("bucket_pivot", "bucket"), ("boom_foot", "boom"), ("boom_cylinder_base", "boom_cyl_barrel")):
            if fb.body == body and pin in fb.case.split("+"):
                jn = {"boom_cyl_barrel": "boom_cyl_pin"}.get(body, body)
                j = [ld for ld in fb.loads if ld.name == f"joint:{jn}"][0]
                assert abs(np.linalg.norm(j.wrench[3:]) - dl[pin]["design_load_N"]) <= \
                    1e-6 * dl[pin]["design_load_N"], (pin, dl[pin]["design_case"]["direction"])
