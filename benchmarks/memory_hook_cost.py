"""What telling the forward's saved tensors costs the memory figures (engine.memory.saved, issue 37):
call_memory on the seed (10^6 floats) and on an MLP training step (samples/train_mlp.py's shapes),
with and without its call of its own under the saved-tensors hook, in turns, 20 calls each after 3
to warm up; prints the medians and their ratio.

    python benchmarks/memory_hook_cost.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kscope.engine.memory.peak as peak  # noqa: E402
from kscope.engine.memory.saved import saved_bytes  # noqa: E402

CPU = torch.device("cpu")


def no_saved(fn, device):
    return None


def targets():
    a, b = torch.randn(1_000_000), torch.randn(1_000_000)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256))
    x = torch.randn(512, 256)

    def step():
        out = mlp(x)
        out.backward(torch.ones_like(out))
        return out

    return {"seed": lambda: (a + b).relu(), "mlp step": step}


def main() -> None:
    for name, fn in targets().items():
        for _ in range(3):
            peak.call_memory(fn, CPU, eager=False)
        seconds = {"hook": [], "none": []}
        for _ in range(20):
            for side in seconds:
                peak.saved_bytes = saved_bytes if side == "hook" else no_saved
                start = time.perf_counter()
                peak.call_memory(fn, CPU, eager=False)
                seconds[side].append(time.perf_counter() - start)
        hook, none = (statistics.median(seconds[s]) * 1e3 for s in ("hook", "none"))
        print(f"{name}: the memory figures with what the forward kept {hook:.2f} ms, without {none:.2f} ms: "
              f"{hook / none:.3f}×")


if __name__ == "__main__":
    main()
