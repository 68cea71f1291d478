"""Time `kscope samples/add_relu.py --once --json` against the article's manual workflow, each as
a fresh process, interleaved in one run so machine noise hits both alike. Prints medians and the
ratio (goal: kscope --once <= manual, i.e. ratio <= 1.0).

    python benchmarks/once_vs_manual.py [--rounds 5]
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    manual = [sys.executable, str(REPO / "benchmarks" / "manual_workflow.py")]
    once = [sys.executable, "-m", "kscope", "samples/add_relu.py", "--once", "--json", "--device", args.device]
    timed(manual), timed(once)  # both warm inductor's on-disk caches once, as a user's machine would be
    m, k = [], []
    for _ in range(args.rounds):
        m.append(timed(manual))
        k.append(timed(once))
    mm, km = statistics.median(m), statistics.median(k)
    print(f"manual workflow (fresh process): median {mm:.2f} s  runs {[round(x, 2) for x in m]}")
    print(f"kscope --once --json:            median {km:.2f} s  runs {[round(x, 2) for x in k]}")
    print(f"ratio kscope/manual: {km / mm:.2f} (goal <= 1.00)")


if __name__ == "__main__":
    main()
