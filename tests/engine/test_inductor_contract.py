"""What kscope relies on from inductor, pinned: if a torch release changes it, these fail first.

- A fresh compile logs its generated code, provenance (kernel -> post-grad nodes, stack traces)
  and, with the inductor_metrics logger at INFO, bytes per scheduler node; its FX-graph-cache
  miss or hit is logged with the cache key the profiler prints as "## Call CompiledFxGraph KEY ##".
- An FX-graph-cache hit logs code and provenance again but no bytes: kscope's store (keyed by the
  normalised code) or a recompile without caches must supply them, never 0.
- kscope's per-kernel rows add up to inductor's own count for the graph, except where kscope
  corrects a gather (inductor counts the whole table for an indirect load in a fused node).
- A backward graph's kernels are logged without their post-grad nodes; kscope reads them while
  inductor compiles and still ties every node to a kernel.
- Inductor numbers the graphs of a process and writes the number into each C++ kernel's source;
  kscope numbers each run's graphs from 0, so a target run again compiles the same source.
"""

import re

import pytest
import torch
import torch.nn.functional as F
from support.paths import write_target

from kscope.engine import run as engine_run
from kscope.engine.inductor.capture import capture_inductor, configure_inductor
from kscope.engine.inductor.numbering import fresh_compile_state
from kscope.engine.inductor.store import TrafficStore
from kscope.engine.run import run
from kscope.report.place import Place
from kscope.report.request import RunRequest

F32 = 4


def _mul_add(x, y):
    return x * 3 + y


def _compile(fn, *args, cache: bool, backward: bool = False):
    """Compile and call fn (then backward from its output, with a gradient of ones, when asked)
    with inductor's caches on or off, listening as kscope does."""
    configure_inductor()
    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=cache), torch._functorch.config.patch(
        enable_autograd_cache=cache
    ), capture_inductor() as graphs:
        out = torch.compile(fn)(*args)
        if backward:
            out.backward(torch.ones_like(out))
    return graphs, out


def test_fresh_compile_logs_code_provenance_bytes_and_key_a_hit_logs_no_bytes():
    x, y = torch.randn(257), torch.randn(257)
    fresh, _ = _compile(_mul_add, x, y, cache=False)
    (g,) = fresh
    assert g.code and g.provenance and g.post_grad_graph and g.cache is None
    # inductor's own count: reads x and y, writes the output (257 fp32 each)
    assert sum(n.read for n in g.nodes) == 2 * 257 * F32
    assert sum(n.written for n in g.nodes) == 257 * F32
    assert g.inductor_total == 3 * 257 * F32

    missed, _ = _compile(_mul_add, x, y, cache=True)
    hit, _ = _compile(_mul_add, x, y, cache=True)
    (m,), (h,) = missed, hit
    assert h.cache == "hit", "the second compile with the cache on is served from it"
    assert h.fx_key and h.fx_key == m.fx_key
    assert h.nodes is None, "a cache hit logs no bytes: kscope's store must supply them"
    assert h.provenance and h.code, "provenance and code are logged on a hit too"
    assert h.code_hash == g.code_hash, "the normalised code is the same across compiles of one graph"


def test_the_profiler_names_each_compiled_graph_by_its_cache_key(tmp_path):
    # a forward and a backward graph, each one kernel of the same name (cpp_fused_mul_0): the
    # backward launch runs outside the compiled region's marker, so only the cache key in
    # "## Call CompiledFxGraph KEY ##" tells its graph; without it kscope would guess by names (and
    # say so in a note)
    path = write_target(
        tmp_path,
        """
        import torch

        def product(x, y):
            return x * y

        def inputs(device):
            return torch.randn(64, device=device), torch.randn(64, device=device)
        """,
    )
    report = run(RunRequest(str(path), device="cpu", calls=2, backward=True))
    assert not report.errors, report.errors
    n = 64 * F32
    rows = {k.phase: k for k in report.compiled.kernels if k.kind == "kernel"}
    # forward reads x and y, writes x*y; backward reads the gradient, x and y, writes both grads
    assert (rows["forward"].bytes_read, rows["forward"].bytes_written) == (2 * n, n)
    assert (rows["backward"].bytes_read, rows["backward"].bytes_written) == (3 * n, 2 * n)
    assert not [note for note in report.notes if "a guess" in note], report.notes


