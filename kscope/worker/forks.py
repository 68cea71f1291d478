"""The app's side of worker.forkserver: start it, ask it for workers, learn how each one ends.
No torch here.

A forked worker is not this process's child, so its exit status comes from the server, read by a
thread of ours into the worker's handle (Forked, the part of subprocess.Popen that
worker.client uses). The server answers a request for a worker only once it has imported
torch: until then the handle has no pid, and killing it means killing it on arrival.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

FORKSERVER_MODULE = "kscope.worker.forkserver"
CLOSE_WAIT_S = 0.5
"""At close, how long a server reading requests may take to stop its workers and reap them."""


class Forked:
    """A worker forked by the server: pid (None until the server has forked it), poll(), wait(), kill()."""

    def __init__(self, server: ForkServer):
        self._server = server
        self.pid: int | None = None
        self.returncode: int | None = None
        self._kill_on_arrival = False

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self._server._cond:
            if not self._server._cond.wait_for(lambda: self.returncode is not None, timeout):
                raise subprocess.TimeoutExpired(FORKSERVER_MODULE, timeout)
            return self.returncode

    def kill(self) -> None:
        with self._server._cond:
            if self.returncode is not None:
                return
            if self.pid is None:  # not forked yet: it goes the moment it is
                self._kill_on_arrival = True
                self.returncode = -signal.SIGKILL
                self._server._cond.notify_all()
                return
            pid = self.pid
        _kill(pid)


def _kill(pid: int) -> None:
    """SIGKILL to the worker's process group (what it started too), or to it alone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    except PermissionError:
        pass


class ForkServer:
    """worker.forkserver, started at the first fork() and again after it has died (a torch that
    fails to import, say: each fork() then tries once more). Its stdout and stderr go to
    `output_fd`."""

    command = (sys.executable, "-m", FORKSERVER_MODULE)
    """How the server is started (its socket's fd follows)."""

    def __init__(self, output_fd: int):
        self.output_fd = output_fd
        self.proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._cond = threading.Condition()
        self._ready = False  # the server has imported torch and reads requests
        self._closed = False
        self._parent_done = threading.Event()  # the current server's: its parent thread may end
        self._pending: dict[int, Forked] = {}  # request id -> handle, until the server forks it
        self._by_pid: dict[int, Forked] = {}
        self._next_id = 0

    def fork(self, fds: tuple[int, int, int], nice: int = 0) -> Forked:
        """A worker on these fds (request read end, result write end, output), which the caller
        may close once this returns. Never waits on the server."""
        with self._cond:
            handle = Forked(self)
            if self._closed:  # the session is stopping: no worker any more
                handle.returncode = -signal.SIGKILL
                return handle
            if self._sock is None:
                self._start()
            self._next_id += 1
            self._pending[self._next_id] = handle
            sock = self._sock
            request_id = self._next_id
        try:
            socket.send_fds(sock, [b"fork %d %d" % (request_id, nice)], list(fds))
        except OSError:  # the server has just died: the handle ends with it (_ended)
            pass
        return handle

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        started, failed, done = threading.Event(), [], threading.Event()

        def parent() -> None:
            # The server dies with the thread that started it (worker.lifetime): a thread of its
            # own that lasts until close(), so the session thread ending first (at quit) does not
            # kill the server before it has reaped its workers (a zombie where init never reaps).
            try:
                self.proc = subprocess.Popen(
                    [*self.command, str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=self.output_fd,
                    stderr=self.output_fd,
                    start_new_session=True,
                )
            except BaseException as e:  # EMFILE, EAGAIN: raised in the caller, as Popen would
                failed.append(e)
                return
            finally:
                started.set()
            done.wait()

        self._parent_done = done
        threading.Thread(target=parent, daemon=True, name="kscope-forks-parent").start()
        started.wait()
        theirs.close()
        if failed:
            ours.close()
            raise failed[0]
        self._sock, self._ready = ours, False
        threading.Thread(target=self._read, args=(ours, self.proc, done), daemon=True, name="kscope-forks").start()

    def _read(self, sock: socket.socket, proc: subprocess.Popen, parent_done: threading.Event) -> None:
        while True:
            try:
                message = sock.recv(256)
            except OSError:
                message = b""
            if not message:
                break
            kind, *fields = message.split()
            with self._cond:
                if kind == b"ready":
                    self._ready = True
                elif kind == b"forked":
                    self._forked(int(fields[0]), int(fields[1]))
                elif kind == b"exit":
                    handle = self._by_pid.pop(int(fields[0]), None)
                    if handle is not None and handle.returncode is None:
                        handle.returncode = int(fields[1])
                self._cond.notify_all()
        self._ended(sock, proc)
        parent_done.set()  # that server is gone: its parent thread need not wait any more

    def _forked(self, request_id: int, pid: int) -> None:
        handle = self._pending.pop(request_id, None)
        if handle is None:
            return
        handle.pid = pid
        if handle._kill_on_arrival:
            _kill(pid)
        else:
            self._by_pid[pid] = handle

    def _ended(self, sock: socket.socket, proc: subprocess.Popen) -> None:
        """The server is gone: its workers died with it (worker.lifetime), and the ones it never
        forked end with its own exit status (the traceback of a torch that fails to import)."""
        try:
            status = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        with self._cond:
            for handle in self._pending.values():
                handle.returncode = status if status is not None else -signal.SIGKILL
            for handle in self._by_pid.values():
                if handle.returncode is None:
                    handle.returncode = -signal.SIGKILL
            self._pending.clear()
            self._by_pid.clear()
            if self._sock is sock:
                self._sock = None
            self._cond.notify_all()
        sock.close()

    def close(self) -> None:
        """Stop the server and every worker it forked, now. A server reading requests stops
        when the socket closes and reaps its workers first; one still importing torch has none."""
        with self._cond:
            proc, sock, ready = self.proc, self._sock, self._ready
            self._closed = True
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if proc is not None and proc.poll() is None:
            try:
                proc.wait(timeout=CLOSE_WAIT_S if ready else 0)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait()
        self._parent_done.set()
        try:
            os.close(self.output_fd)  # the pane's pump of the server's output ends
        except OSError:
            pass
