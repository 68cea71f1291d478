"""The seed's size sweep written by hand with torch.utils.benchmark, as a careful user would: for each
n from 10² to 10⁷ (or --sizes), make the inputs, warm up, then `blocked_autorange` eager and
torch.compile's default (one compiled function for all sizes: it recompiles with dynamic shapes at
the second size). Prints the median time per call and the smallest size from which compiled is
faster at every larger size. benchmarks/sweep.py times this against `kscope --once --sweep`.

    python benchmarks/manual_sweep.py [--sizes 100,1e3,...] [--device cpu]
"""

import argparse

import torch
import torch.utils.benchmark as benchmark


def add_relu(a, b):
    return (a + b).relu()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1e2,1e3,1e4,1e5,1e6,1e7")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    compiled = torch.compile(add_relu)
    rows = []
    for n in (int(float(x)) for x in args.sizes.split(",")):
        a = torch.randn(n, device=args.device)
        b = torch.randn(n, device=args.device)
        for _ in range(3):  # warm-up (and the compile, at the first sizes)
            add_relu(a, b)
            compiled(a, b)
        times = []
        for fn in (add_relu, compiled):
            timer = benchmark.Timer(stmt="fn(a, b)", globals={"fn": fn, "a": a, "b": b})
            times.append(timer.blocked_autorange().median * 1e6)
        rows.append((n, *times))
        print(f"n={n:>10}  eager {times[0]:10.1f} µs  compiled {times[1]:10.1f} µs")
    crossover = None
    for n, eager_us, compiled_us in reversed(rows):
        if compiled_us >= eager_us:
            break
        crossover = n
    print(f"compiled faster from n={crossover}" if crossover else "compiled never faster at the largest size")


if __name__ == "__main__":
    main()
