"""What engine.inductor.kill_safe judges whole and what its sweep removes, on real ELF files (one of
Python's own extension modules) and a made-up cache folder: no torch, no compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kscope.engine.inductor.kill_safe import STALE_BUILD_S, elf_complete, sweep, whole

REAL_LIBRARY = Path(__import__("_json").__file__)
"""A shared library the linker wrote whole."""


def cut(src: Path, dst: Path, size: int) -> Path:
    dst.write_bytes(src.read_bytes()[:size])
    return dst


def test_a_whole_library_is_whole_and_one_cut_short_or_without_its_header_is_not(tmp_path):
    assert elf_complete(REAL_LIBRARY) and whole(str(REAL_LIBRARY))
    size = REAL_LIBRARY.stat().st_size
    assert not elf_complete(cut(REAL_LIBRARY, tmp_path / "half.so", size // 2))
    assert not elf_complete(cut(REAL_LIBRARY, tmp_path / "all-but-one.so", size - 1))
    zeroed = tmp_path / "zeroed.so"
    zeroed.write_bytes(b"\0" * 64 + REAL_LIBRARY.read_bytes()[64:])  # the header written last, never
    assert not elf_complete(zeroed)
    assert not elf_complete(tmp_path / "missing.so") and not whole(str(tmp_path / "empty.o"))
    (tmp_path / "x.h.gch").write_bytes(b"gpch013" + b"\0" * 100)
    (tmp_path / "y.h.gch").write_bytes(b"\0" * 100)
    assert whole(str(tmp_path / "x.h.gch")) and not whole(str(tmp_path / "y.h.gch"))
    (tmp_path / "wrapper.py").write_text("not judged")
    assert whole(str(tmp_path / "wrapper.py"))


def test_the_sweep_removes_what_interrupted_builds_left_and_nothing_else(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid no process has now
    folder = tmp_path / "ab"
    folder.mkdir()
    good = folder / "cgood.so"
    shutil.copy(REAL_LIBRARY, good)
    broken = cut(REAL_LIBRARY, folder / "cbroken.main.so", 4096)
    dead_tmp = folder / f"cx.so.kscope-{gone.pid}-1.tmp"
    live_tmp = folder / f"cy.so.kscope-{os.getpid()}-1.tmp"  # a build in progress: this process
    inductor_tmp = folder / f".{gone.pid}.7.tmp"
    for path in (dead_tmp, live_tmp, inductor_tmp):
        path.write_bytes(b"partial")
    stale, fresh = folder / "cold_CxxBuild", folder / "cnew_CxxBuild"
    stale.mkdir()
    fresh.mkdir()
    past = time.time() - STALE_BUILD_S - 60
    os.utime(stale, (past, past))

    notes = sweep(tmp_path)

    assert good.exists() and live_tmp.exists() and fresh.exists()
    assert not broken.exists() and not dead_tmp.exists() and not inductor_tmp.exists() and not stale.exists()
    assert len(notes) == 1 and str(broken) in notes[0]
