"""Each memory level's roof as kscope measures it (engine/machine/memory_levels.py), in N fresh
processes one after another, as N workers would, sharing one fresh cache: each worker's own
measurement of every level and the roof it reports (the best kept on this machine), with the
spread ((max - min) / median) of each, and the load at the start and end.

    python benchmarks/roofs.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ONE = """
import json, re, torch
from kscope.engine.machine.memory_levels import roofs
out = []
for r in roofs(torch.device("cpu")):
    mine = re.search(r"this worker's: ([0-9.]+) GB/s", r.source)
    out.append([r.level, r.capacity_bytes, r.gbps, float(mine.group(1)) if mine else None])
print(json.dumps(out))
"""


def spread(values: list[float]) -> str:
    return f"{(max(values) - min(values)) / statistics.median(values):.1%}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="kscope-roofs-")
    print("load at start:", os.getloadavg())
    mine: dict[str, list[float]] = {}
    reported: dict[str, list[float]] = {}
    capacity: dict[str, int | None] = {}
    for i in range(args.runs):
        out = subprocess.run([sys.executable, "-c", ONE], cwd=REPO, capture_output=True, text=True, check=True,
                             env={**os.environ, "KSCOPE_CACHE_DIR": cache})
        levels = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"run {i + 1}: " + ", ".join(
            f"{name} {'?' if m is None else f'{m:.1f}'} -> {'?' if g is None else f'{g:.1f}'} GB/s"
            for name, _, g, m in levels))
        for name, cap, gbps, measured in levels:
            capacity[name] = cap
            if measured is not None:
                mine.setdefault(name, []).append(measured)
            if gbps is not None:
                reported.setdefault(name, []).append(gbps)
    for name, cap in capacity.items():
        m, r = mine.get(name, []), reported.get(name, [])
        size = "main memory" if cap is None else f"{cap / 1e6:.3g} MB"
        print(f"{name} ({size}): measured median {statistics.median(m):.1f} GB/s spread {spread(m)}; "
              if m else f"{name} ({size}): not measured; ", end="")
        print(f"reported median {statistics.median(r):.1f} GB/s spread {spread(r)}" if r else "reported unknown")
    print("load at end:", os.getloadavg())


if __name__ == "__main__":
    main()
