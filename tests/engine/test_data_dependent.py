"""Data-dependent sizes are counted at the sizes that ran (issue 22, item 8, bullet 2), on real
torch (CPU); every number derived here from the shapes and the routing.

A top-k routing: 64 tokens of 32 floats, each routed to expert 0 and, every other token, to one of
experts 1-3 (the rest drop their second choice: expert 4 is none). Per expert, `nonzero` picks its
tokens (a count inductor knows only as it runs: an unbacked size), `x[idx] @ W[e]` multiplies them
(an mm of data-dependent rows) and `index_add_` adds them back. Inductor's hint for such a size is
a guess (8192 rows); kscope reads the counts off the shapes recorded for one call of the library
calls, and has inductor count every kernel again at them. Each mode's total is checked against the
shapes too, not only against the sum of its rows (the code's own sum)."""

from __future__ import annotations

import textwrap

from support.runs import run_ok

from kscope.engine.run import run
from kscope.report.request import RunRequest

N, D, H, E = 64, 32, 16, 4
F32, I64, BOOL = 4, 8, 1

ROUTING = f"""\
import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True
N, D, H, E = {N}, {D}, {H}, {E}


def moe(x, chosen, w):
    out = torch.zeros(x.shape[0], H)
    for e in range(E):
        idx = (chosen == e).nonzero()[:, 0]
        out.index_add_(0, idx, x[idx] @ w[e])
    return out


def inputs(device):
    i = torch.arange(N)
    second = torch.where(i % 2 == 0, 1 + i % 3, torch.full_like(i, E))
    chosen = torch.stack([torch.zeros_like(i), second], 1)
    torch.manual_seed(0)
    return torch.randn(N, D), chosen, torch.randn(E, D, H)
"""


def _counts() -> list[int]:
    """Tokens per expert, as the routing above chooses them: every token picks expert 0; an even
    token also picks 1 + i % 3."""
    return [N] + [sum(1 for i in range(0, N, 2) if 1 + i % 3 == e) for e in range(1, E)]


def test_a_routing_is_counted_at_the_tokens_each_expert_got(tmp_path):
    """Twice: the second run (a save) finds the graph in inductor's cache, which logs no graph;
    it is counted again from the one kscope kept."""
    path = tmp_path / "routing.py"
    path.write_text(textwrap.dedent(ROUTING))
    for _ in range(2):
        _check_routing(run(RunRequest(str(path), None, "cpu", calls=2)))


def _check_routing(r) -> None:
    assert not r.errors, r.errors
    counts = _counts()
    assert counts == [64, 11, 10, 11]  # unequal: a row right for one expert's count is wrong for another's
    rows = {k.name: k for k in r.compiled.kernels}
    assert r.compiled.graphs == 1 and not [n for n in r.notes if "unknown" in n], r.notes

    # Library calls, from their recorded shapes: mm reads the tokens and the expert's weights and
    # writes a row per token; nonzero reads the N x 2 mask and writes (count, 2) int64 indices.
    mm, nonzero = rows["aten::mm"], rows["aten::nonzero"]
    mm_bytes = (sum(u * D * F32 + D * H * F32 for u in counts), sum(u * H * F32 for u in counts))
    nonzero_bytes = (E * N * 2 * BOOL, sum(u * 2 * I64 for u in counts))
    assert mm.launches == nonzero.launches == E
    assert (mm.bytes_read, mm.bytes_written) == mm_bytes
    assert (nonzero.bytes_read, nonzero.bytes_written) == nonzero_bytes

    # Generated kernels, inductor's count at the counts that ran: the masks (chosen == e: reads
    # chosen, writes N x 2 bools per expert), the zeros, and per expert a gather of its tokens
    # (reads its indices and rows, writes the rows) and an index_add (reads the indices, the mm's
    # rows and the rows of `out` it adds to, writes those).
    generated = [k for k in r.compiled.kernels if k.kind == "kernel"]
    generated_bytes = (
        N * 2 * I64 + sum((u * 2 * I64 + u * D * F32) + (u * 2 * I64 + 2 * u * H * F32) for u in counts),
        E * N * 2 * BOOL + N * H * F32 + sum(u * D * F32 + u * H * F32 for u in counts),
    )
    assert (sum(k.bytes_read for k in generated), sum(k.bytes_written for k in generated)) == generated_bytes
    assert r.compiled.bytes_read == sum(k.bytes_read for k in r.compiled.kernels)
    # The mode's total from the shapes: the library calls and the generated kernels, nothing else
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == tuple(map(sum, zip(mm_bytes, nonzero_bytes, generated_bytes)))

    # Eager, op by op at the counts that ran: zeros writes `out`; per expert, eq reads `chosen`
    # and writes N x 2 bools, nonzero reads them and writes (count, 2) indices, x[idx] reads its
    # column of indices (a strided view: its count of int64) and the rows, writes them, the mm as
    # compiled, and index_add_ reads the indices, the mm's rows and the whole of `out` (an
    # in-place op reads and writes its tensor), writes `out`.
    out, chosen, masks = N * H * F32, N * 2 * I64, N * 2 * BOOL
    eager_read = E * chosen + E * masks + sum(u * I64 + u * D * F32 for u in counts) + mm_bytes[0] + sum(
        u * I64 + u * H * F32 + out for u in counts)
    eager_written = out + E * masks + nonzero_bytes[1] + sum(u * D * F32 for u in counts) + mm_bytes[1] + E * out
    assert (r.eager.bytes_read, r.eager.bytes_written) == (eager_read, eager_written)


