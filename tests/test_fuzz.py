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
        # it loaded: the numbers it computes must be finite (or a documented error is raised)
        q = np.zeros(model.nv)
        try:
            tau = ud.inverse_dynamics(model, q, q, q)
            assert np.all(np.isfinite(tau)), name
            H = ud.mass_matrix(model, q)
            assert np.all(np.isfinite(H)), name
        except (ud.UrdfDynError, np.linalg.LinAlgError):
            pass
