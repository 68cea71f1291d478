"""How often does the live app answer? N saves of the seed (samples/add_relu.py) in the real app
(the default LiveSession, workers forked from the app's own fork server, as a user runs kscope),
and how many gave a verdict and how many "can't tell: CPU busy".

    python benchmarks/verdict_rate.py                 # 10 saves, the app headless (Pilot) in this process
    python benchmarks/verdict_rate.py --tmux          # kscope in a terminal (tmux, 120x40), as a user starts it
    python benchmarks/verdict_rate.py --loops 2       # beside two busy loops (on 2 cores: both taken)
    python benchmarks/verdict_rate.py --probe         # and what each timing shared the CPU with
    python benchmarks/verdict_rate.py --probe --ahead # kscope ahead of the machine's other work (root)
    python benchmarks/verdict_rate.py --probe --ahead --loops 1   # and a busy loop beside it, as far ahead

Each save appends a comment to the file (the target's lines stay where they are, so inductor's cache
serves the compile) and waits for that save's timing. Printed: the machine's load before and after
(uptime), each save's verdict, call ratio and the share the verdict was decided on
(Speedup.cpu_waiting), and the counts.

--probe starts the app's fork server through this file, which wraps engine.measure.timing.time_both
in the worker: for each timing it notes, from /proc, the worker's own threads' run and run-queue
wait (schedstat), the CPU pressure of the whole machine (/proc/pressure/cpu "some", what decided
"busy" before), the run and wait of kscope's other processes (the app's process, the fork server,
a spare worker) and of every other process on the machine (the three that ran most named, with
"run/wait" ms). So it says whose work the machine's pressure was. --tmux runs `kscope FILE` in a
private tmux server, so the terminal's own work (tmux drawing what the app writes) is in the
figures too; its verdicts are the probe's (the worker's own speedup() of each timing).

With --ahead (root) kscope's sessions run at nice -20 (/proc/PID/autogroup: with autogroups on, as
here, a plain `nice -n -20` counts only inside a session, and each worker starts its own), so
kscope's processes come first and the machine's other work barely runs beside them: the nearest a
shared machine gets to a quiet one, for kscope's own figures (the pressure then counts the others'
tasks waiting behind kscope's, and says nothing). It takes the CPU from whoever else uses the
machine: keep such runs short.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SAMPLE = REPO / "samples" / "add_relu.py"
PROBE_ENV = "KSCOPE_VERDICT_PROBE"
"""Where the probed worker appends one JSON line per timing (set by --probe; read by the fork server)."""
AS_FORK_SERVER = "--as-fork-server"
AS_APP = "--as-app"
LOOPS_ENV = "KSCOPE_VERDICT_LOOPS"
"""The busy loops' pids (--loops): not kscope's."""
CGROUP_ENV = "KSCOPE_VERDICT_CGROUP"
"""The cgroup (v2) that holds kscope's processes alone (--probe, where one can be made): its own
cpu.pressure is the machine's measure restricted to them."""
UNIFIED = Path("/sys/fs/cgroup/unified")
AHEAD_ENV = "KSCOPE_VERDICT_AHEAD"
"""Set by --ahead: each kscope process's session (Linux's autogroup) at nice -20."""


def ahead(nice: int = -20) -> int | None:
    """This process's session (autogroup) at `nice`, where the environment asks for it (--ahead):
    with autogroups on, a task's own nice only counts inside its session, and kscope's workers each
    start one (setsid). The session's nice before (None: unchanged). The session outlives this
    process (the shell that started it): the caller puts it back."""
    if not os.environ.get(AHEAD_ENV):
        return None
    try:
        with open("/proc/self/autogroup") as f:
            before = int(f.read().split("nice")[1])
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        return before
    except (OSError, IndexError, ValueError) as e:
        print(f"[verdict_rate] --ahead: {e}", file=sys.stderr)
        return None


# --- the probe, in the fork server and its workers ---------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _ppid(pid: int) -> int:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else 0


