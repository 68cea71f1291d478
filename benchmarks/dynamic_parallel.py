"""Plain torch, no kscope: torch.compile's default across sizes recompiles with dynamic shapes at the
second size, and inductor's C++ backend decides the kernel's parallelism from that size (its hint).
Compile at n=100, then at HINT, and time the dynamic kernel at n=10⁷: with HINT=1000 it is serial.

    python benchmarks/dynamic_parallel.py 1000; python benchmarks/dynamic_parallel.py 100000
"""

import sys
import time

import torch
from torch._inductor.utils import run_and_get_code


def add_relu(a, b):
    return (a + b).relu()


def main() -> None:
    hint = int(float(sys.argv[1]))
    compiled = torch.compile(add_relu)
    compiled(torch.randn(100), torch.randn(100))  # the first size: static shapes
    _, code = run_and_get_code(compiled, torch.randn(hint), torch.randn(hint))  # recompiles, dynamic
    print(f"dynamic kernel compiled at n={hint}: OpenMP parallel: {'omp parallel' in code[0]}")
    a, b = torch.randn(10**7), torch.randn(10**7)
    for _ in range(3):
        compiled(a, b)
    start = time.perf_counter()
    for _ in range(20):
        compiled(a, b)
    print(f"at n=1e7: {(time.perf_counter() - start) / 20 * 1e3:.1f} ms a call (mean of 20)")


if __name__ == "__main__":
    main()
