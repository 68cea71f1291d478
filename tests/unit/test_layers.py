"""The package's layers, read from its imports (nothing run): each folder a concern, imports one way.

    cli -> app -> worker -> engine        render -> trace -> report

A layer imports only the layers its row below names, lazily or not; no module is part of an
import cycle; the top level holds at most three modules; no file is over 400 lines. The imports
each layer pulls in when it runs are checked by test_import_hygiene.py.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from support.paths import REPO

PACKAGE = REPO / "kscope"

ALLOWED = {
    "report": {"report"},
    "trace": {"report", "trace"},
    "render": {"report", "trace", "render"},
    "engine": {"report", "trace", "engine"},
    "worker": {"report", "trace", "worker", "engine"},
    "app": {"report", "trace", "render", "worker", "app"},
    "cli": {"report", "trace", "render", "worker", "app", "cli"},
    "": {"cli"},  # kscope/__init__.py, kscope/__main__.py
}
"""Layer -> the layers it may import from."""

ENGINE_SIDE = {"kscope.worker.child", "kscope.worker.forkserver", "kscope.worker.ranks"}
"""The only modules outside engine/ that may import it (its facade, kscope.engine.api, alone): the
worker process, its fork server and its ranks."""

ENGINE_DOOR = "kscope.engine.api"

ENGINE_ROOMS = {
    "compat": set(),
    "machine": {"measure"},
    "measure": set(),  # never machine: machine.kept asks measure.cpu_wait whether a measurement was disturbed
    "target": {"compat"},
    "inductor": {"compat", "machine", "measure", "target"},
    "dispatch": {"compat", "measure", "target"},
    "eager": {"compat", "dispatch", "measure", "target"},
    "compiled": {"compat", "dispatch", "eager", "inductor", "machine", "measure", "target"},
    "memory": {"compat", "target"},
}
"""engine/'s sub-packages, each with the ones it may import besides itself; the modules at
engine/'s top (api, run, sweep, stages) may import any of them, and none of them the top."""

PRIVATE_TORCH_ROOMS = ("kscope/engine/inductor/", "kscope/engine/compat/")
"""The only folders where kscope names torch's private internals (torch._dynamo, torch.utils._pytree...)."""


@functools.cache
def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imported(name: str, path: Path) -> set[str]:
    """The kscope modules `name` imports anywhere in its file (in functions too), resolved to
    modules of the package (`from kscope.render import view` is kscope.render.view)."""
    known = modules()
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("kscope")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kscope"):
            assert node.level == 0, f"{name}: relative import"
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in known else node.module)
    return found


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else ""


@functools.cache
def graph() -> dict[str, set[str]]:
    return {name: imported(name, path) for name, path in modules().items()}


def test_each_layer_imports_only_the_layers_below_it():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if layer(target) not in ALLOWED[layer(name)]:
                wrong.append(f"{name} imports {target}")
            elif layer(target) == "engine" and layer(name) != "engine" and name not in ENGINE_SIDE:
                wrong.append(f"{name} imports {target} (only {sorted(ENGINE_SIDE)} may)")
            elif layer(target) == "engine" and layer(name) != "engine" and target != ENGINE_DOOR:
                wrong.append(f"{name} imports {target} (the engine's door is {ENGINE_DOOR})")
    assert not wrong, "\n".join(sorted(wrong))


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (or a module importing itself)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in g.get(v, ()):
                out.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_layer_rules_catch_an_upward_import(tmp_path):
    """The rule bites: a report module importing render, or the app importing the engine, is caught."""
    assert layer("kscope.render.view") not in ALLOWED[layer("kscope.report.model")]
    assert layer("kscope.engine.run") not in ALLOWED[layer("kscope.app.app")]
    assert "kscope.render.view" in imported("x", _module(tmp_path, "from kscope.render import view\n"))
    assert "kscope.engine.run" in imported("x", _module(tmp_path, "def f():\n    from kscope.engine.run import run\n"))


