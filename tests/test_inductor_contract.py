"""What kscope relies on from inductor, pinned: if a torch release changes it, these fail first.

- A fresh compile logs its generated code, provenance (kernel -> post-grad nodes, stack traces)
  and, with the inductor_metrics logger at INFO, bytes per scheduler node.
- An FX-graph-cache hit logs code and provenance again but no bytes: kscope's store (keyed by the
  normalised code) or a recompile without caches must supply them, never 0.
"""

import torch

from conftest import write_target
from kscope.engine import run as engine_run
from kscope.engine.inductor_capture import TrafficStore, capture_inductor, configure_inductor
from kscope.engine.run import RunRequest, run


def _mul_add(x, y):
    return x * 3 + y


def test_fresh_compile_logs_code_provenance_and_bytes_a_hit_logs_no_bytes():
    configure_inductor()
    x, y = torch.randn(257), torch.randn(257)
    with torch._inductor.config.patch(fx_graph_cache=False), capture_inductor() as fresh:
        torch._dynamo.reset()
        torch.compile(_mul_add)(x, y)
    (g,) = [g for g in fresh.values() if g.code]
    assert g.provenance and g.post_grad_graph
    assert g.nodes is not None
    # inductor's own count: reads x and y, writes the output (257 fp32 each)
    assert sum(n.read for n in g.nodes) == 2 * 257 * 4
    assert sum(n.written for n in g.nodes) == 257 * 4

    torch._dynamo.reset()
    torch.compile(_mul_add)(x, y)  # fills the FX graph cache
    torch._dynamo.reset()
    with capture_inductor() as hit:
        torch.compile(_mul_add)(x, y)
    (h,) = [h for h in hit.values() if h.code]
    assert h.provenance, "provenance is logged on a cache hit too"
    assert h.code_hash == g.code_hash, "the normalised code is the same across compiles of one graph"
    assert h.nodes is None or sum(n.read for n in h.nodes) == 2 * 257 * 4


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
    n = 3000 * 4
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store-a"))
    first = run(RunRequest(str(path), device="cpu", calls=2))
    second = run(RunRequest(str(path), device="cpu", calls=2))  # inductor's cache: a hit
    assert (first.compiled.bytes_read, first.compiled.bytes_written) == (n, n)
    assert (second.compiled.bytes_read, second.compiled.bytes_written) == (n, n)
    assert "store" in second.compiled.traffic_source or "cache" in second.compiled.traffic_source

    # A hit whose bytes kscope never saw (an empty store): kscope recompiles without caches.
    monkeypatch.setattr(engine_run, "_store", TrafficStore(tmp_path / "store-b"))
    third = run(RunRequest(str(path), device="cpu", calls=2))
    assert (third.compiled.bytes_read, third.compiled.bytes_written) == (n, n)
    assert "recompiled" in third.compiled.traffic_source
