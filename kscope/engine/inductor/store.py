"""kscope's store of inductor's bytes per kernel, for FX-graph-cache hits: a cache hit logs code
and provenance again but no bytes (engine.inductor.capture), so bytes seen once are kept, keyed by
the hash of the generated code (GraphCapture.code_hash), in memory and on disk."""

from __future__ import annotations

import json
from pathlib import Path

from kscope.engine.machine.cache_dir import cache_dir, write_json

FACTS = "-facts"
"""In kscope's store, beside a graph's kernel bytes: its outputs and inductor's reasons not to fuse."""


class TrafficStore:
    """Per-kernel bytes (GraphCapture.kernel_bytes), kept by hash of the generated code, for
    cache hits."""

    def __init__(self, root: Path | None = None):
        self.root = root or cache_dir() / "traffic"
        self.memory: dict[str, dict[str, dict]] = {}

    def get(self, code_hash: str) -> dict[str, dict] | None:
        if code_hash in self.memory:
            return self.memory[code_hash]
        path = self.root / f"{code_hash}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        self.memory[code_hash] = data
        return data

    def put(self, code_hash: str, kernel_bytes: dict[str, dict]) -> None:
        self.memory[code_hash] = kernel_bytes
        write_json(self.root / f"{code_hash}.json", kernel_bytes)  # the in-memory copy serves this process anyway
