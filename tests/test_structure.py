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
    "urdf_dyn.errors": 0, "urdf_dyn._checks": 0, "urdf_dyn._deprecated": 0, "urdf_dyn.extras": 0,
    "urdf_dyn.numba_cache": 0, "urdf_dyn.cache_trust": 0, "urdf_dyn.kept_store": 0, "urdf_dyn.cores": 0, "urdf_dyn.collector": 0,
    "urdf_dyn.processes": 0,
    "urdf_dyn.algorithms": 1,
    "urdf_dyn.model": 2, "urdf_dyn.elements": 2,
    "urdf_dyn.io": 3,
    "urdf_dyn.constraints": 4,
    "urdf_dyn.loading": 5, "urdf_dyn.model_cache": 5,
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
    """No Python file over 500 lines — in the package, the viewer, the tests, the benchmarks and the robot
    generators — unless docs/architecture.md states why (package modules named from urdf_dyn/, the others
    from the repository root)."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    allowed = set(re.findall(r"^\| `([a-z_/]+\.py)` \| ~?\d+ \|", doc, re.M))
    files = [*PKG.rglob("*.py"), *(p for d in ("viewer", "tests", "benchmarks", "robots/generators")
                                  for p in (ROOT / d).rglob("*.py"))]
    long = [str(p.relative_to(PKG) if p.is_relative_to(PKG) else p.relative_to(ROOT)) for p in files
            if len(p.read_text().splitlines()) > 500]
    assert not [m for m in long if m not in allowed], f"over 500 lines without a reason in the docs: {long}"


def test_every_module_declares_all():
    missing = [m for m, p in MODULES.items()
               if not p.name.startswith("_") and p.name != "__init__.py" and "__all__" not in p.read_text()]
    assert not missing, missing


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_python_blocks_run_as_written(tmp_path):
    """Every ```python block of the README and then of the manual runs, in order, in one namespace, from the
    repository root."""
    blocks = [b for f in (ROOT / "README.md", ROOT / "docs" / "manual.md")
              for b in re.findall(r"```python\n(.*?)```", f.read_text(), re.S)]
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


#: private modules that are shared on purpose across subpackages: the package-wide state checks, and the
#: compiled tree kernels, which the loop kernels call directly so that numba inlines them
#: (docs/architecture.md, "Compiled kernels"); the names taken from them must still be public
SHARED_PRIVATE_MODULES = {"urdf_dyn._checks", "urdf_dyn._deprecated", "urdf_dyn.algorithms._kernels", "urdf_dyn.algorithms._calls"}


def _subpackage(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2])


def _private_crossings(path: Path, me: str):
    """(line, what) for every private name or private module that ``path`` (module ``me``) takes from
    another subpackage."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("urdf_dyn."):
            continue
        src = node.module
        if _subpackage(src) == _subpackage(me):
            continue
        for a in node.names:
            sub = f"{src}.{a.name}"
            target = sub if _exists(sub) else src
            if target in SHARED_PRIVATE_MODULES:
                continue
            if a.name.startswith("_"):
                out.append((node.lineno, f"{src}.{a.name}"))
            elif any(p.startswith("_") for p in target.split(".")[1:]) and target not in SHARED_PRIVATE_MODULES:
                out.append((node.lineno, target))
    return out


def test_no_private_name_crosses_a_subpackage():
    """What another subpackage needs is public in its module (with a docstring)."""
    bad = [f"{p.relative_to(ROOT)}:{line}: {what}" for mod, p in MODULES.items()
           for line, what in _private_crossings(p, mod)]
    assert not bad, "\n".join(bad)


def test_the_private_import_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("from urdf_dyn.algorithms.dynamics import _secret\nfrom urdf_dyn.constraints import _path\n"
                 "from urdf_dyn.constraints.loops import _log_so3\n")
    found = {w for _, w in _private_crossings(f, "urdf_dyn.machines.x")}
    assert found == {"urdf_dyn.algorithms.dynamics._secret", "urdf_dyn.constraints._path",
                     "urdf_dyn.constraints.loops._log_so3"}
    assert not _private_crossings(f, "urdf_dyn.constraints.x")[1:]   # inside constraints only the first crosses


def test_docs_links_resolve():
    """Every relative link of the README and docs/ points at a file of the repository."""
    bad = []
    for f in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)", f.read_text()):
            if "://" not in target and not (f.parent / target).exists():
                bad.append(f"{f.relative_to(ROOT)}: {target}")
    assert not bad, bad


def _doc_path_errors(text: str) -> list:
    """The test paths (tests/...py), source paths (urdf_dyn/, viewer/, benchmarks/ ...py) and dotted module
    paths (urdf_dyn.x.y[.name]) named in ``text`` that do not exist: a module path must name a module, or a
    name that module defines or exports."""
    bad = []
    for m in re.finditer(r"(?<![\w/.])((?:tests|urdf_dyn|viewer|benchmarks)/[\w/]+\.py)", text):
        if not (ROOT / m.group(1)).exists():
            bad.append(m.group(1))
    for m in re.finditer(r"(?<![\w/.])(urdf_dyn(?:\.\w+)+)", text):
        parts = m.group(1).split(".")
        k = next((k for k in range(len(parts), 0, -1) if _exists(".".join(parts[:k])) or k == 1), 1)
        if k == len(parts):
            continue
        p = ROOT.joinpath(*parts[:k])
        src = (p.with_suffix(".py") if p.with_suffix(".py").is_file() else p / "__init__.py").read_text()
        if not re.search(rf"(^(def|class) {parts[k]}\b|^{parts[k]}\b.*=|\"{parts[k]}\")", src, re.M):
            bad.append(m.group(1))
    return bad


def test_docs_name_only_paths_and_modules_that_exist():
    """Every test path, source path and module path the README and docs/ name exists (a moved test or
    module is renamed in the docs too)."""
    bad = [f"{f.relative_to(ROOT)}: {b}" for f in DOCS for b in _doc_path_errors(f.read_text())]
    assert not bad, "\n".join(bad)


def test_subpackage_docstrings_give_their_layer():
    """A subpackage docstring that names its layer ("(layer N)") names the one of ``LAYERS``."""
    bad = []
    for init in sorted(PKG.glob("*/__init__.py")):
        mod = _module_name(init)
        m = re.search(r"\(layer (\d+)\)", ast.get_docstring(ast.parse(init.read_text())) or "")
        if m and int(m.group(1)) != _layer(mod):
            bad.append(f"{mod}: says layer {m.group(1)}, is {_layer(mod)}")
    assert not bad, bad


def test_the_doc_path_check_can_fail():
    assert _doc_path_errors("see tests/test_nowhere.py and urdf_dyn.machines.nothing_here") == [
        "tests/test_nowhere.py", "urdf_dyn.machines.nothing_here"]
    assert _doc_path_errors("urdf_dyn.jobs.sizing_run.compute, urdf_dyn.machines.digging_forces, "
                            "tests/test_structure.py") == []


def test_every_cited_section_exists():
    """No citation of a document that is not in the repository: the early design notes (DESIGN.md) live
    beside the project, not in it, so a "DESIGN §n" in the code or docs would send a reader nowhere."""
    files = [*DOCS, ROOT / "pyproject.toml",
             *(p for d in ("urdf_dyn", "viewer", "tests", "benchmarks", "robots") for p in (ROOT / d).rglob("*.py"))]
    bad = [f"{f.relative_to(ROOT)}:{i}" for f in files if f.name != "test_structure.py"
           for i, line in enumerate(f.read_text().splitlines(), 1) if re.search(r"DESIGN(\.md)? ?(§|section)", line)]
    assert not bad, bad


def _keyword_tables():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    sec = doc[doc.index("## Keyword names"):doc.index("## Where each closed-loop formula")]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in sec.splitlines()
            if line.startswith("| ") and not line.startswith("| idea") and not line.startswith("| retired")]
    uses = [r for r in rows if len(r) == 4]
    retired = [r for r in rows if len(r) == 3]
    return uses, retired


def _public_function(name):
    """The function ``name`` (``simulate``, ``gauss.simulate``, ``numerical_rank``): from urdf_dyn's namespace,
    else from the one module of the package that lists it in ``__all__``."""
    import importlib
    if name.startswith("gauss."):
        return getattr(importlib.import_module("urdf_dyn.gauss"), name[6:], None)
    import urdf_dyn as ud
    if name in ud.__all__:
        return getattr(ud, name)
    for mod in MODULES:
        if "._" in mod or mod == "urdf_dyn":
            continue
        m = importlib.import_module(mod)
        if name in getattr(m, "__all__", ()):
            return getattr(m, name)
    return None


def test_the_keyword_table_matches_the_signatures():
    """Every function a row of architecture.md's keyword table names takes that keyword (scenario keys and
    command-line options are checked by their own tests)."""
    import inspect
    uses, _ = _keyword_tables()
    assert len(uses) >= 10
    bad = []
    for idea, keywords, _default, where in uses:
        kws = re.findall(r"`([a-z_]+)`", keywords)
        fields = [f.strip() for f in where.split(",")]
        names = [f[1:-1] for f in fields if re.fullmatch(r"`(gauss\.)?[A-Za-z_]+`", f)]   # scenario keys aside
        for name in names:
            fn = _public_function(name)
            if fn is None:
                bad.append(f"{idea}: {name} is not a public function of urdf_dyn")
                continue
            params = inspect.signature(fn).parameters
            bad += [f"{name}() has no keyword {k} ({idea})" for k in kws if k not in params]
    assert not bad, "\n".join(bad)


def test_no_public_function_takes_a_retired_keyword():
    import importlib
    import inspect

    import urdf_dyn as ud
    gauss = importlib.import_module("urdf_dyn.gauss")
    _, retired = _keyword_tables()
    old = {k for r in retired for k in re.findall(r"`([A-Za-z_]+)`", r[0]) if k not in ("rtol", "Passive")}
    assert {"tol", "pinv_rtol", "Q", "relief_pressure"} <= old
    bad = []
    for name in [*ud.__all__, *(f"gauss.{n}" for n in gauss.__all__)]:
        fn = _public_function(name)
        if fn is None or not (inspect.isfunction(fn) or inspect.ismethod(fn)):
            continue
        bad += [f"{name}({p})" for p in inspect.signature(fn).parameters if p in old]
    assert not bad, bad


#: the main job's machine's published figures (robots/excavator_pins.yaml, scenarios/excavator_dig.scenario.yaml
#: cite their sources): ISO 6015 forces [N and kN], tip radii, reliefs [Pa], pump flow [L/min, m³/s], track
#: length, rollers, gauge, shoe width, half-widths, heaped capacity, swing torque, working ranges, masses
CAT320_FIGURES = {140.5e3, 140.5, 106.7e3, 106.7, 1.47, 1.57, 35e6, 38e6, 26.8e6, 27.5e6, 429.0, 7.15e-3, 3.575e-3,
                  4.45, 3.65, 2.38, 0.79, 1.585, 1.19, 74e3, 82e3, 121e3, 6.73, 9.87, 9.36, 6.49, 5.18, 6.55, 21490.0,
                  2.114e-3}


def _numbers(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            yield node.lineno, float(node.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and all(
                isinstance(x, ast.Constant) and type(x.value) in (int, float) for x in (node.left, node.right)):
            yield node.lineno, node.left.value / node.right.value      # 429 / 60e3 and the like


def test_no_cat320_number_in_the_library():
    """A machine's numbers (data sheet figures, footprint, reliefs, bucket radius) live in robots/ and
    scenarios/, never as defaults of the library."""
    bad = [f"{p.relative_to(ROOT)}:{line}: {v:g}" for p in sorted(PKG.rglob("*.py")) for line, v in _numbers(p)
           if any(abs(v - c) <= 1e-9 * abs(c) for c in CAT320_FIGURES)]
    assert not bad, bad


def test_the_cat320_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def hydraulics(relief=35e6, pump_flow=429 / 60e3):\n    return 1.47\n")
    assert {v for _, v in _numbers(f) if any(abs(v - c) <= 1e-9 * abs(c) for c in CAT320_FIGURES)} == \
        {35e6, 429.0, 429 / 60e3, 1.47}


#: an internal tracker reference (the word, a space and a number): a reader of the repository cannot open it
_ISSUE_REF = re.compile(r"(?<![\w#/-])[Ii]ssues? #?\d+")


def _issue_refs(paths):
    return [f"{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}:{i}: {m.group(0)}" for p in paths
            for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)
            for m in _ISSUE_REF.finditer(line)]


def test_no_internal_issue_numbers_are_cited():
    """Code, docs, tests, benchmarks and shipped files cite what a reader can open (RBDA equations, ISO
    clauses, papers, data-sheet sources), never a number of this project's issue tracker."""
    exts = {".py", ".md", ".yaml", ".urdf", ".toml", ".xml", ".txt", ".tsv", ".cfg"}
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout: the file list comes from git")
    paths = [ROOT / f for f in out.stdout.split() if Path(f).suffix in exts and (ROOT / f).is_file()]
    assert not _issue_refs(paths), _issue_refs(paths)


def test_the_issue_number_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    ref = "iss" + "ue 27"          # spelled apart so that this file passes its own check
    f.write_text(f'"""Fast ({ref}, part 5)."""\n# see colcon-core#208 and docs/issues.md\n')
    assert _issue_refs([f]) == [f"{f}:1: {ref}"]
