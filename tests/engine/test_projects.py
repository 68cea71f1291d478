"""Projects, not files: a target that imports the user's own modules runs their code as it is on
disk at every run, in one warm process as the app's worker runs it; libraries stay imported.

The two-file project: bench.py's `run(a, b)` calls model.py's `block(a, b)`, fp32 vectors of
N = 1,000,000 (4,000,000 B each). `(a + b).relu()`: eager add reads a, b and writes t, relu reads
t and writes the output: 20,000,000 B in 2 launches; compiled one kernel reads a, b and writes the
output: 12,000,000 B. `(a + b).relu() * 2` adds a mul that reads and writes 4,000,000 B each:
28,000,000 B in 3 launches eager, still 12,000,000 B in one kernel compiled.
"""

from __future__ import annotations

import os
import py_compile
import shutil
import sys
import textwrap

import pytest
from support.paths import SAMPLES, at, line_of

from kscope.engine.run import run
from kscope.engine.target import project as project_module
from kscope.report.place import Place
from kscope.report.request import RunRequest

N = 1_000_000
F32 = 4
MB4 = N * F32

BENCH = """\
import torch
from model import block

def run(a, b):
    return block(a, b)

def inputs(device):
    return torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
"""


def model(body: str, imports: str = "") -> str:
    return f"import torch\n{imports}\n\ndef block(a, b):\n{textwrap.indent(body, '    ')}\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bench.py").write_text(BENCH)
    (tmp_path / "model.py").write_text(model("return (a + b).relu()"))
    return tmp_path


def once(folder, name="bench.py"):
    return run(RunRequest(str(folder / name), None, "cpu", calls=2))


def totals(mode):
    return mode.launches, mode.bytes_total


def test_an_edit_of_the_imported_file_runs_the_new_code_in_both_modes(project):
    first = once(project)
    assert not first.errors, first.errors
    assert totals(first.eager) == (2, 5 * MB4) and totals(first.compiled) == (1, 3 * MB4)
    assert [k.name for k in first.compiled.kernels] == ["cpp_fused_add_relu_0"]
    (project / "model.py").write_text(model("return (a + b).relu() * 2"))
    second = once(project)
    assert not second.errors, second.errors
    assert totals(second.eager) == (3, 7 * MB4) and totals(second.compiled) == (1, 3 * MB4)
    assert [k.name for k in second.compiled.kernels] == ["cpp_fused_add_mul_relu_0"]


