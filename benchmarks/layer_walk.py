"""The layer walk of one run of the main job: every Python call from one ``urdf_dyn`` module into another,
recorded with ``sys.setprofile`` and mapped to the layers of ``tests/test_structure.py`` (``LAYERS``).

    python benchmarks/layer_walk.py [SCENARIO]      # default scenarios/excavator_dig.scenario.yaml

The run is the job without its animation and recording (``outputs.animation``/``recording`` removed), the
disk cache off, plots drawn in this process (``URDF_DYN_PLOT_WORKER=0``, so that their calls are seen).
Printed: the modules that ran, the distinct module-to-module call edges, those across layers, and the
*upward* edges — a call from a module into a module of a higher layer (a lower layer calling back up: a
callback, a duck-typed hook), which the layer rule (imports point down) does not see. Then the files: those
written in the output folder (``open`` for writing or ``os.replace`` onto a name there, seen with their
``urdf_dyn`` module), the modules whose source spells one of their names (the modules *choosing* file
names), and every file opened again — to read or to write — after it was written."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _layers():
    """``LAYERS`` of tests/test_structure.py, read without importing the test (its imports need pytest)."""
    import ast
    tree = ast.parse((ROOT / "tests" / "test_structure.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "LAYERS":
            return ast.literal_eval(node.value)
    raise RuntimeError("no LAYERS in tests/test_structure.py")


def walk(scenario) -> dict:
    """{"modules", "edges", "cross", "upward": sorted lists} of one run of ``scenario`` (see the docstring)."""
    import tempfile

    import yaml
    os.environ["URDF_DYN_CACHE"] = "off"
    os.environ["URDF_DYN_PLOT_WORKER"] = "0"
    layers = _layers()

    def layer(mod):
        best = max((k for k in layers if mod == k or mod.startswith(k + ".")), key=len, default=None)
        return layers.get(best, -1)
    import urdf_dyn
    from urdf_dyn.launch.registry import run_document
    data = yaml.safe_load(Path(scenario).read_text())
    for k in ("animation", "recording"):
        (data.get("outputs") or {}).pop(k, None)
    edges = set()
    modules = set()
    files = {"written": {}, "reopened": set()}      # path -> module that wrote it; paths opened after

    def _module():
        f = sys._getframe(2)
        while f is not None and not f.f_globals.get("__name__", "").startswith("urdf_dyn"):
            f = f.f_back
        return f.f_globals["__name__"] if f is not None else "?"

    def _seen(path, writing, out):
        p = os.path.realpath(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else None
        if p is None or not p.startswith(out):
            return
        if p in files["written"]:
            files["reopened"].add(os.path.relpath(p, out))
        if writing:
            files["written"][p] = _module()

    def prof(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if not callee.startswith("urdf_dyn"):
            return
        modules.add(callee)
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith("urdf_dyn"):
            caller = caller.f_back        # through library frames (numpy, pickle, a plot sink)
        if caller is not None:
            src = caller.f_globals["__name__"]
            if src != callee:
                edges.add((src, callee))
    import builtins
    import io
    real_open, real_replace = builtins.open, os.replace
    with tempfile.TemporaryDirectory() as d:
        out = os.path.realpath(d)

        def spy_open(file, mode="r", *a, **k):
            _seen(file, any(c in mode for c in "wax+"), out)
            return real_open(file, mode, *a, **k)

        def spy_replace(src, dst, *a, **k):
            r = real_replace(src, dst, *a, **k)
            if os.path.dirname(os.path.abspath(src)) == os.path.dirname(os.path.abspath(dst)):
                _seen(dst, True, out)            # an atomic write; not the staged folder moved in
            return r
        builtins.open = io.open = spy_open
        os.replace = spy_replace
        sys.setprofile(prof)
        try:
            run_document(data, Path(scenario).resolve(), out_dir=os.path.join(d, "run"), progress=False,
                         echo=lambda *a, **k: None)      # staged beside it, inside d
        finally:
            sys.setprofile(None)
            builtins.open = io.open = real_open
            os.replace = real_replace
        names = sorted(os.listdir(os.path.join(d, "run")))
    cross = {(a, b) for a, b in edges if layer(a) != layer(b)}
    upward = {(a, b) for a, b in cross if layer(b) > layer(a)}
    src = {m: (ROOT / (m.replace(".", "/") + ".py")).read_text() for m in _all_modules()}
    choosers = sorted({m for m, text in src.items() for n in names if f'"{n}"' in text or f"'{n}'" in text})
    return {"modules": sorted(modules), "edges": sorted(edges), "cross": sorted(cross), "upward": sorted(upward),
            "layer": {m: layer(m) for m in modules}, "urdf_dyn": urdf_dyn.__file__, "files": names,
            "writers": sorted(set(files["written"].values())), "choosers": choosers,
            "reopened": sorted(files["reopened"])}


def _all_modules():
    """Every module of the package, as dotted names."""
    return [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "urdf_dyn").rglob("*.py")
            if p.name != "__init__.py"]


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    scenario = args[0] if args else str(ROOT / "scenarios" / "excavator_dig.scenario.yaml")
    w = walk(scenario)
    print(f"urdf_dyn from {w['urdf_dyn']}")
    print(f"{len(w['modules'])} modules ran; {len(w['edges'])} module-to-module call edges, {len(w['cross'])} across "
          f"layers, {len(w['upward'])} upward")
    for a, b in w["upward"]:
        print(f"  up: {a} (layer {w['layer'][a]}) -> {b} (layer {w['layer'][b]})")
    print(f"{len(w['files'])} files in the output folder, written by {len(w['writers'])} modules "
          f"({', '.join(w['writers'])}); their names spelt by {len(w['choosers'])} modules ({', '.join(w['choosers'])})")
    print(f"files opened again after they were written: {len(w['reopened'])}"
          + (f" ({', '.join(w['reopened'])})" if w["reopened"] else ""))


if __name__ == "__main__":
    main()
