"""What the docstrings of the samples that need a process group claim (samples/allreduce.py,
samples/ddp_mlp.py). tests/process/test_distributed.py runs each once with two ranks and checks
every rank here; tests/engine/test_samples.py, which checks every other sample, checks that each
sample has its claim somewhere."""

from __future__ import annotations


def check_allreduce(rank) -> None:
    """One all_reduce of the 1,000,000 fp32 between two generated kernels, its bytes apart from theirs."""
    (c,) = rank.compiled.collectives
    assert (c.count, c.bytes) == (1, 4_000_000)
    assert [k.bytes_total for k in rank.compiled.kernels] == [8_000_000, 8_000_000]
    assert (c.after, c.before) == tuple(k.name for k in rank.compiled.kernels)


def check_ddp_mlp(rank) -> None:
    """Every gradient in DDP's first bucket: one all_reduce of the 49,472 fp32 parameters in backward."""
    (c,) = rank.eager.collectives
    assert (c.count, c.bytes, c.phase) == (1, 197_888, "backward")


RANK_CLAIMS = {"allreduce.py": check_allreduce, "ddp_mlp.py": check_ddp_mlp}
