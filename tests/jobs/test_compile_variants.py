"""One compiled variant per kernel in the main job: numba compiles a kernel once per combination of
argument types (layout, writability, literal values), and each variant costs seconds on a first run. The main
job runs in a fresh process; then every numba dispatcher of urdf_dyn must hold at most one signature. The
job runs with an empty cache (``NUMBA_CACHE_DIR``, a new folder), as on a user's first run: with a warm one
only the kernels the job calls from Python would be counted (their callees load inside them), and a callee
compiled once per literal argument (32 variants of the workspace views, found this way) would pass."""
import os
import subprocess
import sys

from conftest import ROOT

CHILD = """
import sys, tempfile
from urdf_dyn.cli.main import main
rc = main(["run", "scenarios/excavator_dig.scenario.yaml", "--out-dir", tempfile.mkdtemp()])
assert rc == 0, rc
from numba.core.registry import CPUDispatcher
n = 0
for mod in [m for m in list(sys.modules) if m.startswith(("urdf_dyn", "urdf_dyn_viewer"))]:
    for name, f in vars(sys.modules[mod]).items():
        if isinstance(f, CPUDispatcher) and f.signatures:
            n += 1
            print("VARIANTS", len(f.signatures), mod + "." + name, [str(s) for s in f.signatures])
print("VARIANTS kernels", n)
"""


def test_each_kernel_compiles_one_variant_in_the_main_job(tmp_path):
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=1200, cwd=ROOT,
                       env={**os.environ, "MPLBACKEND": "Agg", "NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [ln.split(" ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("VARIANTS ")]
    assert int(lines[-1].split()[1]) >= 5        # the job ran its compiled path
    many = [ln for ln in lines[:-1] if int(ln.split()[0]) > 1]
    assert not many, "kernels compiled more than once:\n" + "\n".join(many)
