"""The live app's warm parent of workers: imports torch and warms inductor once, then forks a
worker for each request (the app's first worker, its spare, each replacement after a crash or a
timeout), so a new worker is ready in about 0.1 s instead of a fresh process's 5-7 s of torch
import and inductor warm-up (benchmarks/worker_start.py).

Started by worker.forks as `python -m kscope.worker.forkserver SOCKET_FD`; it talks to the app over
that AF_UNIX SOCK_SEQPACKET socket, a message a packet:

    app -> server   b"fork ID NICE" with three fds attached: the worker's request pipe (read end),
                    its result pipe (write end), and where its stdout and stderr go
    server -> app   b"ready"             torch imported, inductor warm: requests are read now
                    b"forked ID PID"     the worker for request ID is process PID
                    b"exit PID CODE"     it ended (CODE as subprocess's returncode: -N for signal N)

Forking is safe here because nothing has run in this process but imports and one tiny compile on
the CPU in one thread: no OpenMP pool (OpenBLAS's thread re-forms in the child), no inductor compile
pool (compile_threads is 1 here and restored in the child), and no CUDA driver: torch asks NVML
whether CUDA is there (PYTORCH_NVML_BASED_CUDA_CHECK, for this process only), since a child forked
after cuInit cannot use CUDA. Should the driver be loaded anyway (a torch that calls it on import),
each worker starts fresh instead (exec of worker.child), slower but right. Each worker gets a
session of its own (the app stops it with everything it started by its process group) and dies with
this process, which dies with the app (worker.lifetime) or when the app closes the socket. What a
fresh process would have, it gets back: the app's environment and warning filters, random seeds
from the OS, its atexit handlers run at its end, sys.exit's status as Python gives it.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import socket
import sys
import traceback
import warnings

from kscope.worker.lifetime import die_with_parent, name_process

FDS_PER_WORKER = 3
WORKER_NAME = b"kscope-worker"
"""A forked worker's name in ps and top (its command line is still this server's)."""


def _become_worker(fds: list[int], nice: int, compile_threads: int, close: list[int], fork_warm: bool,
                   in_session: int) -> None:
    """In the forked child: the worker's own session and fds, then worker.child's loop, or a fresh
    worker.child in its place (not `fork_warm`); never returns. `in_session`: written once the
    worker leads its own process group (before that, the app's killpg would miss it)."""
    code = 1
    try:
        warnings.filters[:] = _APPS_FILTERS
        _restore_environment()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in close:
            os.close(fd)
        os.setsid()
        os.write(in_session, b"s")
        os.close(in_session)
        die_with_parent()  # its parent is this server
        name_process(WORKER_NAME)
        request_fd, result_fd, output_fd = fds
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
        if nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        from kscope.engine import api

        api.set_compile_threads(compile_threads)
        if not fork_warm:
            for fd in (request_fd, result_fd):
                os.set_inheritable(fd, True)
            os.execv(sys.executable, [sys.executable, "-m", "kscope.worker.child", str(request_fd), str(result_fd), "--warm"])
        _fresh_randomness()
        from kscope.worker.child import serve

        code = serve(request_fd, result_fd, warm=True, drain_at_exit=False)
    except SystemExit as e:  # user code calling sys.exit() ends the worker, as in a fresh process
        code = _exit_status(e)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # the user's, torch's, multiprocessing's: as a fresh process's exit runs them
        except BaseException:
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)  # never back into the server's loop


def _exit_status(e: SystemExit) -> int:
    """What Python's own exit makes of sys.exit(code): None is 0, an int itself, anything else printed, 1."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def _fresh_randomness() -> None:
    """Seeds from the OS, as a fresh process has them: the server's would be every worker's (the same
    unseeded torch.rand at every save)."""
    import random

    import torch

    random.seed()
    torch.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
_USERS_NVML_CHECK = os.environ.get(NVML_CHECK)


def _restore_environment() -> None:
    """The worker sees the environment the app gave this server, not what the server set for itself."""
    if _USERS_NVML_CHECK is None:
        os.environ.pop(NVML_CHECK, None)
    else:
        os.environ[NVML_CHECK] = _USERS_NVML_CHECK


def cuda_driver_loaded() -> bool:
    """This process has loaded the CUDA driver library (a fork of it could not use CUDA)."""
    try:
        with open("/proc/self/maps") as f:
            return "libcuda.so" in f.read()
    except OSError:
        return False


def _warm() -> int:
    """Import and warm what every worker needs; inductor's compile_threads, to restore in each worker."""
    from kscope.engine import api

    api.preload()  # torch and the whole engine, imported once for every worker
    api.configure()
    compile_threads = api.compile_threads()
    api.set_compile_threads(1)  # no pool of compile processes (and their threads) to fork with
    api.warm()  # inductor's first-compile cost and its CPU probes, paid once for every worker
    return compile_threads


_APPS_FILTERS = list(warnings.filters)
"""The warning filters the worker gets back: not the server's two below."""


def main(argv: list[str]) -> int:
    die_with_parent()
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    warnings.filterwarnings("ignore", message=".*use of fork.*", category=DeprecationWarning)
    sock = socket.socket(fileno=int(argv[0]))
    os.environ[NVML_CHECK] = "1"  # before torch is imported: see the module's docstring
    from kscope.engine import api  # no torch

    api.own_inductor_cache()  # and kscope's own inductor cache (engine.inductor.kill_safe)
    compile_threads = _warm()
    fork_warm = not cuda_driver_loaded()
    if not fork_warm:
        print("[kscope] the fork server has loaded the CUDA driver: each worker starts fresh (slower)", flush=True)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)  # a child's exit wakes the select below
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    try:
        sock.send(b"ready")
        while True:
            readable, _, _ = select.select([sock, wake_r], [], [], 1.0)
            if wake_r in readable:
                os.read(wake_r, 4096)
            _reap(children, sock)
            if sock not in readable:
                continue
            message, fds, _, _ = socket.recv_fds(sock, 256, FDS_PER_WORKER)
            if not message:  # the app has gone
                return 0
            _, request_id, nice = message.split()
            sys.stdout.flush()
            sys.stderr.flush()
            session_r, session_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                _become_worker(fds, int(nice), compile_threads, [sock.fileno(), wake_r, wake_w, session_r], fork_warm,
                               session_w)
            children.add(pid)
            os.close(session_w)
            os.read(session_r, 1)  # its own session now (or it died: end of file)
            os.close(session_r)
            for fd in fds:
                os.close(fd)
            sock.send(b"forked %s %d" % (request_id, pid))
    except (BrokenPipeError, ConnectionResetError):
        return 0
    finally:  # stop the workers and reap them: a zombie left to an init that never reaps stays
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _reap(children: set[int], sock: socket.socket) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        sock.send(b"exit %d %d" % (pid, os.waitstatus_to_exitcode(status)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
