"""The seed writer: a fleet description (`fleet_description/`) stored in the database.

`write.py` writes a generated fleet into an empty, migrated database (`fleet db seed`, the test
fixtures, the demo, the benchmarks). The description itself lives in `fleet_description/`, which the
simulator shares without depending on anything of `db/`.
"""
