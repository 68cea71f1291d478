"""What kscope reads from inductor: its logs and metadata per graph (capture), bytes per node,
provenance, the compile modes and options, cache keys, autotune choices, kernel variants."""
