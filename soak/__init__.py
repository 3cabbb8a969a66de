"""The soak: the whole system under load while faults are injected, then checks that nothing was lost.

A harness beside `bench/`, run as `python -m soak` (`make soak`); not part of `make test`, nothing
imports it. `__main__.py` (the command and the run), `system.py` (the demo's processes on free ports,
plus what faults need), `load.py` (the client processes), `faults.py` (the fault schedule),
`checks.py` with `queries.sql` (samples and verdicts). See docs/performance.md.
"""
