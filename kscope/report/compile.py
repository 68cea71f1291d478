"""How the target was compiled, and what the mode did: part of the Report (no torch here).

`CompileOptions` is what the user chose (`--mode`, `--dynamic`, `--fullgraph`, `--option`);
`Autotune` is one choice inductor's max-autotune timed candidates for (its own timings);
`CudaGraphs` is what reduce-overhead's CUDA graphs did in one call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
"""torch.compile's modes, in the order the app's `m` key steps through them."""


@dataclass(frozen=True)
class CompileOptions:
    mode: str = "default"
    dynamic: bool | None = None
    """torch.compile(dynamic=...): None lets dynamo decide (static first, dynamic on a size change)."""
    fullgraph: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    """Inductor config overrides (--option NAME=VALUE), values typed as inductor's config types them."""

    def __hash__(self) -> int:
        return hash((self.mode, self.dynamic, self.fullgraph, tuple(sorted(self.options.items(), key=str))))

    @property
    def cuda_graphs(self) -> bool:
        """The mode (or an option) asks for CUDA graphs."""
        return bool(self.options.get("triton.cudagraphs", self.mode in ("reduce-overhead", "max-autotune")))

    def label(self) -> str:
        """"max-autotune · dynamic · freezing=True"; "default" when nothing was changed."""
        parts = [self.mode]
        if self.dynamic is not None:
            parts.append("dynamic" if self.dynamic else "static")
        if self.fullgraph:
            parts.append("fullgraph")
        parts += [f"{k}={v}" for k, v in self.options.items()]
        return " · ".join(parts)

    def next_mode(self) -> CompileOptions:
        from dataclasses import replace

        i = MODES.index(self.mode) if self.mode in MODES else -1
        return replace(self, mode=MODES[(i + 1) % len(MODES)])


@dataclass(frozen=True)
class AutotuneChoice:
    name: str
    """Inductor's name for the candidate ("cpp_CppMicroGemmFP32Vec_0", "_mkl_linear", "triton_mm_3")."""
    ms: float | None
    """What inductor's benchmark measured; None when the candidate failed (inductor's inf)."""
    description: str = ""


@dataclass(frozen=True)
class Autotune:
    """One op max-autotune chose an implementation for, as inductor's autotuner timed it."""

    op: str
    """"addmm", "mm", "packed_linear", "convolution" ..."""
    sizes: str
    """The inputs' sizes, as inductor's AUTOTUNE log writes them: "256x512, 512x1024"."""
    choices: tuple[AutotuneChoice, ...]
    """Fastest first; the first is the one inductor chose."""

    @property
    def winner(self) -> AutotuneChoice | None:
        return self.choices[0] if self.choices else None


def sorted_choices(timings: dict[str, float], descriptions: dict[str, str] | None = None) -> tuple[AutotuneChoice, ...]:
    """Candidates fastest first; one that failed (inf, nan) last, with no time."""
    def ms(t: float) -> float | None:
        return t if t is not None and math.isfinite(t) else None

    ordered = sorted(timings.items(), key=lambda kv: (ms(kv[1]) is None, ms(kv[1]) or 0.0))
    return tuple(AutotuneChoice(name, ms(t), (descriptions or {}).get(name, "")) for name, t in ordered)


@dataclass(frozen=True)
class CudaGraphs:
    """What CUDA graphs did in one call of a mode that asks for them."""

    launches: float | None = None
    """CUDA graph launches (cudaGraphLaunch) per call; None when kscope could not tell."""
    kernels: float | None = None
    """Device kernels per call that ran inside those graph launches."""
    skipped: str = ""
    """Why no graph was used, when none was: inductor's reason, or "the CPU" for a CPU run."""

    def short(self) -> str:
        """For a pane: "5 kernels in 1 CUDA graph launch", "no CUDA graphs on the CPU"."""
        if self.skipped:
            return "no CUDA graphs on the CPU" if "on the CPU" in self.skipped else "CUDA graphs skipped"
        return self.line()

    def line(self) -> str:
        """"5 kernels in 1 CUDA graph launch"; or why there were none."""
        if self.skipped:
            return f"CUDA graphs skipped: {self.skipped}"
        if self.launches is None or self.kernels is None:
            return "CUDA graphs: not seen in the profile"
        n, g = self.kernels, self.launches
        return f"{n:g} kernel{'s' if n != 1 else ''} in {g:g} CUDA graph launch{'es' if g != 1 else ''}"
