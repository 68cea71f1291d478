"""Measuring a call: torch.profiler's trace, times you can trust and their verdict, the traces kept
for --trace-dir."""
