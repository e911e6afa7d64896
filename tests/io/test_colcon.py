"""The repository is a ROS 2 package (package.xml format 3, ament_python): `colcon build` in a temporary
workspace installs the library, the ament index marker, package.xml and the console script."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from _robots import ROOT

FILES = ["package.xml", "setup.py", "setup.cfg", "pyproject.toml", "README.md", "resource", "urdf_dyn", "viewer"]


def _colcon():
    exe = Path(sys.executable).parent / "colcon"
    return str(exe) if exe.exists() else shutil.which("colcon")


def test_package_xml_is_format_3_ament_python():
    root = etree.parse(str(ROOT / "package.xml")).getroot()
    assert root.tag == "package" and root.get("format") == "3"
    assert root.findtext("name") == "urdf_dyn" and root.findtext("export/build_type") == "ament_python"
    import re
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert root.findtext("version") == version  # one version for pip and for ROS
    assert (ROOT / "resource" / "urdf_dyn").is_file()


def test_colcon_build_in_a_temporary_workspace(tmp_path):
    colcon = _colcon()
    if colcon is None:
        if os.environ.get("CI"):
            pytest.fail("colcon is not installed: the [test] extra installs colcon-core and colcon-ros")
        pytest.skip("colcon is not installed (pip install -e '.[test]' installs colcon-core and colcon-ros)")
    src = tmp_path / "ws" / "src" / "urdf_dyn"
    src.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in FILES:
        p = ROOT / name
        (shutil.copytree(p, src / name, ignore=ignore) if p.is_dir() else shutil.copy2(p, src / name))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    r = subprocess.run([colcon, "build", "--event-handlers", "console_direct+"], cwd=tmp_path / "ws",
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    inst = tmp_path / "ws" / "install" / "urdf_dyn"
    assert (inst / "share" / "ament_index" / "resource_index" / "packages" / "urdf_dyn").is_file()
    assert (inst / "share" / "urdf_dyn" / "package.xml").is_file()
    assert (inst / "lib" / "urdf_dyn" / "urdf-dyn").is_file()  # `ros2 run urdf_dyn urdf-dyn`
    site = list(inst.glob("lib/python3*/site-packages/urdf_dyn/loading.py"))
    assert site, "the library is not installed"
    probe = subprocess.run([sys.executable, "-c", "import urdf_dyn, sys; print(urdf_dyn.__file__)"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(site[0].parent.parent)), cwd=tmp_path)
    assert probe.returncode == 0 and str(inst) in probe.stdout
