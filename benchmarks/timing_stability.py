"""Does the verdict agree with itself? Each sample run N times in one warm worker (as the live app
runs it), the verdict and the ratios printed per sample, as a Markdown table for docs/speed.md.

    python benchmarks/timing_stability.py [--runs 10] [--device cpu] [--samples add_relu,chain] [--null]

--null times each sample's eager function against itself, as kscope times eager against compiled:
the middle halves of the pair ratios it prints are the noise a verdict must clear
(kscope.engine.measure.timing.NOISE_FLOOR).

A sample "flips" when one run says compiled is faster and another slower: the goal is no flip on
any sample, and the same verdict in every run wherever the difference is beyond the noise. Runs
are sequential in one process; the machine's other load is not under the script's control, so
the table says when and where it was measured.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--samples", default="", help="comma-separated sample names (default: all)")
    parser.add_argument("--null", action="store_true", help="time each sample's eager function against itself")
    args = parser.parse_args()

    import torch

    from kscope.engine.inductor.capture import configure_inductor
    from kscope.engine.run import run
    from kscope.report.request import RunRequest

    configure_inductor()
    wanted = {s for s in args.samples.split(",") if s}
    samples = [p for p in sorted((REPO / "samples").glob("*.py")) if not wanted or p.stem in wanted]
    run(RunRequest(str(samples[0]), device=args.device, calls=2))  # warm the process, as the app's worker is
    if args.null:
        null_experiment(samples, args)
        return
    print(f"# timing stability, {datetime.date.today()}, torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads, {args.runs} runs per sample\n")
    print("| sample | verdicts (call time) | flips | call ratio eager÷compiled: min / median / max | "
          "kernel time eager → compiled (median of runs) | kernel ratio: median | timed calls per run | s per run |")
    print("|---|---|---|---|---|---|---|---|")
    flipped = 0
    for path in samples:
        verdicts, ratios, kernel_ratios, e_times, c_times, samples_per_run, took = Counter(), [], [], [], [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            r = run(RunRequest(str(path), device=args.device))
            took.append(time.perf_counter() - start)
            if r.errors or r.speedup is None:
                verdicts["error"] += 1
                continue
            verdicts[r.speedup.verdict] += 1
            ratios.append(r.speedup.ratio)
            kernel_ratios.append(r.speedup.kernel_ratio or float("nan"))
            e_times.append(r.eager.kernel_time_us)
            c_times.append(r.compiled.kernel_time_us)
            samples_per_run.append(r.compiled.call_samples)
        flip = verdicts["faster"] > 0 and verdicts["slower"] > 0
        flipped += flip
        shown = ", ".join(f"{v} {n}/{args.runs}" for v, n in verdicts.most_common())
        print(
            f"| {path.stem} | {shown} | {'**yes**' if flip else 'no'} | "
            f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} | "
            f"{statistics.median(e_times):.0f} µs → {statistics.median(c_times):.0f} µs | "
            f"{statistics.median(kernel_ratios):.2f} | {min(samples_per_run)}–{max(samples_per_run)} | "
            f"{statistics.median(took):.1f} |"
        )
    print(f"\nsamples that flipped between faster and slower: {flipped}")


def null_experiment(samples, args) -> None:
    import torch

    from kscope.engine.measure.timing import NOISE_FLOOR, ratios, time_both, verdict
    from kscope.engine.target.loading import prepare

    device = torch.device(args.device)
    print(f"# null experiment: each sample's eager function timed against itself, {args.runs} runs, "
          f"{datetime.date.today()}, torch {torch.__version__}\n")
    print("| sample | verdicts without the noise floor | with it (±10%) | median ratio: min / max | "
          "middle half of the ratios: lowest low / highest high |")
    print("|---|---|---|---|---|")
    for path in samples:
        target = prepare(str(path), None, device)

        def call(target=target):
            return target.fn(*target.args)

        bare, floored, medians, lows, highs = Counter(), Counter(), [], [], []
        for _ in range(args.runs):
            t = time_both(call, call, device, round_s=0.001)
            r = ratios(t.eager_kernel, t.compiled_kernel)
            low, high = r.spread
            bare["faster" if low > 1 else "slower" if high < 1 else "same"] += 1
            floored[verdict(t.eager_kernel, t.compiled_kernel)] += 1
            medians.append(r.median)
            lows.append(low)
            highs.append(high)
        print(f"| {path.stem} | {dict(bare)} | {dict(floored)} | {min(medians):.3f} / {max(medians):.3f} | "
              f"{min(lows):.3f} / {max(highs):.3f} |")
    print(f"\nnoise floor in use: ±{NOISE_FLOOR:.0%}")


if __name__ == "__main__":
    main()
