"""The fleet description: one deterministic model of organizations, clusters and shoots.

`model.py` is the shape; `generate.py` makes fleets of any size from a seed, drawing ids, names and
versions from random streams of their own (`draws.py`); `scenarios.py` says what each generated
cluster is like and which drift it plants; `planted.py` holds the planted rows that draw nothing.
Both the database seed (`db/seed/write.py` stores a fleet) and the simulator (`sim/world/` builds its
Gardener world from one) are built from the very same description, so the two agree except where the
description plants drift on purpose. It is plain data with no I/O and imports nothing but the
kernel, so the simulator needs nothing of `db/`.
"""
