"""The codebase's shape (docs/architecture.md): layers point one way, no import cycles, modules stay small,
the README's Python runs as written, and the API page builds."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
PKG = ROOT / "urdf_dyn"

#: layer of each module (docs/architecture.md); a module's layer is that of its longest matching prefix
LAYERS = {
    "urdf_dyn.errors": 0, "urdf_dyn._checks": 0, "urdf_dyn._extras": 0, "urdf_dyn._numba_cache": 0,
    "urdf_dyn.algorithms": 1,
    "urdf_dyn.model": 2,
    "urdf_dyn.io": 3, "urdf_dyn.reports.plotting": 3,
    "urdf_dyn.constraints": 4,
    "urdf_dyn.loading": 5,
    "urdf_dyn.simulation": 6, "urdf_dyn.gauss": 6,
    "urdf_dyn.machines": 7,
    "urdf_dyn.reports": 8,
    "urdf_dyn.launch": 9,
    "urdf_dyn.jobs": 10,
    "urdf_dyn.cli": 11,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(mod: str) -> int:
    best = max((k for k in LAYERS if mod == k or mod.startswith(k + ".")), key=len)
    return LAYERS[best]


def _imports(path: Path, me=None):
    """Every urdf_dyn module imported anywhere in the file (top level and inside functions)."""
    me = me or _module_name(path)
    pkg = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("urdf_dyn.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.rsplit(".", node.level - 1)[0] if node.level > 1 else pkg
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod == "urdf_dyn" or mod.startswith("urdf_dyn."):
                for a in node.names:  # `from urdf_dyn.x import y` may import the submodule y
                    sub = f"{mod}.{a.name}"
                    out.add(sub if _exists(sub) else mod)
    return {m for m in out if m != "urdf_dyn"}


def _exists(mod: str) -> bool:
    p = ROOT.joinpath(*mod.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


MODULES = {_module_name(p): p for p in PKG.rglob("*.py") if p.name != "__main__.py"}


def test_layers_point_down():
    """A module imports only modules of its own layer or below (the lazy re-exports of urdf_dyn/__init__
    are strings, not imports)."""
    bad = []
    for mod, path in MODULES.items():
        if mod == "urdf_dyn":
            continue
        for dep in _imports(path):
            if _layer(dep) > _layer(mod):
                bad.append(f"{mod} (layer {_layer(mod)}) imports {dep} (layer {_layer(dep)})")
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    graph = {m: {d for d in _imports(p) if d in MODULES and d != m} for m, p in MODULES.items()}
    # a package's __init__ importing its own submodules is not a cycle of logic: drop parent -> child edges
    graph = {m: {d for d in ds if not d.startswith(m + ".")} for m, ds in graph.items()}
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in graph[m]:
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_import_checker_finds_lazy_and_relative_imports(tmp_path):
    """The checks above can fail: the walker finds imports inside functions and relative ones."""
    f = tmp_path / "x.py"
    f.write_text("import numpy\nfrom . import loops\ndef f():\n    from urdf_dyn.cli.main import main\n")
    found = _imports(f, me="urdf_dyn.constraints.x")
    assert found == {"urdf_dyn.cli.main", "urdf_dyn.constraints.loops"}
    assert _layer("urdf_dyn.cli.main") > _layer("urdf_dyn.constraints.x")


def test_modules_stay_small():
    """No module over 500 lines unless docs/architecture.md states why."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    allowed = set(re.findall(r"^\| `([a-z_/]+\.py)` \| ~?\d+ \|", doc, re.M))
    long = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if len(p.read_text().splitlines()) > 500]
    assert not [m for m in long if m not in allowed], f"over 500 lines without a reason in the docs: {long}"


def test_every_module_declares_all():
    missing = [m for m, p in MODULES.items()
               if not p.name.startswith("_") and p.name != "__init__.py" and "__all__" not in p.read_text()]
    assert not missing, missing


def test_readme_python_blocks_run_as_written(tmp_path):
    """Every ```python block of the README runs, in order, in one namespace, from the repository root."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 3
    script = tmp_path / "readme.py"
    script.write_text("import os, warnings\nos.chdir(%r)\nwarnings.simplefilter('ignore')\n" % str(ROOT)
                      + "\n".join(f"# --- block {i}\n{b}" for i, b in enumerate(blocks)))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path, env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr[-3000:]


def test_api_page_builds_without_warnings(tmp_path):
    """pdoc builds the API page from the docstrings; a warning (a broken reference, a docstring pdoc cannot
    read) fails the build."""
    pytest.importorskip("pdoc")
    r = subprocess.run([sys.executable, "-W", "error::UserWarning:pdoc", "-m", "pdoc", "urdf_dyn", "-o",
                        str(tmp_path / "api")], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "api" / "urdf_dyn.html").is_file()
    assert "Warn" not in r.stderr, r.stderr[-3000:]
