"""The reconcile loop (WORKER_MODE=reconcile): mirror Gardener's shoots and record drift.

loop.py ─> observed.py (listed shoots, cluster rows) ─> drift.py (the rules) ─> store.py + store.sql
"""
