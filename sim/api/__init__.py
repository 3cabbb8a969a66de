"""The simulator's Kubernetes API: everything that answers a request on its TLS port.

At the top, `server.py` (the aiohttp app and its request pipeline), `simulator.py` (the served state
in one place) and `requestlog.py` (what clients asked). Below them, by what they serve:

- `apiservers/`: the two kinds of Kubernetes API server, the garden's and a shoot's;
- `prometheus/`: each shoot's Prometheus (its monitoring secret, its kube-state-metrics series, the
  PromQL subset and the query API);
- `machinery/`: the Kubernetes API rules both API servers share (paths and parsed requests, the
  kinds each serves, discovery, list semantics, selectors, replies, the list cache, Status errors);
- `objects/`: rendering full Kubernetes and Gardener objects from the world's records;
- `credentials/`: bearer tokens, TLS and the kubeconfigs handed out;
- `faults/`: what goes wrong on purpose (injected faults and hostile answers).
"""
