import os
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
GPU_TRACES = REPO.parent / "shared" / "fixtures" / "gpu-traces"


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """kscope's traffic store in a per-session folder: tests never see a user's store."""
    os.environ["KSCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kscope-cache"))
    yield


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


def kscope_cmd() -> list[str]:
    return [sys.executable, "-m", "kscope"]
