"""The memory one scheduler node touches: each buffer and graph input it reads or writes, once, at
the most bytes it covers there (a kernel's working set, KernelBytes.working_set, is summed from it).
Inductor's own count adds a buffer's reads and writes; memory holds it once."""

from __future__ import annotations


def touched(reads: dict, writes: dict, node) -> dict[str, int]:
    """Buffer -> the most bytes the node reads or writes there. An in-place update's output is
    named apart from the buffer or graph input it mutates: the same memory, counted as that one."""
    mutated = {buf.get_name(): names[0] for buf in node.get_outputs() if (names := buf.get_mutations())}
    out = dict(reads)
    for name, nbytes in writes.items():
        name = mutated.get(name, name)
        out[name] = max(out.get(name, 0), nbytes)
    return out


def corrected_touched(counted: dict[str, int] | None, corrections, unused_rule: str) -> dict[str, int] | None:
    """`counted` with kscope's corrections to inductor's counts (engine.inductor.bytes): a gather
    touches the elements it loads, a constant its bytes; outputs a library call writes that the
    graph never reads (`unused_rule`) are memory of their own."""
    if counted is None:
        return None
    out = dict(counted)
    for c in corrections:
        if c.rule == unused_rule:
            out[f"{c.buffer} (unused outputs)"] = c.kscope - c.inductor
        else:
            out[c.buffer] = c.kscope
    return out
