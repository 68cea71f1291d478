"""Where the repository's samples are, and small helpers the tests share to write targets and
find lines in them (tests derive every line number from the file, never by hand)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from kscope.report.place import Place

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
GPU_TRACES = REPO / "tests" / "fixtures" / "gpu-traces"
"""Two real A100 traces (HolisticTraceAnalysis's test data, MIT: see the README there)."""


def write_target(tmp_path: Path, source: str, name: str = "target.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def line_of(path: Path, needle: str) -> int:
    """1-based line number of the first line containing needle: tests derive lines from the file."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def at(path: Path, needle: str) -> Place:
    """The place of the first line containing needle, in a target or module a test wrote (the
    project's root is the file's folder: places name the file by its name)."""
    return Place(path.name, line_of(path, needle))


def kscope_cmd() -> list[str]:
    return [sys.executable, "-m", "kscope"]
