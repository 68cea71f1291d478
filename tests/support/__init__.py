"""Helpers the tests share: paths and targets, a fixed session for snapshots, the live-app harness,
and the /proc scan for processes a test started."""
