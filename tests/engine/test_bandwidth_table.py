"""The GPU's peak bandwidth comes from the data sheet of exactly the part CUDA names, else it is
unknown: a name that merely contains a known one is another part (issue 22, item 7)."""

from __future__ import annotations

import pytest

from kscope.engine.machine.bandwidth import gpu_peak


@pytest.mark.parametrize("name, gbps", [
    ("NVIDIA H200", 4800.0),
    ("NVIDIA A100-SXM4-80GB", 2039.0),
    ("NVIDIA A100-SXM4-40GB", 1555.0),
    ("NVIDIA L40S", 864.0),
    ("NVIDIA L40", 864.0),
    ("NVIDIA L4", 300.0),
    ("Tesla T4", 320.0),
    ("NVIDIA GeForce RTX 4090", 1008.0),
])
def test_a_known_part_has_its_data_sheets_peak(name, gbps):
    peak, source = gpu_peak(name)
    assert peak == gbps and "data sheet" in source


@pytest.mark.parametrize("name", ["NVIDIA GH200 480GB", "NVIDIA L40G", "NVIDIA H100", "AMD Instinct MI300X", "NVIDIA A100"])
def test_another_part_is_unknown_not_its_namesakes(name):
    peak, source = gpu_peak(name)
    assert peak is None and "unknown" in source and name in source
