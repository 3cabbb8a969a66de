"""The simulated world: what exists, without any I/O.

`world.py` (garden and shoots), `contents.py` (one shoot's objects), `generate.py` and `derive.py`
(how they follow from the fleet), `records.py` and `store.py` (compact records in etcd key order),
`shoots.py` (a shoot as the garden sees it), `fleets.py` (which fleet), `clock.py` (the simulator's
time, which tests move forward).
"""
