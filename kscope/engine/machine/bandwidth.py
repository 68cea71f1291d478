"""The device's memory bandwidth, to judge achieved GB/s against ("how far from the limit")."""

from __future__ import annotations

import functools
import time

import torch

from kscope.engine.measure.cache_sizes import beyond_caches

# Peak DRAM bandwidth in GB/s, from the vendors' data sheets, by the exact name CUDA reports
# (torch.cuda.get_device_name, vendor prefix dropped). A name not in the table has no known peak:
# "NVIDIA L40" is not an L4 (300 GB/s; the L40 has 864), a GH200 is not an H200.
GPU_PEAK_GBPS = {
    "H200": 4800.0,
    "H100 80GB HBM3": 3350.0,
    "H100 PCIe": 2000.0,
    "H100 NVL": 3900.0,
    "A100-SXM4-80GB": 2039.0,
    "A100-SXM4-40GB": 1555.0,
    "A100 80GB PCIe": 1935.0,
    "A100-PCIE-40GB": 1555.0,
    "L40S": 864.0,
    "L40": 864.0,
    "L4": 300.0,
    "A10G": 600.0,
    "A10": 600.0,
    "V100-SXM2-16GB": 900.0,
    "V100-SXM2-32GB": 900.0,
    "V100-PCIE-16GB": 900.0,
    "V100-PCIE-32GB": 900.0,
    "T4": 320.0,
    "RTX 4090": 1008.0,
    "RTX 3090": 936.0,
}
_VENDOR = ("NVIDIA GeForce ", "NVIDIA ", "Tesla ", "GeForce ")


def gpu_peak(name: str) -> tuple[float | None, str]:
    """The data sheet's peak for exactly this part; None (unknown, said why) for any other."""
    part = name.strip()
    for prefix in _VENDOR:
        if part.startswith(prefix):
            part = part[len(prefix):]
            break
    if part in GPU_PEAK_GBPS:
        return GPU_PEAK_GBPS[part], f"data sheet of {part}"
    return None, f"unknown: {name!r} is not in kscope's table of data sheets (engine/machine/bandwidth.py)"


@functools.lru_cache(maxsize=None)
def cpu_copy_gbps(nbytes: int | None = None, repeats: int = 3) -> float:
    """Measured once per process: the best of a few copies larger than any CPU cache (by default
    cache_sizes.beyond_caches: twice the largest, 256 MB at least), read + write bytes over time."""
    src = torch.empty(nbytes or beyond_caches(), dtype=torch.uint8)
    dst = torch.empty_like(src)
    dst.copy_(src)  # touch the pages first
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.numel() / best / 1e9


def peak_bandwidth(device: torch.device) -> tuple[float | None, str]:
    if device.type == "cuda":
        return gpu_peak(torch.cuda.get_device_name(device))
    return cpu_copy_gbps(), f"a {beyond_caches() >> 20} MB copy, measured once per worker"
