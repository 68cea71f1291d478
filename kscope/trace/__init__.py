"""Chrome traces (a live profile or a saved file) -> launches, collectives, ranks. Pure Python:
no torch, rich or textual. Imports only kscope.report."""
