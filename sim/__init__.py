"""fleet-sim: a simulated Gardener landscape speaking the Kubernetes API (DESIGN.md §10, docs/simulator.md).

Where things are:

- the world: `world.py` (garden and shoots), `contents.py` (one shoot's objects), `generate.py`
  and `derive.py` (how they follow from the fleet), `records.py` and `store.py` (compact records
  in etcd key order), `shoots.py` (a shoot as the garden sees it), `fleets.py` (which fleet);
- the API: `server.py` (one aiohttp TLS app and its request pipeline), `garden_api.py`,
  `shoot_api.py`, `discovery.py`, `listing.py` (list semantics), `selectors.py`, `replies.py`,
  `status.py` (Status errors), `objects/` (rendering full objects), `auth.py`, `tls.py`,
  `kubeconfig.py`;
- control: `control.py` (the Python API), `admin.py` (the same over HTTP), `faults.py`,
  `requestlog.py`, `clock.py`, `expected.py` (what a correct collector finds);
- running: `runner.py` (a process or a background thread), `main.py` (the command), `poller.py`
  (the demo's status poller).
"""
