"""--nproc N: the target in N rank processes, as torchrun runs it, each rank a normal run.

The worker starts the ranks with torch.multiprocessing: forked on the CPU, so each rank starts with
torch imported and inductor warm as the worker is (spawned, each imports torch anew: `--once` of
samples/allreduce.py on 2 ranks took 12.9-14.0 s and 21 s of CPU spawned, 10.3-10.6 s and 16 s
forked); spawned on CUDA, which the forked child of a process that has used it cannot initialise.
Each rank is named kscope-rank-N in ps (forked, its command line is the worker's). Each rank sets
the environment torchrun would (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), sets up the process
group (gloo on the CPU, nccl on CUDA, one GPU per rank) before the user's file is loaded, then
does exactly what one process does (engine.run.run) and sends its Report back on its own pipe,
with its progress ("eager done") on the way. The worker bounds the wait by the request's
timeout (counted once every rank has imported torch), and when a rank fails (an error, or dies)
gives the others a moment to finish, then stops them: the Report says which rank did what and
where each one that did not finish was.

Ranks must call the target the same number of times, or one waits forever in a collective the
others never join: timing's adaptive round counts are agreed over a gloo group (timing.agree_with),
and inductor's FX-graph cache is off in the ranks (a rank hitting the cache another rank just
filled would compile once more to count bytes: an extra call the others never make).

No rank outlives the worker: each asks the kernel to kill it when the worker dies
(PR_SET_PDEATHSIG), and stays in the worker's process group, which the client kills whole.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import warnings
from dataclasses import replace
from datetime import timedelta
from multiprocessing.connection import wait

from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.model import RankResult, Report, RunError
from kscope.report.request import RunRequest

RANK_STARTUP_S = 120.0
"""How long N processes may take to import torch and start, before the timeout starts."""
FAILED_GRACE_S = 3.0
"""After one rank fails, how long the others may take to finish before they are stopped."""

WHERE = {
    "starting": "starting",
    "process group": "setting up the process group",
    "eager": "loading the file or in the eager half",
    "compiled": "in the compiled half (its eager half done)",
    "done": "done",
}


def backend_for(device: str) -> str:
    return "nccl" if device == "cuda" else "gloo"


def rank_name(rank: int) -> bytes:
    """A rank's process name (/proc/PID/comm), and its multiprocessing name."""
    return b"kscope-rank-%d" % rank


def start_method(device: str) -> str:
    """How the ranks start (see the module's docstring)."""
    return "fork" if device == "cpu" and sys.platform.startswith("linux") else "spawn"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(request: RunRequest, on_eager=None) -> Report:
    """Run `request` (with nproc set) in request.nproc ranks; one Report,
    rank 0's figures at the top and every rank in `ranks`."""
    import torch
    import torch.multiprocessing as mp

    from kscope.engine import api

    start = time.perf_counter()
    n, timeout = request.nproc, request.timeout
    base = Report(file=os.path.abspath(request.file), target=request.target or "", torch_version=torch.__version__)
    device, problem = api.device_for(request.device)
    if device is None:
        return replace(base, errors=(RunError("device", "TargetError", problem, base.file),))
    if device.type == "cuda" and torch.cuda.device_count() < n:
        message = (f"--nproc {n} on CUDA runs one GPU per rank; this machine has {torch.cuda.device_count()} "
                   f"(try --nproc {torch.cuda.device_count()}, or --device cpu for gloo)")
        return replace(base, device="cuda", errors=(RunError("device", "TargetError", message, base.file),))
    ctx = mp.get_context(start_method(device.type))
    one = replace(request, nproc=None, device=device.type, settle=False)  # what each rank runs
    port, procs, readers = free_port(), [], {}
    for rank in range(n):
        reader, writer = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_rank_main, args=(rank, n, port, backend_for(device.type), one, timeout, writer),
                        name=rank_name(rank).decode(), daemon=True)
        with warnings.catch_warnings():  # Python 3.12 warns of fork() beside threads: the worker's are
            warnings.filterwarnings("ignore", message=".*use of fork.*", category=DeprecationWarning)  # output pumps
            p.start()
        writer.close()
        procs.append(p)
        readers[reader] = rank
    try:
        state, reports, partial, failed = _collect(procs, readers, timeout, on_eager)
    finally:
        for p in procs:  # the finished ones only tear torch down (~1 s): kill them too
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(5)
    return _combined(base, n, state, reports, partial, failed, procs, timeout, start)


