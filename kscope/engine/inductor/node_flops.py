"""Inductor's own FLOPs per scheduler node (report.roofline says how kscope counts them).

- A library call (extern: mm, convolution, attention) or a GEMM template: inductor's
  `estimate_flops`, which is `torch.utils.flop_counter`'s count of the node's FX op at its sizes
  (inductor's count_flops_fx of the ops it came from, where the node names no single one).
- A generated loop: inductor's own count of the ops in the loop body (`LoopBody.op_counts`: the
  seed's add and relu are {"load": 2, "add": 1, "relu": 1, "store": 1}), each arithmetic op one FLOP
  per iteration; loads, stores, constants, index arithmetic and dtype casts none. A value inductor
  recomputes in a second node (a GELU a layer norm reads again) is counted where it runs again.
Call while inductor's graph is current (inside its metrics log record).
"""

from __future__ import annotations

import math

from kscope.engine.inductor.sizes import hint, iterations

NOT_FLOPS = frozenset({
    "load", "store", "store_reduction", "constant", "output", "index_expr", "to_dtype", "to_dtype_bitcast",
    "masked", "indirect_indexing", "load_seed", "check_bounds", "get_index", "placeholder", "bucketize",
    "device_assert_async", "partial_accumulate",
})
"""Loop-body ops that move, index or cast data: no floating-point work."""


def node_flops(node, kind: str) -> int | None:
    """FLOPs per run of one scheduler node; None where inductor's graph does not tell (a size with
    no hint, a body with no op counts, a library call flop_counter does not know)."""
    if kind == "nop":
        return 0
    if kind == "extern":
        return _estimated(node)
    total = 0
    for sn in node.get_nodes():
        if getattr(sn, "is_template", lambda: False)():
            flops = _estimated(sn)
        else:
            counts = getattr(getattr(sn, "_body", None), "op_counts", None)
            sizes = getattr(sn, "_sizes", None)
            if not counts or sizes is None or any(hint(s) is None for group in sizes for s in group):
                return None
            flops = sum(n for op, n in counts.items() if op not in NOT_FLOPS) * iterations(sn)
        if flops is None:
            return None
        total += flops
    return total


def _estimated(node) -> int | None:
    """inductor's estimate_flops; for a library call with no single origin node (a CPU
    convolution), flop_counter's count of the FX ops it came from that flop_counter counts."""
    from torch._dynamo.utils import counters

    before = counters["inductor"]["flop_count"]
    try:
        flops = node.estimate_flops()
        if flops is None and node.node is not None:
            from torch._inductor.fx_utils import count_flops_fx, countable_fx

            counted = [count_flops_fx(o) for o in node.node.origins if countable_fx(o)]
            flops = sum(counted) if counted and None not in counted else None
    except Exception:  # a node whose FX op flop_counter cannot run on fake tensors
        return None
    finally:
        counters["inductor"]["flop_count"] = before  # inductor counts its own once; kscope's ask adds none
    if flops is None or (isinstance(flops, float) and not math.isfinite(flops)):
        return None
    return int(flops)
