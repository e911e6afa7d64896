"""Guarded numerics and safe outputs: singular poses warn and stay finite, cylinder end stops, atomic
writes, the XML size limit, --debug tracebacks."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
import urdf_dyn.io.urdf as urdf_mod
from _robots import ROOT, SHARED
from urdf_dyn.io.files import atomic_path
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.forward import METHODS, constrained_forward_dynamics
from urdf_dyn.constraints.loops import ConstraintWarning, mobility


def test_four_bar_folded_flat_is_singular_but_finite():
    """The URDF+ four-bar at q = 0 lies folded flat: its mobility rises from 1 to 2 (RBDA §8.10). Every
    method still returns finite accelerations that satisfy the constraints."""
    model = ud.load(ROOT / "robots" / "generalized_rbda" / "four_bar.urdf")
    q = np.zeros(3)
    # away from it, on the assembled parallelogram (unit links: relative angles θ, −θ, θ), Grübler's count
    # for a planar four-bar, 3 (4 − 1) − 2 · 4 = 1; folded flat, the rank of K drops by one
    q_open = assemble(model, np.array([0.6, 0.3, 0.2]), hold=["joint1"])
    assert np.allclose(q_open, [0.6, -0.6, 0.6], atol=1e-9)
    assert mobility(model, q_open).dof == 1 and mobility(model, q).dof == 2
    for m in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstraintWarning)
            r = constrained_forward_dynamics(model, q, np.zeros(3), np.array([1.0, -0.5, 0.2]), loop_solver=m, passive=False)
        assert np.all(np.isfinite(r.qdd)) and np.all(np.isfinite(r.lam)), m


def test_near_singular_pose_warns():
    """Close to the folded pose a singular value of K is tiny but kept: a ConstraintWarning says so."""
    model = ud.load(ROOT / "robots" / "generalized_rbda" / "four_bar.urdf")
    q = assemble(model, np.array([2e-5, -4e-5, 2e-5]), hold=["joint1"])
    with pytest.warns(ConstraintWarning, match="near-singular"):
        r = constrained_forward_dynamics(model, q, np.zeros(3), np.array([1.0, 0.0, 0.0]), passive=False)
    assert np.all(np.isfinite(r.qdd))


@pytest.mark.parametrize("cyl", ["boom_cyl", "stick_cyl", "bucket_cyl"])
@pytest.mark.parametrize("end", ["lower", "upper"])
def test_excavator_at_cylinder_end_stops(cyl, end):
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    q = model.q_initial().copy()
    i = model.joint_index(cyl)
    q[i] = getattr(model, end)[i]
    q = assemble(model, q, hold=["swing", "boom_cyl", "stick_cyl", "bucket_cyl"])
    assert mobility(model, q).dof == 4
    res = [constrained_forward_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv), loop_solver=m, passive=False).qdd
           for m in METHODS]
    for r in res:
        assert np.all(np.isfinite(r)) and np.allclose(r, res[0], rtol=1e-8, atol=1e-8)


def test_atomic_path_keeps_the_old_file_when_writing_fails(tmp_path):
    f = tmp_path / "report.md"
    f.write_text("good")
    with pytest.raises(RuntimeError):
        with atomic_path(f) as tmp:
            tmp.write_text("half")
            raise RuntimeError("disk full")
    assert f.read_text() == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left behind


def test_xml_size_limit(tmp_path, monkeypatch):
    f = tmp_path / "big.urdf"
    f.write_text('<robot name="r"><link name="a"/>' + " " * 5000 + "</robot>")
    monkeypatch.setattr(urdf_mod, "MAX_XML_BYTES", 1000)
    with pytest.raises(ud.XMLError, match="over the 1000-byte limit"):
        ud.load(f)


def test_debug_flag_shows_the_traceback(tmp_path):
    f = tmp_path / "bad.urdf"
    f.write_text('<robot name="r"><link name="a"/><joint name="j" type="hinge"/></robot>')
    r = subprocess.run([sys.executable, "-m", "urdf_dyn.cli", "--debug", "info", str(f)], capture_output=True,
                       text=True)
    assert r.returncode != 0 and "Traceback" in r.stderr and "unknown joint type" in r.stderr


def test_simulation_warns_when_mobility_changes():
    """The URDF+ four-bar released near its folded pose passes through it: the rank of K changes."""
    from urdf_dyn.simulation.simulate import simulate
    model = ud.load(ROOT / "robots" / "generalized_rbda" / "four_bar.urdf")
    q0 = assemble(model, np.array([0.3, -0.6, 0.3]), hold=["joint1"])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tr = simulate(model, q0, np.array([-3.0, 6.0, -3.0]), 0.5, options=ud.SimulateOptions(passive=False, dt_out=0.001, rtol=1e-9, atol=1e-11, residual_tol=1e-2))
    # a parallelogram passes its folded pose (crank angle 0) at t = 0.3/3 s less the start-up: rank 2 -> 1
    assert (tr.meta["rank_min"], tr.meta["rank_max"]) == (1, 2)
    assert any("rank changes from 2 to 1" in str(w.message) for w in rec)
    assert np.all(np.isfinite(tr.q)) and tr.residuals.max() < 1e-2


def test_atomic_outputs_get_the_usual_permissions(tmp_path):
    import os
    f = tmp_path / "out.csv"
    with atomic_path(f) as tmp:
        tmp.write_text("t\n")
    umask = os.umask(0)
    os.umask(umask)
    assert (f.stat().st_mode & 0o777) == (0o666 & ~umask)
