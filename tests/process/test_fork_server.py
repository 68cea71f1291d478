"""worker.forkserver, the live app's warm parent of workers, on its own: a worker it forks runs a
request and sees the environment the app gave the server; where forking could not use CUDA (the
server loaded the CUDA driver), each worker is a fresh process instead, and runs as well."""

from __future__ import annotations

import os
import select
import sys
import time

import pytest
from support.marked_processes import WORKER_NAME
from support.paths import SAMPLES

from kscope.report.request import RunRequest
from kscope.worker.client import Worker
from kscope.worker.forks import ForkServer

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

DRIVER_LOADED = (sys.executable, "-c", "import sys, kscope.worker.forkserver as f; f.cuda_driver_loaded = lambda: True; "
                 "sys.exit(f.main(sys.argv[1:]))")
"""The server as it is where importing torch loaded the CUDA driver (no GPU here to make it so)."""


class DriverLoaded(ForkServer):
    command = DRIVER_LOADED


def _cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode()


def _output(fd: int, wanted: bytes, timeout: float = 10.0) -> bytes:
    """What the worker wrote, once it holds `wanted` (or `timeout` passed)."""
    got, deadline = b"", time.monotonic() + timeout
    while wanted not in got and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            got += os.read(fd, 65536)
    return got


SAYS_ENV = ("import os, torch\nprint('NVML check:', os.environ.get('PYTORCH_NVML_BASED_CUDA_CHECK'), flush=True)\n"
            "print('random:', torch.rand(1).item(), flush=True)\n")
"""Put before the seed's code: what the worker's Python sees of the variable the server sets for itself,
and an unseeded random number (a fresh process's seed comes from the OS)."""


def _seed_report(worker: Worker, path):
    worker.send(RunRequest(str(path), None, "cpu", timeout=120, calls=2))
    while (message := worker.read(180)) is not None and message.type != "report":
        pass
    assert message is not None, "no report from the worker"
    return message.report


@pytest.mark.parametrize("server, forked", [(ForkServer, True), (DriverLoaded, False)], ids=["forked", "fresh"])
def test_a_worker_of_the_fork_server_runs_the_seed_and_sees_the_apps_environment(server, forked, tmp_path):
    target = tmp_path / "add_relu.py"
    target.write_text(SAYS_ENV + (SAMPLES / "add_relu.py").read_text())
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)  # nobody reads the output here: it must not fill and block
    forks = server(os.dup(write_end))
    worker = Worker(stdout=write_end, warm=True, forks=forks)
    try:
        worker.start()
        worker.wait_ready()
        pid = worker.proc.pid
        with open(f"/proc/{pid}/comm") as f:
            name = f.read().strip()
        cmdline = _cmdline(pid)
        if forked:  # the server's own command line, and kscope's name for a worker
            assert name == WORKER_NAME and "kscope.worker.forkserver" in cmdline, (name, cmdline)
        else:  # a fresh worker.child in the forked process's place
            assert "kscope.worker.child" in cmdline and "--warm" in cmdline, cmdline
        report = _seed_report(worker, target)
        assert not report.errors, report.errors
        assert (report.eager.launches, report.compiled.launches) == (2, 1)
        assert report.compiled.kernels[0].name == "cpp_fused_add_relu_0"
        said = _output(read_end, b"random:")
        assert b"NVML check: None" in said, said  # the server's setting for itself, not the app's
        if forked:  # a second worker of the same server draws other random numbers, as a fresh process would
            other = Worker(stdout=write_end, warm=True, forks=forks)
            other.start()
            other.wait_ready()
            assert not _seed_report(other, target).errors
            said += _output(read_end, b"random:")
            other.kill()
            draws = [line for line in said.splitlines() if line.startswith(b"random:")]
            assert len(draws) == 2 and draws[0] != draws[1], draws
    finally:
        worker.kill()
        forks.close()
        os.close(write_end)
        os.close(read_end)
    assert worker.proc.returncode is not None
