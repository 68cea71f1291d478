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

from kscope.engine.project import place_of
from kscope.report.place import Place

# add: "f32[1000000][1]cpu" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None
_NODE = re.compile(r'^\s*(\w+)(?:: "([^"]*)")? = (.*)$')
_SIGNATURE = re.compile(r"def forward\(self, (.*)\):\s*$")
_PARAM = re.compile(r'(\w+): "([^"]*)"')
_COMMENT = re.compile(r"^\s*# File: (.*?):(\d+) in ")
_RETURN = re.compile(r"^\s*return (.*)$")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_TYPE = re.compile(r"^([a-z]+\d*[a-z0-9]*)\[([^\]]*)\]")
_FRAME = re.compile(r'File "(.*?)", line (\d+)')

DTYPE_BYTES = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "b8": 1,
    "c64": 8, "c128": 16, "u16": 2, "u32": 4, "u64": 8, "f8e4m3fn": 1, "f8e5m2": 1,
}
"""Bytes per element of the dtypes as FX prints them ("f32[8][1]cpu")."""


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
            g.nbytes.update({name: type_bytes(t) for name, t in _PARAM.findall(sig.group(1))})
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


def _place_of_frame(frame: tuple[str, int] | None, traces: list[str]) -> Place | None:
    """The place of the kernel's stack trace that ends in `frame` (the node's own line)."""
    if frame is None:
        return None
    for trace in traces:
        frames = [(m.group(1), int(m.group(2))) for m in _FRAME.finditer(trace)]
        if frames and frames[-1] == frame:
            return place_of(reversed(frames))
    return None


def line_weights(post_nodes: list[str], graph: GraphNodes, traces: list[str], lines: tuple[Place, ...]
                 ) -> tuple[tuple[Place | None, float, float], ...]:
    """(place, read weight, written weight) of one kernel's lines (see the module docstring);
    `lines`: the kernel's places, one of which a node with no line of its own takes when it is
    the only one. Empty when the graph's text names none of the kernel's nodes."""
    mine = [n for n in post_nodes if n in graph.args]
    if not mine:
        return ()
    inside = set(mine)
    place = {}
    for n in mine:
        place[n] = _place_of_frame(graph.frame.get(n), traces) or (lines[0] if len(lines) == 1 else None)
    readers: dict[str, list[str]] = {}
    for n in mine:
        for src in graph.args[n]:
            if src not in inside:
                readers.setdefault(src, []).append(n)
    read: dict[str, float] = dict.fromkeys(mine, 0.0)
    for src, who in readers.items():
        size = graph.nbytes.get(src)
        for n in who:
            read[n] += (1.0 if size is None else float(size)) / len(who)
    written: dict[str, float] = {}
    for n in mine:
        leaves = n in graph.outputs or bool(graph.users.get(n, set()) - inside)
        size = graph.nbytes.get(n)
        written[n] = (1.0 if size is None else float(size)) if leaves else 0.0
    out: dict[Place | None, list[float]] = {}
    for n in mine:
        entry = out.setdefault(place[n], [0.0, 0.0])
        entry[0] += read[n]
        entry[1] += written[n]
    return tuple((p, r, w) for p, (r, w) in out.items())
