"""A compiled graph's inputs in the user's names (what a kernel that only copies says it copies),
from dynamo's sources for them, on real torch (CPU)."""

from __future__ import annotations

from support.paths import write_target
from torch._dynamo import source as s

from kscope.engine.compat.dynamo import user_words
from kscope.engine.run import run
from kscope.report.request import RunRequest

F32 = 4


def test_dynamo_sources_read_as_the_user_writes_them():
    model = s.GlobalSource("model")
    conv = s.DictGetItemSource(s.AttrSource(s.NNModuleSource(model), "_modules"), "conv")
    weight = s.DictGetItemSource(s.AttrSource(conv, "_parameters"), "weight")
    assert user_words(weight) == "model.conv.weight"
    assert user_words(s.DictGetItemSource(s.AttrSource(model, "_modules"), "0")) == "model.0"
    assert user_words(s.GetItemSource(s.LocalSource("batch"), "x")) == "batch['x']"
    assert user_words(s.AttrSource(s.LocalSource("cfg"), "scale")) == "cfg.scale"


def test_a_layout_copy_names_a_global_models_weight_as_the_user_does(tmp_path):
    path = write_target(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(16, 32, 3, padding=1, bias=False)

            def forward(self, x):
                return torch.relu(self.conv(x))

        model = Net().eval().requires_grad_(False)
        layers = nn.ModuleList([model])

        def run(x):
            return layers[0](x)

        def inputs(device):
            return (torch.randn(4, 16, 10, 10, device=device),)
        """,
    )
    r = run(RunRequest(str(path), "run", "cpu", calls=3))
    assert not r.errors, r.errors
    x, w = 4 * 16 * 10 * 10 * F32, 32 * 16 * 3 * 3 * F32
    # inductor's layout optimisation copies x and the weight to channels-last for the convolution
    (copy,) = [k for k in r.compiled.kernels if k.what]
    assert (copy.bytes_read, copy.bytes_written) == (x + w, x + w)
    assert copy.what.startswith("copies x, layers.0.conv.weight into channels-last layout"), copy.what
    assert "G[" not in copy.what and "_modules" not in copy.what
