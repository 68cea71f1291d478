"""A call's working set and the memory level it is judged against, on real torch (CPU), against
bytes derived by hand from the shapes (fp32: 4 bytes an element).

The seed at n floats: eager touches a, b, a + b's result and the output (4n floats, all alive at
once during relu); compiled, the fused kernel touches a, b and the output (3n). A chain of pointwise ops: eager every
intermediate too, compiled one fused kernel (inputs and output). nn.Linear: its weight and bias are
touched too (reads_parameters).
"""

from __future__ import annotations

import torch
from support.paths import write_target

from kscope.engine.machine.memory_levels import cpu_levels, ordered
from kscope.engine.run import run
from kscope.report.request import RunRequest
from kscope.report.roofs import MAIN_MEMORY, Roof

F32 = 4


def run_file(tmp_path, source, **switches):
    report = run(RunRequest(str(write_target(tmp_path, source)), None, "cpu", calls=2, **switches))
    assert not report.errors, report.errors
    return report


SEED = """
    import torch

    def add_relu(a, b):
        return (a + b).relu()

    def inputs(device, n=1_000_000):
        return torch.randn(n, device=device), torch.randn(n, device=device)
    """

CHAIN = """
    import torch

    def chain(x):
        return x.sin().cos().exp().neg()

    def inputs(device):
        return (torch.randn(250_000, device=device),)
    """

LINEAR = """
    import torch

    model = torch.nn.Linear(256, 128)

    def forward(x):
        return model(x)

    def inputs(device):
        model.to(device)
        return (torch.randn(64, 256, device=device),)
    """


def test_the_seed_touches_4n_floats_eagerly_and_3n_compiled_and_is_judged_where_that_fits(tmp_path, monkeypatch):
    import kscope.engine.measure.timing as timing

    flushes = []
    real = timing._flusher

    def counted(device):  # the run's flusher, counting what it flushes
        flush = real(device)
        return lambda: flushes.append(1) or flush()

    monkeypatch.setattr(timing, "_flusher", counted)
    r = run_file(tmp_path, SEED)
    assert not flushes and not r.cold
    n = 1_000_000
    assert r.eager.working_set_bytes == 4 * n * F32 == 16_000_000
    assert r.compiled.working_set_bytes == 3 * n * F32 == 12_000_000
    assert r.roofs and r.roofs[-1].level == MAIN_MEMORY and r.peak_gbps == r.roofs[-1].gbps
    for mode in (r.eager, r.compiled):
        j = r.judged(mode)
        holders = [x for x in r.roofs[:-1] if x.gbps and x.capacity_bytes and x.capacity_bytes >= mode.working_set_bytes]
        assert j.roof == (holders[0] if holders else r.roofs[-1])  # the smallest level that holds it
    cold = run_file(tmp_path, SEED, cold=True)
    assert cold.cold and cold.judged(cold.compiled).roof.level == MAIN_MEMORY
    # --cold reached the timing: a flush before each call it timed, kernel rounds and call rounds
    # (each at least FLOOR_ROUNDS rounds of an eager and a compiled call; the order:
    # tests/engine/test_timing_loop.py)
    assert len(flushes) >= 2 * 2 * timing.FLOOR_ROUNDS, len(flushes)
    assert "--cold" in cold.judged(cold.compiled).why


def test_a_chain_s_intermediates_count_eagerly_and_vanish_compiled(tmp_path):
    r = run_file(tmp_path, CHAIN)
    n = 250_000 * F32
    # x and four results (sin, cos, exp, neg), but memory, not tensors: a result freed after the next
    # op read it (sin's, once cos ran) may be handed out again by the allocator for a later result,
    # the same cache lines. At least x and two live results at once, at most every tensor apart.
    assert 3 * n <= r.eager.working_set_bytes <= 5 * n
    assert r.compiled.working_set_bytes == 2 * n  # x and the output: one fused kernel


def test_a_layer_s_weights_are_part_of_the_working_set(tmp_path):
    r = run_file(tmp_path, LINEAR)
    weights = (256 * 128 + 128) * F32
    x, out = 64 * 256 * F32, 64 * 128 * F32
    assert r.eager.working_set_bytes == weights + x + out
    assert r.compiled.working_set_bytes == weights + x + out


