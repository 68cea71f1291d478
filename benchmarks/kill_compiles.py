"""Kill kscope while inductor's C++ compiler writes kernel libraries, then compile again (issue 34).

Each round writes a target whose four layers are four C++ kernels (a new constant each round, so
each is a new graph that gcc really builds), starts `kscope TARGET --once --json` on one kscope
cache, waits until a C++ compiler runs under it (cc1plus, as, collect2, ld), waits a little more
(the rounds' delays are spread over the compile), and sends SIGINT (kscope kills its worker's
process group, the compiler too) or SIGKILL (the worker dies with its parent; the compiler is left
to finish), in turn. Then:

- every library, object and precompiled header at its own name in kscope's inductor cache is whole
  (engine.inductor.kill_safe.whole);
- `kscope --once` on every killed target (on the last one with --rerun-last) succeeds;
- a plain torch.compile of the seed in a fresh process pointed at the same cache succeeds, and picks
  the vector ISA a plain process picked there before the kills.

    python benchmarks/kill_compiles.py [--kills 12] [--cache DIR] [--rerun-last]

Prints one line per kill and a summary; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kscope.engine.inductor.kill_safe import whole  # noqa: E402  (no torch at import)

COMPILERS = {"cc1plus", "as", "collect2", "ld", "ld.bfd", "ld.gold"}
SLOW = """import torch


def layers(x, w):
    for i in range(4):
        x = torch.nn.functional.gelu(x @ w) * ({scale!r} + i / 64)
    return x


def inputs(device):
    return torch.randn(64, 64, device=device), torch.randn(64, 64, device=device) / 8
"""
PLAIN = """
import torch
from torch._inductor import cpu_vec_isa
f = torch.compile(lambda a, b: (a + b).relu())
a, b = torch.randn(1000), torch.randn(1000)
assert torch.equal(f(a, b), (a + b).relu())
print(str(cpu_vec_isa.pick_vec_isa()))
"""


def kscope(*args, env, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kscope", *map(str, args), "--json", "--device", "cpu"],
                          capture_output=True, text=True, env=env, timeout=timeout)


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of every process below pid."""
    parents, names = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1: stat.rindex(")")]
        parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
        names[int(entry)] = name
    below, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        for child, parent in parents.items():
            if parent == p:
                below.append((child, names[child]))
                frontier.append(child)
    return below


def kill_mid_compile(target: Path, env: dict, sig: int, delay: float, limit_s: float = 120) -> dict:
    """Start kscope on target, send `sig` `delay` seconds after a C++ compiler first runs under it."""
    proc = subprocess.Popen([sys.executable, "-m", "kscope", str(target), "--json", "--device", "cpu"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    started, seen = time.monotonic(), None
    while proc.poll() is None and time.monotonic() - started < limit_s:
        running = [name for _, name in descendants(proc.pid) if name in COMPILERS]
        if running:
            seen = time.monotonic()
            break
        time.sleep(0.02)
    if seen is not None:
        time.sleep(delay)
    killed_at = time.monotonic()
    at_kill = [name for _, name in descendants(proc.pid) if name in COMPILERS]
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return {"signal": signal.Signals(sig).name, "compiler_seen": seen is not None,
            "after_s": round(killed_at - seen, 2) if seen else None, "compilers_at_kill": at_kill,
            "exit": proc.returncode}


def broken(root: Path) -> list[str]:
    """Files at their own name (not a build's temporary) that a build left unfinished."""
    return [str(p) for p in root.rglob("*") if p.is_file() and p.suffix in (".so", ".o", ".gch")
            and not whole(str(p))]


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*.tmp")]


def plain_compile(env: dict) -> tuple[bool, str]:
    """A plain torch.compile of the seed (its kernels differ from kscope's, which profile: what it
    shares with kscope's are the vector ISA probes); (it worked, the vector ISA inductor picked).
    Without precompiled headers: torch keeps those in its default folder whatever the cache is,
    and building one takes ~25 s of CPU."""
    env = {**env, "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0"}
    out = subprocess.run([sys.executable, "-c", PLAIN], capture_output=True, text=True, env=env, timeout=300)
    return out.returncode == 0, (out.stdout.strip().splitlines() or [out.stderr[-500:]])[-1]


def run(kills: int, cache: Path, rerun_last: bool = False, spread_s: float = 3.0, log=print, warm: bool = True) -> dict:
    """The whole check on kscope cache `cache`; the figures and whether it held. warm=False: the
    cache is warm already (the suite's): no first run of the seed, no vector ISA compared, no seed
    run after the kills."""
    env = {**os.environ, "KSCOPE_CACHE_DIR": str(cache)}
    work = Path(tempfile.mkdtemp(prefix="kscope-kills-"))
    plain_env = {**env, "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor")}
    seed_ok, isa_before = True, None
    if warm:
        seed_ok = kscope(REPO / "samples" / "add_relu.py", env=env).returncode == 0  # its vec ISA kept
        isa_before = plain_compile(plain_env)[1]
    targets, rounds = [], []
    for i in range(kills):
        target = work / f"slow_{i}.py"
        target.write_text(SLOW.format(scale=1 + random.random()))
        delay = spread_s * i / max(1, kills - 1)
        rounds.append(kill_mid_compile(target, env, (signal.SIGINT, signal.SIGKILL)[i % 2], delay))
        targets.append(target)
        log(f"kill {i + 1}/{kills}: {rounds[-1]}")
    root = cache / "inductor"
    bad = broken(root)
    reruns = {}
    for target in targets[-1:] if rerun_last else targets:
        out = kscope(target, env=env)
        report = json.loads(out.stdout) if out.stdout.strip() else {"errors": [out.stderr[-300:]]}
        reruns[target.name] = report["errors"]
    seed_after = kscope(REPO / "samples" / "add_relu.py", env=env).returncode if warm else 0
    plain_ok, plain_isa = plain_compile(plain_env)
    result = {
        "kills": rounds, "broken_after_kills": bad, "temporaries_left": len(leftovers(root)),
        "reruns_with_errors": {k: v for k, v in reruns.items() if v}, "seed_after": seed_after,
        "plain_compile": plain_ok, "plain_vec_isa": [isa_before, plain_isa], "seed_first": seed_ok,
        "compilers_hit": sum(1 for r in rounds if r["compilers_at_kill"]),
    }
    result["held"] = (not bad and not result["reruns_with_errors"] and seed_after == 0 and plain_ok
                      and seed_ok and (isa_before is None or isa_before == plain_isa))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--cache", type=Path, help="kscope's cache folder (default: a new temporary one)")
    parser.add_argument("--rerun-last", action="store_true", help="re-run only the last killed target")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="kscope-cache-"))
    started = time.monotonic()
    result = run(args.kills, cache, args.rerun_last)
    print(json.dumps({k: v for k, v in result.items() if k != "kills"}, indent=1))
    print(f"{args.kills} kills, {result['compilers_hit']} with a C++ compiler running at the kill; "
          f"{len(result['broken_after_kills'])} broken files; held: {result['held']}; {time.monotonic() - started:.0f} s")
    return 0 if result["held"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
