"""cluster-worker: the inventory collector and the Gardener reconcile loop (DESIGN.md §7-§9)."""
