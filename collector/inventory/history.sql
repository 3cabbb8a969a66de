-- The SQL of the fleet history (trends), run by the inventory loop as fun_cluster_worker after each
-- full round. Loaded by collector/inventory/history_store.py; table and pruning function in db/migrations.

-- name: record_fleet_history
-- Called by InventoryLoop.run_once after a full round: the fleet-wide totals of this round, and in
-- the first round of an hour (no hourly row for that hour yet) the hourly rows, one per live
-- organization and one fleet-wide (the nil organization). Rules as GetFleetSummary counts them; the
-- fleet-wide rows hold every figure of the summary, which reads the latest round row.
-- Every aggregate is one GROUP BY over one pass of the live clusters, so an hour's 10,000
-- organization rows cost about what the fleet-wide row does.
WITH inventory AS (
    SELECT loops.interval_seconds, loops.first_completed
    FROM tenant.worker_loops AS loops
    WHERE loops.loop = 'inventory'
),
-- Live clusters of live, non-system organizations, from the listing, which holds
-- each one's status, readiness, snapshot and live project and namespace counts.
live AS MATERIALIZED (
    SELECT l.organization_id, l.status, l.ready,
           l.nodes, l.ready_nodes, l.pods, l.allocatable_pods, l.cpu_allocatable_millicores,
           l.memory_allocatable_bytes, l.projects, l.namespaces,
           tenant.snapshot_is_stale(l.ready, nullif(l.observed, '-infinity'), l.ready_since,
                                    inventory.interval_seconds, inventory.first_completed, %(at)s::timestamptz)
               AS stale
    FROM tenant.cluster_listing AS l
    LEFT JOIN inventory ON true
    WHERE l.live
),
organization_counts AS (
    SELECT count(*) AS organizations, count(*) FILTER (WHERE o.listed_publicly) AS organizations_listed
    FROM tenant.organizations AS o
    WHERE o.deleted IS NULL AND o.id <> tenant.system_organization_id()
),
open_findings AS MATERIALIZED (
    SELECT c.organization_id, f.kind
    FROM tenant.drift_findings AS f
    LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
    WHERE f.resolved IS NULL AND c.organization_id IS DISTINCT FROM tenant.system_organization_id()
),
due AS (
    SELECT NOT EXISTS (
        SELECT 1 FROM tenant.fleet_history AS h
        WHERE h.resolution = 'hour' AND h.organization_id = '00000000-0000-0000-0000-000000000000'::uuid
          AND h.at = date_trunc('hour', %(at)s::timestamptz)
    ) AS hourly
),
-- Per organization (NULL: the whole fleet, through GROUPING SETS).
totals AS (
    SELECT l.organization_id, count(*) AS clusters,
           coalesce(sum(l.nodes) FILTER (WHERE l.ready), 0) AS nodes,
           coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
           coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
           coalesce(sum(l.cpu_allocatable_millicores) FILTER (WHERE l.ready), 0) AS cpu,
           coalesce(sum(l.memory_allocatable_bytes) FILTER (WHERE l.ready), 0) AS memory,
           coalesce(sum(l.projects), 0) AS projects,
           coalesce(sum(l.namespaces), 0) AS namespaces,
           count(*) FILTER (WHERE l.ready) AS clusters_ready,
           coalesce(sum(l.allocatable_pods) FILTER (WHERE l.ready), 0) AS allocatable_pods,
           count(*) FILTER (WHERE l.stale) AS clusters_stale
    FROM live AS l
    GROUP BY GROUPING SETS ((l.organization_id), ())
),
statuses AS (
    SELECT per.organization_id, jsonb_object_agg(per.status, per.clusters) AS by_status
    FROM (SELECT l.organization_id, l.status, count(*) AS clusters
          FROM live AS l GROUP BY GROUPING SETS ((l.organization_id, l.status), (l.status))) AS per
    GROUP BY per.organization_id
),
kinds AS (
    SELECT per.organization_id, jsonb_object_agg(per.kind, per.findings) AS by_kind
    FROM (SELECT f.organization_id, f.kind, count(*) AS findings
          FROM open_findings AS f GROUP BY GROUPING SETS ((f.organization_id, f.kind), (f.kind))) AS per
    GROUP BY per.organization_id
),
scopes AS (
    -- (resolution, organization or NULL for the fleet) of every row this call writes.
    SELECT 'round' AS resolution, NULL::uuid AS organization_id, %(at)s::timestamptz AS at
    UNION ALL
    SELECT 'hour', NULL::uuid, date_trunc('hour', %(at)s::timestamptz) FROM due WHERE due.hourly
    UNION ALL
    SELECT 'hour', o.id, date_trunc('hour', %(at)s::timestamptz)
    FROM tenant.organizations AS o, due
    WHERE due.hourly AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()
),
written AS (
    INSERT INTO tenant.fleet_history AS h (
        resolution, organization_id, at, clusters, clusters_by_status, nodes, ready_nodes, pods,
        cpu_allocatable_millicores, memory_allocatable_bytes, open_findings_by_kind,
        organizations, organizations_listed, projects, namespaces, clusters_ready, allocatable_pods, clusters_stale
    )
    SELECT sc.resolution,
           coalesce(sc.organization_id, '00000000-0000-0000-0000-000000000000'::uuid),
           sc.at,
           coalesce(t.clusters, 0),
           coalesce(st.by_status, '{}'::jsonb),
           coalesce(t.nodes, 0), coalesce(t.ready_nodes, 0), coalesce(t.pods, 0),
           coalesce(t.cpu, 0), coalesce(t.memory, 0),
           coalesce(k.by_kind, '{}'::jsonb),
           CASE WHEN sc.organization_id IS NULL THEN oc.organizations END,
           CASE WHEN sc.organization_id IS NULL THEN oc.organizations_listed END,
           coalesce(t.projects, 0), coalesce(t.namespaces, 0), coalesce(t.clusters_ready, 0),
           coalesce(t.allocatable_pods, 0), coalesce(t.clusters_stale, 0)
    FROM scopes AS sc
    CROSS JOIN organization_counts AS oc
    LEFT JOIN totals AS t ON t.organization_id IS NOT DISTINCT FROM sc.organization_id
    LEFT JOIN statuses AS st ON st.organization_id IS NOT DISTINCT FROM sc.organization_id
    LEFT JOIN kinds AS k ON k.organization_id IS NOT DISTINCT FROM sc.organization_id
    ON CONFLICT (resolution, organization_id, at) DO NOTHING
    RETURNING 1
)
SELECT count(*)::integer AS rows FROM written;

-- name: prune_fleet_history
-- Called by InventoryLoop.run_once after record_fleet_history: drops history past its retention.
SELECT tenant.prune_fleet_history(%(round_before)s::timestamptz, %(hour_before)s::timestamptz)::bigint AS rows

-- name: round_clusters_stale
-- Called by InventoryLoop.run_once after record_fleet_history (first shard): the stale clusters of the
-- fleet-wide row it just wrote, the staff view's figure (tenant.snapshot_is_stale over the listing), for
-- the gauge FleetClustersStale reads. No row (the write failed): none.
SELECT h.clusters_stale
FROM tenant.fleet_history AS h
WHERE h.resolution = 'round' AND h.organization_id = '00000000-0000-0000-0000-000000000000'::uuid
  AND h.at = %(at)s::timestamptz
