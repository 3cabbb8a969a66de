"""The second collection source: each shoot's own Prometheus (INVENTORY_SOURCE=prometheus).

    inventory/monitoring_reader.py ──> resolve.py (the monitoring secret, cached) ──> http.py (bounded GET)
                                                                                  └─> queries.py (PromQL, answers)

Gardener runs a Prometheus per shoot that scrapes the shoot's kube-state-metrics, publishes it on an
ingress of its own and annotates the shoot's monitoring secret in the garden project
(`<shoot>.monitoring`) with its address (`prometheus-url`) and basic-auth credentials. This package
reads those series with that read-only credential; it never touches the shoot's API server, and
the Kubernetes client stays out of it (an import contract says so). What the answers may cost is
bounded as for the API-server source (the byte bounds of `collector.kube.limits`, the checks of
`collector.kube.guards`, the same KubeError tree).
"""
