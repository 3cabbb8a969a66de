-- The soak's own reads (soak/checks.py, soak/faults.py, soak/system.py), run as the superuser of
-- the soak's embedded server: they look at every row, past the row security of the service roles.

-- name: cluster_snapshots
-- Called by take_sample: when each cluster was last observed (NULL: only failures so far).
SELECT cluster_id::text AS id, observed FROM tenant.cluster_snapshots

-- name: node_pool_snapshots
-- Called by take_sample.
SELECT node_pool_id::text AS id, observed FROM tenant.node_pool_snapshots

-- name: namespace_snapshots
-- Called by take_sample.
SELECT namespace_id::text AS id, observed FROM tenant.namespace_snapshots

-- name: findings
-- Called by take_sample: every finding ever recorded, open or resolved.
SELECT id::text AS id, first_detected, resolved FROM tenant.drift_findings

-- name: ledger
-- Called by take_sample: every ledger row, active or destroyed.
SELECT id::text AS id, created, destroyed FROM tenant.infrastructure_resources

-- name: ledger_duplicates
-- Called by take_sample: resources with more than one active row (the partial unique index forbids it).
SELECT cluster_id::text || ' ' || resource_type || ' ' || namespace || '/' || name AS resource, count(*) AS rows
FROM tenant.infrastructure_resources
WHERE destroyed IS NULL
GROUP BY cluster_id, resource_type, namespace, name
HAVING count(*) > 1

-- name: now
-- The database's clock: fault times are compared with times the services wrote.
SELECT now() AS now

-- name: collected_clusters
-- Called by the shoot-fault step: ready clusters whose latest collection worked, to break one each.
SELECT cs.cluster_id::text AS id
FROM tenant.cluster_snapshots AS cs
JOIN tenant.fleet_sync_state AS s ON s.cluster_id = cs.cluster_id
WHERE cs.observed IS NOT NULL AND cs.last_error IS NULL AND s.shoot_status = 'ready'
ORDER BY cs.cluster_id

-- name: cluster_errors
-- Called by the shoot-fault step: the snapshot rows of the clusters it broke.
SELECT cluster_id::text AS id, observed, last_error, last_error_at
FROM tenant.cluster_snapshots
WHERE cluster_id = ANY(%(ids)s::uuid[])

-- name: heartbeats
-- When each loop last recorded a pass (inventory: a round queued; reconcile: a pass stored).
SELECT loop, last_completed FROM tenant.worker_loops

-- name: live_shoots
-- Called by the reconcile step: shoots in the mirror that are not soft-deleted.
SELECT count(*) AS shoots FROM tenant.gardener_shoots WHERE deleted IS NULL

-- name: count_statements
-- Called at start, so the public API's queries can be counted by the database.
CREATE EXTENSION IF NOT EXISTS pg_stat_statements

-- name: reset_statements
-- Called once the load starts: count the public API's queries from here on.
SELECT pg_stat_statements_reset()

-- name: overview_queries
-- Called at the end: completed reads of the public overview by its role since the reset.
SELECT coalesce(sum(s.calls), 0)::bigint AS calls
FROM pg_stat_statements AS s
JOIN pg_database AS d ON d.oid = s.dbid
WHERE d.datname = current_database()
    AND s.userid = 'fun_platform_public_api'::regrole
    AND s.query LIKE '%%tenant.platform_overview()%%'
