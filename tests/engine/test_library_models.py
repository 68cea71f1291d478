"""A Hugging Face model, as a user runs one: its kernels are placed at the user's call, via the
library's own lines (transformers/models/gpt2/modeling_gpt2.py), and the library is never watched
nor re-imported. Runs where transformers is installed (the README names it, the one optional install
of the tests; `.ci/run` installs it; it is no dependency of kscope's), and says why it skips where
not: random weights from a small config, nothing downloaded."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from support.paths import at, write_target

from kscope.engine.run import run
from kscope.report.request import RunRequest

# Not imported here: collecting it would cost every test process a second (the target imports it).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None,
    reason="transformers is not installed: this test needs it, the tests' one optional install "
    "(the README's set-up: .venv/bin/pip install transformers, as .ci/run does)",
)

GPT2 = """\
import torch
from transformers import GPT2Config, GPT2LMHeadModel

config = GPT2Config(n_layer=1, n_head=2, n_embd=64, vocab_size=512, n_positions=64, bos_token_id=0, eos_token_id=0)
torch.manual_seed(0)
model = GPT2LMHeadModel(config).eval()


def logits(idx):
    return model(idx).logits


def loss(idx):
    return model(idx, labels=idx).loss


def inputs(device):
    model.to(device)
    return (torch.randint(0, 512, (2, 32), device=device),)
"""


def test_a_library_models_kernels_have_the_librarys_lines(tmp_path):
    """`logits`: dynamo traces the model from the user's frame. `loss`: transformers' loss_function
    logs a warning, a graph break inside the model, so dynamo compiles the model's forward as a
    frame of its own, whose stack traces start in the library: its kernels are at the user's line
    all the same (the frames that called that frame), as eager's ops are."""
    path = write_target(tmp_path, GPT2, "gpt2.py")
    first = run(RunRequest(str(path), "logits", "cpu", calls=2, no_grad=True))
    module = sys.modules["transformers.models.gpt2.modeling_gpt2"]
    report = run(RunRequest(str(path), "loss", "cpu", calls=2, no_grad=True))
    assert not first.errors and not report.errors, report.errors
    assert sys.modules["transformers.models.gpt2.modeling_gpt2"] is module  # a library stays imported
    library = "transformers/models/gpt2/modeling_gpt2.py"
    assert not first.compiled.graph_breaks
    assert any(b.place and b.place.library for b in report.compiled.graph_breaks), report.compiled.graph_breaks
    for r, call in ((first, at(path, "return model(idx).logits")), (report, at(path, "return model(idx, labels"))):
        for mode in (r.eager, r.compiled):
            placed = [p for k in mode.kernels for p in k.lines]
            assert placed and all((p.file, p.line) == (call.file, call.line) for p in placed), placed
            assert any(p.via is not None and p.via.file == library for p in placed)
    lines = module.__file__ and open(module.__file__).read().splitlines()
    via = next(p.via for k in report.compiled.kernels for p in k.lines if p.via and p.via.file == library)
    assert report.sources[library].splitlines()[via.line - 1] == lines[via.line - 1]
    assert report.files == (str(path),)  # the user's file alone is watched