def _two_mm(x, w1, w2):
    return torch.sigmoid(torch.relu(x @ w1) @ w2)


def _embed_norm(idx, wte, w, b):
    return F.layer_norm(wte[idx], (wte.shape[1],), w, b)


def _gpt_mlp(x, w1, b1, w2, b2):
    return x + F.linear(F.gelu(F.linear(F.layer_norm(x, (x.shape[-1],)), w1, b1)), w2, b2)


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


CASES = {
    "two mm": (_two_mm, lambda: (torch.randn(64, 96), torch.randn(96, 128), torch.randn(128, 32))),
    "embedding + layer norm": (
        _embed_norm,
        lambda: (torch.randint(0, 5000, (4, 32)), torch.randn(5000, 64), torch.ones(64), torch.zeros(64)),
    ),
    "GPT MLP (addmm x2)": (
        _gpt_mlp,
        lambda: (torch.randn(2, 16, 64), torch.randn(256, 64), torch.randn(256), torch.randn(64, 256), torch.randn(64)),
    ),
    "attention (log-sum-exp unused)": (_attention, lambda: tuple(torch.randn(2, 4, 32, 16) for _ in range(3))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rows_add_up_to_inductors_count_but_for_kscopes_corrections(case):
    fn, make = CASES[case]
    graphs, _ = _compile(fn, *make(), cache=False)
    (g,) = graphs
    counted = g.kernel_bytes()
    rows = counted.kernels
    assert counted.stray == 0, "every scheduler node is tied to a kernel"
    assert set(rows) and all(r.read + r.written > 0 for r in rows.values())
    assert sum(n.inductor_total for n in g.nodes) == g.inductor_total
    corrections = sum(x.kscope - x.inductor for r in rows.values() for x in r.corrections)
    assert sum(r.read + r.written for r in rows.values()) == g.inductor_total + corrections
    if case == "embedding + layer norm":
        # inductor counts the whole 5000x64 table for the fused node's indirect load; kscope the
        # 4x32 rows gathered (once per loop that loads them)
        table, gathered = 5000 * 64 * F32, 4 * 32 * 64 * F32
        gathers = [x for r in rows.values() for x in r.corrections if x.rule == "gather"]
        assert gathers and all(x.inductor == table and x.kscope % gathered == 0 for x in gathers)
        assert corrections < 0
    elif case.startswith("attention"):
        # the attention kernel writes its output and the log-sum-exp (2x4x32 fp32) the graph
        # does not use: inductor counts the output only
        (fix,) = [x for r in rows.values() for x in r.corrections]
        assert fix.rule == "unused output" and corrections == 2 * 4 * 32 * F32
    else:
        assert corrections == 0


def test_two_library_calls_of_one_op_each_carry_their_own_bytes():
    x, w1, w2 = torch.randn(64, 96), torch.randn(96, 128), torch.randn(128, 32)
    graphs, _ = _compile(_two_mm, x, w1, w2, cache=False)
    (g,) = graphs
    rows = g.kernel_bytes().kernels
    assert (rows["extern_kernels.mm#0"].read, rows["extern_kernels.mm#0"].written) == (
        x.nbytes + w1.nbytes,
        64 * 128 * F32,
    )
    assert (rows["extern_kernels.mm#1"].read, rows["extern_kernels.mm#1"].written) == (
        64 * 128 * F32 + w2.nbytes,
        64 * 32 * F32,
    )
    relu = next(v for k, v in rows.items() if "relu" in k)
    assert (relu.read, relu.written) == (64 * 128 * F32, 64 * 128 * F32)


def _train(x, w):
    return torch.relu(x @ w).sum()


def test_a_backward_graph_logs_no_node_mapping_but_kscope_ties_its_nodes_to_kernels():
    x, w = torch.randn(32, 48), torch.randn(48, 16, requires_grad=True)
    (forward, backward), _ = _compile(_train, x, w, cache=False, backward=True)
    assert not forward.backward and backward.backward
    assert forward.compile_id == backward.compile_id, "one compile id for both graphs"
    assert backward.stack_traces and backward.nodes
    counted = backward.kernel_bytes()
    rows = counted.kernels
    assert counted.stray == 0 and sum(r.read + r.written for r in rows.values()) == backward.inductor_total
    # the backward's library call: grad_w = x^T @ grad_relu, reading both and writing grad_w
    assert rows["extern_kernels.mm#0"].read == x.nbytes + 32 * 16 * F32
    assert rows["extern_kernels.mm#0"].written == w.nbytes


def test_cache_hit_gives_the_right_bytes_with_and_without_kscope_store(tmp_path, monkeypatch):
    path = write_target(
        tmp_path,
        """
        import torch

        def scale_shift(x):
            return x * 5 - 1

        def inputs(device):
            return (torch.randn(3000, device=device),)
        """,
    )
    n = 3000 * F32
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store-a"))
    first = run(RunRequest(str(path), device="cpu", calls=2))
    second = run(RunRequest(str(path), device="cpu", calls=2))  # inductor's cache: a hit
    assert (first.compiled.bytes_read, first.compiled.bytes_written) == (n, n)
    assert "from inductor's cache" not in first.compiled.traffic_source
    assert (second.compiled.bytes_read, second.compiled.bytes_written) == (n, n)
    assert "1 graph(s) from inductor's cache, bytes from kscope's store" in second.compiled.traffic_source

    # A hit whose bytes kscope never saw (an empty store): kscope recompiles without caches.
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store-b"))
    third = run(RunRequest(str(path), device="cpu", calls=2))
    assert (third.compiled.bytes_read, third.compiled.bytes_written) == (n, n)
    assert "recompiled without inductor's cache" in third.compiled.traffic_source


def test_backward_phases_equal_inductors_count_for_each_graph_fresh_and_from_its_cache(tmp_path, monkeypatch):
    """--backward: the forward phase is inductor's count for the forward graph, the backward phase
    for the backward graph (compiled lazily, at the first backward), also when both come from
    inductor's caches. A second file with the same graph must not get the first file's lines."""
    source = """
        import torch

        def layer(x, w):
            return torch.relu(x @ w)

        def inputs(device):
            return torch.randn(32, 48, device=device), torch.randn(48, 16, device=device, requires_grad=True)
        """
    x, w = torch.randn(32, 48), torch.randn(48, 16, requires_grad=True)
    (forward, backward), _ = _compile(lambda x, w: torch.relu(x @ w), x, w, cache=False, backward=True)
    assert not forward.backward and backward.backward

    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store"))
    reports = []
    for name in ("first.py", "second.py", "second.py"):  # the last one: every cache hits
        path = write_target(tmp_path, source, name)
        reports.append((path, run(RunRequest(str(path), device="cpu", calls=2, backward=True))))
    for path, r in reports:
        assert not r.errors, r.errors
        assert r.compiled.phase("forward").bytes_total == forward.inductor_total
        assert r.compiled.phase("backward").bytes_total == backward.inductor_total
        line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "relu(x @ w)" in text)
        assert all(k.lines == (Place(path.name, line),) for k in r.compiled.kernels), [(k.name, k.lines) for k in r.compiled.kernels]
    assert "2 graph(s) from inductor's cache" in reports[-1][1].compiled.traffic_source

    # Both graphs in inductor's cache, none of their bytes in kscope's store: recompiled to count
    # them, the library call's row (its sizes read off a recorded call) included; what the
    # forward writes only for backward is known as on the fresh compile.
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "empty-store"))
    path, fresh = reports[0]
    again = run(RunRequest(str(path), device="cpu", calls=2, backward=True))
    assert "recompiled without inductor's cache" in again.compiled.traffic_source
    assert fresh.compiled.bytes_saved is not None
    assert again.compiled.bytes_saved == fresh.compiled.bytes_saved
    rows = lambda r: sorted((k.phase, k.name, k.bytes_read, k.bytes_written, k.bytes_saved) for k in r.compiled.kernels)
    assert rows(again) == rows(fresh)


