"""Benchmarks: scripts that print their figures (never asserted in tests)."""
