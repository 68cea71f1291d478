"""A process of kscope's that dies with its parent (the worker, and the ranks it starts), and its
name in ps and top."""

from __future__ import annotations

import os


def die_with_parent() -> None:
    """Linux: have the kernel kill this process when kscope dies (an SSH session dropping,
    kill -9), so no worker is left holding a GPU. The parent starts us from its main thread:
    the signal fires when the thread that started us ends."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent is already gone
        os._exit(1)


def name_process(name: bytes) -> None:
    """Linux: this process's name (/proc/PID/comm, at most 15 bytes) in ps and top; a forked
    process's command line is still its parent's."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass
