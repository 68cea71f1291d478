"""Data-dependent sizes as they ran, read off the shapes the profiler recorded.

Inductor compiles a graph whose sizes depend on the data (nonzero's count, the tokens routed to an
expert: unbacked symbols u0, u1) without knowing them; its hints for them are guesses. And a custom
op that compiled code calls but eager code never ran (a library's fallback when compiling) has
ATen ops inside it that nothing counted. For either, kscope profiles one more call of the compiled
function with the ops' input shapes recorded (record_shapes slows every op: never in the timed
rounds, and only when needed) and reads sizes off it:

- the symbols: each library call (extern) of a graph is recorded with its tensors' dims, which
  inductor's IR gives as expressions (`(u0, 32)`); a dim with one unknown symbol solves it. Inductor
  then counts every node again at those values (dynamic_bytes.bytes_at), generated kernels too; a
  node with a symbol no recorded dim solved stays unknown, with why.
- an ATen op known only by its recorded arguments: its bytes by op family (op_bytes).

The values are those of the profiled call: for a target whose inputs do not change between calls
(kscope calls it with the same arguments), those of every call.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import torch

from kscope.engine.inductor.bytes import unbacked_symbols
from kscope.engine.measure.profiling import is_nonwork, record_labelled
from kscope.trace.collectives import ELEMENT_BYTES
from kscope.trace.kernels import (
    Dispatched,
    Launch,
    TraceSummary,
    is_custom_op,
    summarize,
)

SCALAR_TYPE = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1, 15: 2}
"""Bytes per element of c10::ScalarType codes, as a factory op's dtype argument records them."""


def has_unbacked(g) -> bool:
    """A graph compiled in this process with data-dependent sizes."""
    return g.live is not None and any(unbacked_symbols(graph.sizevars.shape_env) for graph, _, _ in g.live)


def shape_call(
    call: Callable[[], object], device: torch.device, dependent: bool, timed: TraceSummary, eager_rows,
    dispatched: Dispatched,
) -> TraceSummary | None:
    """One profiled call of the compiled function with shapes recorded, when a graph has
    data-dependent sizes (`dependent`) or a custom op ran in compiled code that eager accounting
    has no row of (`eager_rows`: (phase, name) -> its bytes); else None (nothing spent)."""
    uncounted = any(
        launch.call is not None and is_custom_op(launch.composite or "")
        and (launch.phase, launch.composite) not in eager_rows
        for launch in timed.launches
    )
    if not uncounted and not dependent:
        return None
    return summarize(record_labelled([("s", call)], device, shapes=True), is_nonwork, dispatched)


def _tensors(args: dict) -> list[tuple[list[int], str]]:
    """The tensor arguments of a recorded op: (dims, dtype name), in order."""
    dims, types = args.get("Input Dims") or [], args.get("Input type") or []
    return [(d, t) for d, t in zip(dims, types) if t in ELEMENT_BYTES]


def op_bytes(name: str, args: dict | None) -> tuple[int, int] | None:
    """(read, written) of one ATen op from its recorded arguments, for the families whose output
    the inputs fix; None for any other (its output's size is not recorded).
    - mm, bmm: read both operands, write rows × columns (the out= tensor, if recorded, is that);
    - addmm, baddbmm: read the bias (as recorded: broadcast costs nothing), both operands, write
      the product's shape;
    - zeros, ones, full (a factory): write its size (its first list argument) in its dtype;
    - zero_, fill_: write self."""
    if args is None:
        return None
    op = name.removeprefix("aten::")
    tensors = _tensors(args)
    size = lambda t: math.prod(t[0]) * ELEMENT_BYTES[t[1]]
    if op in ("mm", "bmm", "addmm", "baddbmm"):
        operands = tensors[:3] if op in ("addmm", "baddbmm") else tensors[:2]
        if len(operands) < (3 if op in ("addmm", "baddbmm") else 2):
            return None
        a, b = operands[-2], operands[-1]
        out = [*a[0][:-1], b[0][-1]]
        return sum(size(t) for t in operands), math.prod(out) * ELEMENT_BYTES[a[1]]
    if op in ("zeros", "ones", "full"):
        concrete = args.get("Concrete Inputs") or []
        try:
            shape = [int(x) for x in concrete[0].strip("[]").split(",") if x.strip()]
            dtype = SCALAR_TYPE[int(concrete[1])] if len(concrete) > 1 and concrete[1] else None
        except (ValueError, IndexError, KeyError):
            return None
        if dtype is None:
            dtype = torch.get_default_dtype().itemsize
        return 0, math.prod(shape) * dtype
    if op in ("zero_", "fill_") and tensors:
        return 0, size(tensors[0])
    return None


