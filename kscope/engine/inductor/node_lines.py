"""Which line each part of a compiled kernel's memory traffic belongs to.

Inductor counts a kernel's bytes for the kernel as a whole (engine.inductor.bytes); its
post-grad graph, which it logs for every compile (a cache hit too), says which ATen op each of
the kernel's post-grad nodes is, what it reads, its output's dtype and shape, and the line it
came from. So, within one kernel:
- a load is the node's that reads a buffer from outside the kernel (a graph input, another
  kernel's output); a buffer several of its nodes read is loaded once, shared among them;
- a store is the node's whose output leaves the kernel (read by another kernel, or returned);
- an intermediate that stays inside the kernel is neither: the line that made it costs nothing
  for it, which is what fusion saves.
These are weights (the bytes of the tensors, as the graph's types give them); the kernel's
figures stay inductor's, shared in these proportions (report.lines). Pure text handling.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from kscope.engine.target.project import place_of
from kscope.report.measures import sum_known
from kscope.report.place import Place, sorted_places

# add: "f32[1000000][1]cpu" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None
_NODE = re.compile(r'^\s*(\w+)(?:: "([^"]*)")? = (.*)$')
_SIGNATURE = re.compile(r"def forward\(self, (.*)\):\s*$")
_PARAM = re.compile(r'(\w+): "([^"]*)"')
_COMMENT = re.compile(r"^\s*#.*?File: (.*?):(\d+) in ")  # "# File: …", "# recompute: … File: …"
_OP = re.compile(r"torch\.ops\.(\w+)\.(\w+)\.")
_RETURN = re.compile(r"^\s*return (.*)$")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_TYPE = re.compile(r"^([a-z]+\d*[a-z0-9]*)\[([^\]]*)\]")
_FRAME = re.compile(r'File "(.*?)", line (\d+)')

DTYPE_BYTES = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "b8": 1,
    "c64": 8, "c128": 16, "u16": 2, "u32": 4, "u64": 8, "f8e4m3fn": 1, "f8e5m2": 1,
}
"""Bytes per element of the dtypes as FX prints them ("f32[8][1]cpu")."""

VIEWS = frozenset({
    "aten.view", "aten.reshape", "aten._unsafe_view", "aten.permute", "aten.expand", "aten.transpose", "aten.t",
    "aten.squeeze", "aten.unsqueeze", "aten.slice", "aten.select", "aten.as_strided", "aten.alias",
    "aten.view_as", "aten.unfold", "aten.diagonal", "aten.narrow",
})
"""Ops whose output is a view of their input: inside a kernel they load nothing themselves."""


@dataclass
class GraphNodes:
    """The parts of a post-grad graph's text the weights need."""

    nbytes: dict[str, int | None] = field(default_factory=dict)
    """Node or placeholder -> bytes of its output (None: a size that is a symbol)."""
    args: dict[str, list[str]] = field(default_factory=dict)
    """Node -> the nodes and placeholders it reads."""
    users: dict[str, set[str]] = field(default_factory=dict)
    frame: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Node -> (file, line) of the frame its stack trace ends in."""
    outputs: set[str] = field(default_factory=set)
    op: dict[str, str] = field(default_factory=dict)
    """Node -> its ATen op ("aten.copy_", "aten.view"); "" for an index into a tuple."""
    scalar: dict[str, bool] = field(default_factory=dict)
    """Placeholders and nodes that are symbols, not tensors ("Sym(s0)"): read from no memory."""


@dataclass(frozen=True)
class LineWeight:
    """How much of a kernel's bytes one of its lines takes: weights, shared in proportion."""

    place: Place | None
    """None: a node of the kernel with no line of its own, where the kernel has several."""
    read: float
    written: float


def type_bytes(text: str | None) -> int | None:
    """Bytes of a tensor typed as FX prints it ("f32[1000000][1]cpu"); None if unknown."""
    m = _TYPE.match(text or "")
    if not m or m.group(1) not in DTYPE_BYTES:
        return None
    sizes = [s.strip() for s in m.group(2).split(",") if s.strip()]
    if not all(s.isdigit() for s in sizes):
        return None  # a symbolic size ("s0")
    return math.prod(int(s) for s in sizes) * DTYPE_BYTES[m.group(1)]


