"""The public face: about 50 dynamics names at the top level of urdf_dyn (and the errors), machine analysis in
``urdf_dyn.machines.__all__``; every name that left the top level still answers for one release, with a
FutureWarning naming its new place (``urdf_dyn._deprecated``), and is the very object found there; the
package docstring names only what exists. ``simulate``'s settings are one ``SimulateOptions``; the former
keywords still run, with a FutureWarning, and give the same trajectory."""
import importlib
import importlib.util
import inspect
import re
import warnings

import numpy as np
import pytest

import urdf_dyn as ud
from urdf_dyn import _deprecated


def test_about_fifty_dynamics_names_and_the_errors():
    errors = [n for n in ud.__all__ if ud._EXPORTS[n] == "urdf_dyn.errors"]
    dynamics = [n for n in ud.__all__ if n not in errors]
    assert len(errors) == 10 and 45 <= len(dynamics) <= 52, (len(dynamics), dynamics)
    assert len(set(ud.__all__)) == len(ud.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # a public name is served without a warning
        for n in ud.__all__:
            assert getattr(ud, n) is getattr(importlib.import_module(ud._EXPORTS[n]), n)
    machines = importlib.import_module("urdf_dyn.machines")
    assert not set(machines.__all__) & set(ud.__all__)
    for n in machines.__all__:
        assert getattr(machines, n) is not None
    for gone in ("load_from_args", "run_sweep_file", "Passive", "digging_forces", "parse_sdf", "run_document"):
        assert gone not in ud.__all__


@pytest.mark.parametrize("old", sorted(_deprecated.DEPRECATED["urdf_dyn"]))
def test_a_name_that_left_answers_for_one_release(old):
    where, new, _why = _deprecated.DEPRECATED["urdf_dyn"][old]
    ud.__dict__.pop(old, None)
    with pytest.warns(FutureWarning, match=rf"urdf_dyn\.{old} is deprecated .*use {re.escape(where)}\.{new}; "
                                           rf"the old name goes in urdf_dyn {_deprecated.REMOVED_IN}") as rec:
        value = getattr(ud, old)
    assert value is getattr(importlib.import_module(where), new)
    assert rec[0].filename == __file__                     # the warning names the user's line
    assert old not in ud.__all__


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        ud.no_such_name


def test_the_package_docstring_names_what_exists():
    doc = ud.__doc__
    for mod in re.findall(r"``(urdf_dyn(?:\.[a-z_]+)+)``", doc):
        importlib.import_module(mod)
    for dotted in re.findall(r"``((?:io|constraints|algorithms)\.[a-z_]+\.[A-Za-z_]+)``", doc):
        mod, name = dotted.rsplit(".", 1)
        assert hasattr(importlib.import_module("urdf_dyn." + mod), name), dotted
    for name in re.findall(r"``([A-Za-z_]+)``", doc):
        assert name in ud.__all__ or name in ("machines", "__all__") or importlib.util.find_spec(f"urdf_dyn.{name}") \
            or name in ("io",), name
    assert "applications" not in doc


def test_simulate_takes_one_options_record_and_the_old_keywords_for_one_release():
    model = ud.load(__import__("_robots").ROOT / "robots" / "four_bar.urdf")
    q0 = model.q_initial()
    params = inspect.signature(ud.simulate).parameters
    assert list(params)[:6] == ["model", "q0", "qd0", "duration", "controller", "options"]
    assert not {"dt_out", "rtol", "passive", "limits"} & set(params)
    opts = ud.SimulateOptions(dt_out=0.05, rtol=1e-9, atol=1e-11, progress=False)
    new = ud.simulate(model, q0, None, 0.3, options=opts)
    with pytest.warns(FutureWarning, match=r"simulate\(\): settings as keywords are deprecated: use simulate\(\.\.\., "
                                           r"options=SimulateOptions\(dt_out=\.\.\., rtol=\.\.\."):
        old = ud.simulate(model, q0, None, 0.3, dt_out=0.05, rtol=1e-9, atol=1e-11, progress=False)
    assert np.array_equal(new.q, old.q) and np.array_equal(new.t, old.t)
    assert new.meta["rtol"] == 1e-9 and len(new.t) == 7
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtout'"):
        ud.simulate(model, q0, None, 0.3, dtout=0.05)
    with pytest.raises(TypeError, match="options= and the keywords rtol"):
        ud.simulate(model, q0, None, 0.3, options=opts, rtol=1e-6)
    with pytest.raises(TypeError, match="options must be a SimulateOptions, got float"):
        ud.simulate(model, q0, None, 0.3, None, 0.05)          # the former positional dt_out
    with pytest.raises(Exception):
        opts.rtol = 1.0                                         # frozen: a run's settings cannot change under it


def test_a_renamed_keyword_runs_for_one_release_from_the_functions_own_module():
    """``renamed_keywords`` (``_deprecated``): a former keyword runs with a FutureWarning naming the user's line
    and gives the same answer; both names are a TypeError; the entry is a function of the decorated function's
    module (its globals), so that the library's own calls never pass through layer 0 and back up."""
    from urdf_dyn.machines import stability
    model = ud.load(__import__("_robots").ROOT / "robots" / "excavator.urdf")
    q = model.q_initial()
    f = stability.base_reaction
    assert f.__globals__ is vars(stability) and f.__wrapped__.__globals__ is vars(stability)
    assert list(inspect.signature(f).parameters)[:2] == ["model", "q"]
    with pytest.warns(FutureWarning, match=r"base_reaction\(\): the keyword Q= is now q=") as rec:
        old = f(model, Q=q)
    assert rec[0].filename == __file__ and np.array_equal(old, f(model, q))
    with pytest.raises(TypeError, match="both Q= and its new name q="):
        f(model, q=q, Q=q)
    with pytest.raises(TypeError):
        f(model, q, bogus=1)
