"""The memory roofs: which level a working set is judged against, and every percentage above 100
names the roof it exceeds and a reason (report.roofs, render.view). No torch."""

from __future__ import annotations

from dataclasses import replace

from kscope.render.view import of_peak, roofs_note
from kscope.report.codec import report_from_dict, report_to_dict
from kscope.report.model import Kernel, ModeResult, Report
from kscope.report.roofs import MAIN_MEMORY, Roof, judged

L2 = Roof("L2", 114.0, 4 << 20, "measured")
L3 = Roof("L3", 93.0, 105 << 20, "measured")
MEM = Roof(MAIN_MEMORY, 29.0, None, "measured")
ROOFS = (Roof("L1d", None, 96 << 10, "unknown", measured=False), L2, L3, MEM)


def test_a_working_set_is_judged_against_the_smallest_level_that_holds_it():
    assert judged(ROOFS, 12_000_000).roof == L3
    assert judged(ROOFS, 12_000_000).why == "L3-resident: 12 MB of 110 MB"
    assert judged(ROOFS, 4 << 20).roof == L2  # exactly the capacity still fits
    assert judged(ROOFS, (4 << 20) + 1).roof == L3
    assert judged(ROOFS, 50_000).roof == L2  # L1's rate is unknown: the next level that has one
    assert judged(ROOFS, 400_000_000).roof == MEM
    assert judged(ROOFS, 400_000_000).why == "working set 400 MB: larger than every cache"


def test_cold_and_unknown_working_sets_are_judged_against_main_memory_and_say_so():
    assert (judged(ROOFS, 12_000_000, cold=True).roof, judged(ROOFS, 12_000_000, cold=True).why) == (
        MEM, "--cold: caches flushed between calls")
    assert (judged(ROOFS, None).roof, judged(ROOFS, None).why) == (MEM, "working set unknown")
    assert judged((), 12_000_000) is None
    old = Roof(MAIN_MEMORY, 50.0, None, "a 256 MB copy", measured=False)  # a Report before schema 13
    assert judged((), 12_000_000, main_memory=old).roof == old


def test_above_a_roof_the_reason_names_the_faster_level():
    assert judged(ROOFS, 12_000_000).above() == "part of its data may sit in the faster L2 (114 GB/s)"
    assert "faster cache" in judged(ROOFS, 50_000).above()  # nothing faster known


def seed(eager_gbps: float, compiled_gbps: float, **fields) -> Report:
    def mode(gbps, ws):
        k = Kernel("k", 1, 12_000_000 / (gbps * 1e3), 8_000_000, 4_000_000)
        return ModeResult(1, 8_000_000, 4_000_000, k.time_us, (k,), working_set_bytes=ws)

    return Report("f.py", "f", eager=mode(eager_gbps, 16_000_000), compiled=mode(compiled_gbps, 12_000_000),
                  peak_gbps=MEM.gbps, roofs=ROOFS, **fields)


def test_a_percentage_names_its_roof_and_above_100_says_why():
    r = seed(40.0, 120.0)
    assert of_peak(40.0, r.judged(r.eager)) == "40.0 GB/s (43% of the L3's 93 GB/s)"
    above = of_peak(120.0, r.judged(r.compiled))
    assert above == ("120.0 GB/s (129% of the L3's 93 GB/s: above it, part of its data may sit in the faster "
                     "L2 (114 GB/s))")
    note = roofs_note(r)
    assert note == ("  (roof L3 93 GB/s: working set 16.0 MB → 12.0 MB of 110.1 MB; above it: part of its data may "
                    "sit in the faster L2 (114 GB/s))")
    legacy = replace(r, roofs=(), compiled=replace(r.compiled, kernels=r.eager.kernels))  # a Report before 13
    assert roofs_note(legacy).startswith("  (main memory 29 GB/s, the only roof known; above it")
    cold = replace(r, cold=True)
    assert of_peak(40.0, cold.judged(cold.eager)) == "40.0 GB/s (138% of the main memory's 29 GB/s: above it, " \
        "part of its data may sit in the faster L3 (93 GB/s))"


def test_the_json_carries_the_roofs_the_working_set_and_each_kernel_s_roof():
    r = seed(40.0, 60.0)
    d = report_to_dict(r)
    assert [x["level"] for x in d["roofs"]] == ["L1d", "L2", "L3", MAIN_MEMORY]
    assert d["compiled"]["working_set_bytes"] == 12_000_000
    assert d["compiled"]["roof"] == {"level": "L3", "gbps": 93.0, "why": "L3-resident: 12 MB of 110 MB"}
    (k,) = d["compiled"]["kernels"]
    assert (k["roof_level"], k["roof_gbps"]) == ("L3", 93.0)
    back = report_from_dict(d)
    assert back.roofs == r.roofs and back.compiled.working_set_bytes == 12_000_000 and back.cold is False
