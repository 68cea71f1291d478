"""CUDA rules on real A100 traces (tests/fixtures/gpu-traces: in the repository, so these run on any clone)."""

import subprocess
from collections import Counter

import pytest
from support.paths import GPU_TRACES, kscope_cmd

from kscope.trace.kernels import load_trace, summarize

COMPILED = GPU_TRACES / "a100_compiled_add_cos_sin.json.gz"
EAGER = GPU_TRACES / "a100_eager_cnn.json.gz"


def test_compiled_trace_is_one_triton_kernel():
    s = summarize(load_trace(str(COMPILED)))
    assert s.device == "cuda"
    assert [launch.name for launch in s.launches] == ["triton_poi_fused_add_cos_sin_0"]
    assert s.launches[0].region == "0/0"
    assert (s.memcpy, s.memset) == (0, 0)


def test_eager_trace_counts_kernels_apart_from_memcpy_and_memset():
    events = load_trace(str(EAGER))
    s = summarize(events)
    assert len(s.launches) == 79
    assert (s.memcpy, s.memset) == (16, 3)
    # every kernel is tied to the ATen op that launched it
    owners = Counter(launch.owner_name for launch in s.launches)
    assert None not in owners
    assert owners["aten::conv2d"] > 0
    # kernel categories in the file agree with the count
    assert sum(1 for e in events if e.get("cat") == "kernel") == 79


@pytest.mark.slow  # a kscope process
def test_cli_summarises_a_saved_trace():
    out = subprocess.run([*kscope_cmd(), str(COMPILED)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "triton_poi_fused_add_cos_sin_0" in out.stdout
    assert "1 launch, memcpy 0, memset 0" in out.stdout  # a trace without kscope's markers: totals
