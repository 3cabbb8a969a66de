-- What the collector and reconcile would have written over the scale fleet, for bench/fleet_api.py.
-- Set-based, run once as a superuser on the benchmark's own copy of the scale database. Values are
-- derived from the ids (hashtext), so a rebuild gives the same world.

-- name: heartbeats
-- The inventory loop every 15 minutes, reconcile every 5.
INSERT INTO tenant.worker_heartbeats (loop, last_completed, interval_seconds, first_completed)
VALUES ('inventory', now() - interval '20 seconds', 900, now() - interval '2 days'),
       ('reconcile', now() - interval '1 minute', 300, now() - interval '2 days');

-- name: shoots
-- One live shoot per cluster whose sync state says the shoot exists.
INSERT INTO tenant.gardener_shoots (uid, name, namespace, cluster_label, organization_label, cluster_id,
                                    organization_id, kubernetes_version, region, created, first_seen, last_seen)
SELECT gen_random_uuid(), left(replace(c.name, '-', ''), 8) || left(md5(c.id::text), 3),
       'garden-' || left(md5(c.organization_id::text), 10), c.id::text, c.organization_id::text, c.id,
       c.organization_id, c.kubernetes_version, c.region, c.created, now() - interval '2 days',
       now() - interval '1 minute'
FROM tenant.clusters AS c
JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
WHERE s.shoot_status NOT IN ('pending', 'missing', 'deleted');

-- name: cluster_snapshots
-- Every ready cluster collected within the last hour; one in forty failed its latest collection.
INSERT INTO tenant.cluster_snapshots (cluster_id, observed, nodes, ready_nodes, pods, allocatable_pods,
                                      cpu_allocatable_millicores, memory_allocatable_bytes, last_error, last_error_at)
SELECT c.id,
       now() - (abs(hashtext(c.id::text)) % 3600) * interval '1 second',
       3 + abs(hashtext(c.id::text)) % 20,
       2 + abs(hashtext(c.id::text)) % 20,
       40 + abs(hashtext(c.id::text)) % 900,
       110 * (3 + abs(hashtext(c.id::text)) % 20),
       4000 * (3 + abs(hashtext(c.id::text)) % 20),
       (16::bigint << 30) * (3 + abs(hashtext(c.id::text)) % 20),
       CASE WHEN abs(hashtext(c.id::text)) % 40 = 0 THEN 'list pods: context deadline exceeded' END,
       CASE WHEN abs(hashtext(c.id::text)) % 40 = 0 THEN now() - interval '30 seconds' END
FROM tenant.clusters AS c
JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
WHERE c.deleted IS NULL AND s.shoot_status IN ('ready', 'unhealthy');

-- name: node_pool_snapshots
INSERT INTO tenant.node_pool_snapshots (node_pool_id, cluster_id, observed, nodes, ready_nodes)
SELECT np.id, np.cluster_id, snap.observed, np.autoscale_min, np.autoscale_min
FROM tenant.node_pools AS np
JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = np.cluster_id
WHERE np.deleted IS NULL;

-- name: namespace_snapshots
INSERT INTO tenant.namespace_snapshots (namespace_id, cluster_id, observed, pods)
SELECT n.id, p.cluster_id, snap.observed, abs(hashtext(n.id::text)) % 30
FROM tenant.namespaces AS n
JOIN tenant.projects AS p ON p.id = n.project_id
JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = p.cluster_id
WHERE n.deleted IS NULL;

-- name: ledger
-- Per collected cluster: three nodes and a load balancer, plus a destroyed node in one of ten.
INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, resource_id, name, namespace, billable,
                                             created, last_seen, destroyed, destroyed_reason)
SELECT snap.cluster_id, 'kubernetes.node', 'aws:///i-' || md5(snap.cluster_id::text || k), 'node-' || k, '', true,
       now() - interval '3 days', now() - interval '1 minute', NULL::timestamptz, NULL::text
FROM tenant.cluster_snapshots AS snap, generate_series(1, 3) AS k
UNION ALL
SELECT snap.cluster_id, 'kubernetes.loadbalancer', left(md5(snap.cluster_id::text), 12) || '.elb.example', 'web',
       'web-0', true, now() - interval '2 days', now() - interval '1 minute', NULL::timestamptz, NULL::text
FROM tenant.cluster_snapshots AS snap
UNION ALL
SELECT snap.cluster_id, 'kubernetes.node', 'aws:///i-old' || md5(snap.cluster_id::text), 'node-1', '', true,
       now() - interval '9 days', now() - interval '5 days', now() - interval '5 days', 'not_found'
FROM tenant.cluster_snapshots AS snap
WHERE abs(hashtext(snap.cluster_id::text)) % 10 = 0;

-- name: findings
-- One live cluster in fifty has an open version_mismatch; one in two hundred a missing_shoot.
INSERT INTO tenant.drift_findings (kind, subject, cluster_id, details, first_detected, last_detected)
SELECT CASE WHEN abs(hashtext(c.id::text)) % 200 = 0 THEN 'missing_shoot' ELSE 'version_mismatch' END,
       c.id::text, c.id, jsonb_build_object('database', c.kubernetes_version),
       now() - (1 + abs(hashtext(c.id::text)) % 72) * interval '1 hour', now() - interval '1 minute'
FROM tenant.clusters AS c
WHERE c.deleted IS NULL AND abs(hashtext(c.id::text)) % 50 = 0;
