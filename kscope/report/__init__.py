"""The Report: frozen, typed data and its JSON. The bottom layer: imports nothing else of kscope,
and no torch, rich or textual, so every process and every view can load it."""
