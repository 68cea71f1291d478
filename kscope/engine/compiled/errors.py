"""What went wrong inside torch.compile, in one line: the exception dynamo's and inductor's
wrappers hide, its useful line, and its last frames in torch.

Dynamo wraps a backend's failure in BackendCompilerFailed ("backend='...' raised:" on a line of
its own, the cause below it) and inductor its own in InductorError; a C++ compile error puts the
compiler's words under "Output:" after the whole command line."""

from __future__ import annotations

import os
import traceback

FRAMES = 3
"""How many of the innermost frames in torch the message names."""


def compiler_cause(exc: BaseException) -> BaseException | None:
    """The innermost exception torch.compile's wrappers carry (`inner_exception`), or None when
    `exc` is not such a wrapper."""
    inner = getattr(exc, "inner_exception", None)
    if not isinstance(inner, BaseException):
        return None
    while isinstance(getattr(inner, "inner_exception", None), BaseException):
        inner = inner.inner_exception
    return inner


def compiler_message(exc: BaseException) -> tuple[str, str] | None:
    """(type, message) for a failure inside torch.compile: "ImportError", "inductor raised
    ImportError: /…/x.so: invalid ELF header (in torch: codecache.py:3658 _load_library_inner ←
    …)"; None when `exc` wraps nothing."""
    inner = compiler_cause(exc)
    if inner is None:
        return None
    frames = [f for f in traceback.extract_tb(inner.__traceback__) if f"{os.sep}torch{os.sep}" in f.filename]
    where = " ← ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(frames[-FRAMES:]))
    name = type(inner).__name__
    return name, f"inductor raised {name}: {useful_line(inner)}" + (f" (in torch: {where})" if where else "")


def useful_line(exc: BaseException) -> str:
    """The line that says what happened: a C++ compiler's first error, else the first line."""
    text = str(exc).strip()
    output = getattr(exc, "output", None)
    if isinstance(output, str) and text.startswith("C++ compile error"):
        errors = [x.strip() for x in output.splitlines() if "error" in x]
        return "C++ compile error: " + (errors[0] if errors else output.strip().splitlines()[0] if output.strip() else "")
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[0] if lines else type(exc).__name__
