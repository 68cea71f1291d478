"""A moment in a target's own process, read by the test that started it: the target writes
time.monotonic() to a file beside it (`mark`), the test reads it back (`moment`). On Linux
time.monotonic is one clock for every process, so a moment of the target's and one of the test's
subtract: how long kscope took from the target's file loaded, or its compile begun, to its exit."""

from __future__ import annotations

from pathlib import Path


def mark(suffix: str) -> str:
    """The target's line that writes the moment it runs (it needs `time` and `Path` imported)."""
    return f"Path(__file__).with_suffix({suffix!r}).write_text(repr(time.monotonic()))"


def moment(target: Path, suffix: str) -> float:
    """The moment `mark(suffix)` wrote beside `target` (FileNotFoundError: the line never ran)."""
    return float(target.with_suffix(suffix).read_text())
