"""Prose that names code names code that exists: every dotted reference to a kscope module in a
docstring or comment ("engine.measure.timing", "report.plan.PlanProgress", "kscope.trace.kernels")
resolves to a module of the package, and to a name that module defines; every document a docstring
or comment names ("docs/usage.md", "README.md") is in the repository."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache

from support.paths import REPO
from unit.test_layers import PACKAGE, modules

LAYERS = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
DOTTED = re.compile(r"(?<![\w./`])(?:kscope\.)?(?:" + "|".join(LAYERS) + r")(?:\.[A-Za-z_]\w*)+")
FILE_SUFFIXES = {"json", "md", "gz", "html", "svg", "txt", "py", "so", "cpp"}
"""report.json, trace.json.gz: a file's name, not a module's."""
DOCUMENT = re.compile(r"(?<![\w./-])((?:docs|tests|benchmarks)/[\w./-]+\.(?:md|py|sh)|[A-Z][A-Z_]+\.md)\b")


@cache
def defined(module: str) -> set[str]:
    """The names a module defines or imports at its top level."""
    out = set()
    for node in ast.parse(modules()[module].read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


def resolves(reference: str) -> bool:
    """The longest module the reference starts with, then a name that module defines."""
    parts = ("kscope." + reference.removeprefix("kscope.")).split(".")
    if parts[-1] in FILE_SUFFIXES:
        return True
    for k in range(len(parts), 1, -1):
        module = ".".join(parts[:k])
        if module in modules():
            return k == len(parts) or parts[k] in defined(module)
    return False


def prose(source: str):
    """A module's docstrings (of the module, its classes and functions, its attributes) and comments."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if doc := ast.get_docstring(node, clean=False):
                yield doc
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.value.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.string


def broken_references() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in prose(path.read_text()):
            bad = {m.group(0) for m in DOTTED.finditer(text) if not resolves(m.group(0))}
            bad |= {m.group(1) for m in DOCUMENT.finditer(text) if not (REPO / m.group(1)).exists()}
            if bad:
                out.setdefault(str(path.relative_to(REPO)), set()).update(bad)
    return out


def test_every_module_a_docstring_names_exists():
    assert not broken_references()


def test_the_check_catches_a_module_that_moved_and_a_name_that_went():
    assert resolves("engine.measure.timing") and resolves("kscope.report.plan.PlanProgress")
    assert not resolves("engine.ranks") and not resolves("engine.inductor_bytes")
    assert not resolves("report.plan.NoSuchThing")
    assert resolves("trace.json") and resolves("report.md")
    assert [m.group(1) for m in DOCUMENT.finditer("see DESIGN.md and docs/usage.md")] == ["DESIGN.md", "docs/usage.md"]
