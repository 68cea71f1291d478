"""The process boundary: the worker's child main, the client that starts and talks to it, the
protocol between them, --once, and the rank processes of --nproc. Only the child and the ranks
import torch (lazily); the client side imports none."""
