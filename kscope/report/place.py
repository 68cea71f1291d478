"""Places: the lines of code a run's ops were issued from, each in its file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """A line of code an op was issued from: the innermost frame in the user's own files and, when
    the op was issued inside a library (transformers, not torch itself), that library's innermost
    frame too (`via`). An op no frame of the user's issued (a library's module run as the target
    itself, kscope calling its forward) has the library's frame alone (`library`). A compiled
    graph traced from a library's frame or torch's (an optimizer's step) continues its stack
    traces with the frames that called that frame (engine.compiled.backend.caller_frames)."""

    file: str
    """A file of the project relative to its root ("model.py", "shop/model.py"); a library's by
    its path inside the library ("transformers/models/gpt2/modeling_gpt2.py")."""
    line: int
    via: Place | None = None
    library: bool = False

    def text(self, home: str = "") -> str:
        """"model.py:14", "14" in `home` (the target's file), "bench.py:13 via transformers/…:240"."""
        here = str(self.line) if self.file == home else f"{self.file}:{self.line}"
        return here + (f" via {self.via.file}:{self.via.line}" if self.via else "")


def place_key(p: Place) -> tuple:
    return (p.library, p.file, p.line, p.via.file if p.via else "", p.via.line if p.via else 0)


def sorted_places(places) -> tuple[Place, ...]:
    return tuple(sorted(set(places), key=place_key))
