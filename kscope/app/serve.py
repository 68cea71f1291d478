"""`kscope serve FILE.py`: the live app in a browser, through Textualize's textual-serve.

textual-serve starts one app process per browser tab (a shell runs the command) and speaks to it
over a websocket. It has no authentication and no Origin check: whoever reaches the port starts
kscope on the file and drives it, so kscope binds the loopback interface unless told otherwise and
warns when it is. On Ctrl-C (or SIGTERM) the server stops; each tab's kscope gets "quit" from
textual-serve, or Ctrl-C itself from the terminal, and stops its worker; whatever is still alive
after GRACE_S is killed, so nothing the server started outlives it.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import signal
import sys
import time

GRACE_S = 3.0
"""How long the tabs' kscope processes get to stop their workers before they are killed."""

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def served_command(app_argv: list[str]) -> str:
    """The shell command textual-serve runs for each tab: this Python's kscope with the app's
    arguments. `exec`: the tab's process is kscope itself, not a shell waiting on it."""
    return "exec " + shlex.join([sys.executable, "-m", "kscope", *app_argv])


def exposed_warning(host: str, port: int) -> str:
    return (
        f"kscope: warning: serving on {host}:{port}, not a loopback address. textual-serve has no "
        "authentication: anyone who can reach this port starts kscope and drives it, and kscope runs "
        "the watched file's code as you. Prefer the default (127.0.0.1) and an SSH tunnel: "
        f"ssh -L {port}:127.0.0.1:{port} HOST"
    )


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _parent(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def descendants(pid: int) -> list[int]:
    """Every live process below pid, read from /proc (deepest last)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _stat(int(entry)) if entry.isdigit() else None
        if fields and fields[0] != "Z":  # a zombie is only waiting to be reaped
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def stop_tabs() -> None:
    """SIGTERM this process's children, the tabs' kscope: each stops its own workers, in order."""
    if os.path.isdir("/proc"):
        me = os.getpid()
        for pid in descendants(me):
            if _parent(pid) == me:
                _signal(pid, signal.SIGTERM)


def stop_descendants(grace_s: float = GRACE_S) -> None:
    """Stop the tabs, then SIGKILL whatever is left below this process after grace_s."""
    if not os.path.isdir("/proc"):
        return
    me = os.getpid()
    stop_tabs()
    deadline = time.monotonic() + grace_s
    while descendants(me) and time.monotonic() < deadline:
        _reap()
        time.sleep(0.05)
    for pid in descendants(me):
        _signal(pid, signal.SIGKILL)
    _reap()


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def serve(app_argv: list[str], host: str, port: int, title: str) -> int:
    """Serve kscope with app_argv until Ctrl-C; 0, or 2 when the address cannot be bound."""
    from textual_serve.server import Server

    class KscopeServer(Server):
        async def on_startup(self, app) -> None:  # instead of textual-serve's banner
            print(f"kscope: serving {title} on {self.public_url} (each browser tab runs its own kscope; "
                  "Ctrl-C stops)", flush=True)

        async def on_shutdown(self, app) -> None:
            # Before aiohttp waits (up to a minute) for the tabs' websockets to end: end them.
            print("kscope: stopping", flush=True)
            stop_tabs()

    server = KscopeServer(served_command(app_argv), host=host, port=port, title=f"kscope {title}")
    try:
        server.serve()
    except OSError as e:
        print(f"kscope: cannot serve on {host}:{port}: {e.strerror or e} (try another --port)", file=sys.stderr)
        return 2
    finally:
        stop_descendants()
    return 0
