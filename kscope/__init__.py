"""kscope: a live kernel inspector for PyTorch in the terminal."""

__version__ = "0.1.0"
