"""Dynamo's graph-break reasons in plain words. Pure text: no torch import.

Dynamo's newer messages already say "<what>\\n  Explanation: ...\\n  Hint: ..."; we keep the
first line as the reason and pass the explanation and the first hint on. Older, terser reasons
that people hit most get kscope's own wording.
"""

from __future__ import annotations

# (prefix of dynamo's reason, plain reason, hint)
_PLAIN = (
    (
        "generic_jump",
        "data-dependent branch: Python `if`/`while` on a tensor's value",
        "compute both sides and choose with torch.where, or branch outside the compiled function",
    ),
    (
        "Unsupported Tensor.item()",
        "Tensor.item(): a tensor's value read back into Python",
        "keep the value a tensor, or set torch._dynamo.config.capture_scalar_outputs = True",
    ),
)


def plain_break(reason: str) -> tuple[str, str, str]:
    """dynamo's reason -> (reason in plain words, explanation, hint)."""
    lines = [line.strip() for line in str(reason).strip().splitlines() if line.strip()]
    first = lines[0] if lines else "graph break"
    explanation = next((x.removeprefix("Explanation:").strip() for x in lines if x.startswith("Explanation:")), "")
    hint = next((x.removeprefix("Hint:").strip() for x in lines if x.startswith("Hint:")), "")
    for prefix, plain, plain_hint in _PLAIN:
        if first.startswith(prefix):
            return plain, explanation, hint or plain_hint
    return first, explanation, hint
