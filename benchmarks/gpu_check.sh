#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run every sample headless on CUDA and keep what kscope printed.
# The same steps run on the CPU (--device cpu; tests/process/test_gpu_check.py runs them with
# --smoke, so that this script cannot rot before a GPU is lent). Writes, under OUTDIR
# (benchmarks/gpu by default), DATE-DEVICE_NAME.txt (date, device, torch, then each step's figures)
# and .jsonl files (one Report a line). Needs only torch (no textual, watchdog or rich; plotext
# for the sweep's plot, which is left out, and said, without it).
#   bash benchmarks/gpu_check.sh [--device cuda|cpu] [--smoke] [--sizes N,N,...] [--sweep-budget S] [--timeout S] [OUTDIR]
# --timeout: each kscope run's (default 300 s, not kscope's 60: a first compile of the training step
# took longer than 60 s on this 2-core CPU beside other work, and a GPU's first Triton compiles may too).
# --smoke: each step once, on the fewest runs (the seed; allreduce.py alone with --nproc 1;
# max-autotune alone, which is CUDA graphs and autotuning both; a 2-size sweep), saying what it skips.
# Every step runs even when one fails; the exit status is 1 when any failed, and each failure's
# output (a traceback, kscope's error) is shown, never replaced by another message.
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash benchmarks/gpu_check.sh [--device cuda|cpu] [--smoke] [--sizes N,N,...] [--sweep-budget S] [--timeout S] [OUTDIR]"
device=cuda smoke=0 sizes="" budget="" timeout=300 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=${2:?$usage}; shift 2 ;;
    --device=*) device=${1#*=}; shift ;;
    --smoke) smoke=1; shift ;;
    --sizes) sizes=${2:?$usage}; shift 2 ;;
    --sweep-budget) budget=${2:?$usage}; shift 2 ;;
    --timeout) timeout=${2:?$usage}; shift 2 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "$usage" >&2; exit 2; }; out=$1; shift ;;
  esac
done
case "$device" in cuda|cpu) ;; *) echo "gpu_check: --device is cuda or cpu, not $device" >&2; exit 2 ;; esac
out=${out:-benchmarks/gpu}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
report() { $py benchmarks/gpu_check_report.py "$@"; }
base=$(report header "$device" "$out") || exit 1  # no CUDA device with --device cuda: said, and stop
status=0
fail() { echo "gpu_check: FAILED: $*" >&2; status=1; }
skip() { echo "skipped: $*" | tee -a "$base.txt" >&2; }
run_json() {  # run_json OUT.jsonl ARGS...: one kscope --once --json run, its Report one line of OUT.jsonl
  local jsonl=$1; shift
  echo "== $*" >&2
  local tmp; tmp=$(mktemp)
  $py -m kscope "$@" --once --json --device "$device" --timeout "$timeout" > "$tmp" || fail "kscope $* (exit $?)"
  # --once exits 1 with the Report still printed when a half failed: keep it, its errors say why
  report append "$tmp" "$jsonl" || fail "no Report from kscope $*"
  rm -f "$tmp"
}

# 1. Every sample, as a user runs it (the article's check: 2 eager kernels, 1 fused kernel,
#    triton_poi_fused_add_relu_0 on CUDA, cpp_fused_add_relu_0 on the CPU).
: > "$base.jsonl"
for f in samples/*.py; do
  grep -q "torch.distributed" "$f" && continue  # needs a process group: --nproc, below
  if [ $smoke = 1 ] && [ "$f" != samples/add_relu.py ]; then skip "$f (--smoke: the seed alone)"; continue; fi
  run_json "$base.jsonl" "$f"
done
echo "== samples" >> "$base.txt"
report samples "$base.jsonl" >> "$base.txt" || fail "the samples' summary"

# 2. The live app's workers are forked from a warm fork server (worker/forkserver.py): a forked worker
#    must run on CUDA as a fresh one does (or the server says it fell back to fresh workers).
echo "== worker start, fresh vs forked, and the seed on $device in each" | tee -a "$base.txt" >&2
$py benchmarks/worker_start.py --device "$device" --repeat $([ $smoke = 1 ] && echo 1 || echo 2) >> "$base.txt" ||
  fail "benchmarks/worker_start.py"

# 3. Distributed (--nproc): one rank, nccl on the one GPU (issue 14), gloo on the CPU; each Report has its "ranks".
: > "$base-nproc1.jsonl"
for f in samples/allreduce.py samples/ddp_mlp.py; do
  if [ $smoke = 1 ] && [ "$f" != samples/allreduce.py ]; then skip "$f --nproc 1 (--smoke: allreduce.py alone)"; continue; fi
  extra=$([ "$f" = samples/ddp_mlp.py ] && echo --backward)
  run_json "$base-nproc1.jsonl" "$f" --nproc 1 $extra
done
echo "== --nproc 1" >> "$base.txt"
report nproc "$base-nproc1.jsonl" >> "$base.txt" || fail "the --nproc summary"

# 4. Compile modes: CUDA graphs ("N kernels in 1 graph launch") and max-autotune's choices. On the
#    CPU there are no CUDA graphs (kscope says the mode changes nothing there); autotuning runs.
: > "$base-modes.jsonl"
modes="reduce-overhead max-autotune"
[ $smoke = 1 ] && modes=max-autotune
for f in samples/add_relu.py samples/matmul_gelu.py samples/softmax.py; do
  if [ $smoke = 1 ] && [ "$f" != samples/add_relu.py ]; then skip "$f in the modes (--smoke: the seed alone)"; continue; fi
  for mode in $modes; do run_json "$base-modes.jsonl" "$f" --mode "$mode"; done
done
[ $smoke = 1 ] && skip "--mode reduce-overhead (--smoke: max-autotune alone, CUDA graphs and autotuning both)"
echo "== compile modes" >> "$base.txt"
report modes "$base-modes.jsonl" >> "$base.txt" || fail "the modes' summary"

# 5. The article's experiment, measured: the seed swept 10² to 10⁸ (JSON), its rows and its plot as
#    text (plotext, pure Python: pip install it, or put its wheel on PYTHONPATH, where the machine lacks it).
[ $smoke = 1 ] && sizes=${sizes:-100,10000} budget=${budget:-20}
echo "== samples/add_relu.py --sweep ${sizes:+--sizes $sizes} --sweep-budget ${budget:-180}" >&2
$py -m kscope samples/add_relu.py --once --json --sweep --device "$device" --timeout "$timeout" ${sizes:+--sizes "$sizes"} \
    --sweep-budget "${budget:-180}" > "$base-sweep.json" || fail "kscope --sweep (exit $?)"
report sweep "$base-sweep.json" > "$base-sweep-plot.txt" || fail "the sweep's rows and plot"

cat "$base.txt" "$base-sweep-plot.txt"
[ $status = 0 ] && echo "gpu_check: every step ran; $base.*" >&2 || echo "gpu_check: some steps FAILED (above); $base.*" >&2
exit $status
