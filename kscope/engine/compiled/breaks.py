"""Dynamo's graph-break messages in its own words, and kscope's plain reason. Pure text: no torch
import.

Dynamo words every break the same way (torch._dynamo.exc.format_graph_break_message):

    <gb_type>
      Explanation: <explanation, its further lines indented by 4>
      Hint: <a hint, likewise>
      Hint: ...

      Developer debug context: ...

inside a longer text where the break came through a call ("Encountered graph break when
attempting to trace CALL: ...") or could not be resumed from; a second break met while handling
the first follows after "*** While handling this graph break, another graph break occurred: ***".
The first one is the cause. The types people hit most get kscope's own reason too.
"""

from __future__ import annotations

import textwrap

# (dynamo's gb_type, or the start of an older terse reason) -> kscope's reason in plain words
_PLAIN = (
    (("Data-dependent branching", "generic_jump"), "data-dependent branch: Python `if`/`while` on a tensor's value"),
    (("Unsupported Tensor.item() call", "Unsupported Tensor.item()"), "Tensor.item(): a tensor's value read back into Python"),
)
_ITEM_HINT = "keep the value a tensor, or set torch._dynamo.config.capture_scalar_outputs = True"
_SECOND = "*** While handling this graph break, another graph break occurred: ***"


def dynamo_words(message: str) -> tuple[str, str, tuple[str, ...]]:
    """dynamo's message -> (its type, its explanation, its hints); ("", "", ()) where it has none
    of them (an older, terse reason)."""
    lines = str(message).split(_SECOND)[0].splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("  Explanation:")), None)
    if at is None:
        return "", "", ()
    kind = next((line.strip() for line in reversed(lines[:at]) if line.strip()), "")
    parts: list[list[str]] = []  # the explanation, then each hint: its lines
    for line in lines[at:]:
        if line.startswith(("  Explanation:", "  Hint:")):
            parts.append([line.split(":", 1)[1].strip()])
        elif line.startswith(("  Developer debug context:", " For more details")):
            break
        elif parts:
            parts[-1].append(line.removeprefix("    "))
    texts = [textwrap.dedent("\n".join(p[1:])).strip() for p in parts]
    words = [(p[0] + ("\n" + t if t else "")).strip() for p, t in zip(parts, texts)]
    return kind, words[0], tuple(w for w in words[1:] if w)


def plain_break(message: str) -> tuple[str, str, str, tuple[str, ...]]:
    """dynamo's message -> (reason in plain words, dynamo's type, explanation, hints)."""
    kind, explanation, hints = dynamo_words(message)
    first = next((line.strip() for line in str(message).splitlines() if line.strip()), "graph break")
    reason = kind or first
    for names, plain in _PLAIN:
        if any(reason.startswith(n) for n in names):
            if plain.startswith("Tensor.item()") and not hints:
                hints = (_ITEM_HINT,)
            return plain, kind, explanation, hints
    return reason, kind, explanation, hints
