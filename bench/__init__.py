"""Benchmarks: figures measured side by side in one run, printed as ratios (not part of `make test`)."""
