"""What kscope adds to a cold compile (issue 34): `kscope FILE:FN --once --json` against the manual
workflow of the same target as one process (profile eager, compile with inductor's FX-graph cache
off, warm up, profile compiled), each a fresh process, in turns, on library models.

Cold: none of the model's kernels cached, for each a copy of a cache that has seen one compile of
the seed (the manual workflow's TORCHINDUCTOR_CACHE_DIR, kscope's cache folder): inductor's probes
of the CPU's vector ISAs and its precompiled header are there for both (torch keeps the manual
workflow's header in its default folder), and kscope's machine facts, as for a user who compiled
anything before. Warm: the same again, with the model's kernels cached.
`--threads1` adds a third arm, kscope with TORCHINDUCTOR_COMPILE_THREADS=1 (how --once compiled
before: every C++ kernel one after the other).

    python benchmarks/cold_compile.py [--models unet gpt2] [--rounds 2] [--threads1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = {"unet": "benchmarks/models/unet.py:denoise", "gpt2": "benchmarks/models/gpt2.py:logits"}
MANUAL = """
import importlib.util, sys
import torch
from torch.profiler import ProfilerActivity, profile
path, name = sys.argv[1].rsplit(":", 1)
spec = importlib.util.spec_from_file_location("target", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
fn, args = getattr(module, name), module.inputs("cpu")
with profile(activities=[ProfilerActivity.CPU]) as prof:
    fn(*args)
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
torch._inductor.config.fx_graph_cache = False
compiled = torch.compile(fn)
compiled(*args)  # compiles
compiled(*args)  # warm-up
with profile(activities=[ProfilerActivity.CPU]) as prof:
    compiled(*args)
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
"""


def timed(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{argv} failed ({out.returncode}): {out.stderr[-1500:]} {out.stdout[-3000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads1", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kscope-cold-"))
    store, manual_base = work / "kscope-base", work / "manual-base"  # each cache after one compile of the seed
    base = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "KSCOPE_CACHE_DIR")}
    seed = str(REPO / "samples" / "add_relu.py")
    timed([sys.executable, "-m", "kscope", seed, "--once", "--json"], {**base, "KSCOPE_CACHE_DIR": str(store)})
    timed([sys.executable, "-c", MANUAL, f"{seed}:add_relu"], {**base, "TORCHINDUCTOR_CACHE_DIR": str(manual_base)})
    arms = ["manual", "kscope"] + (["kscope, 1 thread"] if args.threads1 else [])
    for model in args.models:
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for arm in arms:
                home = work / f"{model}-{r}-{arms.index(arm)}"
                if arm == "manual":
                    shutil.copytree(manual_base, home)
                    env = {**base, "TORCHINDUCTOR_CACHE_DIR": str(home)}
                    argv = [sys.executable, "-c", MANUAL, MODELS[model]]
                else:
                    shutil.copytree(store, home)
                    env = {**base, "KSCOPE_CACHE_DIR": str(home)}
                    if arm.endswith("thread"):
                        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
                    argv = [sys.executable, "-m", "kscope", MODELS[model], "--once", "--json", "--device", "cpu",
                            "--compile-timeout", "3600"]
                for state in ("cold", "warm"):
                    took = timed(argv, env)
                    times.setdefault((arm, state), []).append(took)
                    print(f"{model} round {r + 1} {arm:17} {state}: {took:6.1f} s", flush=True)
        for state in ("cold", "warm"):
            manual = statistics.median(times[("manual", state)])
            for arm in arms[1:]:
                mine = statistics.median(times[(arm, state)])
                print(f"== {model} {state}: {arm} {mine:.1f} s / manual {manual:.1f} s = {mine / manual:.2f}x", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
