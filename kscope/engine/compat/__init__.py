"""The border around torch's private internals outside inductor (inductor's own are in
engine.inductor): dynamo's compile ids, sources and reset, the dispatcher's keys, the dispatch
mode base class and pytree. Every `torch._…` or `torch.*._…` name kscope uses lives here or
in engine.inductor (tests/unit/test_layers.py checks it); docs/architecture.md lists them and the
torch versions they were checked on."""
