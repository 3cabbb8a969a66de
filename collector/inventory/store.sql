-- The SQL of the inventory loop, run by collector/inventory/store.py as role fun_cluster_worker.
-- Reads pick the clusters to collect; one collection's writes (snapshots and ledger) run in ONE
-- transaction that the loop opens after reading the shoot; failures are recorded on their own.
-- Batches go in as arrays through unnest(), so a cluster costs a handful of statements whatever its
-- size.

-- name: ready_clusters
-- Called by InventoryLoop.run_once: every ready cluster (the listing's `ready`, kept by
-- tenant.cluster_is_ready, the SQL twin of common.clusterstatus.is_ready, from the sync state),
-- oldest snapshot first ('-infinity' when never collected) so a round cut short by a restart reaches
-- the clusters that waited longest.
SELECT l.id, l.name, l.organization_id, l.organization_name
FROM tenant.cluster_listing AS l
WHERE l.ready
ORDER BY l.observed ASC, l.id

-- name: find_clusters
-- Called by `cluster-worker collect --cluster REF`: live clusters whose id, name or
-- organization/name is REF, with whether each is ready (the command refuses the others by name).
SELECT c.id, c.name, o.id AS organization_id, o.name AS organization_name,
    tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status) AS ready,
    s.shoot_status
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
WHERE c.deleted IS NULL
    AND o.id <> tenant.system_organization_id()
    AND (c.id::text = %(ref)s OR c.name = %(ref)s OR o.name || '/' || c.name = %(ref)s)
ORDER BY o.name, c.name

-- name: cluster_layout
-- Called by store_reading and store_ledger inside a collection's transaction, in one round trip:
-- the live node pools and namespaces a snapshot is written for (live namespaces of live projects),
-- and the ledger's active rows of the resource types that could be listed this time.
-- A namespace row carries its project's name and id, from which the Prometheus source derives the
-- namespace's name on the shoot when kube-state-metrics does not export its id label.
SELECT 'pool' AS kind, id, name, NULL::text AS resource_type, NULL::text AS namespace, NULL::text AS resource_id,
    NULL::text AS project_name, NULL::uuid AS project_id
FROM tenant.node_pools
WHERE cluster_id = %(cluster_id)s AND deleted IS NULL
UNION ALL
SELECT 'namespace', n.id, n.name, NULL, NULL, NULL, p.name, p.id
FROM tenant.namespaces AS n
JOIN tenant.projects AS p ON p.id = n.project_id
WHERE p.cluster_id = %(cluster_id)s AND p.deleted IS NULL AND n.deleted IS NULL
UNION ALL
SELECT 'resource', id, name, resource_type, namespace, resource_id, NULL, NULL
FROM tenant.infrastructure_resources
WHERE cluster_id = %(cluster_id)s AND destroyed IS NULL AND resource_type = ANY(%(resource_types)s::text[])

-- name: lock_cluster
-- Called by store_ledger first: the cluster's write lock (see store_cluster_snapshot), for a cluster
-- that has a snapshot row (one without has never been collected: its first store takes the lock).
SELECT 1 FROM tenant.cluster_snapshots WHERE cluster_id = %(cluster_id)s FOR UPDATE

-- name: store_cluster_snapshot
-- Called by store_reading: the cluster's new numbers and the source that read them; clears the last
-- error (the latest attempt worked). An observation older than the stored one (two collections racing) changes nothing.
-- Sent first in the collection's transaction, it is also the cluster's write lock: the upsert locks the
-- row (inserted, or found, even when the WHERE leaves it unchanged) until commit, so two shards never
-- write one cluster at once (while the shard count changes, an old and a new shard may both collect a
-- cluster that moved); the second waits for the first, then plans its writes from what the first left.
-- record_failure's upsert takes the same lock.
INSERT INTO tenant.cluster_snapshots AS cs (
    cluster_id, observed, nodes, ready_nodes, pods, allocatable_pods,
    cpu_allocatable_millicores, memory_allocatable_bytes, source, last_error, last_error_at
)
VALUES (
    %(cluster_id)s, %(observed)s, %(nodes)s, %(ready_nodes)s, %(pods)s, %(allocatable_pods)s,
    %(cpu_allocatable_millicores)s, %(memory_allocatable_bytes)s, %(source)s, NULL, NULL
)
ON CONFLICT (cluster_id) DO UPDATE SET
    observed = EXCLUDED.observed,
    nodes = EXCLUDED.nodes,
    ready_nodes = EXCLUDED.ready_nodes,
    pods = EXCLUDED.pods,
    allocatable_pods = EXCLUDED.allocatable_pods,
    cpu_allocatable_millicores = EXCLUDED.cpu_allocatable_millicores,
    memory_allocatable_bytes = EXCLUDED.memory_allocatable_bytes,
    source = EXCLUDED.source,
    last_error = NULL,
    last_error_at = NULL
WHERE cs.observed IS NULL OR cs.observed <= EXCLUDED.observed

-- name: store_node_pool_snapshots
-- Called by store_reading: nodes and ready nodes of every live node pool, as arrays.
INSERT INTO tenant.node_pool_snapshots AS nps (node_pool_id, cluster_id, observed, nodes, ready_nodes)
SELECT t.node_pool_id, %(cluster_id)s, %(observed)s, t.nodes, t.ready_nodes
FROM unnest(%(node_pool_ids)s::uuid[], %(nodes)s::integer[], %(ready_nodes)s::integer[])
    AS t (node_pool_id, nodes, ready_nodes)