@dataclass(frozen=True)
class RanBytes:
    """The bytes of one row's launches in the call profiled with shapes recorded."""

    bytes_read: int
    bytes_written: int
    launches: int


def row_bytes(
    shapes: TraceSummary, key: Callable[[Launch], tuple], wanted: Callable[[Launch], bool] = lambda _: True
) -> dict[tuple, RanBytes]:
    """Row key -> the RanBytes of the profiled call, for the rows of library calls
    (externs) and of the ATen ops inside a custom op (those `wanted`), whose every launch op_bytes
    knows: what each call's tensors hold, not inductor's count, which charges a view of a buffer
    (one expert's slice of the weights) the whole buffer."""
    rows: dict[tuple, list] = defaultdict(list)
    for launch in shapes.launches:
        if (launch.kind == "extern" or is_custom_op(launch.composite or "")) and wanted(launch):
            rows[key(launch)].append(op_bytes(launch.name, launch.args))
    return {
        k: RanBytes(sum(r for r, _ in each), sum(w for _, w in each), len(each))
        for k, each in rows.items()
        if None not in each
    }


def solved(live: list[tuple], launches: list[Launch]) -> dict:
    """Each data-dependent symbol of the graph -> its value in the profiled call, solved from the
    dims recorded for the graph's library calls (`launches`: the externs under its call, in order);
    empty when the graph's library calls and the recorded ones do not pair up one for one (the
    graph ran more than once in the call, or differently: which values were whose is not known)."""
    import sympy
    from torch._inductor import scheduler
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    recorded: dict[str, list[Launch]] = defaultdict(list)
    for launch in launches:
        recorded[launch.name].append(launch)
    externs = [(graph, n) for graph, snodes, _ in live for n in snodes if isinstance(n, scheduler.ExternKernelSchedulerNode)]
    wanted: dict[str, int] = defaultdict(int)
    for _, n in externs:
        wanted[_op_name(n.node)] += 1
    if any(len(recorded.get(name, ())) != count for name, count in wanted.items() if name):
        return {}
    values: dict = {}
    for graph, n in externs:
        name = _op_name(n.node)
        launch = recorded[name].pop(0) if name else None
        if launch is None or launch.args is None:
            continue
        try:
            ir_tensors = [t.get_size() for t in n.node.inputs if hasattr(t, "get_size")] + [n.node.get_size()]
        except Exception:  # noqa: BLE001 - a multi-output call has no size of its own: its inputs' still pair
            ir_tensors = [t.get_size() for t in n.node.inputs if hasattr(t, "get_size")]
        for ir_dims, (dims, _) in zip(ir_tensors, _tensors(launch.args)):
            if len(ir_dims) != len(dims):
                continue
            for expr, value in zip(ir_dims, dims):
                expr = graph.sizevars.simplify(sympy.sympify(expr)).xreplace(values)
                free = free_unbacked_symbols(expr)
                if len(free) != 1:
                    continue
                symbol = free.pop()
                roots = [r for r in sympy.solve(sympy.Eq(expr, value), symbol) if r.is_integer and r >= 0]
                if len(roots) == 1:
                    values[symbol] = int(roots[0])
    return values


def _op_name(extern) -> str | None:
    """The profiler's name for an extern ("aten::mm"): its ATen overload's, or the name of
    inductor's `extern_kernels.mm` (torch.mm's out= variant)."""
    overload = getattr(extern, "op_overload", None)
    schema = getattr(overload, "_schema", None)
    if schema is not None:
        return str(schema.name)
    kernel = str(getattr(extern, "python_kernel_name", "") or "")
    if kernel.startswith("extern_kernels."):
        return "aten::" + kernel.removeprefix("extern_kernels.")
    return None