def _tree(root: int) -> set[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            children.setdefault(_ppid(int(name)), []).append(int(name))
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        out.add(pid)
        todo += children.get(pid, [])
    return out


def _snapshot(first: bool) -> dict:
    """What the probe notes at a timing's start (`first`) or end. The worker's own figures are read
    last at the start and first at the end: the rest (all of /proc, ~10 ms) lies outside."""
    from kscope.engine.measure.cpu_wait import cpu_stall_us, thread_times

    group = os.environ.get(CGROUP_ENV)

    def fast() -> dict:
        return {"t": time.perf_counter(), "psi": cpu_stall_us(), "own": thread_times(),
                "kscope_psi": cpu_stall_us(f"{group}/cpu.pressure") if group else None}

    own = {} if first else fast()
    me = os.getpid()
    server = _ppid(me)
    app = _ppid(server)
    mine = _tree(me)
    others = {}
    loops = {int(pid) for pid in os.environ.get(LOOPS_ENV, "").split(",") if pid}
    for pid in _tree(app) - mine - loops:
        times = thread_times(f"/proc/{pid}/task")
        if times is not None:
            role = "app" if pid == app else "fork server" if pid == server else "other workers and their children"
            others[pid] = (role, times)
    elsewhere = {}  # the machine's other processes: (name, run ns, wait ns)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in others and int(name) not in mine:
            times = thread_times(f"/proc/{name}/task")
            if times is not None:
                try:
                    with open(f"/proc/{name}/comm") as f:
                        comm = f.read().strip()
                except OSError:
                    continue
                elsewhere[int(name)] = (comm, sum(times.run_ns.values()), sum(times.wait_ns.values()))
    if first:
        own = fast()
    return {**own, "others": others, "elsewhere": elsewhere}


@contextlib.contextmanager
def own_cgroup():
    """This process, and what it starts, in a cgroup of its own (v2, no controller: nothing is
    scheduled differently) whose cpu.pressure counts only their tasks' waiting; its path, or None
    where none can be made (not root, no cgroup v2)."""
    root = UNIFIED if (UNIFIED / "cgroup.procs").exists() else Path("/sys/fs/cgroup")
    group = root / f"kscope-verdict-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        yield None
        return
    try:
        yield group
    finally:
        (root / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(50):  # its last processes (the fork server) take a moment to go
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def _probe_line(before: dict, after: dict, timed) -> dict:
    from kscope.engine.measure.timing import speedup

    wall = after["t"] - before["t"]
    run, wait = after["own"].since(before["own"])
    roles: dict[str, list[float]] = {}
    for pid, (role, times) in after["others"].items():
        old = before["others"].get(pid, (role, None))[1]
        r, w = times.since(old) if old is not None else (sum(times.run_ns.values()), sum(times.wait_ns.values()))
        acc = roles.setdefault(role, [0.0, 0.0])
        acc[0] += r / 1e6
        acc[1] += w / 1e6
    outside = []  # (run ms, wait ms, name) of each other process that ran during the timing
    for pid, (comm, r, w) in after["elsewhere"].items():
        _, r0, w0 = before["elsewhere"].get(pid, (comm, 0, 0))
        if r - r0 > 0 or w - w0 > 0:
            outside.append(((r - r0) / 1e6, (w - w0) / 1e6, comm))
    outside.sort(reverse=True)
    s = speedup(timed)
    return {
        "elsewhere_ms": {"run": sum(x[0] for x in outside), "wait": sum(x[1] for x in outside),
                         "top": [f"{comm} {r:.0f}/{w:.0f}" for r, w, comm in outside[:3]]},
        "wall_ms": wall * 1e3,
        "psi_share": (after["psi"] - before["psi"]) / 1e6 / wall if after["psi"] is not None else None,
        "kscope_psi_share": (after["kscope_psi"] - before["kscope_psi"]) / 1e6 / wall
        if after["kscope_psi"] is not None else None,
        "own_run_ms": run / 1e6, "own_wait_ms": wait / 1e6,
        "others_ms": {role: {"run": r, "wait": w} for role, (r, w) in roles.items()},
        "verdict": s.verdict if s else None, "ratio": s.ratio if s else None,
        "decided_on": timed.waiting,
    }


def _serve_probed(argv: list[str]) -> int:
    """The app's fork server, its workers' time_both wrapped to note each timing (--probe)."""
    from kscope.worker import forkserver

    os.environ[forkserver.NVML_CHECK] = "1"  # before torch is imported, as the server itself does
    import kscope.engine.measure.timing as timing
    import kscope.worker.child as child

    original = timing.time_both

    def probed(*args, **kwargs):
        before = _snapshot(first=True)
        timed = original(*args, **kwargs)
        after = _snapshot(first=False)
        with open(os.environ[PROBE_ENV], "a") as f:
            f.write(json.dumps(_probe_line(before, after, timed)) + "\n")
        return timed

    timing.time_both = probed  # engine.run and engine.sweep import it by name, later, in the worker
    serve = child.serve

    def serve_ahead(*args, **kwargs):
        ahead()  # the worker's own session, made after the fork
        return serve(*args, **kwargs)

    child.serve = serve_ahead  # forkserver imports it by name in each worker it forks
    ahead()
    return forkserver.main(argv)


def _app_probed(path: str) -> int:
    """`kscope PATH --device cpu`, its fork server this file's (--tmux)."""
    from kscope.cli import main as kscope
    from kscope.worker.forks import ForkServer

    ForkServer.command = (sys.executable, str(Path(__file__).resolve()), AS_FORK_SERVER)
    ahead()  # the terminal's session, where --ahead asks for it
    sys.argv = ["kscope", path, "--device", "cpu"]
    return kscope()


# --- the app, driven -------------------------------------------------------------------------------


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def probe_text(probe_log: Path | None) -> str:
    """The latest timing's probe figures, in a few words ("" without --probe)."""
    if probe_log is None or not probe_log.exists():
        return ""
    x = json.loads(probe_log.read_text().splitlines()[-1])
    app = x["others_ms"].get("app", {"run": 0.0, "wait": 0.0})
    psi = "?" if x["psi_share"] is None else f"{x['psi_share']:.0%}"
    if x.get("kscope_psi_share") is not None:
        psi += f" (kscope's {x['kscope_psi_share']:.0%})"
    own = x["own_wait_ms"] / (x["own_run_ms"] + x["own_wait_ms"])
    return (f"  | probe: {x['wall_ms']:4.0f} ms, pressure {psi:>4s}, worker waited {own:4.0%} "
            f"({x['own_wait_ms']:.0f} of {x['own_run_ms'] + x['own_wait_ms']:.0f} ms), "
            f"app ran {app['run']:.0f} ms, waited {app['wait']:.0f} ms; elsewhere {', '.join(x['elsewhere_ms']['top'])}")


def result_line(i: int, verdict: str, ratio: float, waiting: float | None, took: float, probe_log: Path | None) -> str:
    from kscope.report.speedup import ratio_text

    share = "unknown" if waiting is None else f"{waiting:.0%}"
    return (f"  save {i + 1:3d}: {ratio_text(ratio, verdict):22s} ratio {ratio:5.2f}  waiting {share:>7s}  {took:5.2f} s"
            f"{probe_text(probe_log)}")


async def drive(path: Path, saves: int, timeout: float, probe_log: Path | None = None) -> list[tuple]:
    """The app in this process (Pilot): each save's (verdict, ratio, waiting), from its Report."""
    from kscope.app.app import KscopeApp
    from kscope.report.request import RunRequest

    app = KscopeApp(RunRequest(str(path), None, "cpu", timeout=timeout))
    finished: dict[int, object] = {}
    finish = app._finish

    def _finish(report, at):  # the app's handler calls self._finish: the instance attribute wins
        finish(report, at)
        finished[app.latest_run] = report

    app._finish = _finish

    async def until(cond, within: float) -> None:
        deadline = time.monotonic() + within
        while not cond():
            if not app.is_running:
                raise RuntimeError("the app stopped")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no report in {within:g} s")
            await asyncio.sleep(0.02)

    results = []
    base = path.read_text()
    try:
        async with app.run_test(size=(120, 40)):
            await until(lambda: app.latest_run in finished, 300)  # the first run: compiles, not counted
            for i in range(saves):
                before = app.latest_run
                started = time.monotonic()
                path.write_text(base + f"# save {i + 1}\n")
                await until(lambda: app.latest_run > before, 10)
                await until(lambda: app.latest_run in finished, timeout + 120)
                s = finished[app.latest_run].speedup
                if s is None:
                    raise RuntimeError(f"save {i + 1} was not timed: {finished[app.latest_run].errors}")
                results.append((s.verdict, s.ratio, s.cpu_waiting))
                print(result_line(i, *results[-1], time.monotonic() - started, probe_log), flush=True)
    finally:
        app.shutdown()
    return results


def drive_in_tmux(path: Path, saves: int, timeout: float, probe_log: Path) -> list[tuple]:
    """kscope as a user starts it, in a terminal (a private tmux server, 120x40): each save's
    (verdict, ratio, waiting), from the probe's notes (the worker's own verdict of each timing)."""
    server = f"kscope-verdict-{os.getpid()}"
    tmux = ["tmux", "-L", server, "-f", "/dev/null"]
    app = [sys.executable, str(Path(__file__).resolve()), AS_APP, str(path)]
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "40", "--", *app], check=True)
    if os.environ.get(AHEAD_ENV):  # the terminal too: tmux's server has a session of its own
        pid = subprocess.run([*tmux, "display", "-p", "#{pid}"], capture_output=True, text=True).stdout.strip()
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write("-20")

    def timings() -> list[dict]:
        return [json.loads(x) for x in probe_log.read_text().splitlines()] if probe_log.exists() else []

    def until(count: int, within: float) -> None:
        deadline = time.monotonic() + within
        while len(timings()) < count:
            if time.monotonic() > deadline:
                screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
                raise RuntimeError(f"no timing in {within:g} s; the screen:\n{screen}")
            time.sleep(0.05)

    results = []
    base = path.read_text()
    try:
        until(1, 300)  # the first run: compiles, not counted
        for i in range(saves):
            started = time.monotonic()
            path.write_text(base + f"# save {i + 1}\n")
            until(i + 2, timeout + 120)
            x = timings()[-1]
            results.append((x["verdict"], x["ratio"], x["decided_on"]))
            print(result_line(i, *results[-1], time.monotonic() - started, probe_log), flush=True)
            time.sleep(0.5)  # the report's paint (the timing ends before it)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    return results


