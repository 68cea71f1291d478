"""Dispatch accounting: every ATen op a call runs, its bytes and FLOPs, tied to the launches the
profiler timed."""
