"""The worker process: imports torch once, then runs one request after another.

Started by worker.client as `python -m kscope.worker.child REQUEST_FD RESULT_FD` (--once), or forked
from worker.forkserver, already warm (the live app). Requests and
results are JSON lines on their own pipes (worker.protocol), so whatever the user's code prints
(on fd 1 and 2, which the parent points wherever it likes) can never corrupt them, and `input()`
in user code reads an empty stdin instead of kscope's requests.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable

from kscope.report.request import SweepRequest
from kscope.worker.lifetime import die_with_parent
from kscope.worker.protocol import (
    Shown,
    phase_line,
    progress_line,
    read_request,
    ready_line,
    report_line,
    timing_line,
)

_sending = threading.Lock()


def _send(out, line: str) -> None:
    with _sending:  # a compile's phase or progress may be told from another thread
        out.write(line)
        out.flush()


def _release_memory() -> None:
    """Hand the heap a run freed back to the OS. glibc keeps it otherwise (torch's input-sized
    buffers come from the heap once its mmap threshold has risen): RSS grew ~9 MB a run."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


def _release_device_memory() -> None:
    """Give back what the caching allocator holds after a run (a CUDA OOM above all)."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


# Lines torch's C++ side prints on every profiler start and stop; not the user's output.
_NOISE = re.compile(rb"^USDT:.*profiler_(start|stop)\s*$")


OUTPUT_DRAIN_S = 0.5
"""At exit, how long the output threads may take to pass on what is left."""


def _filter_output() -> Callable[[], None]:
    """Route fds 1 and 2 through a thread that drops torch's profiler chatter line by line; the
    function that passes on what is left at exit."""
    pumps: list[tuple[int, int, threading.Thread]] = []
    for fd in (1, 2):
        read_end, write_end = os.pipe()
        target = os.dup(fd)
        os.dup2(write_end, fd)
        os.close(write_end)

        def pump(read_end=read_end, target=target):
            with os.fdopen(read_end, "rb", buffering=0) as src:
                pending = b""
                while chunk := src.read(65536):
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    kept = b"".join(line + b"\n" for line in lines if not _NOISE.match(line))
                    if kept:
                        os.write(target, kept)
                if pending:
                    os.write(target, pending)

        thread = threading.Thread(target=pump, daemon=True, name=f"kscope-output-{fd}")
        thread.start()
        pumps.append((fd, target, thread))

    def drain() -> None:
        """Pass on what is left before the interpreter stops the (daemon) threads: a worker that
        fails to start (torch fails to import) printed its traceback and lost all but its first
        line, though the app says its output is in the output pane."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        for fd, target, _ in pumps:
            os.dup2(target, fd)  # the filter's pipe loses its writer: its thread reads to the end
        deadline = time.monotonic() + OUTPUT_DRAIN_S  # a child holding the pipe keeps it open
        for _, _, thread in pumps:
            thread.join(max(0.0, deadline - time.monotonic()))

    return drain


SHOWN_WAIT_S = 0.5
"""At most this long before timing for the app to say the eager half is on screen."""


def _wait_until_shown(requests, rid) -> None:
    """Read Shown(rid) from the app (older ones are dropped), SHOWN_WAIT_S at most."""
    import select

    deadline = time.monotonic() + SHOWN_WAIT_S
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([requests], [], [], left)[0]:
            return
        line = requests.readline()
        if not line:
            return
        if line.strip() and read_request(line)[1] == Shown(rid):
            return


def main(argv: list[str]) -> int:
    die_with_parent()
    return serve(int(argv[0]), int(argv[1]), warm="--warm" in argv)


def serve(request_fd: int, result_fd: int, warm: bool, drain_at_exit: bool = True) -> int:
    """Answer requests until the client closes the request pipe. A fresh process's (main) or a
    worker forked from worker.forkserver, which drains the output itself (drain_at_exit=False)."""
    drain = _filter_output()
    if drain_at_exit:
        atexit.register(drain)
    try:
        return _serve(request_fd, result_fd, warm)
    finally:
        if not drain_at_exit:
            drain()


def _serve(request_fd: int, result_fd: int, warm: bool) -> int:
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    results = os.fdopen(result_fd, "w", encoding="utf-8")

    from kscope.engine import api

    api.own_inductor_cache()  # before torch loads: never the user's inductor cache (engine.inductor.kill_safe)

    if not warm:
        # One run and gone (--once): no pool of compile processes started (and killed) for one run
        api.for_one_run()
    if warm:
        api.configure()
        api.warm()
    _send(results, ready_line())
    for line in requests:
        if not line.strip():
            continue
        rid, request = read_request(line)
        if isinstance(request, Shown):
            continue  # the app saw an eager half after its run stopped waiting for it
        # the client counts compiling time apart from the target's own (worker.clock)
        api.watch_compiles(lambda compiling, what, rid=rid: _send(results, phase_line(rid, compiling, what)))
        if isinstance(request, SweepRequest):
            _sweep(request, rid, results)
            continue

        def on_eager(report, rid=rid):
            _send(results, report_line("eager", rid, report))

        def on_plan(report, rid=rid):
            _send(results, report_line("plan", rid, report))

        def on_progress(progress, rid=rid):
            _send(results, progress_line(rid, progress))

        def before_timing(rid=rid, settle=request.settle) -> None:
            if settle:
                _wait_until_shown(requests, rid)
            _send(results, timing_line(rid))

        if request.nproc:
            from kscope.worker.ranks import run_ranks

            report = run_ranks(request, on_eager=on_eager)
        else:
            report = api.run(request, on_eager=on_eager, before_timing=before_timing,
                         on_plan=on_plan if request.plan else None, on_progress=on_progress)
        sys.stdout.flush()
        sys.stderr.flush()
        _send(results, report_line("report", rid, report))
        _release_device_memory()  # after the report: costs no time on screen
        _release_memory()
    return 0


def _sweep(request: SweepRequest, rid, results) -> None:
    """A size sweep: a "sweep" message after each size, then the report."""
    from kscope.engine import api

    report = api.run_sweep(request, on_point=lambda r: _send(results, report_line("sweep", rid, r)))
    sys.stdout.flush()
    sys.stderr.flush()
    _send(results, report_line("report", rid, report))
    _release_device_memory()
    _release_memory()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