def summarize_probe(lines: list[dict]) -> None:
    if not lines:
        print("probe: no timing noted")
        return

    def q(values):
        values = sorted(values)
        if not values:
            return "-"
        return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"

    print(f"\nper timing ({len(lines)}; min / median / max):")
    print(f"  wall                               {q([x['wall_ms'] for x in lines])} ms")
    print(f"  machine CPU pressure ('some')      {q([x['psi_share'] for x in lines if x['psi_share'] is not None])}"
          " of the wall time")
    kscope_psi = [x["kscope_psi_share"] for x in lines if x.get("kscope_psi_share") is not None]
    if kscope_psi:
        print(f"  the same, kscope's processes alone {q(kscope_psi)} of the wall time (their cgroup's)")
    print(f"  worker's threads: run              {q([x['own_run_ms'] for x in lines])} ms")
    print(f"  worker's threads: run-queue wait   {q([x['own_wait_ms'] for x in lines])} ms")
    print(f"  worker's wait / wall               {q([x['own_wait_ms'] / x['wall_ms'] for x in lines])}")
    print(f"  worker's wait / (run + wait)       {q([x['own_wait_ms'] / (x['own_run_ms'] + x['own_wait_ms']) for x in lines])}")
    roles = sorted({role for x in lines for role in x["others_ms"]})
    for role in roles:
        runs = [x["others_ms"].get(role, {"run": 0.0})["run"] for x in lines]
        waits = [x["others_ms"].get(role, {"wait": 0.0})["wait"] for x in lines]
        print(f"  {role}: run {q(runs)} ms, wait {q(waits)} ms")
    print(f"  the machine's other processes: run {q([x['elsewhere_ms']['run'] for x in lines])} ms, "
          f"wait {q([x['elsewhere_ms']['wait'] for x in lines])} ms")
    print(f"  verdicts as timed: {dict(Counter(x['verdict'] for x in lines))}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == AS_FORK_SERVER:
        raise SystemExit(_serve_probed(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == AS_APP:
        raise SystemExit(_app_probed(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--loops", type=int, default=0, help="busy loops (python -c 'while True: pass') beside the app")
    parser.add_argument("--probe", action="store_true", help="note what each timing shared the CPU with")
    parser.add_argument("--tmux", action="store_true", help="kscope in a terminal (tmux), as a user runs it; implies --probe")
    parser.add_argument("--ahead", action="store_true",
                        help="with --probe: kscope's sessions at nice -20 (root), ahead of the machine's other work")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    args.probe = args.probe or args.tmux
    if args.ahead:
        if not args.probe:
            parser.error("--ahead needs --probe (the probed fork server renices the workers' sessions)")
        os.environ[AHEAD_ENV] = "1"
        session_nice = ahead()
        if session_nice is not None:
            atexit.register(ahead, session_nice)  # this shell's session is no faster after the run

    tmp = Path(tempfile.mkdtemp(prefix="kscope-verdict-"))
    os.environ.setdefault("KSCOPE_CACHE_DIR", str(tmp / "store"))  # the workers inherit it
    path = tmp / "add_relu.py"
    shutil.copy(SAMPLE, path)
    probe_log = tmp / "probe.jsonl"
    if args.probe:
        from kscope.worker.forks import ForkServer

        os.environ[PROBE_ENV] = str(probe_log)
        ForkServer.command = (sys.executable, str(Path(__file__).resolve()), AS_FORK_SERVER)

    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(args.loops)]  # each in a session of its own, as one started from a terminal
    if args.ahead:  # beside kscope, not behind it
        for p in loops:
            with open(f"/proc/{p.pid}/autogroup", "w") as f:
                f.write("-20")
    os.environ[LOOPS_ENV] = ",".join(str(p.pid) for p in loops)
    group = contextlib.ExitStack()
    if args.probe:  # after the loops: they stay out of it
        path_of_group = group.enter_context(own_cgroup())
        if path_of_group is not None:
            os.environ[CGROUP_ENV] = str(path_of_group)
    how = "in tmux" if args.tmux else "headless (Pilot)"
    print(f"before: {uptime()}  (the app {how}, {os.cpu_count()} cores, {args.loops} busy loops beside"
          f"{', kscope at nice -20' if args.ahead else ''})", flush=True)
    started = time.monotonic()
    try:
        if args.tmux:
            results = drive_in_tmux(path, args.saves, args.timeout, probe_log)
        else:
            results = asyncio.run(drive(path, args.saves, args.timeout, probe_log if args.probe else None))
    finally:
        for p in loops:
            p.kill()
            p.wait()
        group.close()
    print(f"after:  {uptime()}  ({time.monotonic() - started:.0f} s)")

    verdicts = Counter(v for v, _, _ in results)
    answered = sum(n for v, n in verdicts.items() if v != "busy")
    print(f"\n{len(results)} saves: {answered} verdicts, {verdicts.get('busy', 0)} \"can't tell: CPU busy\"; "
          f"{dict(verdicts)}")
    if results:
        ratios = sorted(r for _, r, _ in results)
        waits = sorted(w for _, _, w in results if w is not None)
        print(f"call ratio eager ÷ compiled: min {ratios[0]:.2f}, median {statistics.median(ratios):.2f}, max {ratios[-1]:.2f}")
        if waits:
            print(f"share the verdict was decided on (cpu_waiting): min {waits[0]:.2f}, "
                  f"median {statistics.median(waits):.2f}, max {waits[-1]:.2f}")
    if args.probe:
        lines = [json.loads(line) for line in probe_log.read_text().splitlines()] if probe_log.exists() else []
        summarize_probe(lines[1:])  # the first run's (the compile's) timing is not a save's
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
