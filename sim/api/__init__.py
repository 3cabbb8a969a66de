"""The simulator's Kubernetes API: everything that answers a request on its TLS port.

`simulator.py` (the served state in one place), `server.py` (the aiohttp app and its request
pipeline), `garden_api.py` and `shoot_api.py` (the two kinds of API server), `discovery.py`,
`listing.py` (list semantics), `selectors.py`, `replies.py`, `listcache.py`, `status.py` (Status
errors), `objects/` (rendering full objects), `kinds.py` (what each serves), `paths.py` and
`request.py` (a parsed request), `auth.py` (tokens), `tls.py`, `kubeconfig.py`, `faults.py` (what
goes wrong on purpose), `requestlog.py` (what clients asked).
"""
