"""Each simulated shoot's Prometheus, the collector's second source, from the same world as its API server.

`monitoring.py` (the `<shoot>.monitoring` secret in the garden, the basic-auth password behind it, and
which stack each Prometheus plays), `gardener_ksm.py` (the series a stock Gardener shoot Prometheus
holds: the nodes and kube-system), `kube_state_metrics.py` (a landscape's fuller kube-state-metrics,
and the series of either stack), `history.py` (what each Prometheus has scraped), `promql.py` (the
PromQL subset it answers, parsed), `evaluation.py` (a parsed query evaluated by Prometheus's rules),
`http_api.py` (`GET /api/v1/query` and `/api/v1/status/config` behind the ingress's basic auth) and
`exposition.py` (the kube-state-metrics page a real Prometheus scrapes).
"""
