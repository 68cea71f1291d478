"""`?`: what the panes mean and which keys do what."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# kscope

Every time you **save** the file, kscope runs the target eagerly and under `torch.compile`,
under `torch.profiler`, and shows what ran.

- **launches / call** — kernels launched per call of the target, eager → compiled, and the change since the last save.
- **memory traffic** — estimated bytes read + written per call (eager: each op reads each distinct input once and
  writes its outputs; compiled: inductor's own count per kernel), also in array-sized transfers (÷ the largest input).
- **kernels** — each mode's kernels: launches, measured µs per call, traffic; ★ marks kernels inductor generated.
  Select a row for its full name, ops and source lines.
- **fused kernels** — each generated kernel with the ATen ops it fused; graph breaks with their line.
- **source** — the file of the selected kernel's lines (the target's, a module it imports, a library's),
  those lines lit; `[` and `]` move between the files of this run; move along the lines to see which
  kernels each one ended up in, eager and compiled (they light up in the kernel tables). The gutter gives
  each line's bytes and µs per call, eager → compiled (≈: a fused kernel's time shared by bytes), with a
  bar against the costliest line; `h` lists the costliest lines of every file.
- **code** — the C++ or Triton source inductor generated for the selected compiled kernel.
- **graph breaks** — how many graphs, each break in plain words with its line and a hint (enter jumps to
  the line), and recompiles with the guard that failed.
- **round trips** (`t`) — buffers one kernel writes and another reads back from memory, largest first: every
  eager intermediate, and what compiled left, with why it was not fused; enter lights the producer and consumer
  rows and the lines.
- **output** — what your code printed.
- **phases** — with `g` (or `--backward`) kscope runs backward after the target, from a gradient of ones for each
  output: kernels are tagged `fwd`, `bwd` or `opt` (an optimizer's step) and the launch counts and traffic are
  given per phase. A compiled training forward also writes tensors only backward reads ("for bwd" in the
  kernel's details); `n` (or `--no-grad`) runs the target under `torch.no_grad()` to see the inference graph.

- **sweep** — with `z` (or `--sweep`) kscope runs the target at growing sizes n through `inputs(device, n)`: per
  size, launches, bytes per element and wall time per call, eager → compiled, the compiled kernel that ran and
  whether torch.compile recompiled; the plot shows time per call and GB/s against n, and where compiled pulls away.

- **roofline** (`l`) — each kernel, eager and compiled, as a point: its FLOPs per byte moved (x) against the FLOP/s
  it achieved (y), log-log, under the device's two roofs (memory bandwidth × FLOP/byte up to the ridge, then peak
  FLOP/s); the kernel selected in a kernel table is marked ◆. A kernel whose FLOPs kscope cannot count is left
  out, and the caption says so (never shown as 0); `--once` and `--markdown` print the same as a table.

- **memory** (`a`) — what one call holds, eager → compiled: its peak above what existed before it (the header's
  "peak 8.0 MB → 4.0 MB"), what it still holds at its end, what its forward kept for backward (where it kept
  anything: a model run with grad on keeps its activations), and the tensors alive at each peak with their
  category (torch's memory profile's: activation, gradient, parameter…; else "temporary", freed in the call,
  or "held", still held at its end), the op or compiled buffer that allocated them and the line. Measured on a call of its own, never a timed one;
  while compiling, inductor's estimate of the compiled peak stands in ("peak est. 4.0 MB").

- **modes** — `m` (or `--mode`) steps torch.compile through default, reduce-overhead, max-autotune and
  max-autotune-no-cudagraphs and re-runs; the status line shows the mode and any `--option`, and the Δ line reads
  "default→max-autotune" as an A/B. max-autotune's choices (inductor's own timings of each candidate) are listed
  under the round trips; CUDA graphs are counted as "N kernels in 1 CUDA graph launch" (on the CPU they do nothing).

Bandwidth: achieved GB/s (estimated bytes ÷ measured time) per mode and kernel, against the device's peak
(GPU: its data sheet; CPU: a large copy measured once per worker).

| key | action |
|---|---|
| `r` | run again now |
| `g` | forward ↔ forward + backward (re-runs) |
| `n` | as written ↔ under `torch.no_grad()` (re-runs) |
| `m` | next torch.compile mode (re-runs) |
| `p` | presentation view: launches, array-sized transfers and the fused kernel as large as the window allows |
| `v` | the verdict, large, in the presentation view (`v` again: the launches) |
| `z` | size sweep: the target at n = 10², 10³, … (its `inputs(device, n)`), in the sweep tab; a save cancels it |
| `e` | export the Report on screen, its two traces and a screenshot into a new folder (`--export-dir`) |
| `l` | the roofline tab (while presenting: the roofline in place of the figures, `l` again: the launches) |
| `f` `s` `c` `b` `t` `o` `k` `a` | fused kernels / source / code / graph breaks / round trips / output / ranks / memory tab |
| `h` | the costliest lines of the run, hottest first, in the source tab (`h` again: back to the file) |
| `[` `]` | the previous / next file holding lines of this run, in the source tab |
| `tab` / `shift+tab` | move between panes |
| `ctrl+p` | command palette (themes, …) |
| `?` | this help |
| `q` | quit |

Results from an earlier save stay on screen marked **STALE** when the latest save fails.
"""


class HelpScreen(ModalScreen):
    BINDINGS = [("escape,q,question_mark", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen VerticalScroll { width: 90%; max-width: 100; height: 90%; border: round $primary; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