def _module(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "x.py"
    path.write_text(source)
    return path


def test_at_most_three_modules_at_the_top_level():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 3, top


@pytest.mark.parametrize("folder", ["kscope", "tests"])
def test_no_file_over_400_lines(folder):
    long = {str(p.relative_to(REPO)): n for p in (REPO / folder).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


def test_no_function_over_60_lines():
    """Long functions are split into named steps (issue 35)."""
    long = {f"{p.relative_to(REPO)}:{n.name}": n.end_lineno - n.lineno + 1 for p in PACKAGE.rglob("*.py")
            for n in ast.walk(ast.parse(p.read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60}
    assert not long, long


def test_every_folder_of_the_package_is_a_package():
    """No namespace packages: each folder says what it is in its __init__.py's docstring."""
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        init = folder / "__init__.py"
        assert init.exists(), f"{folder.relative_to(REPO)} has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} says nothing"


def test_no_test_reads_outside_the_repository():
    """Every test runs on any clone: none reads the sibling ../shared folder this project was
    started beside (its GPU traces are in tests/fixtures now)."""
    outside = re.compile(r"""\.\./shared|parents?\b.*["']shared["']""")
    readers = [str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("*.py")
               if p.name != "test_layers.py" and outside.search(p.read_text())]
    assert not readers, readers


def room(name: str) -> str | None:
    """The engine sub-package a module is in ("" at engine/'s top; None outside engine/)."""
    parts = name.split(".")
    if parts[:2] != ["kscope", "engine"] or len(parts) < 3:
        return None
    return parts[2] if (PACKAGE / "engine" / parts[2]).is_dir() else ""


def test_the_engine_s_rooms_import_one_way():
    rooms = {p.name for p in (PACKAGE / "engine").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert rooms == set(ENGINE_ROOMS), "a room of engine/ is missing from ENGINE_ROOMS, or one is gone"
    wrong = []
    for name, targets in graph().items():
        here = room(name)
        if not here:  # outside engine/, or at its top: may import any room
            continue
        for target in targets:
            there = room(target)
            if there is not None and there != here and there not in ENGINE_ROOMS[here]:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_engine_room_rule_catches_an_import_back_up():
    assert room("kscope.engine.run") == "" and room("kscope.engine.inductor.capture") == "inductor"
    assert "eager" not in ENGINE_ROOMS["inductor"] and "compiled" not in ENGINE_ROOMS["eager"]


def private_torch_names(source: str) -> set[str]:
    """torch's private names a module uses: a dotted name from `torch` with a part that starts
    with one underscore (torch._dynamo, torch.utils._pytree, torch._C._dispatch...), imported or
    read; torch.ops' op names (torch.ops.aten._local_scalar_dense) are ops, not internals."""
    found = set()

    def private(dotted: str) -> bool:
        parts = dotted.split(".")
        return (parts[0] == "torch" and parts[1:2] != ["ops"]
                and any(p.startswith("_") and not p.endswith("__") for p in parts[1:]))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if private(a.name)}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}" for a in node.names if private(f"{node.module}.{a.name}")}
        elif isinstance(node, ast.Attribute):
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "torch" and private(".".join(["torch", *reversed(chain)])):
                found.add(".".join(["torch", *reversed(chain)]))
    return found


def test_torch_s_internals_only_behind_one_border():
    """Every use of torch's private internals is under engine/inductor/ or engine/compat/
    (docs/architecture.md lists them and the torch versions they were checked on)."""
    outside = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(REPO))
        if not rel.startswith(PRIVATE_TORCH_ROOMS) and (names := private_torch_names(path.read_text())):
            outside[rel] = sorted(names)
    assert not outside, outside


def test_the_border_check_sees_each_way_of_naming_an_internal():
    assert private_torch_names("import torch._dynamo") == {"torch._dynamo"}
    assert private_torch_names("from torch.utils._pytree import tree_leaves") == {"torch.utils._pytree.tree_leaves"}
    assert private_torch_names("x = torch._C._dispatch_keyset_full_after") >= {"torch._C"}
    assert private_torch_names("torch.ops.aten._local_scalar_dense(x); torch.__version__") == set()


def schema_readers(folders: tuple[str, ...]) -> list[str]:
    """Where a module of these folders reads a Report's schema number (`x.schema`, `getattr(x, "schema")`)."""
    found = []
    for folder in folders:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                named = (isinstance(node, ast.Attribute) and node.attr == "schema") or (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and any(isinstance(a, ast.Constant) and a.value == "schema" for a in node.args))
                if named:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_view_reads_the_schema_number():
    """Schema upgrades belong in the codec (report/codec.py): it marks what an older Report lacks
    (None for unknown: line_costs), so the app and the renderers read figures, never `.schema`."""
    assert schema_readers(("app", "render")) == []


def test_the_schema_check_finds_a_reader():
    assert schema_readers(("report",))  # the codec reads it, as it should
