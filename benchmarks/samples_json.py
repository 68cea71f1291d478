"""Every bundled sample's `--once --json`, and two such folders compared key by key with timings
aside: what a refactor that must not change the JSON is checked with (issue 35).

    python benchmarks/samples_json.py run OUT_DIR          # one JSON per sample (samples/, samples/project/)
    python benchmarks/samples_json.py compare BEFORE AFTER  # "keys same; values same" per sample, else the diff

Figures that move from run to run are left out of the values (times, rates, the verdict, the
peaks kept per machine, paths), and lists are compared as sets: line costs and kernels sorted by
time come in another order when two kernels take the same time within noise.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHECKOUT = re.compile(r"[^\s\"']*/(samples/)")
MOVING = re.compile(r"(time|_us$|_s$|samples|speedup|gbps|gflops|spread|verdict|roof_percent|^bound$|percent|ratio"
                    r"|busy|wait|rounds|achieved|repetitions|^calls$|peak_flops|^file$|^files$|^root$|^sources$"
                    r"|^roofs$|^roof$|^peak_source$|share|^traffic_source$)", re.I)


def run(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for sample in sorted(REPO.glob("samples/*.py")) + sorted(REPO.glob("samples/project/*.py")):
        name = ("project_" if sample.parent.name == "project" else "") + sample.stem
        done = subprocess.run([sys.executable, "-m", "kscope", str(sample), "--once", "--json"], cwd=REPO,
                              capture_output=True, text=True, timeout=600, env=os.environ)
        (out / f"{name}.json").write_text(done.stdout)
        print(f"{name}: exit {done.returncode}")


def steady(x):
    """The JSON without what moves from run to run, lists as sorted sets."""
    if isinstance(x, dict):
        return {k: steady(v) for k, v in x.items() if not MOVING.search(k)}
    if isinstance(x, list):
        return sorted((steady(v) for v in x), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(x, str):  # two checkouts: the same sample at two paths
        return CHECKOUT.sub(r"\1", x)
    return x


def keys(x, path: str = "") -> set[str]:
    if isinstance(x, dict):
        return {f"{path}.{k}" for k in x} | {k for key, v in x.items() for k in keys(v, f"{path}.{key}")}
    if isinstance(x, list):
        return {k for v in x for k in keys(v, f"{path}[]")}
    return set()


def compare(before: Path, after: Path) -> int:
    differ = 0
    for old in sorted(before.glob("*.json")):
        new = after / old.name
        if not new.exists():
            print(f"{old.stem}: missing after")
            differ += 1
            continue
        a, b = json.loads(old.read_text() or "null"), json.loads(new.read_text() or "null")
        same_keys, same_values = keys(a) == keys(b), steady(a) == steady(b)
        print(f"{old.stem}: keys {'same' if same_keys else 'differ'}; values {'same' if same_values else 'differ'}")
        if not same_keys:
            print("   ", sorted(keys(a) ^ keys(b))[:10])
        if not same_values:
            text = [json.dumps(steady(x), indent=1, sort_keys=True).splitlines() for x in (a, b)]
            print("\n".join("    " + line for line in list(difflib.unified_diff(*text, lineterm="", n=1))[:30]))
        differ += not (same_keys and same_values)
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
