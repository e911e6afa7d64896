"""Every URDF of example-robot-data, loaded by urdf_dyn and by Pinocchio, compared tree by tree.

Oracle: ``pin.buildModelFromUrdf`` of the same file (fixed base, mimic joints independent coordinates, the
same conventions as tests/test_tree_pinocchio.py, whose ``Case`` bridges joint order and continuous
joints). For each file that both load: same joint set, and RNEA and the mass matrix equal to 1e-9
(relative, norm-based) at 2 random states. Files that urdf_dyn refuses must be refused by Pinocchio too,
or be listed in ``REFUSED`` with the reason urdf_dyn states. The count is printed in the terminal summary.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import urdf_dyn  # noqa: E402
from test_tree_pinocchio import ERD, ERD_PACKAGE_DIRS, Case, _states  # noqa: E402

FILES = sorted(p.relative_to(ERD).as_posix() for p in ERD.rglob("*.urdf")) if ERD is not None else []

#: Pinocchio loads these, urdf_dyn refuses them; the reason urdf_dyn gives (a substring of its message).
REFUSED = {
    # link "...": principal inertias (-0.021, 0.052, 0.099) kg m²: far from rounding, no rigid body has them;
    # Pinocchio does not check inertias.
    "romeo_description/urdf/romeo_laas_small.urdf": "not positive semi-definite",
}

_COUNT = {"files": 0, "loaded": 0, "refused_both": [], "refused_here": [], "worst": 0.0, "worst_robot": ""}
_PLUGIN = "urdf_dyn-erd-summary"


class _Summary:
    def pytest_terminal_summary(self, terminalreporter):
        c = _COUNT
        if not c["files"]:
            return
        tr = terminalreporter
        tr.section("example-robot-data: loaded / compared with Pinocchio")
        tr.write_line(f"{c['loaded']} of {c['files']} URDFs load and match Pinocchio (largest relative error "
                      f"{c['worst']:.1e}, {c['worst_robot']}); refused by both: {len(c['refused_both'])}; "
                      f"refused here only: {len(c['refused_here'])}")
        for f, why in c["refused_both"] + c["refused_here"]:
            tr.write_line(f"  refused {f}: {why}")


@pytest.fixture(scope="module")
def record(request):
    manager = request.config.pluginmanager
    if not manager.has_plugin(_PLUGIN):
        manager.register(_Summary(), _PLUGIN)
    return _COUNT


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("rel", FILES)
def test_erd_file(rel, record):
    path = ERD / rel
    record["files"] += 1
    try:
        pm = pin.buildModelFromUrdf(str(path))
    except Exception as e:  # noqa: BLE001 - Pinocchio raises RuntimeError/ValueError
        pm, pin_error = None, str(e).splitlines()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urdf_dyn.ModelWarning)
        try:
            model = urdf_dyn.load(path, package_dirs=ERD_PACKAGE_DIRS)
        except urdf_dyn.ModelError as e:
            if pm is None:
                record["refused_both"].append((rel, f"{e.reason} (Pinocchio: {pin_error[:80]})"))
                return
            assert rel in REFUSED, f"{rel}: Pinocchio loads it, urdf_dyn refuses: {e}"
            assert REFUSED[rel] in str(e)
            record["refused_here"].append((rel, e.reason))
            return
    assert pm is not None, f"{rel}: urdf_dyn loads a file Pinocchio refuses ({pin_error})"
    assert rel not in REFUSED
    names = list(model.joint_names)
    assert sorted(names) == sorted(pm.names[1:]), f"{rel}: joint sets differ"
    jid = [int(pm.getJointId(n)) for n in names]
    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    q, qd, qdd, tau = _states(model, rng, 2)
    c = Case(rel, model, pm, pm.createData(), np.array(jid), np.array([pm.idx_qs[j] for j in jid]),
             np.array([pm.idx_vs[j] for j in jid]), np.array([pm.nqs[j] for j in jid]), q, qd, qdd, tau)
    for s in range(len(q)):
        if model.nv == 0:
            break
        want = c.from_pin_v(pin.rnea(pm, c.pd, c.pin_q(q[s]), c.pin_v(qd[s]), c.pin_v(qdd[s])))
        c.check("rnea", urdf_dyn.inverse_dynamics(model, q[s], qd[s], qdd[s]), want)
        M = pin.crba(pm, c.pd, c.pin_q(q[s]))
        M = np.triu(M) + np.triu(M, 1).T
        c.check("H", urdf_dyn.mass_matrix(model, q[s]), c.from_pin_mat(M))
    record["loaded"] += 1
    worst = max(c.errors.values(), default=0.0)
    if worst >= record["worst"]:
        record["worst"], record["worst_robot"] = worst, rel