def parse_graph(text: str) -> GraphNodes:
    """The top-level forward of inductor's printed post-grad graph (nested modules skipped)."""
    g = GraphNodes()
    frame: tuple[str, int] | None = None
    depth = None  # the indentation of the forward's body
    for line in text.splitlines():
        sig = _SIGNATURE.search(line)
        if sig and depth is None:
            params = _PARAM.findall(sig.group(1))
            g.nbytes.update({name: type_bytes(t) for name, t in params})
            g.scalar.update({name: t.startswith("Sym(") for name, t in params})
            depth = len(line) - len(line.lstrip()) + 4
            continue
        if depth is None or not line.strip():
            frame = None
            continue
        if len(line) - len(line.lstrip()) != depth:
            continue
        comment = _COMMENT.match(line)
        if comment:
            frame = (comment.group(1), int(comment.group(2)))
            continue
        ret = _RETURN.match(line)
        if ret:
            g.outputs |= {n for n in _NAME.findall(ret.group(1)) if n in g.nbytes}
            break
        node = _NODE.match(line.split(";  ", 1)[0])  # not the `x = None` that frees its inputs
        if not node:
            continue
        name, typed, call = node.groups()
        g.nbytes[name] = type_bytes(typed)
        g.scalar[name] = bool(typed and typed.startswith("Sym("))
        op = _OP.match(call)
        g.op[name] = f"{op.group(1)}.{op.group(2)}" if op else ""
        reads = [n for n in dict.fromkeys(_NAME.findall(_call_args(call))) if n in g.nbytes and n != name]
        g.args[name] = reads
        for n in reads:
            g.users.setdefault(n, set()).add(name)
        if frame is not None:
            g.frame[name] = frame
    return g


def _call_args(call: str) -> str:
    """What a node's call is handed: the text inside its outermost parentheses, or an index's
    subject (`var_mean[0]`)."""
    start = call.find("(")
    if start >= 0:
        return call[start + 1:call.rfind(")")]
    return call.split("[", 1)[0]


def _frames(trace: str) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in _FRAME.finditer(trace)]


def _place(node: str, graph: GraphNodes, traces: list[str], own: dict[str, str],
           caller: tuple[tuple[str, int], ...] = ()) -> list[Place | None]:
    """The places a node may be at: its own stack trace (kept while inductor compiled it) when the
    kernel's logged traces still hold it (a cache hit of other lines has other traces); else the
    places of the logged traces that end in the node's frame, which are several when a helper of
    torch's (F.relu) was called from several lines: the node is then shared among them. `caller`:
    the frames that called the frame dynamo traced (provenance.places)."""
    mine = own.get(node)
    if mine is not None and (mine in traces or not traces):
        return [place_of([*reversed(_frames(mine)), *caller])]
    frame = graph.frame.get(node)
    if frame is None:
        return []
    found = [place_of([*reversed(f), *caller]) for f in map(_frames, traces) if f and f[-1] == frame]
    return list(dict.fromkeys(found))


def reader_places(nodes: list[str], graph: GraphNodes, traces: list[str], own: dict[str, str],
                  caller: tuple[tuple[str, int], ...] = ()) -> tuple[Place, ...]:
    """The places of the ops that read what `nodes` made, through readers that have none
    themselves: inductor's seeds for dropout (`inductor_seeds`, no stack trace) are read by one
    `inductor_lookup_seed` per dropout, each at its dropout's line. `traces`, `own`: those of
    every kernel of the graph. Empty where no reader has a place."""
    found: list[Place] = []
    seen = set(nodes)
    todo = [u for n in nodes for u in sorted(graph.users.get(n, ()))]
    while todo:
        n = todo.pop(0)
        if n in seen:
            continue
        seen.add(n)
        at = [p for p in _place(n, graph, traces, own, caller) if p is not None]
        if at:
            found += at
        else:
            todo += sorted(graph.users.get(n, ()))
    return sorted_places(found)