ON CONFLICT (node_pool_id) DO UPDATE SET
    cluster_id = EXCLUDED.cluster_id,
    observed = EXCLUDED.observed,
    nodes = EXCLUDED.nodes,
    ready_nodes = EXCLUDED.ready_nodes
WHERE nps.observed <= EXCLUDED.observed

-- name: store_namespace_snapshots
-- Called by store_reading: running pods of every live namespace read with certainty
-- (collector/inventory/namespaces.py), as arrays. A read clears the unread mark.
INSERT INTO tenant.namespace_snapshots AS ns (namespace_id, cluster_id, observed, pods)
SELECT t.namespace_id, %(cluster_id)s, %(observed)s, t.pods
FROM unnest(%(namespace_ids)s::uuid[], %(pods)s::integer[]) AS t (namespace_id, pods)
ON CONFLICT (namespace_id) DO UPDATE SET
    cluster_id = EXCLUDED.cluster_id,
    observed = EXCLUDED.observed,
    pods = EXCLUDED.pods,
    unread_reason = NULL,
    unread_at = NULL
WHERE ns.observed <= EXCLUDED.observed

-- name: mark_namespaces_unread
-- Called by store_reading: live namespaces whose count this collection could not tell with certainty
-- (a reason each). Their pods and `observed` stay those of the last read; a namespace never read has
-- no row and gets none. A collection older than the row's read, or than its mark, changes nothing.
UPDATE tenant.namespace_snapshots AS ns
SET unread_reason = t.reason, unread_at = %(observed)s
FROM unnest(%(namespace_ids)s::uuid[], %(reasons)s::text[]) AS t (namespace_id, reason)
WHERE ns.namespace_id = t.namespace_id
    AND ns.observed <= %(observed)s
    AND (ns.unread_at IS NULL OR ns.unread_at <= %(observed)s)

-- name: record_failure
-- Called by record_failure after a failed read or store: only the error and its time change; the
-- numbers and `observed` of the last good collection stay (a first failure leaves them empty).
INSERT INTO tenant.cluster_snapshots AS cs (cluster_id, last_error, last_error_at)
VALUES (%(cluster_id)s, %(error)s, %(at)s)
ON CONFLICT (cluster_id) DO UPDATE SET last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at

-- name: record_heartbeat
-- Called by InventoryLoop.run_once each time it queues a round, not when it ends: the staff view
-- measures staleness in the interval recorded here (docs/architecture.md, 'Staleness is measured in
-- inventory intervals'). One row per shard (`i/N`), so a shard that stops shows.
INSERT INTO tenant.worker_heartbeats AS h (loop, shard, last_completed, interval_seconds, details)
VALUES ('inventory', %(shard)s, %(at)s, %(interval_seconds)s, %(details)s)
ON CONFLICT (loop, shard) DO UPDATE SET
    last_completed = EXCLUDED.last_completed,
    interval_seconds = EXCLUDED.interval_seconds,
    details = EXCLUDED.details

-- name: skewed_status_times
-- Called by InventoryLoop.run_once after a round (first shard): live clusters whose status time lies
-- in the future of the database's clock (the sync state reads them as now); a gauge.
SELECT tenant.skewed_status_times()

-- name: create_resources
-- Called by store_ledger: resources the ledger did not know. The partial unique index on active
-- rows turns a resource that a racing collection recorded first into "already known" (no row).
INSERT INTO tenant.infrastructure_resources (
    cluster_id, resource_type, resource_id, name, namespace, billable, created, last_seen
)
SELECT %(cluster_id)s, t.resource_type, t.resource_id, t.name, t.namespace, t.billable, %(observed)s, %(observed)s
FROM unnest(
    %(resource_types)s::text[], %(resource_ids)s::text[], %(names)s::text[], %(namespaces)s::text[],
    %(billable)s::boolean[]
) AS t (resource_type, resource_id, name, namespace, billable)
ON CONFLICT (cluster_id, resource_type, namespace, name) WHERE destroyed IS NULL DO NOTHING
RETURNING resource_type

-- name: destroy_resources
-- Called by store_ledger: active resources that no longer exist. The row stays; `destroyed` is when
-- the inventory noticed, `destroyed_reason` says it listed the type and the resource was gone. A row a racing collection destroyed first is not counted twice.
UPDATE tenant.infrastructure_resources
SET destroyed = greatest(%(observed)s, last_seen), destroyed_reason = 'not_found'
WHERE id = ANY(%(ids)s::uuid[]) AND destroyed IS NULL
RETURNING resource_type

-- name: change_resource_ids
-- Called by store_ledger: the same resource now reports another cloud id (a load balancer got its
-- hostname, a node its provider id); the active row follows it.
UPDATE tenant.infrastructure_resources AS r
SET resource_id = t.resource_id, last_seen = greatest(r.last_seen, %(observed)s)
FROM unnest(%(ids)s::uuid[], %(resource_ids)s::text[]) AS t (id, resource_id)
WHERE r.id = t.id AND r.destroyed IS NULL

-- name: touch_resources
-- Called by store_ledger: active resources seen again; one statement for all of them, and rows
-- already as new are not rewritten.
UPDATE tenant.infrastructure_resources
SET last_seen = %(observed)s
WHERE id = ANY(%(ids)s::uuid[]) AND destroyed IS NULL AND last_seen < %(observed)s
