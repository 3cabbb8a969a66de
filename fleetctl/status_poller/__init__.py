"""The provisioning side's status poller, played for the demo next to fleet-sim.

`rules.py` (which shoot status a cluster gets from its shoot), `poller.py` (one round: list the
garden, write what changed; and the loop), `queries.py` with `queries.sql` (the privileged writes of
`tenant.cluster_sync_state`), `command.py` (`fleet status-poller`, which `fleet demo` starts).
"""
