"""The declared kernel layouts (``algorithms.layout``): the packed arrays hold what the Model says, seen
through the Python views the declaration generates and through the compiled views the kernels use
(``_kernels._unpack``, ``_sample._ip``/``_fp``); a declaration the views could not serve is refused."""
from __future__ import annotations

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn.algorithms import _kernels
from urdf_dyn.algorithms.layout import LOOP_ARGS, LOOPS, ONE, TREE, Layout

from conftest import ROOT


@pytest.fixture(scope="module")
def excavator():
    return ud.load(ROOT / "robots" / "excavator.urdf")


def test_tree_views_hold_the_model(excavator):
    m = excavator
    ib, fb = m.kernel_pack
    v = TREE.views(ib, fb, {"n": m.NB + 1})
    assert np.array_equal(v["parent"], m.parent) and np.array_equal(v["iq"][1:], m.iq[1:])
    assert np.array_equal(v["m"][1:], np.asarray(m.I)[1:, 3, 3])
    assert np.array_equal(v["armature"][1:], m.armature) and v["armature"][0] == 0.0
    assert np.array_equal(v["a0"], m.a0)
    # the compiled views (what every kernel reads) are the declared ones, field by field
    par, jt, iq, ax, Et, rt, S, mI, h, J, Ec, a0, arm = _kernels._unpack(ib, fb)
    for got, name in ((par, "parent"), (jt, "jtype"), (iq, "iq"), (ax, "axis"), (Et, "E_tree"), (rt, "r_tree"),
                      (S, "S"), (mI, "m"), (h, "h"), (J, "I_bar"), (Ec, "E_c"), (a0, "a0"), (arm, "armature")):
        assert np.array_equal(got, v[name]), name
    assert len(fb) == TREE.offsets({"n": m.NB + 1})["f8"] and len(fb) % 18 == 0


def test_loop_views_hold_the_loops(excavator):
    m = excavator
    pack = m.loop_pack
    assert [lp.p for lp in m.loops] == pack["p"].tolist() and [lp.s for lp in m.loops] == pack["s"].tolist()
    for i, lp in enumerate(m.loops):
        assert np.array_equal(pack["XP"][i], lp.X_P) and np.array_equal(pack["XS"][i], lp.X_S)
    assert sum(lp.nc for lp in m.loops) == len(pack["row_loop"]) == len(pack["labels"])
    assert all(a is pack[k] for a, k in zip(pack["args"], LOOP_ARGS))
    assert all(not a.flags.writeable and a.flags.c_contiguous for a in pack["args"])


def test_single_state_pack_read_by_its_header(excavator):
    from urdf_dyn.constraints import _sample
    m = excavator
    pack = m.loop_pack
    R = len(pack["row_loop"])
    fw, iw = _sample.actuation_work(m.nv, R, R, 0)
    none = np.zeros(0)
    mi, mf, _, _ = _sample.one_pack(m, pack["row_loop"], pack["row_T"], R, np.zeros(0, np.int64), none, none,
                                    none, fw, iw)
    sizes = {"n": m.NB + 1, "3n": len(m.kernel_pack[0]), "L": len(m.loops), "RA": R, "F": len(m.kernel_pack[1]),
             "nd": m.nv, "ns": m.nv if m.spring_stiffness is not None else 0, "p": 0, "k": 0}
    v = ONE.views(mi, mf, sizes, header=True)
    for name in ONE.ints:
        assert np.array_equal(_sample._ip(mi, ONE.index(name)), v[name].ravel()), name
    for name in ONE.floats:
        assert np.array_equal(_sample._fp(mi, mf, ONE.index(name)), v[name].ravel()), name
    assert np.array_equal(v["XP"], pack["XP"]) and np.array_equal(v["fb"], m.kernel_pack[1])


def test_a_layout_the_views_cannot_serve_is_refused():
    with pytest.raises(ValueError, match="not a multiple of 3"):
        Layout("bad", [("m", "f8", ("n",)), ("axis", "f8", ("n", 3))]).coefficients("n")
    with pytest.raises(ValueError, match="repeated"):
        Layout("bad", [("m", "f8", ("n",)), ("m", "i8", ("n",))])
    with pytest.raises(ValueError, match="size L is 2 and 3"):
        LOOPS.sizes_of({"p": [1, 2], "s": [1, 2, 3]})
