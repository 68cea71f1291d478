"""kscope's store of inductor's bytes per kernel, for FX-graph-cache hits: a cache hit logs code
and provenance again but no bytes (engine.inductor.capture), so bytes seen once are kept, keyed by
the hash of the generated code (GraphCapture.code_hash), in memory and on disk.

On disk they are JSON, in the form kscope has written since engine.inductor.capture.STORE_FORMAT last changed: the typed
records are turned into it and back here, and nowhere else."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kscope.engine.inductor.bytes import Correction
from kscope.engine.inductor.capture import GraphFacts
from kscope.engine.inductor.kernel_bytes import GraphBytes, KernelBytes
from kscope.engine.machine.cache_dir import cache_dir, write_json
from kscope.report.codec import autotune_from_dict, autotune_to_dict

_FACTS = "-facts"
"""In kscope's store, beside a graph's kernel bytes: its GraphFacts."""
_STRAY = ""
"""In a graph's stored bytes, the key of the bytes no kernel claimed (GraphBytes.stray)."""


class TrafficStore:
    """Per-kernel bytes (GraphCapture.kernel_bytes) and a graph's facts (GraphCapture.facts), kept
    by hash of the generated code, for cache hits."""

    def __init__(self, root: Path | None = None):
        self.root = root or cache_dir() / "traffic"
        self.memory: dict[str, dict] = {}
        """Key -> the stored form, as put or read from disk."""

    def graph_bytes(self, code_hash: str) -> GraphBytes | None:
        stored = self._get(code_hash)
        return None if stored is None else graph_bytes_from_dict(stored)

    def put_graph_bytes(self, code_hash: str, graph: GraphBytes) -> None:
        self._put(code_hash, graph_bytes_to_dict(graph))

    def facts(self, code_hash: str) -> GraphFacts | None:
        stored = self._get(code_hash + _FACTS)
        return None if stored is None else facts_from_dict(stored)

    def put_facts(self, code_hash: str, facts: GraphFacts) -> None:
        self._put(code_hash + _FACTS, facts_to_dict(facts))

    def _get(self, key: str) -> dict | None:
        if key in self.memory:
            return self.memory[key]
        path = self.root / f"{key}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        self.memory[key] = data
        return data

    def _put(self, key: str, data: dict) -> None:
        self.memory[key] = data
        write_json(self.root / f"{key}.json", data)  # the in-memory copy serves this process anyway


def graph_bytes_to_dict(graph: GraphBytes) -> dict[str, dict]:
    """Stable kernel handle -> its bytes as a dict; the stray bytes under "", where there are any."""
    out = {handle: kernel_bytes_to_dict(k) for handle, k in graph.kernels.items()}
    if graph.stray:
        out[_STRAY] = {"read": graph.stray, "written": 0}
    return out


def graph_bytes_from_dict(stored: dict[str, dict]) -> GraphBytes:
    kernels = {handle: kernel_bytes_from_dict(d) for handle, d in stored.items() if handle != _STRAY}
    return GraphBytes(kernels, stored.get(_STRAY, {}).get("read") or 0)


def kernel_bytes_to_dict(k: KernelBytes) -> dict:
    return {
        "read": k.read, "written": k.written, "saved": k.saved,
        "corrections": [dataclasses.asdict(c) for c in k.corrections], "copies": list(k.copies),
        "layout": k.layout, "why": k.why, "copy": k.copy, "outputs": dict(k.outputs), "inputs": list(k.inputs),
        "nodes": list(k.nodes), "reduced": list(k.reduced), "unknown": k.unknown, "flops": k.flops,
        "traces": dict(k.traces), "post": list(k.post),
        "touched": None if k.touched is None else dict(k.touched),
    }


def kernel_bytes_from_dict(d: dict) -> KernelBytes:
    return KernelBytes(
        read=d["read"], written=d["written"], saved=d.get("saved"), flops=d.get("flops"), unknown=d.get("unknown"),
        corrections=tuple(Correction(**c) for c in d.get("corrections", ())), copies=tuple(d.get("copies", ())),
        copy=bool(d.get("copy")), layout=d.get("layout"), why=d.get("why"), outputs=dict(d.get("outputs", {})),
        inputs=tuple(d.get("inputs", ())), nodes=tuple(d.get("nodes", ())), reduced=tuple(d.get("reduced", ())),
        traces=dict(d.get("traces") or {}), post=tuple(d.get("post", ())),
        touched=None if d.get("touched") is None else dict(d["touched"]),
    )


def facts_to_dict(facts: GraphFacts) -> dict:
    return {"outputs": list(facts.outputs), "unfused": dict(facts.unfused),
            "autotune": [autotune_to_dict(a) for a in facts.autotune], "estimated_peak_bytes": facts.estimated_peak_bytes}


def facts_from_dict(d: dict) -> GraphFacts:
    return GraphFacts(tuple(d.get("outputs", ())), dict(d.get("unfused", {})),
                      tuple(autotune_from_dict(a) for a in d.get("autotune", ())), d.get("estimated_peak_bytes"))
