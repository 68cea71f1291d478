"""Kernel names cut to fit a column: plain strings, shared by the rich tables and the app's panes."""

from __future__ import annotations

import re


def short_name(name: str, width: int = 48) -> str:
    """A readable kernel name: CUDA template arguments folded to <…>, the parameter list dropped,
    leading namespaces dropped when still too long, a generated kernel's `cpp_fused_` prefix
    dropped when too long, and only then cut in the middle, so that names that differ at the end
    (`add_native_la…ward_view_3`, `…view_7`) stay apart."""
    folded, depth = [], 0
    for ch in name.replace("(anonymous namespace)::", ""):
        if ch in "<(":
            if depth == 0:
                folded.append("<…>" if ch == "<" else "\0")
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            folded.append(ch)
    text = "".join(folded).split("\0")[0].strip()
    if text.startswith("void "):
        text = text[5:]
    while len(text) > width and "::" in text:
        text = text.split("::", 1)[1]
    composite, sep, op = text.rpartition(" › ")
    if sep and len(text) > width:
        # "cross_entropy_loss › nll_loss_forward": the op that ran is the part rows differ by
        if composite.strip("_") in op:  # "layer_norm › native_layer_norm" says it twice
            return middle_cut(op, width)
        if width - len(op) - len(sep) >= 8:
            return middle_cut(composite, width - len(op) - len(sep)) + sep + op
        return middle_cut(op, width)
    generated = _GENERATED.match(text)
    if generated and len(text) > width:
        # inductor's prefix is the same on every generated kernel (★ marks them): keep what differs
        return middle_cut(text[generated.end():], width)
    return middle_cut(text, width)


_GENERATED = re.compile(r"^(?:cpp|triton_[a-z]+)_fused_")


def middle_cut(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    head = width // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]
