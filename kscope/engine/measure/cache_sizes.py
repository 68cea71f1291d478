"""The CPU's caches as the OS reports them (sysfs), and how large a buffer lies beyond all of them:
what --cold's flush writes and main memory's roof copies (a 256 MB buffer sat inside a 260 MB L3)."""

from __future__ import annotations

from pathlib import Path

SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")
AT_LEAST = 256 << 20
"""The smallest buffer taken to lie beyond every cache, where sysfs reports none larger."""


def cpu_levels(root: Path = SYSFS) -> list[tuple[str, int, bool]]:
    """(name, bytes, private to a core) of each data or unified cache, smallest first: ("L1d",
    49152, True), ("L2", 2097152, True), ("L3", 110100480, False). Empty where sysfs says nothing."""
    out = []
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _size((index / "size").read_text().strip())
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size:
            out.append((f"L{level}d" if kind == "Data" else f"L{level}", size, _cpus(shared) == 1))
    return sorted(out, key=lambda level: level[1])


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text and text[-1] in units else int(text)


def _cpus(text: str) -> int:
    """How many CPUs a list like "0-1,4" names."""
    n = 0
    for part in text.split(","):
        low, _, high = part.partition("-")
        n += int(high or low) - int(low) + 1
    return n


def beyond_caches(root: Path = SYSFS) -> int:
    """Bytes that no cache holds: twice the largest one sysfs reports, AT_LEAST at least."""
    return max([AT_LEAST] + [2 * size for _, size, _ in cpu_levels(root)])
