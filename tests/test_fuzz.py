"""Property-based fuzzing (hypothesis): mutated real robot descriptions either load, or raise one of the
documented UrdfDynError types — never another exception, never a model that computes NaN."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from lxml import etree

import urdf_dyn as ud
from _robots import ROOT

SEEDS = {name: (ROOT / "robots" / f"{name}.urdf").read_bytes()
         for name in ("puma560", "crank_slider", "four_bar", "rbda_fig8_3", "excavator")}

NUMBERS = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e400", "-1", "0", "", "abc", "1 2", "1,2,3", "0x10", "1e-300",
                     "  3  ", "NaN", "-0"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**6, 10**6).map(str),
)


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(SEEDS)))
    root = etree.fromstring(SEEDS[name], etree.XMLParser(remove_comments=True))
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    for _ in range(draw(st.integers(1, 3))):
        el = draw(st.sampled_from(elements))
        op = draw(st.sampled_from(["drop_attr", "set_attr", "drop_el", "dup_el", "rename_attr_value", "text"]))
        if op == "drop_attr" and el.attrib:
            del el.attrib[draw(st.sampled_from(sorted(el.attrib)))]
        elif op == "set_attr" and el.attrib:
            key = draw(st.sampled_from(sorted(el.attrib)))
            parts = max(1, len(el.attrib[key].split()))
            el.attrib[key] = " ".join(draw(NUMBERS) for _ in range(draw(st.sampled_from([parts, parts - 1, parts + 1, 1]))))
        elif op == "drop_el" and el.getparent() is not None:
            el.getparent().remove(el)
            elements = [e for e in root.iter() if isinstance(e.tag, str)]
        elif op == "dup_el" and el.getparent() is not None:
            el.addnext(etree.fromstring(etree.tostring(el)))
            elements = [e for e in root.iter() if isinstance(e.tag, str)]
        elif op == "rename_attr_value" and el.attrib:
            key = draw(st.sampled_from(sorted(el.attrib)))
            el.attrib[key] = draw(st.sampled_from(["base_link", "link1", "bucket", "joint1", "revolute",
                                                   "fixed", "floating", "x", ""]))
        elif op == "text":
            el.text = draw(NUMBERS)
    return name, etree.tostring(root)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_descriptions_fail_cleanly(case):
    name, xml = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = ud.load(xml)
        except ud.UrdfDynError as e:
            assert str(e)  # a message, naming what is wrong
            event(f"refused: {type(e).__name__}")
            return
        event("loaded")
        # it loaded: the numbers it computes must be finite and, where Pinocchio reads the same XML, equal
        # Pinocchio's RNEA and CRBA on the mutated description (an oracle: a mutation misread by urdf_dyn,
        # such as a wrong origin or inertia, shows up here)
        q = np.zeros(model.nv)
        try:
            tau = ud.inverse_dynamics(model, q, q, q)
            assert np.all(np.isfinite(tau)), name
            H = ud.mass_matrix(model, q)
            assert np.all(np.isfinite(H)), name
        except (ud.UrdfDynError, np.linalg.LinAlgError):
            return
        _compare_with_pinocchio(model, name)


def _urdfdom_reads_differently(xml: str) -> bool:
    """Known divergences of urdfdom (Pinocchio's parser) from the URDF specification that urdf_dyn follows:
    ``<axis/>`` without ``xyz`` is (0, 0, 0) there, (1, 0, 0) by the spec."""
    root = etree.fromstring(xml.encode())
    return any(a.get("xyz") is None for a in root.iter("axis"))


def _quietly(f):
    """(f(), what the C++ side wrote on stderr): urdfdom reports parse errors there and carries on."""
    import os
    import sys
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            out = f()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return out, tmp.read().decode(errors="replace")


def _compare_with_pinocchio(model, name):
    pin = pytest.importorskip("pinocchio")
    if _urdfdom_reads_differently(model.urdf_xml):
        event("urdfdom reads it differently")
        return
    try:
        pm, complaints = _quietly(lambda: pin.buildModelFromXML(model.urdf_xml))
    except Exception:  # noqa: BLE001 - Pinocchio refuses some descriptions urdf_dyn accepts
        event("pinocchio refuses it")
        return
    if "Error" in complaints:  # urdfdom printed a parse error and went on with part of the element
        event("urdfdom reports an error")
        return
    names = [pm.names[i] for i in range(1, pm.njoints)]
    if sorted(names) != sorted(model.joint_names) or pm.nv != model.nv:
        event("pinocchio builds another tree")
        return
    event("compared with pinocchio")
    pd = pm.createData()
    perm = [model.joint_index(n) for n in names]
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    qp = np.zeros(pm.nq)
    for i in range(1, pm.njoints):
        j, x = pm.joints[i], q[perm[i - 1]]
        qp[j.idx_q:j.idx_q + j.nq] = [np.cos(x), np.sin(x)] if j.nq == 2 else [x]
    pm.gravity.linear = np.asarray(model.gravity, float)
    tau_ref = pin.rnea(pm, pd, qp, qd[perm], qdd[perm])
    H_ref = pin.crba(pm, pd, qp)
    H_ref = np.triu(H_ref) + np.triu(H_ref, 1).T
    tau = ud.inverse_dynamics(model, q, qd, qdd)[perm]
    H = ud.mass_matrix(model, q)[np.ix_(perm, perm)]
    scale = 1.0 + np.abs(tau_ref).max()
    assert np.abs(tau - tau_ref).max() <= 1e-8 * scale, (name, tau, tau_ref)
    assert np.abs(H - H_ref).max() <= 1e-8 * (1.0 + np.abs(H_ref).max()), name
