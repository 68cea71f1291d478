"""Measurements of this machine kept across workers (kscope's cache): the best of them, and how
many were taken undisturbed.

The best, because a shared machine only ever runs slower than it can (another tenant, a lower
clock): the highest measurement is the nearest to its peak. Undisturbed, because a measurement
taken while other work had the cores (a test suite, a compile beside it) is low, and a count that
reached its goal on such measurements kept a low roof for good ("103% of L3" in the app, L3 kept
at 20 GB/s where a quiet worker measures 36-40, issue 36): a measurement in which the measuring
threads waited past BUSY of the CPU time they wanted for a CPU (engine.measure.cpu_wait) still
raises the best if it is higher, but does not count, so later workers measure again.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable

import torch

from kscope.engine.machine.cache_dir import cache_dir, write_json
from kscope.engine.measure.cpu_wait import WaitShare
from kscope.engine.measure.timing import BUSY


def machine_key() -> str:
    """What a measurement depends on: the CPU's model, its count, the threads torch uses, torch itself."""
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return json.dumps([model, os.cpu_count(), torch.get_num_threads(), torch.__version__])


def machine_known(what: str, file: str) -> tuple[float, int]:
    """The best measurement of `what` kept for this machine, and how many undisturbed ones there
    were ((0.0, 0): none)."""
    best, times = _read(file).get(_key(what), (0.0, 0))
    return best, times


def machine_best(measured: float, what: str = "", file: str = "peak_flops.json", counts: bool = True) -> tuple[float, int]:
    """The best of every worker's measurement of `what` on this machine, with this one, and how
    many undisturbed ones there were (this one among them when `counts`)."""
    known = _read(file)
    best, times = known.get(_key(what), (0.0, 0))
    best, times = max(best, measured), times + (1 if counts else 0)
    known[_key(what)] = (best, times)
    write_json(cache_dir() / file, known)
    return best, times


def measured_quietly(measure: Callable[[], float | None]) -> tuple[float | None, float | None]:
    """measure(), and the share of the CPU time this process's threads wanted that they spent
    waiting for it meanwhile (None: the kernel does not say)."""
    waited = WaitShare()
    value = measure()
    return value, waited.share()


def disturbed(share: float | None) -> bool:
    """Past BUSY; unknown counts as undisturbed (else a machine without schedstat measures for ever)."""
    return share is not None and share > BUSY


def kept_source(times: int, share: float | None) -> str:
    """How the kept best came about, this worker's measurement among them: 'the best of 3
    undisturbed measurements on this machine' and, when this one was disturbed, 'and a disturbed
    one (its threads waited 40% of the time for a CPU)'."""
    out = f"the best of {times} undisturbed measurement{'s' * (times != 1)} on this machine"
    if disturbed(share):
        out += f" and this worker's disturbed one (its threads waited {share:.0%} of the time for a CPU)"
    return out


def _key(what: str) -> str:
    return machine_key() + (f" {what}" if what else "")


def _read(file: str) -> dict:
    try:
        return json.loads((cache_dir() / file).read_text())
    except (OSError, ValueError):
        return {}
