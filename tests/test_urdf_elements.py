"""The URDF reader's element reading (urdf_dyn.io.urdf_elements) against yourdfpy's, which it replaces on the
start-up path: the same links, joints, origins, axes, inertias, limits, dynamics and mimics, bit for bit, on
every URDF in robots/ and in the shared robot files (those skip when ../shared is absent). And loading a robot
no longer imports trimesh (a fresh process)."""
import io
import subprocess
import sys
import warnings

import numpy as np
import pytest
from lxml import etree

from _robots import ROOT, SHARED, needs_shared, pendulum_urdf

yourdfpy = pytest.importorskip("yourdfpy", reason="yourdfpy (the oracle) is not installed")

from urdf_dyn.io.urdf_elements import origin_matrix, read_robot  # noqa: E402


def _pairs(path_or_text):
    if isinstance(path_or_text, str):
        root = etree.fromstring(path_or_text.encode())
    else:
        root = etree.parse(str(path_or_text), etree.XMLParser(remove_blank_text=True, resolve_entities=False)).getroot()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = yourdfpy.URDF.load(io.BytesIO(etree.tostring(root)), build_scene_graph=False, load_meshes=False,
                                 build_collision_scene_graph=False, load_collision_meshes=False).robot
    return read_robot(root), ref


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, float), np.asarray(b, float))
    return a == b


def _differences(ours, ref):
    out = []
    if ours.name != ref.name:
        out.append("robot name")
    if [x.name for x in ours.links] != [x.name for x in ref.links]:
        out.append("link names")
    for a, b in zip(ours.links, ref.links):
        if (a.inertial is None) != (b.inertial is None):
            out.append(f"{a.name}: inertial")
        elif a.inertial is not None:
            out += [f"{a.name}: inertial.{k}" for k in ("origin", "inertia", "mass")
                    if not _same(getattr(a.inertial, k), getattr(b.inertial, k))]
    if [x.name for x in ours.joints] != [x.name for x in ref.joints]:
        out.append("joint names")
    for a, b in zip(ours.joints, ref.joints):
        out += [f"{a.name}: {k}" for k in ("type", "parent", "child", "origin", "axis") if not _same(getattr(a, k), getattr(b, k))]
        for k, fields in (("limit", ("effort", "velocity", "lower", "upper")), ("dynamics", ("damping", "friction")),
                          ("mimic", ("joint", "multiplier", "offset"))):
            A, B = getattr(a, k), getattr(b, k)
            if (A is None) != (B is None):
                out.append(f"{a.name}: {k}")
            elif A is not None:
                out += [f"{a.name}: {k}.{f}" for f in fields if not _same(getattr(A, f), getattr(B, f))]
    return out


def test_repository_robots_read_as_yourdfpy_reads_them():
    files = sorted((ROOT / "robots").rglob("*.urdf"))
    assert len(files) >= 5
    for f in files:
        ours, ref = _pairs(f)
        assert not _differences(ours, ref), (f, _differences(ours, ref)[:5])


@needs_shared
def test_shared_robots_read_as_yourdfpy_reads_them():
    files = sorted(SHARED.rglob("*.urdf"))
    compared = 0
    for f in files:
        try:
            ours, ref = _pairs(f)
        except Exception:  # noqa: BLE001 - a file yourdfpy cannot read (xacro left in it): nothing to compare
            continue
        compared += 1
        assert not _differences(ours, ref), (f, _differences(ours, ref)[:5])
    assert compared >= 10


def test_defaults_and_odd_elements_match():
    """Elements with their attributes left out (yourdfpy's defaults), a mimic, dynamics and partial limits."""
    text = """<robot name="odd">
      <link name="a"/>
      <link name="b"><inertial><mass/><inertia/></inertial></link>
      <link name="c"><inertial><origin rpy="0.3 -1.2 2.9"/><mass value="2.5"/>
        <inertia ixx="1e-3" iyy="2" izz="3e+1" ixy="-0.1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 2 3"/>
        <axis/><limit lower="-1"/><dynamics damping="0.5"/></joint>
      <joint name="j2" type="continuous"><parent link="b"/><child link="c"/><origin rpy="3.1 0.2 -0.7"/>
        <mimic joint="j1"/></joint>
    </robot>"""
    ours, ref = _pairs(text)
    assert not _differences(ours, ref), _differences(ours, ref)
    j1 = ours.joints[0]
    assert j1.limit.lower == -1.0 and j1.limit.upper is None and j1.dynamics.damping == "0.5"
    assert ours.joints[1].mimic.multiplier == 1.0 and ours.joints[1].mimic.offset == 0.0


def test_origin_is_translation_then_fixed_axis_xyz_rotation():
    """An independent statement of the URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll), T = [R p; 0 1]."""
    r, p, y = 0.4, -0.9, 2.2

    def Rx(a):
        return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])

    def Ry(a):
        return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])

    def Rz(a):
        return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])

    T = origin_matrix([0.1, -0.2, 0.3], [r, p, y])
    assert np.allclose(T[:3, :3], Rz(y) @ Ry(p) @ Rx(r), atol=1e-15)
    assert np.allclose(T[:3, 3], [0.1, -0.2, 0.3]) and np.allclose(T[3], [0, 0, 0, 1])


def test_loading_a_robot_does_not_import_trimesh(tmp_path):
    f = tmp_path / "p.urdf"
    f.write_text(pendulum_urdf())
    code = ("import sys, urdf_dyn\n"
            f"m = urdf_dyn.load({str(f)!r})\n"
            "bad = [n for n in ('trimesh', 'yourdfpy', 'networkx', 'shapely') if n in sys.modules]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
