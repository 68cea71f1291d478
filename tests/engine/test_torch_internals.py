"""torch's private internals kscope relies on: each one the code uses is listed in
docs/architecture.md, and resolves in the torch installed here (a torch that renamed one fails
here, not in a user's run). The list is read from the code (tests/unit/test_layers.py's reader)."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
from support.paths import REPO
from unit.test_layers import PACKAGE, PRIVATE_TORCH_ROOMS, private_torch_names

DOC = REPO / "docs" / "architecture.md"


def used() -> dict[str, set[str]]:
    """Each private name the code uses (its longest spelling), with the files that use it."""
    out: dict[str, set[str]] = {}
    for room in PRIVATE_TORCH_ROOMS:
        for path in sorted((REPO / room).glob("*.py")):
            names = private_torch_names(path.read_text())
            for name in names:
                if not any(other.startswith(name + ".") for other in names):
                    out.setdefault(name, set()).add(str(path.relative_to(PACKAGE)))
    return out


def listed() -> set[str]:
    section = DOC.read_text().split("### torch's internals kscope relies on", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(torch\.[\w.]+)`", section))


def resolve(dotted: str):
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_every_internal_the_code_uses_is_listed():
    missing = {name: sorted(files) for name, files in used().items()
               if not any(name == entry or name.startswith(entry + ".") for entry in listed())}
    assert not missing, f"add these to docs/architecture.md's list: {missing}"


def test_the_list_names_nothing_the_code_no_longer_uses():
    names = used()
    stale = {entry for entry in listed()
             if not any(name == entry or name.startswith(entry + ".") for name in names)}
    assert not stale, stale


@pytest.mark.parametrize("name", sorted(listed()))
def test_each_listed_internal_resolves_in_this_torch(name):
    """resolve() raises for a name this torch lacks; a config setting may hold None (unset)."""
    assert resolve(name) is not None or name.startswith("torch._inductor.config.")


def test_the_builder_and_cache_as_kill_safe_wraps_them():
    """engine.inductor.kill_safe wraps these by their signatures: a torch that changed them would
    have kscope's wrappers called with arguments they do not expect."""
    from torch._inductor import codecache
    from torch._inductor.cpp_builder import CppBuilder

    assert list(inspect.signature(CppBuilder.build).parameters) == ["self"]
    assert list(inspect.signature(codecache._worker_compile_cpp).parameters) == ["lock_path", "cpp_builders"]
    assert list(inspect.signature(codecache.CppCodeCache._load_library.__func__).parameters)[:3] == [
        "cls", "path", "key"]
    assert isinstance(codecache._HEADER_DIR, str) and isinstance(codecache._HEADER_LOCK_DIR, str)
    for name in ("get_target_file_path", "get_command_line"):
        assert callable(getattr(CppBuilder, name))


def test_a_builder_names_its_target_where_kill_safe_renames_it(tmp_path):
    """atomic_build swaps the builder's `_target_file` and the end of its `_output` (its `-o ...`)
    for a temporary name: both must hold the target's path as today."""
    from torch._inductor.cpp_builder import CppBuilder, CppOptions

    builder = CppBuilder(name="k", sources=str(tmp_path / "k.cpp"), BuildOption=CppOptions(), output_dir=str(tmp_path))
    target = str(tmp_path / "k.so")
    assert builder._target_file == builder.get_target_file_path() == target
    assert builder._output.endswith(target) and f"-o {target}" in builder.get_command_line()