def _loaders(mine: list[str], graph: GraphNodes) -> dict[str, list[str]]:
    """Each buffer from outside the kernel -> the nodes that load it. A view inside the kernel
    (a reshape, a permute) computes nothing: its loads are its users' inside the kernel. A copy_
    into a mutated input loads nothing of the buffer it overwrites."""
    inside = set(mine)

    def computing(n: str, seen: frozenset = frozenset()) -> list[str]:
        if graph.op.get(n, "") not in VIEWS or n in seen:
            return [n]
        users = [u for u in graph.users.get(n, ()) if u in inside]
        return [c for u in sorted(users) for c in computing(u, seen | {n})] or [n]

    out: dict[str, list[str]] = {}
    for n in mine:
        sources = graph.args[n][1:] if graph.op.get(n) == "aten.copy_" else graph.args[n]
        for src in sources:
            if src not in inside and not graph.scalar.get(src):
                out.setdefault(src, []).extend(computing(n))
    return out


def _stores(mine: list[str], graph: GraphNodes) -> dict[str, float | None]:
    """Each node whose output leaves the kernel -> its bytes (None: unknown). A copy_ into a
    mutated input stores the input's bytes, for the node that computed the new value."""
    inside = set(mine)
    out: dict[str, float | None] = {}
    for n in mine:
        if graph.op.get(n) == "aten.copy_" and len(graph.args[n]) >= 2:
            dst, src = graph.args[n][:2]
            size = graph.nbytes.get(dst)
            who = src if src in inside else n
            out[who] = sum_known((out.get(who, 0.0), size))
            continue
        if n in graph.outputs or graph.users.get(n, set()) - inside:
            size = graph.nbytes.get(n)
            if size is None and graph.users.get(n):  # a node of several outputs: its getitems'
                size = sum_known(graph.nbytes.get(u) for u in graph.users[n])
            out[n] = sum_known((out.get(n, 0.0), size))
    return out


def line_weights(post_nodes: list[str], graph: GraphNodes, traces: list[str], lines: tuple[Place, ...],
                 own: dict[str, str] | None = None, caller: tuple[tuple[str, int], ...] = ()
                 ) -> tuple[LineWeight, ...]:
    """The weights of one kernel's lines (see the module docstring).
    `lines`: the kernel's places, one of which a node with no line of its own takes when it is
    the only one; `own`: each node's own stack trace, where kscope kept it; `caller`: the frames
    that called the frame dynamo traced (provenance.places). Where a size the
    kernel reads or writes is a symbol (dynamic shapes), every access weighs the same. Empty when
    the graph's text names none of the kernel's nodes."""
    mine = [n for n in post_nodes if n in graph.args]
    if not mine:
        return ()
    loads = _loaders(mine, graph)
    stores = _stores(mine, graph)
    sizes = [graph.nbytes.get(src) for src in loads] + list(stores.values())
    equal = None in sizes  # a symbolic size: bytes cannot be told apart, accesses can
    per_node: dict[str, list[float]] = {n: [0.0, 0.0] for n in mine}
    for src, who in loads.items():
        size = 1.0 if equal else float(graph.nbytes[src])
        for n in who:
            per_node[n][0] += size / len(who)
    for n, size in stores.items():
        per_node[n][1] += 1.0 if equal else float(size)
    out: dict[Place | None, list[float]] = {}
    for n in mine:  # a node that neither loads nor stores is listed too: fused away, it costs 0
        at = _place(n, graph, traces, own or {}, caller)
        if not at and graph.op.get(n) == "aten.copy_" and graph.args[n][1:2]:
            at = _place(graph.args[n][1], graph, traces, own or {}, caller)
        if not at and graph.op.get(n) == "aten.copy_" and not any(per_node[n]):
            continue  # an in-place update's copy_, its store given to the node computing it
        at = at or ([lines[0]] if len(lines) == 1 else [None])
        for p in at:
            entry = out.setdefault(p, [0.0, 0.0])
            entry[0] += per_node[n][0] / len(at)
            entry[1] += per_node[n][1] / len(at)
    return tuple(LineWeight(p, r, w) for p, (r, w) in out.items())
