"""fleet-sim: a simulated Gardener landscape speaking the Kubernetes API (docs/simulator.md).

A pure Kubernetes fake: it plays a garden and every shoot's API server from the same fleet
description that seeds the database, and holds no database code. Its layers, each importing only
the ones below it:

- `sim/world/`: what exists (the garden, its shoots and their objects as compact records, the clock);
- `sim/api/`: how it is served over Kubernetes HTTP (the TLS app and its request pipeline, the
  garden's and the shoots' API servers, list semantics, rendering, credentials, injected faults,
  the request log);
- `sim/control/`: changing and reading it from outside (the Python control API, the same over HTTP,
  the HTTP client of that endpoint, the state dir, what a correct collector finds);
- running, at the top: `runner.py` (a process or a background thread) and `main.py` (the command).
"""
