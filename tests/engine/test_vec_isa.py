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
torch.compile(lambda x: (x + 1).relu())(torch.ones(8))
print(json.dumps({"picked": str(cpu_vec_isa.pick_vec_isa()), "probes": len(probes), "kept": remember_probe()}))
"""


def run(tmp_path, **env) -> dict:
    base = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_VEC_ISA_OK"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env={**base, "KSCOPE_CACHE_DIR": str(tmp_path), **env})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_second_process_compiles_without_probing_and_picks_what_the_probe_picked(tmp_path):
    first = run(tmp_path)
    assert first["probes"] > 0  # inductor built and loaded its probes
    if first["kept"] is not True:
        pytest.skip(f"inductor's probe turned an ISA the CPU claims down here ({first}): nothing is kept")
    assert json.loads((tmp_path / "vec_isa.json").read_text())
    second = run(tmp_path)
    # fewer: inductor's base probe of each ISA is answered; its own checks of extensions (VNNI,
    # AVX-512 BF16, AMX) run as before, and set what they set
    assert second["probes"] < first["probes"] and second["picked"] == first["picked"]
    # the user's own switch wins: no answer of kscope's is used, none is kept
    theirs = run(tmp_path, TORCHINDUCTOR_VEC_ISA_OK="0")
    assert theirs["picked"] != first["picked"] and theirs["kept"] is None
