-- The SQL of GetFleetSummary: the latest recorded totals, or the listing added up, with the loops'
-- freshness. Loaded by services/fleet/queries/summary.py; the conventions are in base.sql.

-- name: fleet_totals
-- Called by FleetApi's summary read: platform-wide totals over live clusters of live, non-system
-- organizations, ready-cluster sums from the snapshots, project and namespace counts, and the stale
-- count, all from tenant.cluster_listing, which the writes of every source keep: one
-- row per cluster holds its snapshot, readiness and live project and namespace counts, so the
-- 1,000,000 namespaces of the scale fleet are added up as 50,000 numbers in one pass, in the same
-- snapshot as the rest of the summary.
WITH inventory AS (
    SELECT loops.interval_seconds, loops.first_completed
    FROM tenant.worker_loops AS loops
    WHERE loops.loop = 'inventory'
),
live_organizations AS (
    SELECT o.listed_publicly
    FROM tenant.organizations AS o
    WHERE o.deleted IS NULL AND o.id <> tenant.system_organization_id()
),
cluster_totals AS (
    SELECT count(*) AS clusters,
           coalesce(sum(l.projects), 0) AS projects,
           coalesce(sum(l.namespaces), 0) AS namespaces,
           count(*) FILTER (WHERE l.ready) AS clusters_ready,
           coalesce(sum(l.nodes) FILTER (WHERE l.ready), 0) AS nodes,
           coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
           coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
           coalesce(sum(l.allocatable_pods) FILTER (WHERE l.ready), 0) AS allocatable_pods,
           coalesce(sum(l.cpu_allocatable_millicores) FILTER (WHERE l.ready), 0) AS cpu_allocatable_millicores,
           coalesce(sum(l.memory_allocatable_bytes) FILTER (WHERE l.ready), 0) AS memory_allocatable_bytes,
           count(*) FILTER (WHERE tenant.snapshot_is_stale(
               l.ready, nullif(l.observed, '-infinity'), l.ready_since,
               inventory.interval_seconds, inventory.first_completed, %(now)s::timestamptz
           )) AS clusters_stale
    FROM tenant.cluster_listing AS l
    LEFT JOIN inventory ON true
    WHERE l.live
)
SELECT (SELECT count(*) FROM live_organizations)::integer AS organizations,
       (SELECT count(*) FROM live_organizations WHERE listed_publicly)::integer AS organizations_listed,
       t.clusters::integer,
       t.projects::integer,
       t.namespaces::integer,
       t.clusters_ready::integer,
       t.nodes::bigint,
       t.ready_nodes::bigint,
       t.pods::bigint,
       t.allocatable_pods::bigint,
       t.cpu_allocatable_millicores::bigint,
       t.memory_allocatable_bytes::bigint,
       t.clusters_stale::integer
FROM cluster_totals AS t;

-- name: latest_fleet_totals
-- Called by FleetApi.get_fleet_summary first: the fleet-wide totals the inventory loop recorded at
-- the end of its latest round (collector/inventory/history.sql), one row through the history's
-- primary key; rows without the summary's figures (organization rows) are passed over.
-- The service uses it when it is recent enough (three inventory intervals), else fleet_totals.
SELECT h.at,
       h.organizations,
       h.organizations_listed,
       h.clusters,
       h.projects,
       h.namespaces,
       h.clusters_ready,
       h.nodes,
       h.ready_nodes,
       h.pods,
       h.allocatable_pods,
       h.cpu_allocatable_millicores,
       h.memory_allocatable_bytes,
       h.clusters_stale,
       h.clusters_by_status,
       h.open_findings_by_kind
FROM tenant.fleet_history AS h
WHERE h.resolution = 'round'
  AND h.organization_id = '00000000-0000-0000-0000-000000000000'::uuid
  AND h.organizations IS NOT NULL
ORDER BY h.at DESC
LIMIT 1;

-- name: fleet_status_inputs
-- Called by FleetApi.get_fleet_summary: live clusters of live, non-system organizations grouped by the
-- inputs of their status (a few hundred combinations at most), from tenant.cluster_listing; the
-- service derives each group's status with clusterstatus in Python and adds them up.
SELECT l.sync_status,
       l.shoot_status,
       l.shoot_operation,
       l.ever_completed,
       count(*)::integer AS clusters
FROM tenant.cluster_listing AS l
WHERE l.live
GROUP BY 1, 2, 3, 4;

-- name: open_findings_by_kind
-- Called by FleetApi.get_fleet_summary: open drift findings per kind, the system organization's left out.
SELECT f.kind, count(*)::integer AS findings
FROM tenant.drift_findings AS f
LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
WHERE f.resolved IS NULL
  AND c.organization_id IS DISTINCT FROM tenant.system_organization_id()
GROUP BY f.kind
ORDER BY f.kind;

-- name: loop_freshness
-- Called by FleetApi.get_fleet_summary: each worker loop's last completed pass (its oldest shard's,
-- over the shards of its current split) and interval, and how many shards reported of how many.
SELECT loops.loop, loops.last_completed, loops.interval_seconds, loops.shards, loops.shards_reporting
FROM tenant.worker_loops AS loops
ORDER BY loops.loop;

-- name: standby_replay
-- Called by FleetApi.get_fleet_summary: whether this session reads a hot standby and, if so, how far
-- its replay trails the primary (0 once it replayed all it received; else the age of the last
-- replayed commit). One row, from the server's own functions; nothing to read on a primary.
SELECT pg_catalog.pg_is_in_recovery() AS standby,
    CASE
        WHEN NOT pg_catalog.pg_is_in_recovery() THEN 0
        WHEN pg_catalog.pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_catalog.pg_last_wal_replay_lsn() THEN 0
        ELSE greatest(0, (extract(epoch FROM now() - pg_catalog.pg_last_xact_replay_timestamp()) * 1000)::bigint)
    END AS lag_milliseconds,
    pg_catalog.pg_last_xact_replay_timestamp() AS last_replayed
