"""cluster-worker: the inventory collector and the Gardener reconcile loop.

    main.py      the `cluster-worker` command: run a loop, or collect / reconcile once
    worker.py    what both modes share: settings, the one pool, the Gardener client; the loops built from them
    settings.py  every variable, read once from the environment
    mock.py      GARDENER_MODE=mock: the garden and the shoots as the database describes them
    inventory/   the inventory loop: reading shoots, the ledger, snapshots, the `collect` summary
    reconcile/   the reconcile loop: the shoot mirror and the drift rules
    kube/        the Kubernetes boundary: the client, list streaming, credentials, the Gardener client

Arrows point down this list only (import-linter contracts in pyproject.toml); inventory and
reconcile never import each other.
"""
