"""What kind of kernel inductor generated, read off its name (Triton) or its code (C++).

A sweep shows which kernel ran at each size: inductor picks a different kind of kernel as sizes
change, and the kind explains the time. On CUDA the kernel's name says it (`triton_per_` for a
persistent reduction that holds a whole row in registers, `triton_red_` for a looped one,
`triton_poi_` for pointwise). On the CPU every kernel is `cpp_fused_…` whatever the size; its
OpenMP pragmas say how it was parallelised: not at all for a small size, over the outer loop, or
with the reduction itself split across threads (per-thread partial results, `tmp_acc0_arr[tid]`)
when there are fewer rows than threads.
"""

from __future__ import annotations

import re

_TRITON = {
    "triton_per_": "persistent reduction",
    "triton_red_": "looped reduction",
    "triton_poi_": "pointwise",
    "triton_tem_": "template",
}
_SPLIT_ACROSS_THREADS = re.compile(r"tmp_acc\d+(?:_vec)?_arr\[tid\]")


def variant(name: str, code: str | None) -> str:
    """"persistent reduction", "parallel", "serial", ...; "" when neither name nor code tells."""
    for prefix, kind in _TRITON.items():
        if prefix in name:
            return kind
    if "cpp_" not in name or not code:
        return ""
    if "#pragma omp parallel" not in code and "#pragma omp for" not in code:
        return "serial"
    if _SPLIT_ACROSS_THREADS.search(code):
        return "reduction split across threads"
    return "parallel"
