"""Inductor's and AOTAutograd's caches of compiled graphs, off where kscope must see a compile
happen (a repeated compile to read its code, every size of a sweep, N ranks compiling at once).
The settings are named once here (torch._inductor.config, torch._functorch.config)."""

from __future__ import annotations

from contextlib import contextmanager

_INDUCTOR = {"fx_graph_cache": False}
_FUNCTORCH = {"enable_autograd_cache": False}


@contextmanager
def caches_off():
    """Within: every graph compiles afresh, nothing is read from or written to the caches."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with inductor_config.patch(**_INDUCTOR), functorch_config.patch(**_FUNCTORCH):
        yield


def turn_caches_off() -> None:
    """caches_off() for the rest of the process."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    for config, settings in ((inductor_config, _INDUCTOR), (functorch_config, _FUNCTORCH)):
        for name, value in settings.items():
            setattr(config, name, value)