FALLBACK = f"""\
import torch

N, D, H, E = {N}, {D}, {H}, {E}


@torch.library.custom_op("kstest::grouped", mutates_args=())
def grouped(x: torch.Tensor, w: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0], w.shape[-1])
    start = 0
    for e, n in enumerate(counts.tolist()):
        torch.mm(x[start:start + n], w[e], out=out[start:start + n])
        start += n
    return out


@grouped.register_fake
def _(x, w, counts):
    return x.new_empty(x.shape[0], w.shape[-1])


def moe(x, g, w, counts):
    h = x @ g
    if torch.compiler.is_compiling():  # a library's fallback for compiled code: eager never runs it
        return grouped(h, w, counts)
    return torch.cat([c @ w[e] for e, c in enumerate(h.split(counts.tolist()))])


def inputs(device):
    torch.manual_seed(0)
    return torch.randn(N, D), torch.randn(D, D), torch.randn(E, D, H), torch.tensor([30, 2, 20, 12])
"""


def test_a_custom_op_only_compiled_code_calls_is_counted_from_its_recorded_shapes(tmp_path):
    """Qwen2-MoE's grouped matmul: compiled code calls a custom op whose body runs one mm per
    expert on that expert's rows (counts read as it runs) into a zeroed output. Its mm's are its
    row (never the graph's own `x @ g`, whose bytes they took before), and its zeros are counted."""
    counts = [30, 2, 20, 12]
    path = tmp_path / "fallback.py"
    path.write_text(textwrap.dedent(FALLBACK))
    r = run_ok(path)
    rows = {k.name: k for k in r.compiled.kernels}
    mm, body = rows["aten::mm"], rows["kstest::grouped"]
    assert mm.launches == 1 and (mm.bytes_read, mm.bytes_written) == (N * D * F32 + D * D * F32, N * D * F32)
    assert body.launches == E + 1  # an mm per expert, and the zeros
    assert body.bytes_read == sum(n * D * F32 + D * H * F32 for n in counts)
    assert body.bytes_written == N * H * F32 + sum(n * H * F32 for n in counts)
    assert r.compiled.bytes_read is not None and r.compiled.bytes_written is not None
    # The totals from the shapes. Compiled: x @ g, then the custom op (per expert its rows of h and
    # its weight -> its rows of the output; the zeroed output). Eager: x @ g, an mm per expert on
    # its rows, and cat (reads the experts' outputs, writes them as one).
    h_bytes, out = N * D * F32, N * H * F32
    x_at_g = (N * D * F32 + D * D * F32, h_bytes)
    per_expert = (sum(n * D * F32 + D * H * F32 for n in counts), out)
    assert (r.compiled.bytes_read, r.compiled.bytes_written) == (x_at_g[0] + per_expert[0], x_at_g[1] + out + per_expert[1])
    assert (r.eager.bytes_read, r.eager.bytes_written) == (x_at_g[0] + per_expert[0] + out, x_at_g[1] + per_expert[1] + out)


def test_an_ops_bytes_from_its_recorded_arguments():
    """The rule per op family (ran_sizes.op_bytes), on arguments as the profiler records them."""
    from kscope.engine.inductor.ran_sizes import op_bytes

    mm = {"Input Dims": [[5, 32], [32, 16], [5, 16]], "Input type": ["float", "float", "float"]}
    assert op_bytes("aten::mm", mm) == ((5 * 32 + 32 * 16) * F32, 5 * 16 * F32)
    addmm = {"Input Dims": [[16], [5, 32], [32, 16], [], []], "Input type": ["float"] * 3 + ["Scalar"] * 2}
    assert op_bytes("aten::addmm", addmm) == ((16 + 5 * 32 + 32 * 16) * F32, 5 * 16 * F32)
    zeros = {"Input Dims": [[], [], [], [], []], "Input type": ["ScalarList", "Scalar", "", "", ""],
             "Concrete Inputs": ["[64, 32]", "6", "", "", ""]}  # 6: c10::ScalarType::Float
    assert op_bytes("aten::zeros", zeros) == (0, 64 * 32 * F32)
    assert op_bytes("aten::nonzero", {"Input Dims": [[64, 2]], "Input type": ["bool"]}) is None  # its count is not recorded
    assert op_bytes("aten::mm", None) is None