def test_an_edit_of_the_same_size_in_the_same_second_is_not_a_stale_pyc(project):
    """Python trusts a .pyc by its source's mtime in seconds and its size: `a + b` -> `a - b` keeps
    both. kscope compiles the user's source itself."""
    once(project)
    path = project / "model.py"
    py_compile.compile(str(path), doraise=True)  # the .pyc an earlier import (or python) left of `a + b`
    stat = path.stat()
    path.write_text(model("return (a - b).relu()"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same mtime, as within one second
    assert path.stat().st_size == stat.st_size
    report = once(project)
    assert [k.name for k in report.compiled.kernels] == ["cpp_fused_relu_sub_0"]
    assert [k.name for k in report.eager.kernels] == ["aten::sub", "aten::relu"]


def test_the_report_lists_the_users_files_the_run_imported(project):
    (project / "notes.py").write_text("x = 1\n")  # beside it, never imported
    report = once(project)
    assert report.files == (str(project / "bench.py"), str(project / "model.py"))


def test_libraries_stay_imported_and_the_users_modules_do_not(project):
    (project / "model.py").write_text(model("return (a + b).relu()", imports="import textwrap"))
    once(project)
    torch_module, textwrap_module, model_module = sys.modules["torch"], sys.modules["textwrap"], sys.modules["model"]
    once(project)
    assert sys.modules["torch"] is torch_module and sys.modules["textwrap"] is textwrap_module
    assert sys.modules["model"] is not model_module


def test_an_exception_raised_in_the_imported_file_names_it_and_its_line(project):
    (project / "model.py").write_text(model("raise ValueError('bad block')\nreturn a"))
    (error,) = once(project).errors
    assert (error.stage, error.type, error.file) == ("eager", "ValueError", str(project / "model.py"))
    assert error.line == line_of(project / "model.py", "raise ValueError")


def test_a_syntax_error_in_the_imported_file_names_it_and_the_next_save_recovers(project):
    (project / "model.py").write_text(model("return (a + b).relu("))
    report = once(project)
    (error,) = report.errors
    assert (error.stage, error.type, error.file) == ("load", "SyntaxError", str(project / "model.py"))
    assert error.line == line_of(project / "model.py", "return (a + b)")
    assert str(project / "model.py") in report.files  # what broke is watched, so fixing it re-runs
    (project / "model.py").write_text(model("return (a + b).relu()"))
    assert not once(project).errors


def test_a_graph_break_in_the_imported_file_is_at_its_line(project):
    (project / "model.py").write_text(model("c = a + b\nif c.sum() > 0:\n    return c.relu()\nreturn c"))
    (brk,) = once(project).compiled.graph_breaks
    assert brk.file == str(project / "model.py") and brk.line == line_of(project / "model.py", "if c.sum()")


def test_a_target_inside_a_package_with_a_relative_import_runs(tmp_path):
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(model("return (a + b).relu()"))
    (package / "bench.py").write_text(BENCH.replace("from model import block", "from .model import block"))
    report = once(package)
    assert not report.errors, report.errors
    assert [k.name for k in report.compiled.kernels] == ["cpp_fused_add_relu_0"]
    assert set(report.files) >= {str(package / "bench.py"), str(package / "model.py")}


def test_the_bundled_project_sample_runs_from_any_folder(tmp_path, monkeypatch):
    shutil.copytree(SAMPLES / "project", tmp_path / "project")
    monkeypatch.chdir(tmp_path)  # not the sample's folder: kscope puts it on sys.path, as python does
    report = run(RunRequest(str(tmp_path / "project" / "bench.py"), None, "cpu", calls=2))
    assert not report.errors, report.errors
    assert [os.path.basename(f) for f in report.files] == ["bench.py", "model.py"]


def test_each_kernel_is_placed_at_the_ops_line_in_the_imported_file(project):
    r = once(project)
    op = at(project / "model.py", "return (a + b).relu()")
    assert {k.name: k.lines for k in r.eager.kernels} == {"aten::add": (op,), "aten::relu": (op,)}
    (kernel,) = r.compiled.kernels
    assert kernel.lines == (op,) and op.file == "model.py"
    assert r.root == str(project) and r.sources["model.py"] == (project / "model.py").read_text()
    assert r.home == "bench.py" and "bench.py" in r.sources


def test_an_op_a_library_issued_is_placed_at_the_call_via_the_librarys_line(tmp_path, monkeypatch):
    """A library's module (here one kscope is told is installed: a folder of site-packages) issues
    the ops; the user's line is the call, and the library's line comes with it."""
    site_dir = tmp_path / "site"
    (site_dir / "fakelib").mkdir(parents=True)
    (site_dir / "fakelib" / "__init__.py").write_text("")
    (site_dir / "fakelib" / "blocks.py").write_text(model("return (a + b).relu()"))
    monkeypatch.syspath_prepend(str(site_dir))
    real_site, real_library = project_module._site_roots(), project_module.library_roots()
    monkeypatch.setattr(project_module, "_site_roots", lambda: (str(site_dir), *real_site))
    monkeypatch.setattr(project_module, "library_roots", lambda: (str(site_dir), *real_library))
    project_module.frame_kind.cache_clear()
    work = tmp_path / "work"
    work.mkdir()
    (work / "bench.py").write_text(BENCH.replace("from model import block", "from fakelib.blocks import block"))
    try:
        r = once(work)
    finally:
        project_module.frame_kind.cache_clear()
    assert not r.errors, r.errors
    call = at(work / "bench.py", "return block(a, b)")
    via = Place("fakelib/blocks.py", line_of(site_dir / "fakelib" / "blocks.py", "return (a + b).relu()"))
    (kernel,) = r.compiled.kernels
    assert kernel.lines == (Place(call.file, call.line, via=via),)
    assert {k.lines for k in r.eager.kernels} == {(Place(call.file, call.line, via=via),)}
    assert "fakelib/blocks.py" in r.sources and str(site_dir / "fakelib" / "blocks.py") not in r.files


def test_a_cache_hit_after_lines_moved_in_the_imported_file_has_the_new_line(project):
    """The same graph, its op two lines lower in model.py: inductor's cache would serve the old
    lines; kscope's source key covers every file the graph's stack traces name."""
    before = once(project).compiled.kernels[0].lines
    path = project / "model.py"
    path.write_text("# two lines\n# that move the op down\n" + path.read_text())
    (kernel,) = once(project).compiled.kernels
    assert kernel.lines == (at(path, "return (a + b).relu()"),) and kernel.lines != before


class _EditableFinder:
    """What `pip install -e` puts on sys.meta_path today (setuptools' __editable__ finder): a
    package found by name, from a folder that is not on sys.path."""

    def __init__(self, name: str, folder):
        self.name, self.folder = name, folder

    def find_spec(self, name, path=None, target=None):
        import importlib.util

        if name == self.name:
            return importlib.util.spec_from_file_location(name, self.folder / name / "__init__.py",
                                                          submodule_search_locations=[str(self.folder / name)])
        return None


def test_an_editable_install_of_the_users_package_is_theirs_and_fresh(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "edpkg").mkdir(parents=True)
    (src / "edpkg" / "__init__.py").write_text(model("return (a + b).relu()"))
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, _EditableFinder("edpkg", src)])
    work = tmp_path / "work"
    work.mkdir()
    (work / "bench.py").write_text(BENCH.replace("from model import block", "from edpkg import block"))
    assert [k.name for k in once(work).compiled.kernels] == ["cpp_fused_add_relu_0"]
    (src / "edpkg" / "__init__.py").write_text(model("return (a + b).relu() * 2"))
    report = once(work)
    assert [k.name for k in report.compiled.kernels] == ["cpp_fused_add_mul_relu_0"]
    assert str(src / "edpkg" / "__init__.py") in report.files  # watched
