"""The CPU's peak FLOP/s as kscope measures it (engine/peak_flops.py: the best of five fp32
1024² matmuls, once per worker), in N fresh processes one after another, as N workers would:
each value, their spread ((max - min) / median) and the median. The roofline's compute roof is
only as good as this is stable.

    python benchmarks/peak_flops.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ONE = "from kscope.engine.peak_flops import cpu_matmul_flops; print(cpu_matmul_flops())"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    values = []
    for i in range(args.runs):
        out = subprocess.run([sys.executable, "-c", ONE], cwd=REPO, capture_output=True, text=True, check=True)
        values.append(float(out.stdout.split()[-1]))
        print(f"run {i + 1}: {values[-1] / 1e9:.1f} GFLOP/s")
    median = statistics.median(values)
    spread = (max(values) - min(values)) / median
    print(f"median {median / 1e9:.1f} GFLOP/s; spread (max - min) / median {spread:.1%} over {len(values)} runs")


if __name__ == "__main__":
    main()
