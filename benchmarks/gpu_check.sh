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
cat "$base.txt"
exit $status
