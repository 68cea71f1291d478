"""Everything that runs torch, in the worker process only: the target, the eager and compiled
halves, timing, sweeps. Never imports render, worker or app."""
