"""The collector's Kubernetes boundary: one client for every API server, the Gardener client, credentials.

Only kube/client.py imports the `kubernetes` client. What crosses the boundary is plain dicts and
TypedDicts (objects.py) or a KubeError (errors.py). This package imports nothing else of the collector.
"""
