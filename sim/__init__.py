"""fleet-sim: a simulated Gardener landscape speaking the Kubernetes API (DESIGN.md §10)."""
