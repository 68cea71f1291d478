"""Time `kscope samples/add_relu.py --once --sweep` (sizes 10² to 10⁷) against the same sweep written
by hand with torch.utils.benchmark (benchmarks/manual_sweep.py), each as a fresh process, interleaved
in one run so machine noise hits both alike. Prints medians, the ratio (goal: <= 1.5) and the
crossover each found.

    python benchmarks/sweep.py [--rounds 3]
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZES = "1e2,1e3,1e4,1e5,1e6,1e7"


def timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=REPO)
    return time.perf_counter() - start, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    manual = [sys.executable, str(REPO / "benchmarks" / "manual_sweep.py"), "--sizes", SIZES, "--device", args.device]
    kscope = [sys.executable, "-m", "kscope", "samples/add_relu.py", "--once", "--json", "--sweep", "--sizes", SIZES,
              "--device", args.device]
    timed(manual), timed(kscope)  # both warm the on-disk caches once, as on a user's machine
    m, k, crossovers = [], [], []
    for _ in range(args.rounds):
        took, out = timed(manual)
        m.append(took)
        found = re.search(r"compiled faster from n=(\d+)", out)
        manual_crossover = int(found.group(1)) if found else None
        took, out = timed(kscope)
        k.append(took)
        sweep = json.loads(out)["sweep"]
        crossovers.append((manual_crossover, sweep["crossover_n"], sweep["stopped"]))
    mm, km = statistics.median(m), statistics.median(k)
    print(f"sweep by hand (torch.utils.benchmark, fresh process): median {mm:.2f} s  runs {[round(x, 2) for x in m]}")
    print(f"kscope --once --sweep (fresh process):                median {km:.2f} s  runs {[round(x, 2) for x in k]}")
    print(f"ratio kscope/by hand: {km / mm:.2f} (goal <= 1.50)")
    for manual_n, kscope_n, stopped in crossovers:
        print(f"crossover: by hand {manual_n}, kscope {kscope_n}" + (f" (stopped: {stopped})" if stopped else ""))


if __name__ == "__main__":
    main()
