"""The kernel every process of fleet inventory shares: settings, database access, logs, the event loop,
names and labels, cluster status, drift kinds, the clock and the health port.

It imports nothing else of the project (an import contract in pyproject.toml holds it to that), so
the APIs, the collector, the simulator, the operator command and the benchmarks can all build on it.
"""