IN_PLACE = """
    import torch

    def add_into(a, b):
        a.add_(b)
        return a

    def inputs(device, n=1_000_000):
        return torch.randn(n, device=device), torch.randn(n, device=device)
    """

TWO_READS = """
    import torch

    def norm_stats(x, w):
        h = torch.layer_norm(x, (512,)) * w
        return h.sum(0), h.amax(1)

    def inputs(device):
        return torch.randn(256, 512, device=device), torch.randn(512, device=device)
    """


def kernel(mode, name):
    return next(k for k in mode.kernels if k.name == name)


def test_each_kernel_s_working_set_is_the_memory_one_launch_touches(tmp_path):
    n = 1_000_000 * F32
    seed = run_file(tmp_path, SEED)
    # eager add: a, b and its result; relu: that result and its own; compiled: a, b and the output
    assert [(k.name, k.working_set_bytes) for k in seed.eager.kernels] == [("aten::add", 3 * n), ("aten::relu", 2 * n)]
    assert [(k.name, k.working_set_bytes) for k in seed.compiled.kernels] == [("cpp_fused_add_relu_0", 3 * n)]
    # an in-place add reads a and b and writes a: 3 arrays of traffic, 2 of memory, in both modes
    # (compiled, inductor's output buffer mutates the graph input a: the same memory)
    inplace = run_file(tmp_path, IN_PLACE)
    for mode in (inplace.eager, inplace.compiled):
        (k,) = mode.kernels
        assert (k.bytes_total, k.working_set_bytes) == (3 * n, 2 * n), (k.name, k.bytes_total, k.working_set_bytes)


def test_a_kernel_of_several_nodes_touches_an_input_once_that_inductor_counts_per_node(tmp_path):
    r = run_file(tmp_path, TWO_READS)
    x, w = 256 * 512 * F32, 512 * F32
    (k,) = [k for k in r.compiled.kernels if k.fused]
    # one C++ kernel: layer norm's statistics and the normalised h feeding sum and amax, each a
    # scheduler node of its own reading x: inductor counts x once per node, memory holds it once
    assert k.bytes_read >= 2 * x
    assert k.working_set_bytes == x + w + k.bytes_written < k.bytes_total
    # eager: layer_norm touches x, its output and mean and rstd (256 floats each)
    ln = kernel(r.eager, "aten::layer_norm › native_layer_norm")
    assert ln.working_set_bytes == 2 * x + 2 * 256 * F32


def test_the_caches_sysfs_reports_each_level_s_size_and_who_shares_it(tmp_path):
    for i, (level, kind, size, shared) in enumerate([(1, "Data", "48K", "0"), (1, "Instruction", "32K", "0"),
                                                     (2, "Unified", "2048K", "0"), (3, "Unified", "107520K", "0-1")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
            (d / name).write_text(f"{value}\n")
    assert cpu_levels(tmp_path) == [("L1d", 48 << 10, True), ("L2", 2 << 20, True), ("L3", 107520 << 10, False)]
    assert cpu_levels(tmp_path / "none") == []


def test_a_level_measured_slower_than_the_next_one_out_takes_its_rate_and_says_so():
    l2, l3, mem = Roof("L2", 100.0, 1, "m"), Roof("L3", 3.0, 2, "m"), Roof(MAIN_MEMORY, 20.0, None, "m")
    fixed = ordered((l2, l3, mem))
    assert [x.gbps for x in fixed] == [100.0, 20.0, 20.0]
    assert not fixed[1].measured and "measured slower (3 GB/s)" in fixed[1].source
    assert ordered((l2, mem)) == (l2, mem)


def test_this_machine_s_roofs_are_ordered_and_say_where_they_come_from():
    from kscope.engine.machine.memory_levels import roofs

    levels = roofs(torch.device("cpu"))
    rates = [x.gbps for x in levels if x.gbps is not None]
    assert levels[-1].level == MAIN_MEMORY and levels[-1].gbps
    assert rates == sorted(rates, reverse=True)
    assert all(x.source for x in levels)
