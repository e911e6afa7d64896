"""Optional dependencies: the core install carries what the main job imports; a command that
needs an extra says in one line which one to install, with exit status 2 (``urdf_dyn.extras``)."""
import subprocess
import sys

import pytest

from conftest import ROOT

from urdf_dyn.extras import MissingExtraError, require

#: a fresh interpreter in which the named modules cannot be imported (as in a lean install)
_BLOCK = "import sys\nfor m in {mods!r}: sys.modules[m] = None\n"


@pytest.mark.parametrize("module, extra", [("distributed", "sweep"), ("pyarrow.parquet", "sweep"),
                                           ("mcap_ros2.writer", "ros"), ("sympy", "gauss")])
def test_require_names_the_extra(monkeypatch, module, extra):
    for m in {module, module.split(".")[0]}:    # also a submodule an earlier test imported
        monkeypatch.setitem(sys.modules, m, None)
    with pytest.raises(MissingExtraError) as e:
        require(module, "this feature")
    assert str(e.value).endswith(f"pip install 'urdf_dyn[{extra}]'")
    assert "\n" not in str(e.value) and e.value.extra == extra


def test_require_does_not_hide_a_core_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError) as e:
        require("scipy", "x")
    assert not isinstance(e.value, MissingExtraError)


def test_sweep_without_dask_is_one_line_and_exit_2(tmp_path):
    code = _BLOCK.format(mods=["distributed", "dask"]) + (
        "from urdf_dyn.cli.main import main\n"
        f"sys.exit(main(['sweep', {str(ROOT / 'scenarios' / 'excavator_sweep.scenario.yaml')!r}, "
        f"'--out-dir', {str(tmp_path)!r}, '--workers', '2']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("pip install 'urdf_dyn[sweep]'"), r.stderr


def test_gauss_without_sympy_names_the_extra():
    code = _BLOCK.format(mods=["sympy"]) + (
        "from urdf_dyn.cli.main import main\n"
        f"sys.exit(main(['run', {str(ROOT / 'scenarios' / 'crank_slider_gauss.scenario.yaml')!r}, '--out-dir', '.']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().endswith("pip install 'urdf_dyn[gauss]'"), r.stderr


def test_the_main_job_imports_no_extra():
    """The main job's modules import none of the extras (their lazy imports sit in the functions that need
    them): what a lean install (``pip install -e '.[viewer]'``) can run."""
    code = ("import sys\nimport urdf_dyn.cli.main, urdf_dyn.jobs.sizing_job, urdf_dyn.jobs.sweep_job, urdf_dyn.io.mcap\n"
            "import urdf_dyn.gauss.system\n"
            "print(sorted(m for m in ('distributed', 'dask', 'pyarrow', 'mcap', 'mcap_ros2', 'sympy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
