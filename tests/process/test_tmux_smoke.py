"""The live app in a real terminal: scripts/tmux_smoke.sh drives kscope in tmux at the two sizes
the snapshots cover (start, atomic save, in-place save, quit, no worker left behind)."""

import os
import shutil
import subprocess
import sys

import pytest
from support.paths import REPO

SCRIPT = REPO / "scripts" / "tmux_smoke.sh"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.mark.parametrize("size", ["80x24", "120x40"])
def test_tmux_smoke(size):
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("KSCOPE", None)  # this interpreter's kscope, not whatever a developer pointed at
    proc = subprocess.run(
        ["bash", str(SCRIPT), "--size", size],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=400,
    )
    # The screens it captured are the evidence: show them when it fails.
    assert proc.returncode == 0, f"tmux_smoke.sh --size {size} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert f"PASS: all steps passed at {size}" in proc.stdout
