"""Call -> plan and call -> final on a real model, caches cold (issue 26's own measurement).

A Hugging Face LLaMA of 2 layers from a small config (random weights, nothing downloaded; needs
`transformers`, which kscope does not depend on), run once by kscope's engine in a fresh process
with an empty inductor cache and an empty kscope store, warmed first as the live app's worker is
(engine imports, inductor's first compile, its CPU vector-ISA probe), and run once (the library
imported, its graphs compiled): the run measured is the next, with inductor's caches off, as after an
edit that changes the model.
Prints when the first plan was said, when the last (every graph planned), when the compile's first
call returned, and when the final Report was ready, in seconds from the call; no assertions.

    python benchmarks/plan_model.py [--device cpu|cuda] [--mode MODE] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = '''
import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(num_hidden_layers=2, hidden_size=256, intermediate_size=688, num_attention_heads=4,
                     num_key_value_heads=4, vocab_size=1024, max_position_embeddings=128)
model = LlamaForCausalLM(config).eval()


def llama(ids):
    return model(ids).logits


def inputs(device):
    model.to(device)
    return (torch.randint(0, 1024, (1, 64), device=device),)
'''

CHILD = '''
import json, sys, time
from kscope.engine.inductor.capture import configure_inductor
from kscope.engine.run import run
from kscope.engine.api import warm
from kscope.report.compile import CompileOptions
from kscope.report.request import RunRequest

import torch
path, device, mode = sys.argv[1:4]
configure_inductor()
warm()  # as the live app's worker is before the user's first save: torch imported, inductor warm
request = RunRequest(path, None, device, calls=5, compile=CompileOptions(mode=mode))
run(request)  # the first save: the library imported, the model's graphs compiled once
said, start = [], time.perf_counter()
# the next save that changes the model: every graph compiled again (inductor's caches off for it)
with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
    report = run(request, on_plan=lambda r: said.append(("plan", time.perf_counter() - start, len(r.plan.kernels))),
                 on_progress=lambda p: said.append(("ran", time.perf_counter() - start, 0)) if p.ran else None)
final = time.perf_counter() - start
plans = [x for x in said if x[0] == "plan"]
print(json.dumps({"errors": [e.message for e in report.errors], "final_s": final,
                  "first_plan_s": plans[0][1] if plans else None, "last_plan_s": plans[-1][1] if plans else None,
                  "kernels_planned": plans[-1][2] if plans else 0,
                  "ran_s": next((x[1] for x in said if x[0] == "ran"), None),
                  "kernels_final": len(report.compiled.kernels) if report.compiled else 0,
                  "compile_s": report.compiled.compile_s if report.compiled else None}))
'''


def one(device: str, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="kscope-plan-model-") as tmp:
        target = Path(tmp) / "llama.py"
        target.write_text(textwrap.dedent(TARGET).lstrip())
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "inductor"),
               "KSCOPE_CACHE_DIR": str(Path(tmp) / "store")}
        out = subprocess.run([sys.executable, "-c", CHILD, str(target), device, mode], env=env, cwd=REPO,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default="default", help="torch.compile's mode (default, max-autotune, ...)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import transformers  # noqa: F401
    except ImportError:
        sys.exit("plan_model.py needs transformers (pip install transformers); kscope does not")
    runs = [one(args.device, args.mode) for _ in range(args.runs)]
    print(f"LLaMA, 2 layers, {args.device}, mode {args.mode}, a warm worker recompiling every graph, {args.runs} fresh processes")
    for r in runs:
        if r["errors"]:
            print("  errors:", r["errors"])
        print(f"  call -> first plan {r['first_plan_s']:.2f} s, last plan {r['last_plan_s']:.2f} s "
              f"({r['kernels_planned']} kernels planned, {r['kernels_final']} final rows), first compiled call "
              f"returned {r['ran_s']:.2f} s, final {r['final_s']:.2f} s (compile_s {r['compile_s']:.2f})")
    ratio = statistics.median(r["last_plan_s"] / r["final_s"] for r in runs)
    first = statistics.median(r["first_plan_s"] / r["final_s"] for r in runs)
    print(f"median call->plan / call->final: first plan {first:.2f}, every graph planned {ratio:.2f} (goal <= 0.5)")


if __name__ == "__main__":
    main()
