"""The device's peak FLOP/s for the dtype that runs: the roofline's compute roof (report.roofline).

On a GPU from the vendor's data sheet of the exact part CUDA names, dense (no sparsity), for the
dtype: fp32 as CUDA cores run it (torch's default matmul precision, no TF32), bf16 and fp16 on the
tensor cores. A part or a dtype not in the table is unknown, and says so. On the CPU, for fp32,
measured once per worker (the best 512² matmul of a third of a second on one thread, 2·n³ FLOPs
each, times torch's threads), and the best of every worker's on this machine is the peak.
"""

from __future__ import annotations

import functools
import time

import torch

from kscope.engine.machine.bandwidth import _VENDOR
from kscope.engine.machine.kept import disturbed, kept_source, machine_best, measured_quietly

TFLOPS = {
    "H200": {"float32": 67.0, "bfloat16": 989.4, "float16": 989.4},
    "H100 80GB HBM3": {"float32": 67.0, "bfloat16": 989.4, "float16": 989.4},
    "H100 PCIe": {"float32": 51.2, "bfloat16": 756.0, "float16": 756.0},
    "A100-SXM4-80GB": {"float32": 19.5, "bfloat16": 312.0, "float16": 312.0},
    "A100-SXM4-40GB": {"float32": 19.5, "bfloat16": 312.0, "float16": 312.0},
    "A100 80GB PCIe": {"float32": 19.5, "bfloat16": 312.0, "float16": 312.0},
    "A100-PCIE-40GB": {"float32": 19.5, "bfloat16": 312.0, "float16": 312.0},
    "L40S": {"float32": 91.6, "bfloat16": 362.05, "float16": 362.05},
    "L4": {"float32": 30.3, "bfloat16": 121.0, "float16": 121.0},
    "V100-SXM2-16GB": {"float32": 15.7, "float16": 125.0},
    "V100-SXM2-32GB": {"float32": 15.7, "float16": 125.0},
    "T4": {"float32": 8.1, "float16": 65.0},
}
"""Dense TFLOP/s by part (the name CUDA reports, vendor prefix dropped) and dtype, from the data sheets."""

CPU_N = 512
BUDGET_S = 0.3
_THREADS: dict[int, int] = {}
"""The threads each measured peak was multiplied by, for its source's words."""


def compute_dtype(args) -> torch.dtype:
    """The dtype the target computes in, as kscope takes it: its largest floating-point input's;
    torch's default where it has none (a model handed token ids)."""
    floats = [a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    return max(floats, key=lambda t: t.nbytes).dtype if floats else torch.get_default_dtype()


def gpu_peak_flops(name: str, dtype: torch.dtype) -> tuple[float | None, str]:
    part = name.strip()
    for prefix in _VENDOR:
        if part.startswith(prefix):
            part = part[len(prefix):]
            break
    kind = str(dtype).removeprefix("torch.")
    if part not in TFLOPS:
        return None, f"unknown: {name!r} is not in kscope's table of data sheets (engine/machine/peak_flops.py)"
    if kind not in TFLOPS[part]:
        return None, f"unknown: no {kind} figure for {part} in kscope's table (engine/machine/peak_flops.py)"
    return TFLOPS[part][kind] * 1e12, f"data sheet of {part}, {kind}, dense"


@functools.lru_cache(maxsize=None)
def cpu_matmul_flops(n: int = CPU_N, budget_s: float = BUDGET_S) -> float:
    """Measured once per process: the best of fp32 n×n matmuls on one thread for `budget_s`
    seconds (2·n³ FLOPs each), times the threads torch runs kernels on. One thread, and the best
    over a third of a second, because this shared machine's speed moves from one moment to the
    next: a few matmuls on both threads varied by half from one process to the next, the best of
    a third of a second on one by a tenth (benchmarks/peak_flops.py)."""
    threads = torch.get_num_threads()
    random = torch.Generator().manual_seed(0)  # not the global generator: the user's draws stay theirs
    a = torch.rand(n, n, generator=random)
    b = torch.rand(n, n, generator=random)
    torch.set_num_threads(1)
    try:
        out = a @ b  # warm: the first call allocates and picks the BLAS path
        best, start, runs = float("inf"), time.perf_counter(), 0
        while runs < 5 or time.perf_counter() - start < budget_s:
            began = time.perf_counter()
            torch.mm(a, b, out=out)
            best = min(best, time.perf_counter() - began)
            runs += 1
    finally:
        torch.set_num_threads(threads)
    _THREADS[n] = threads
    return 2 * n**3 / best * threads


def peak_flops(device: torch.device, dtype: torch.dtype) -> tuple[float | None, str]:
    if device.type == "cuda":
        return gpu_peak_flops(torch.cuda.get_device_name(device), dtype)
    if device.type != "cpu":
        return None, f"unknown: kscope has no peak for {device.type}"
    if dtype != torch.float32:
        return None, f"unknown: kscope measures the CPU's fp32 peak only (the target computes in {str(dtype).removeprefix('torch.')})"
    return _cpu_peak()


@functools.lru_cache(maxsize=None)
def _cpu_peak() -> tuple[float, str]:
    """Once per process: this worker's measurement, added to the machine's (a second run in the
    worker is no second measurement)."""
    mine, share = measured_quietly(cpu_matmul_flops)
    best, times = machine_best(mine, counts=not disturbed(share))
    return best, (f"the best {CPU_N}² fp32 matmul on one thread × {_THREADS[CPU_N]} threads: {kept_source(times, share)}"
                  f" (this worker's: {mine / 1e9:.0f} GFLOP/s)")
