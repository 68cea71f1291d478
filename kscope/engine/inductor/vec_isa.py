"""Inductor's probe of the CPU's vector instructions, answered once per machine instead of once per
process.

Before its first C++ kernel, every process inductor compiles in asks which vector ISAs it may
use: for each one the CPU claims (AVX2, AVX-512, VNNI, AMX) it builds a probe and loads it in a
fresh Python (`VecISA.check_build`): ten subprocesses, 2.7-2.8 s here, in every worker kscope
starts. The answer depends on the machine, its compiler and torch, not on the run. So kscope keeps
inductor's own answer per (torch, CPU claims, compiler) key, and where inductor found every ISA the
CPU claims usable, tells the next process so (`cpp.vec_isa_ok`, inductor's switch for "the ISAs
the CPU claims work"), which makes inductor pick exactly what its probe picked. Inductor's own
checks of extensions (VNNI, AVX-512 BF16, AMX) still run, and set what they set: 0.6-0.7 s. Where inductor's
probe turned one down, nothing is kept and every process probes as before. A user's own setting
of TORCHINDUCTOR_VEC_ISA_OK or `cpp.vec_isa_ok` always wins.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from pathlib import Path

from kscope.engine.machine.cache_dir import cache_dir, write_json


def _path() -> Path:
    return cache_dir() / "vec_isa.json"


def _key() -> str | None:
    """What the probe's answer depends on; None off x86 (the probe kscope leaves alone)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    import torch
    from torch._inductor import cpu_vec_isa
    from torch._inductor.cpp_builder import get_cpp_compiler

    compiler = shutil.which(get_cpp_compiler()) or get_cpp_compiler()  # "g++" as a path: a new compiler is a new key
    try:
        stamp = os.stat(compiler).st_mtime_ns
    except OSError:
        stamp = 0
    return json.dumps([torch.__version__, cpu_vec_isa.x86_isa_checker(), compiler, stamp])


def _read() -> dict:
    try:
        return json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}


def _user_set() -> bool:
    import torch._inductor.config as ic

    return os.environ.get("TORCHINDUCTOR_VEC_ISA_OK") is not None or ic.cpp.vec_isa_ok is not None


_decided: list[bool] = []
"""Whether this process trusts the kept answer, decided once: the switch is part of inductor's
cache key, so flipping it after a compile would make the next compile of the same graph a miss."""


def trust_probed() -> bool:
    """Before any compile: skip the probe where this machine's answer is known to be "all of
    them". True where it did. Decided at the first call of the process; later calls keep it."""
    import torch._inductor.config as ic

    if _decided:
        return _decided[0]
    _decided.append(False)
    if _user_set():
        return False
    key = _key()
    if key is None or _read().get(key) is not True:
        return False
    ic.cpp.vec_isa_ok = True
    _decided[0] = True
    return True


def remember_probe() -> bool | None:
    """After inductor probed in this process (its first C++ compile): keep whether it found every
    ISA the CPU claims usable. Returns what was kept; None where nothing was learned."""
    from torch._inductor import cpu_vec_isa

    if _decided[:1] == [True] or _user_set() or not cpu_vec_isa.valid_vec_isa_list.cache_info().currsize:
        return None  # kscope's own switch, or the user's: nothing was probed
    key = _key()
    if key is None:
        return None
    claims = cpu_vec_isa.x86_isa_checker()
    claimed = [str(isa) for isa in cpu_vec_isa.supported_vec_isa_list if all(f in claims for f in str(isa).split())]
    found = [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()]
    answer = found == claimed
    known = _read()
    if known.get(key) != answer:
        known[key] = answer
        write_json(_path(), known)
    return answer