def _collect(procs, readers, timeout, on_eager):
    """Read the ranks' messages until all reported, one failed and the rest had their grace, or
    the time is up. Returns (last stage per rank, final reports, eager reports, failed ranks)."""
    n = len(procs)
    state = {r: "starting" for r in range(n)}
    reports: dict[int, Report] = {}
    partial: dict[int, Report] = {}
    failed: list[int] = []
    started: set[int] = set()
    deadline = time.monotonic() + RANK_STARTUP_S

    def fail(rank: int) -> None:
        nonlocal deadline
        if rank not in failed:
            failed.append(rank)
            deadline = min(deadline, time.monotonic() + FAILED_GRACE_S)

    # Each rank holds the only write end of its pipe: end of file is the rank gone.
    while readers and len(reports) < n:
        ready = wait(list(readers), timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        for conn in ready:
            rank = readers[conn]
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                del readers[conn]
                if rank not in reports:
                    fail(rank)
                continue
            if kind == "progress":
                state[rank] = payload
                if payload == "eager":
                    started.add(rank)
                    if len(started) == n and not failed:
                        deadline = time.monotonic() + timeout
            elif kind == "eager":
                state[rank] = "compiled"
                partial[rank] = report_from_dict(payload)
                if rank == 0 and on_eager is not None:
                    on_eager(partial[rank])
            elif kind == "report":
                state[rank] = "done"
                reports[rank] = report_from_dict(payload)
                if reports[rank].errors:
                    fail(rank)
    return state, reports, partial, failed


def _combined(base, n, state, reports, partial, failed, procs, timeout, start) -> Report:
    """Rank 0's Report at the top (its partial one, or none), every rank in `ranks`, each rank's
    errors in `errors` with its rank, and a line for each rank that did not finish."""
    ranks, errors = [], []
    for rank in range(n):
        mine = reports.get(rank) or partial.get(rank)
        own = tuple(replace(e, rank=rank, message=f"rank {rank}: {e.message}") for e in (mine.errors if mine else ()))
        if rank not in reports:
            own += (_unfinished(rank, state[rank], failed, procs[rank], timeout),)
        errors += own
        ranks.append(RankResult(
            rank, mine.eager if mine else None, mine.compiled if mine else None, own,
            mine.notes if mine else (), mine.wall_s if mine else None, state[rank],
        ))
    # the rank that failed first leads: the others' errors are often its consequence ("Connection
    # closed by peer" from gloo on the rank still waiting for it)
    errors.sort(key=lambda e: failed.index(e.rank) if e.rank in failed else len(failed))
    top = reports.get(0) or partial.get(0) or base
    return replace(top, errors=tuple(errors), ranks=tuple(ranks), wall_s=time.perf_counter() - start)


def _unfinished(rank: int, stage: str, failed: list[int], proc, timeout: float) -> RunError:
    where = WHERE.get(stage, stage)
    if rank in failed:
        code = proc.exitcode
        how = f"exited with status {code}" if code and code > 0 else f"was killed by signal {-code}" if code else "died"
        return RunError("crash", "RankDied", f"rank {rank} {how} while {where}", rank=rank)
    others = [r for r in failed if r != rank]
    if others:
        return RunError("stopped", "Stopped", f"rank {rank} stopped after rank {others[0]} failed; it was {where}",
                        rank=rank)
    return RunError("timeout", "Timeout", f"rank {rank} did not finish within {timeout:g} s (--timeout); it was "
                    f"{where}: a collective the other ranks never joined, or a slow target", rank=rank)


def _rank_main(rank: int, world: int, port: int, backend: str, request: RunRequest, timeout: float, conn) -> None:
    """One rank: the process group first (the user's file may use it at import), then a run."""
    from kscope.worker.lifetime import die_with_parent, name_process

    die_with_parent()
    name_process(rank_name(rank))
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    conn.send(("progress", "process group"))
    import torch
    import torch.distributed as dist

    from kscope.engine import api

    if backend == "nccl":
        torch.cuda.set_device(rank)
    # past --timeout, kscope stops the ranks itself (and says where they were)
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=timeout + 30))
    agree_group = dist.new_group(backend="gloo")  # decisions are small CPU tensors, whatever the backend

    def agree(value: int, op: str) -> int:
        t = torch.tensor([value], dtype=torch.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MIN if op == "min" else dist.ReduceOp.MAX, group=agree_group)
        return int(t.item())

    api.as_rank(agree)
    if request.trace_dir:
        request = replace(request, trace_dir=os.path.join(request.trace_dir, f"rank{rank}"))
    conn.send(("progress", "eager"))
    report = api.run(request, on_eager=lambda r: conn.send(("eager", report_to_dict(r))))
    conn.send(("report", report_to_dict(report)))
    conn.close()
    try:
        dist.destroy_process_group()
    except Exception:  # a peer already gone: nothing left to tear down cleanly
        pass
