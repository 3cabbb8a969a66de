"""What goes wrong on purpose: injected faults and the hostile answers no real API server sends.

`injected.py` (the fault table: what fails, where, for how many requests) and `hostile.py` (answers a
hostile tenant's API server could send to harm a collector). The pipeline in `sim/api/server.py`
applies both.
"""
