"""`fleet demo`: the whole system on embedded defaults, on loopback, until Ctrl-C.

`command.py` (the subcommand and its options), `system.py` (what it starts, in order), `layout.py`
(its address, ports and files), `processes.py` (its children: started, logged, stopped), `world.py`
(the changes it plays against the simulator) and `banner.py` (what it prints once everything answers).
The soak (`python -m soak`) runs the same system on free ports.
"""
