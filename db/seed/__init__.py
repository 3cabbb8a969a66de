"""The fleet description: one deterministic model of organizations, clusters and shoots.

`model.py` is the shape; `generate.py` makes fleets of any size from a seed; `write.py` stores one in
the database. The simulator builds its Gardener world from the very same description, so the two
agree except where the description plants drift on purpose.
"""