def test_a_library_call_given_one_tensor_twice_reads_it_once_fresh_and_from_its_cache(tmp_path, monkeypatch):
    """mm(x, x): inductor counts x once, as kscope's rule says (each distinct input storage once).
    From inductor's cache with kscope's store empty, recompiled to count, the row says the same:
    a recorded call's shapes cannot tell one tensor passed twice from two, so they are not used
    for a graph whose sizes are not data-dependent (they said 2 arrays read, and a training step's
    total changed by 1 KB with the state of inductor's cache)."""
    source = """
        import torch

        def square(x):
            return torch.mm(x, x).relu()

        def inputs(device):
            return (torch.randn(64, 64, device=device),)
        """
    n = 64 * 64 * 4
    path = write_target(tmp_path, source)
    rows = lambda r: sorted((k.name, k.bytes_read, k.bytes_written) for k in r.compiled.kernels)
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store"))
    with torch._inductor.config.patch(fx_graph_cache=False):
        fresh = run(RunRequest(str(path), device="cpu", calls=2))
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "empty-store"))
    run(RunRequest(str(path), device="cpu", calls=2))  # into inductor's cache, if it was not there
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "empty-again"))
    again = run(RunRequest(str(path), device="cpu", calls=2))
    assert "recompiled without inductor's cache" in again.compiled.traffic_source
    (mm,) = [k for k in fresh.compiled.kernels if k.kind == "extern"]
    assert (mm.bytes_read, mm.bytes_written) == (n, n)
    assert rows(again) == rows(fresh)


