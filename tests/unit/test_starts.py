"""support/starts.py, which keeps the `slow` mark true (the quick tier, tests/run.py --quick, runs
the unmarked tests): which command lines are a kscope process, a browser or a terminal, and that an
unmarked test starting one fails at its teardown while a marked one passes (a pytest run of its own)."""

import re
import subprocess
import sys
import textwrap

import pytest
from support import starts
from support.paths import REPO


@pytest.mark.parametrize("args", [
    [sys.executable, "-m", "kscope", "samples/add_relu.py", "--once"],
    [sys.executable, "-m", "kscope.worker.child", "3", "6"],
    [sys.executable, "-m", "kscope.worker.forkserver", "21"],
    ["/work/x/.venv/bin/kscope", "serve", "f.py"],
    ["tmux", "new-session", "-d"],
    ["/usr/bin/chromium", "--headless"],
    ["bash", "benchmarks/gpu_check.sh", "--device", "cpu"],
    "tesseract page.png -",
])
def test_kscope_a_browser_or_a_terminal_is_watched(args):
    assert starts.what(args)


@pytest.mark.parametrize("args", [
    ["g++", "-shared", "x.cpp"],  # inductor's compiles, in process
    [sys.executable, "-c", "import torch"],  # inductor's vector-ISA probe
    [sys.executable, "-m", "pytest", "--setup-plan"],
    ["uname", "-p"],
    [sys.executable, "-m", "kscopes_lookalike"],
])
def test_other_processes_are_not(args):
    assert starts.what(args) is None


def test_an_unmarked_test_that_starts_kscope_fails_and_a_marked_one_passes(tmp_path):
    (tmp_path / "test_starting.py").write_text(textwrap.dedent("""
        import subprocess, sys
        import pytest

        def start():
            # a kscope command line that exits at once (no such module): what is watched is the start
            subprocess.run([sys.executable, "-m", "kscope.no_such_module"], capture_output=True)

        def test_unmarked():
            start()

        @pytest.mark.slow
        def test_marked():
            start()

        def test_starts_nothing():
            subprocess.run([sys.executable, "-c", "pass"], check=True)
    """))
    (tmp_path / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA",
                          f"--rootdir={tmp_path}", "-c", str(REPO / "pyproject.toml"), str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "ERROR at teardown of test_unmarked" in out.stdout, out.stdout
    assert "Mark it: @pytest.mark.slow" in out.stdout and "-m kscope.no_such_module" in out.stdout
    assert re.search(r"^PASSED \S*test_starting.py::test_marked$", out.stdout, re.M), out.stdout
    assert re.search(r"^PASSED \S*test_starting.py::test_starts_nothing$", out.stdout, re.M), out.stdout
    assert "3 passed, 1 error" in out.stdout, out.stdout
