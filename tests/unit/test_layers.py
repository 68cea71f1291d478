"""The package's layers, read from its imports (nothing run): each folder a concern, imports one way.

    cli -> app -> worker -> engine        render -> trace -> report

A layer imports only the layers its row below names, lazily or not; no module is part of an
import cycle; the top level holds at most three modules; no file is over 400 lines. The imports
each layer pulls in when it runs are checked by test_import_hygiene.py.
"""

from __future__ import annotations

import ast
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
"""The only modules outside engine/ that may import it: the worker process, its fork server and its ranks."""


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