def _cpp_label(fn, x) -> str:
    """The profiler label inductor writes into the C++ source of fn's one kernel, compiled anew (an
    FX-graph-cache hit would give the code, and label, of the compile that filled it)."""
    from torch._inductor.utils import run_and_get_code

    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        _, (code,) = run_and_get_code(torch.compile(fn), x)
    (label,) = set(re.findall(r'RecordFunctionHandle \w+\("(graph_\d+_cpp_\w+)"', code))
    return label


def test_each_run_numbers_its_graphs_from_0_so_a_rerun_compiles_the_same_cpp_source(tmp_path):
    configure_inductor()
    x = torch.ones(64)
    torch._dynamo.reset()
    before = _cpp_label(lambda t: (t * 5).cos(), x)
    torch._dynamo.reset()
    # dynamo's reset alone: the same graph gets the process's next number, so another C++ source
    assert _cpp_label(lambda t: (t * 5).cos(), x) != before
    fresh_compile_state()
    assert _cpp_label(lambda t: (t * 5).cos(), x) == "graph_0_cpp_fused_cos_mul_0"

    path = write_target(tmp_path, "import torch\ndef f(a, b):\n    return (a + b).relu()\n"
                        "def inputs(device):\n    return torch.ones(64, device=device), torch.ones(64, device=device)\n")
    first = run(RunRequest(str(path), device="cpu", calls=2))
    torch.compile(lambda t: t.sin())(x)  # a graph of the process's own between two runs
    second = run(RunRequest(str(path), device="cpu", calls=2))
    sources = [[k.code for k in r.compiled.kernels if k.code] for r in (first, second)]
    assert sources[0] == sources[1] and len(sources[0]) == 1
    assert '"graph_0_cpp_fused_add_relu_0"' in sources[0][0]
