"""Inductor's probe of the CPU's vector ISAs, answered once per machine (engine.inductor.vec_isa):
a first process probes and keeps inductor's answer; the next one compiles with fewer probes and
picks the very ISA the probe picked; a user's own TORCHINDUCTOR_VEC_ISA_OK wins. Each in a fresh
process: the probe's answer is cached inside inductor for the life of a process."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="inductor probes x86 ISAs")

SCRIPT = """
import json, torch
from torch._inductor import cpu_vec_isa
probes = []
real = cpu_vec_isa.VecISA._probe_load
cpu_vec_isa.VecISA._probe_load = lambda self, path: probes.append(str(self)) or real(self, path)
from kscope.engine.inductor.capture import configure_inductor
from kscope.engine.inductor.vec_isa import remember_probe
configure_inductor()
cpu_vec_isa.pick_vec_isa()  # what inductor asks before its first C++ kernel
print(json.dumps({"picked": str(cpu_vec_isa.pick_vec_isa()), "probes": len(probes), "kept": remember_probe()}))
"""


def run(tmp_path, **env) -> dict:
    base = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_VEC_ISA_OK"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env={**base, "KSCOPE_CACHE_DIR": str(tmp_path), **env})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_second_process_probes_less_and_picks_what_the_probe_picked(tmp_path):
    first = run(tmp_path)
    assert first["probes"] > 0  # inductor built and loaded its probes
    # remember_probe: True or False after a probe; None is "nothing learned", what it says when it
    # cannot key or read the probe (no key, inductor's probe list not cached) or when a store
    # outside this test's folder already held True. After a probe in a fresh folder, a failure.
    assert first["kept"] is not None, f"inductor probed, and kscope kept nothing of it: {first}"
    if first["kept"] is False:
        pytest.skip(f"inductor's probe turned an ISA the CPU claims down here ({first}): nothing is trusted")
    assert json.loads((tmp_path / "vec_isa.json").read_text())
    second = run(tmp_path)
    # fewer: inductor's base probe of each ISA is answered; its own checks of extensions (VNNI,
    # AVX-512 BF16, AMX) run as before, and set what they set
    assert second["probes"] < first["probes"] and second["picked"] == first["picked"]


def test_the_users_own_switch_wins(tmp_path, monkeypatch):
    import torch._inductor.config as ic

    from kscope.engine.inductor import vec_isa

    (tmp_path / "vec_isa.json").write_text(json.dumps({vec_isa._key(): True}))  # kscope's answer: "all of them"
    monkeypatch.setenv("KSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TORCHINDUCTOR_VEC_ISA_OK", "0")
    monkeypatch.setattr(vec_isa, "_decided", [])  # as a fresh process
    before = ic.cpp.vec_isa_ok
    assert vec_isa.trust_probed() is False and ic.cpp.vec_isa_ok == before
    assert vec_isa.remember_probe() is None  # and nothing of theirs is kept as the machine's answer
