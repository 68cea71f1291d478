"""What benchmarks/gpu_check.sh keeps: its header, its Reports one a line, and the figures each
step is run for, read back from kscope's JSON with kscope's own codec (so that a moved or renamed
import fails here, loudly, and in tests/process/test_gpu_check.py, which runs the script on the CPU).

    python benchmarks/gpu_check_report.py header DEVICE OUTDIR      # writes the header, prints its base path
    python benchmarks/gpu_check_report.py append RUN.json OUT.jsonl  # kscope's --json output: one line
    python benchmarks/gpu_check_report.py samples|nproc|modes OUT.jsonl
    python benchmarks/gpu_check_report.py sweep SWEEP.json          # its rows, and its plot as text

Needs torch for `header` only, kscope's report and render layers for the rest, and plotext for the
plot: where plotext is missing the plot is left out and that is said; any other failure is an
error (a traceback and a non-zero exit).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import platform
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

NO_PLOTEXT = "no plot: plotext is not installed (pip install 'plotext>=5.2.8,<6', or put its wheel on PYTHONPATH)"


def device_name(device: str) -> str:
    import torch

    if device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit(f"gpu_check: no CUDA device (torch {torch.__version__}, "
                             f"torch.cuda.is_available() is False): run it with --device cpu")
        return torch.cuda.get_device_name(0)
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "cpu"


def header(device: str, outdir: str) -> None:
    """The header file, OUTDIR/DATE-DEVICE_NAME.txt; prints its path without the .txt."""
    import torch

    now = datetime.datetime.now(datetime.timezone.utc)
    name = device_name(device)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or device
    base = Path(outdir) / f"{now:%Y-%m-%d}-{safe}"
    base.with_suffix(".txt").write_text(
        f"date {now:%Y-%m-%d %H:%M} UTC\ndevice {device}: {name}\ntorch {torch.__version__}\n")
    print(base)


def append(run_json: str, jsonl: str) -> None:
    """One `kscope --once --json` output, checked to be a Report, as one line of OUT.jsonl."""
    text = Path(run_json).read_text()
    if not text.strip():
        raise SystemExit(f"gpu_check: no Report: kscope printed nothing ({run_json})")
    report = json.loads(text)
    if not isinstance(report, dict) or "schema" not in report:
        raise SystemExit(f"gpu_check: not a Report: {text[:200]!r}")
    with open(jsonl, "a") as out:
        out.write(json.dumps(report) + "\n")


def reports(jsonl: str) -> list[dict]:
    return [json.loads(line) for line in Path(jsonl).read_text().splitlines() if line.strip()]


def _name(r: dict) -> str:
    return r["file"].split("/")[-1]


def _total(m: dict | None) -> int | None:
    if not m or m.get("bytes_read") is None or m.get("bytes_written") is None:
        return None
    return m["bytes_read"] + m["bytes_written"]


def samples(jsonl: str) -> None:
    """The article's check, per sample: eager launches and bytes, the compiled kernels; then each
    mode's memory (on CUDA beside the allocator's own peak)."""
    for r in reports(jsonl):
        e, c = r["eager"], r["compiled"]
        names = [k["name"] for k in c["kernels"]] if c else []
        print(f'{_name(r)}: eager {e and e["launches"]} launches {_total(e)} B; '
              f'compiled {c and c["launches"]} launches {_total(c)} B {names}; errors {r["errors"]}')
        print(f'  memory: {_memory(e)} -> {_memory(c)}')
        print(f'  roofs: {_roofs(r.get("roofs") or [])}; judged: eager {_judged(e)}, compiled {_judged(c)}')


def _roofs(roofs: list[dict]) -> str:
    """Each level's roof: "L2 1234 GB/s (50.3 MB, measured: ...) | main memory 4800 GB/s (-, data sheet of H200)"."""
    def one(x: dict) -> str:
        rate = "? GB/s" if x["gbps"] is None else f'{x["gbps"]:.0f} GB/s'
        cap = "-" if x["capacity_bytes"] is None else f'{x["capacity_bytes"] / 1e6:.3g} MB'
        return f'{x["level"]} {rate} ({cap}, {x["source"]})'
    return " | ".join(one(x) for x in roofs) or "none"


def _judged(m: dict | None) -> str:
    """The roof a mode's kernels were judged against, and its working set."""
    roof = (m or {}).get("roof") or {}
    return f'{roof.get("level")} (working set {(m or {}).get("working_set_bytes")} B: {roof.get("why")})'


def _memory(m: dict | None) -> str:
    """One mode's memory: "peak P B (allocator C B) saved S B" (allocator: CUDA's own
    max_memory_allocated over the call, the check of the profiler's peak; not on the CPU)."""
    memory = (m or {}).get("memory")
    if not memory:
        return "unknown"
    checked = memory.get("checked_peak_bytes")
    allocator = f" (allocator {checked} B)" if checked is not None else ""
    return f'peak {memory["peak_bytes"]} B{allocator} saved {memory.get("saved_bytes")} B'


def nproc(jsonl: str) -> None:
    for r in reports(jsonl):
        for rank in r.get("ranks") or []:
            for mode in ("eager", "compiled"):
                m = rank[mode] or {}
                print(f'{_name(r)} --nproc 1 rank {rank["rank"]} {mode}: launches {m.get("launches")} '
                      f'kernels {[k["name"] for k in m.get("kernels", [])]} collectives {m.get("collectives")}')
        print(f'  errors {r["errors"]}')


def modes(jsonl: str) -> None:
    """CUDA graphs ("N kernels in 1 graph launch") and max-autotune's choices, per mode."""
    for r in reports(jsonl):
        c = r["compiled"] or {}
        won = [(a["op"], a["choices"][0]["name"], a["choices"][0]["ms"], len(a["choices"]))
               for a in c.get("autotune") or []]
        print(f'{_name(r)} {r["compile_options"]["mode"]}: launches {c.get("launches")} '
              f'cuda_graphs {c.get("cuda_graphs")} autotune {won} round trips {len(c.get("round_trips") or [])} '
              f'errors {r["errors"]}')


def sweep(sweep_json: str) -> None:
    from kscope.render.text import per_element
    from kscope.render.view import fmt_us
    from kscope.report.codec import report_from_dict
    from kscope.report.sweep import fmt_n

    r = report_from_dict(json.loads(Path(sweep_json).read_text()))
    s = r.sweep
    if s is None:
        raise SystemExit(f"gpu_check: the sweep's Report has no sweep; errors {r.errors}")
    for p in s.points:
        e, c = p.eager, p.compiled
        print(f"n={fmt_n(p.n):>5}  launches {e.launches:g} -> {c.launches:g}  "
              f"B/n {per_element(e.bytes_total, p.n)} -> {per_element(c.bytes_total, p.n)}  "
              f"call {fmt_us(e.call_time_us)} -> {fmt_us(c.call_time_us)}  {p.verdict} {p.ratio:.2f}  "
              f"{list(zip(c.kernels, c.variants))}  {p.graph}")
    print(s.crossover_text(), "| stopped:", s.stopped, "| errors:", r.errors)
    if importlib.util.find_spec("plotext") is None:
        print(NO_PLOTEXT)
        print(f"gpu_check: {NO_PLOTEXT}", file=sys.stderr)
        return
    from kscope.render.plot import plot_text

    print(plot_text(s, r.peak_gbps, 110, 24))


def main(argv: list[str]) -> None:
    commands = {"header": header, "append": append, "samples": samples, "nproc": nproc,
                "modes": modes, "sweep": sweep}
    if not argv or argv[0] not in commands:
        raise SystemExit(__doc__)
    commands[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
