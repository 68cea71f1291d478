"""What each layer pulls in when it is imported, in a fresh interpreter: `sys.modules` after importing
every module of it. A docstring saying "no torch here" guards nothing; this does.

- report, trace and render's plain words: no torch, rich or textual (any process can read a Report);
- render's rich tables and the CLI's commands: no torch, no textual (the headless path);
- the app: no torch (the UI process never waits on it);
- the worker's client side: no torch, rich or textual; the worker's child and the engine: no textual
  or rich (a GPU box has neither textual nor watchdog).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.paths import REPO

PACKAGE = REPO / "kscope"


def modules_of(folder: str, *only: str) -> list[str]:
    base = PACKAGE / folder
    names = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not only or path.stem in only:
            names.append(name)
    assert names, (folder, only)
    return names


LAYERS = {
    "report": (modules_of("report"), ("torch", "rich", "textual")),
    "trace": (modules_of("trace"), ("torch", "rich", "textual")),
    "render's words": (modules_of("render", "__init__", "text", "view", "names", "ranks_rows", "markdown",
                                  "columns", "sweep_rows", "lines", "roofline", "memory"),
                       ("torch", "rich", "textual")),
    "render": (modules_of("render"), ("torch", "textual")),
    "the worker's client side": (modules_of("worker", "__init__", "client", "protocol", "once", "lifetime"),
                                 ("torch", "rich", "textual")),
    "the headless CLI": (modules_of("cli"), ("torch", "textual", "rich")),
    "app": (modules_of("app"), ("torch",)),
    "engine": (modules_of("engine"), ("textual", "rich", "watchdog")),
    "the worker's child and ranks": (modules_of("worker"), ("textual", "rich", "watchdog")),
}


def loaded_after(names: list[str]) -> set[str]:
    """The top-level packages in sys.modules after importing `names` in a fresh interpreter."""
    code = (
        "import json, sys\n"
        f"for name in {names!r}:\n"
        "    __import__(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_none_of_what_it_must_not(layer):
    names, forbidden = LAYERS[layer]
    loaded = loaded_after(names)
    assert not loaded & set(forbidden), f"importing {layer} loads {sorted(loaded & set(forbidden))}"


def test_the_check_sees_a_heavy_import():
    """The probe bites: importing the engine does load torch, and the app textual."""
    assert "torch" in loaded_after(["kscope.engine.run"])
    assert "textual" in loaded_after(["kscope.app.app"])
