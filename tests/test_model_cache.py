"""Models kept by content (``urdf_dyn.model_cache``): a kept Model is the fresh one, array by array; an edited
include, an edited file or other arguments build anew; the build's warnings are given again; ``URDF_DYN_CACHE=off``
builds every time; a planted entry is not believed."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import ROOT

import urdf_dyn
from urdf_dyn import kept_store, model_cache

MAIN = """<?xml version="1.0"?>
<robot name="two" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="part.xacro"/>
  <link name="base"/>
  <link name="arm"><inertial><mass value="${arm_mass}"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""
PART = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="arm_mass" value="{mass}"/></robot>
"""


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """The model cache on, in a temporary folder; its entries' folder."""
    monkeypatch.setenv("URDF_DYN_CACHE", "on")
    monkeypatch.setenv("URDF_DYN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


def _xacro(tmp_path, mass="2.0"):
    (tmp_path / "part.xacro").write_text(PART.format(mass=mass))
    (tmp_path / "two.urdf.xacro").write_text(MAIN)
    return tmp_path / "two.urdf.xacro"


def _refuse_builds(monkeypatch):
    import urdf_dyn.io.urdf as reader

    def refuse(*a, **k):
        raise AssertionError("built again, though a kept Model was valid")
    monkeypatch.setattr(reader, "parse_urdf", refuse)


def _same(a, b):
    """Every attribute of two Models equal: arrays by value, dtype and shape (and read-only, as a Model's are)."""
    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, f.name
            assert np.array_equal(x, y), f.name
            assert not y.flags.writeable, f.name
        else:
            assert repr(x) == repr(y), f.name


def test_a_kept_model_is_the_fresh_one_array_by_array(kept, monkeypatch):
    src = ROOT / "robots" / "excavator.urdf"
    fresh = urdf_dyn.load(src, cache=False)
    first = urdf_dyn.load(src)
    assert len(list(kept.glob("*.pkl"))) == 2            # the list of files read, and the Model
    _refuse_builds(monkeypatch)
    second = urdf_dyn.load(src)
    _same(fresh, first)
    _same(fresh, second)
    q = fresh.q_initial()
    assert np.array_equal(urdf_dyn.inverse_dynamics(second, q, np.zeros(second.nv), np.zeros(second.nv)),
                          urdf_dyn.inverse_dynamics(fresh, q, np.zeros(fresh.nv), np.zeros(fresh.nv)))


def test_an_edited_include_changes_the_key(kept, tmp_path, monkeypatch):
    src = _xacro(tmp_path)
    options = dict(package_dirs=None, xacro_args=None, gravity=(0.0, 0.0, -9.81), trust_xacro=False, strict=False,
                   floating_base=False, check_loops=True)
    a = urdf_dyn.load(src)
    assert a.link_masses["arm"] == 2.0
    request = model_cache.request_key(src, options)
    inputs = kept_store.load(kept / f"{request[:40]}.pkl")
    assert str(tmp_path / "part.xacro") in inputs and str(src) in inputs
    before = model_cache.content_key(request, inputs)
    (tmp_path / "part.xacro").write_text(PART.format(mass="3.0"))        # only the include changes
    assert model_cache.request_key(src, options) == request
    assert model_cache.content_key(request, inputs) != before
    b = urdf_dyn.load(src)
    assert b.link_masses["arm"] == 3.0
    _same(urdf_dyn.load(src, cache=False), b)
    (tmp_path / "part.xacro").write_text(PART.format(mass="2.0"))        # back: the first Model is kept still
    _refuse_builds(monkeypatch)
    _same(a, urdf_dyn.load(src))


def test_other_arguments_and_an_edited_file_build_anew(kept, tmp_path):
    src = _xacro(tmp_path)
    a = urdf_dyn.load(src)
    moon = urdf_dyn.load(src, gravity=(0.0, 0.0, -1.62))
    assert not np.array_equal(a.gravity, moon.gravity)
    _same(urdf_dyn.load(src, gravity=(0.0, 0.0, -1.62), cache=False), moon)
    src.write_text(MAIN.replace('effort="10"', 'effort="20"'))
    assert urdf_dyn.load(src).effort_limit[0] == 20.0


def test_the_warnings_of_the_build_are_given_again(kept, tmp_path):
    src = tmp_path / "quirk.urdf"      # a declaration after a comment: repaired with a located ModelWarning
    src.write_text("<!-- c -->\n" + MAIN.replace('<xacro:include filename="part.xacro"/>', "")
                   .replace("${arm_mass}", "2.0").replace(' xmlns:xacro="http://www.ros.org/wiki/xacro"', ""))
    said = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            urdf_dyn.load(src)
        said.append([(w.category, str(w.message)) for w in caught])
    assert said[0] and said[0] == said[1]
    assert all(issubclass(c, urdf_dyn.ModelWarning) for c, _ in said[1])
    assert str(src) in said[1][0][1]


def test_off_builds_every_time(kept, monkeypatch):
    monkeypatch.setenv("URDF_DYN_CACHE", "off")
    urdf_dyn.load(ROOT / "robots" / "excavator.urdf")
    assert not kept.exists() or not list(kept.glob("*.pkl"))


def test_a_planted_entry_is_not_believed(kept, monkeypatch):
    src = ROOT / "robots" / "excavator.urdf"
    fresh = urdf_dyn.load(src)
    for p in kept.glob("*.pkl"):       # rewritten by someone without the key: fails the MAC, built again
        data = bytearray(p.read_bytes())
        data[-3] ^= 0xFF
        p.write_bytes(bytes(data))
    _same(fresh, urdf_dyn.load(src))


def test_a_kept_model_needs_neither_yourdfpy_nor_trimesh(kept):
    src = ROOT / "robots" / "excavator.urdf"
    code = ("import sys, urdf_dyn; urdf_dyn.load(sys.argv[1]); "
            "print(' '.join(m for m in ('yourdfpy', 'trimesh', 'xacro') if m in sys.modules))")
    first = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True, text=True, check=True)
    assert "yourdfpy" in first.stdout
    assert second.stdout.strip() == ""
