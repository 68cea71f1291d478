#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run every sample headless on CUDA and keep what kscope printed.
# Writes benchmarks/gpu/<date>-<gpu>.jsonl (one Report per line) and a header file with date, GPU and
# torch version. Needs only torch (no textual, watchdog or rich).
#   bash benchmarks/gpu_check.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-benchmarks/gpu}
mkdir -p "$out"
py=${PYTHON:-python3}
gpu=$($py -c 'import torch; print(torch.cuda.get_device_name(0).replace(" ", "_"))')
stamp=$(date -u +%Y-%m-%d)
base="$out/$stamp-$gpu"
$py -c 'import torch, datetime; print(f"date {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC"); print("gpu", torch.cuda.get_device_name(0)); print("torch", torch.__version__)' > "$base.txt"
: > "$base.jsonl"
status=0
for f in samples/*.py; do
  grep -q "torch.distributed" "$f" && continue  # needs a process group: --nproc, below
  echo "== $f" >&2
  if PYTHONPATH=. $py -m kscope "$f" --once --json --device cuda >> "$base.jsonl"; then :; else status=1; fi
done
# The article's check: 2 eager kernels, 1 triton_poi_fused_add_relu_0.
$py - "$base.jsonl" >> "$base.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]).read().replace("}\n{", "}\x00{").split("\x00"):
    if not line.strip():
        continue
    r = json.loads(line)
    e, c = r["eager"], r["compiled"]
    names = [k["name"] for k in c["kernels"]] if c else []
    print(f'{r["file"].split("/")[-1]}: eager {e and e["launches"]} launches {e and e["bytes_read"] + e["bytes_written"]} B; '
          f'compiled {c and c["launches"]} launches {c and c["bytes_read"] + c["bytes_written"]} B {names}; errors {r["errors"]}')
PY
# The live app's workers are forked from a warm fork server (worker/forkserver.py): a forked worker
# must run on CUDA as a fresh one does (or the server says it fell back to fresh workers).
echo "== worker start, fresh vs forked, and the seed on cuda in each" >&2
$py benchmarks/worker_start.py --device cuda --repeat 2 >> "$base.txt" 2>&1 || status=1
# Distributed (--nproc): one rank with nccl on the one GPU (issue 14); each Report has its "ranks".
: > "$base-nproc1.jsonl"
for f in samples/allreduce.py samples/ddp_mlp.py; do
  echo "== $f --nproc 1" >&2
  extra=$([ "$f" = samples/ddp_mlp.py ] && echo --backward)
  if PYTHONPATH=. $py -m kscope "$f" --once --json --device cuda --nproc 1 $extra >> "$base-nproc1.jsonl"; then :; else status=1; fi
done
$py - "$base-nproc1.jsonl" >> "$base.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]).read().replace("}\n{", "}\x00{").split("\x00"):
    if not line.strip():
        continue
    r = json.loads(line)
    for rank in r.get("ranks") or []:
        for mode in ("eager", "compiled"):
            m = rank[mode] or {}
            print(f'{r["file"].split("/")[-1]} --nproc 1 rank {rank["rank"]} {mode}: launches {m.get("launches")} '
                  f'kernels {[k["name"] for k in m.get("kernels", [])]} collectives {m.get("collectives")}')
    print(f'  errors {r["errors"]}')
PY
# Compile modes on CUDA: CUDA graphs ("N kernels in 1 graph launch") and max-autotune's choices.
: > "$base-modes.jsonl"
for f in samples/add_relu.py samples/matmul_gelu.py samples/softmax.py; do
  for mode in reduce-overhead max-autotune; do
    echo "== $f --mode $mode" >&2
    if PYTHONPATH=. $py -m kscope "$f" --once --json --device cuda --mode "$mode" >> "$base-modes.jsonl"; then :; else status=1; fi
  done
done
$py - "$base-modes.jsonl" >> "$base.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]).read().replace("}\n{", "}\x00{").split("\x00"):
    if not line.strip():
        continue
    r = json.loads(line)
    c = r["compiled"] or {}
    won = [(a["op"], a["choices"][0]["name"], a["choices"][0]["ms"], len(a["choices"])) for a in c.get("autotune", [])]
    print(f'{r["file"].split("/")[-1]} {r["compile_options"]["mode"]}: launches {c.get("launches")} '
          f'cuda_graphs {c.get("cuda_graphs")} autotune {won} round trips {len(c.get("round_trips") or [])} '
          f'errors {r["errors"]}')
PY
# The article's experiment, measured: the seed swept 10² to 10⁸ on CUDA (JSON), and its plot as text
# (plotext, pure Python: pip install it, or put its wheel on PYTHONPATH, where the machine lacks it).
if PYTHONPATH=. $py -m kscope samples/add_relu.py --once --json --sweep --device cuda --sweep-budget 180 \
    > "$base-sweep.json"; then :; else status=1; fi
PYTHONPATH=.:${PYTHONPATH:-} $py - "$base-sweep.json" > "$base-sweep-plot.txt" <<'PY' || echo "no plot: plotext missing" >&2
import json, sys
from kscope.report.model import Report
from kscope.report.sweep import fmt_n, per_element
from kscope.render.plot import plot_text
r = report_from_dict(json.load(open(sys.argv[1])))
s = r.sweep
for p in s.points:
    print(f"n={fmt_n(p.n):>5}  launches {p.eager.launches:g} -> {p.compiled.launches:g}  "
          f"B/n {per_element(p.eager.bytes_total, p.n)} -> {per_element(p.compiled.bytes_total, p.n)}  "
          f"call {p.eager.call_time_us:.1f} -> {p.compiled.call_time_us:.1f} us  {p.verdict} {p.ratio:.2f}  "
          f"{list(zip(p.compiled.kernels, p.compiled.variants))}  {p.graph}")
print(s.crossover_text(), "| stopped:", s.stopped, "| errors:", r.errors)
print(plot_text(s, r.peak_gbps, 110, 24))
PY
cat "$base.txt" "$base-sweep-plot.txt" 2>/dev/null
exit $status
