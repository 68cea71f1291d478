"""No kill leaves a compile cache that fails a later compile, and kscope never writes the user's
(issue 34; engine.inductor.kill_safe). Real kscope processes, real gcc, real torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.paths import REPO, SAMPLES, kscope_cmd

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("kill_compiles", REPO / "benchmarks" / "kill_compiles.py")
kill_compiles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kill_compiles)


def seed(env: dict) -> dict:
    out = subprocess.run([*kscope_cmd(), str(SAMPLES / "add_relu.py"), "--json", "--device", "cpu"],
                         capture_output=True, text=True, env=env, timeout=300)
    return json.loads(out.stdout)


def session_cache() -> Path:
    return Path(os.environ["KSCOPE_CACHE_DIR"])


def session_headers() -> Path:
    """The suite's inductor cache's precompiled headers, built here by a compile as kscope's engine
    compiles if no test built them yet."""
    import torch

    from kscope.engine.inductor.capture import configure_inductor

    configure_inductor()  # the suite's kscope cache, atomic builds
    torch.compile(lambda x: (x * 3).relu())(torch.ones(8))
    return session_cache() / "inductor" / "precompiled_headers"


def test_every_library_cut_short_is_rebuilt_and_the_users_cache_is_never_written(tmp_path):
    kscope_cache, user_cache, tmp = tmp_path / "kscope", tmp_path / "user-inductor", tmp_path / "tmp"
    tmp.mkdir()
    # the suite's precompiled headers (building one takes ~25 s of CPU), copied, not linked: this
    # test cuts them short
    if session_headers().is_dir():
        shutil.copytree(session_headers(), kscope_cache / "inductor" / "precompiled_headers")
    # the user's own inductor cache, and the default one torch would use under this TMPDIR
    env = {**os.environ, "KSCOPE_CACHE_DIR": str(kscope_cache), "TORCHINDUCTOR_CACHE_DIR": str(user_cache),
           "TMPDIR": str(tmp)}
    first = seed(env)
    assert first["errors"] == [] and first["compiled"]["kernels"][0]["name"] == "cpp_fused_add_relu_0"
    assert not user_cache.exists() and list(tmp.glob("torchinductor_*")) == []

    built = [p for p in (kscope_cache / "inductor").rglob("*") if p.suffix in (".so", ".gch")]
    assert any(p.suffix == ".so" for p in built)
    for path in built:  # as a build killed half-way leaves them
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)
    # a library cut short is seen as such; a precompiled header cut short keeps gcc's magic and is
    # found when gcc cannot read it (kill_safe retries without it)
    assert {str(p) for p in built if p.suffix == ".so"} <= set(kill_compiles.broken(kscope_cache / "inductor"))

    again = seed(env)
    assert again["errors"] == []
    assert [(k["name"], k["launches"]) for k in again["compiled"]["kernels"]] == [("cpp_fused_add_relu_0", 1.0)]
    assert again["compiled"]["bytes_read"] + again["compiled"]["bytes_written"] == 12_000_000
    removed = [n for n in again["notes"] if "removed" in n]
    assert any(".so" in n for n in removed), again["notes"]
    assert kill_compiles.broken(kscope_cache / "inductor") == []
    assert not user_cache.exists() and list(tmp.glob("torchinductor_*")) == []
    # a plain torch.compile in a fresh process on that cache: it works, and the vector ISA probes
    # kscope built again give the ISA this machine has (this process's pick, from probes of its own)
    from torch._inductor import cpu_vec_isa

    ok, isa = kill_compiles.plain_compile({**env, "TORCHINDUCTOR_CACHE_DIR": str(kscope_cache / "inductor"),
                                           "TMPDIR": str(tmp_path)})
    assert ok, isa
    assert isa == str(cpu_vec_isa.pick_vec_isa())


def test_kscope_killed_while_gcc_writes_leaves_nothing_that_fails_the_next_compile():
    """SIGINT (kscope kills its worker's process group, gcc too) and SIGKILL (gcc left to finish),
    each while a C++ compiler runs under kscope; benchmarks/kill_compiles.py does a dozen."""
    result = kill_compiles.run(2, session_cache(), rerun_last=True, spread_s=0.5, log=print, warm=False)
    assert [k["compiler_seen"] for k in result["kills"]] == [True, True], result["kills"]
    assert result["broken_after_kills"] == [] and result["reruns_with_errors"] == {}, result
    assert result["plain_compile"] and result["held"], result
