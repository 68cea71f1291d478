"""A run's two clocks, kept by the client: the target's own code against --timeout, torch.compile
against --compile-timeout.

A long compile is not a hang: a real model's first compile takes minutes on a small CPU, and
inductor cannot be interrupted, so --timeout (which exists to stop a target that loops) counts only
the time outside torch.compile. The worker says when a compile starts and ends (dynamo's own
compile callbacks, which also cover AOTAutograd's lazy backward compile: "phase" messages,
worker.protocol); the time between counts against --compile-timeout, a bound of its own,
generous by default (docs/usage.md says what real models took here)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kscope.report.model import RunError
from kscope.report.plan import PlanProgress


@dataclass
class RunClock:
    timeout: float
    """Seconds the run may spend outside torch.compile (--timeout, plus what the run adds: ranks, a sweep's budget)."""
    compile_timeout: float
    """Seconds it may spend compiling, all compiles of the run together."""
    started: float = field(default_factory=time.monotonic)
    compiling_since: float | None = None
    compiled_s: float = 0.0
    """Seconds spent in compiles that ended."""
    what: str = ""
    """The compile in flight (or the last one): "graph 0/1", "the backward of graph 0/0"."""
    compiles: int = 0
    """Compiles started so far."""
    progress: PlanProgress | None = None
    """Inductor's count of kernels compiled, where the worker sends it (the live app)."""

    def phase(self, compiling: bool, what: str = "", now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if compiling and self.compiling_since is None:
            self.compiling_since, self.compiles = now, self.compiles + 1
            self.what = what or self.what
        elif not compiling and self.compiling_since is not None:
            self.compiled_s += now - self.compiling_since
            self.compiling_since = None

    def compile_s(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return self.compiled_s + (now - self.compiling_since if self.compiling_since is not None else 0.0)

    def own_s(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return now - self.started - self.compile_s(now)

    def left_s(self, now: float | None = None) -> float:
        """Seconds until the clock that runs now reaches its bound (0 once past it)."""
        now = time.monotonic() if now is None else now
        if self.compiling_since is not None:
            return max(0.0, self.compile_timeout - self.compile_s(now))
        return max(0.0, self.timeout - self.own_s(now))

    def expired(self, file: str | None, now: float | None = None) -> RunError | None:
        """The error that stops the run, once either clock is past its bound."""
        now = time.monotonic() if now is None else now
        if self.compile_s(now) > self.compile_timeout:
            return RunError("timeout", "CompileTimeout", self.compile_words(now), file)
        if self.own_s(now) > self.timeout:
            spent = self.compile_s(now)
            besides = f" (besides {spent:.1f} s compiling)" if spent >= 0.05 else ""
            return RunError("timeout", "Timeout", f"stopped after {self.timeout:g} s (--timeout){besides}; "
                            "the target may loop forever or be very slow", file)
        return None

    def compile_words(self, now: float | None = None) -> str:
        """"stopped after 900 s compiling (--compile-timeout): torch.compile was still compiling graph
        1/0 (3 compiles so far; 4/12 kernels of its plan compiled)"."""
        far = [f"{self.compiles} compile{'s' if self.compiles != 1 else ''} started"]
        p = self.progress
        if p is not None and p.kernels_total:
            far.append(f"{p.kernels_compiled}/{p.kernels_total} kernels of its plan compiled")
        return (f"stopped after {self.compile_timeout:g} s compiling (--compile-timeout): torch.compile was still "
                f"compiling {self.what or 'a graph'} ({'; '.join(far)})")
