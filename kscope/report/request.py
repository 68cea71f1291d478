"""What a run is asked to do: the other half of the worker's contract (a Report is its answer).

One shape for each request, built by the CLI and the app, read by the engine, carried across the
process boundary by worker.protocol. Plain data like the Report, so it sits in this bottom layer:
the app must never import the engine, and the engine never the worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kscope.report.compile import CompileOptions

DEFAULT_CALLS = 5
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_COMPILE_TIMEOUT_S = 900.0
"""--compile-timeout's default: a dozen times the slowest cold compile measured here (docs/usage.md)."""
DEFAULT_SWEEP_BUDGET_S = 60.0


@dataclass(frozen=True)
class RunRequest:
    """One run of the target, eagerly and compiled."""

    file: str
    target: str | None = None
    device: str = "auto"
    calls: int = DEFAULT_CALLS
    n: int | None = None
    cold: bool = False
    """Flush the caches between timed calls (--cold)."""
    backward: bool = False
    """Run backward after the target, from its outputs (--backward): see engine.target.training."""
    no_grad: bool = False
    """Run the target under torch.no_grad() (--no-grad): the inference graph."""
    compile: CompileOptions = field(default_factory=CompileOptions)
    """torch.compile's mode and options."""
    trace_dir: str | None = None
    """Save the profiled chrome traces here (--trace-dir): see engine.measure.trace_export."""
    settle: bool = False
    """Before timing, wait (briefly) until whoever shows the eager half says it is on screen: the
    live app draws it on the other core, which would compete with the timed calls."""
    plan: bool = False
    """Say the compiled half's plan as soon as inductor has made it, and how far its compile is
    (worker.protocol's "plan" and "progress"): the live app shows it while the kernels compile."""
    nproc: int | None = None
    """--nproc: run in this many rank processes with a process group (worker.ranks); None: one process."""
    timeout: float = DEFAULT_TIMEOUT_S
    """--timeout: the client stops a run whose time outside torch.compile passes it (worker.clock);
    with ranks the worker stops them itself first, to say which rank hung where."""
    compile_timeout: float = DEFAULT_COMPILE_TIMEOUT_S
    """--compile-timeout: the client stops a run whose compiles, together, take longer."""


@dataclass(frozen=True)
class SweepOptions:
    """What --sweep (or key z) asks of a size sweep."""

    sizes: tuple[int, ...] | None = None
    """None: the device's default sizes (engine.sweep.default_sizes)."""
    budget_s: float = DEFAULT_SWEEP_BUDGET_S
    static: bool = False
    """--sweep-static: compile each size on its own (else one torch.compile for all sizes)."""


@dataclass(frozen=True)
class SweepRequest:
    """A size sweep of the target: a run per size (engine.sweep)."""

    run: RunRequest
    """The file, target, device, switches and compile options; its calls, n and traces are unused."""
    options: SweepOptions = field(default_factory=SweepOptions)

