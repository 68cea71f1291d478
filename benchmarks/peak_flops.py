"""The CPU's peak FLOP/s as kscope reports it (engine/machine/peak_flops.py), in N fresh processes one after
another, as N workers would, sharing one fresh cache: each worker's own measurement (the best 512²
fp32 matmul of 0.3 s on one thread × threads) and the peak it reports (the best of every
measurement on this machine so far), with the spread ((max - min) / median) of each.

    python benchmarks/peak_flops.py [--runs 5]
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
import json, torch
from kscope.engine.machine.peak_flops import cpu_matmul_flops, peak_flops
print(json.dumps([cpu_matmul_flops(), peak_flops(torch.device("cpu"), torch.float32)[0]]))
"""


def spread(values: list[float]) -> str:
    return f"{(max(values) - min(values)) / statistics.median(values):.1%}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="kscope-peak-")
    mine, reported = [], []
    for i in range(args.runs):
        out = subprocess.run([sys.executable, "-c", ONE], cwd=REPO, capture_output=True, text=True, check=True,
                             env={**os.environ, "KSCOPE_CACHE_DIR": cache})
        measured, peak = json.loads(out.stdout.strip().splitlines()[-1])
        mine.append(measured)
        reported.append(peak)
        print(f"run {i + 1}: measured {measured / 1e9:.1f} GFLOP/s, reported {peak / 1e9:.1f} GFLOP/s")
    print(f"measured: median {statistics.median(mine) / 1e9:.1f} GFLOP/s, spread {spread(mine)}; "
          f"reported: median {statistics.median(reported) / 1e9:.1f} GFLOP/s, spread {spread(reported)} "
          f"over {len(mine)} runs")


if __name__ == "__main__":
    main()
