"""The inventory loop (WORKER_MODE=inventory): snapshots of every ready cluster and the infrastructure ledger.

loop.py ─> garden_reader.py ─> shoot.py (one shoot's lists) ─> sources.py (what the ledger reads)
   └─────> store.py + store.sql (one transaction per cluster) ─> ledger.py (what changed)
"""
