"""Each simulated shoot's Prometheus, the collector's second source, from the same world as its API server.

`monitoring.py` (the `<shoot>.monitoring` secret in the garden and the basic-auth password behind it),
`kube_state_metrics.py` (the series the shoot's Prometheus holds), `promql.py` (the PromQL subset it
answers, parsed), `evaluation.py` (a parsed query evaluated by Prometheus's rules) and `http_api.py`
(`GET /api/v1/query` behind the ingress's basic auth).
"""
