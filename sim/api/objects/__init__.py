"""Renderers: full, schema-complete Kubernetes and Gardener objects from the simulator's records.

The official client (v37) parses typed responses with pydantic and rejects objects that miss a
required field, so every object here carries what a real API server sends, `managedFields`
included (they are a large share of a real object's size, which matters for memory benchmarks).
"""
