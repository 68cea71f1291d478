"""Inductor's plan of a compile still running: the compiled kernels as its scheduler decided them,
before any of them is compiled, launched or timed.

A worker sends a Report carrying a Plan (and no compiled half) as soon as inductor has generated
the code of a new graph; the final Report, which carries none, replaces it. Its rows are the final
rows' (engine.compiled.rows builds both), but for what only the run knows."""

from __future__ import annotations

from dataclasses import dataclass, field

from kscope.report.kernel import Kernel, RoundTrip
from kscope.report.measures import add_known, sum_known


@dataclass(frozen=True)
class PlanProgress:
    """How far the compile is, as inductor tells it."""

    graphs_seen: int = 0
    """Graphs inductor began to compile in this run (a graph from its FX-graph cache included)."""
    graphs_done: int = 0
    """Of those, the ones whose compiled module is loaded (a cache hit is done at once)."""
    kernels_compiled: int | None = None
    """Of the graph being compiled, kernels its compile workers have finished; None where inductor
    does not say (it compiles in its own process, one kernel after another)."""
    kernels_total: int | None = None
    """Kernels that graph handed its compile workers; None with kernels_compiled."""
    ran: bool = False
    """The compiled half's first call returned: what is left is warming up and timing."""


@dataclass(frozen=True)
class Plan:
    kernels: tuple[Kernel, ...] = ()
    """The compiled rows, as the final Report's will be but for `launches` and `time_us`: None
    (unknown until the run; never shown as 0)."""
    round_trips: tuple[RoundTrip, ...] | None = ()
    """Buffers one planned kernel writes and another reads back, largest first; None: unknown."""
    progress: PlanProgress = field(default_factory=PlanProgress)
    estimated_peak_bytes: tuple[int | None, ...] = ()
    """Inductor's own estimate of each planned graph's peak memory (torch._inductor.memory), the
    graphs in the plan's order, as the final Report's compiled `memory` will carry them; None:
    unknown (a graph from inductor's cache that kscope's store has no estimate for)."""

    @property
    def bytes_read(self) -> int | None:
        return sum_known(k.bytes_read for k in self.kernels)

    @property
    def bytes_written(self) -> int | None:
        return sum_known(k.bytes_written for k in self.kernels)

    @property
    def bytes_total(self) -> int | None:
        return add_known(self.bytes_read, self.bytes_written)
