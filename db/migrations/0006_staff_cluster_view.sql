-- 0006: tenant.staff_clusters, the one definition of a cluster as the staff API shows it.
--
-- ListClusters and GetCluster both read a cluster with the inputs of its status and staleness, its
-- latest snapshot, reconcile's observed Kubernetes version, its open drift count, the inventory
-- loop's interval and its whole sync state. Both select from this view, so the columns and joins
-- are written once. The system organization's clusters are not in it; deleted clusters and clusters
-- of deleted organizations are (the callers filter).
--
-- The view is a plain join without a CTE, aggregate or LIMIT, so the planner pulls it up into the
-- calling query: the caller's filters, keyset condition and ORDER BY reach the tables' indexes as if
-- the join were written out there, and the two scalar subqueries run only for the rows returned.
-- security_invoker: the caller's own grants and row security apply to the tables beneath, as when
-- it reads them directly (fun_owner, the owner, would be subject to neither). No security_barrier,
-- which would keep the caller's filters from being pushed down. Only the staff role may read it.
SET LOCAL lock_timeout = '10s';

CREATE VIEW tenant.staff_clusters WITH (security_invoker = true) AS
SELECT c.id,
       c.name,
       c.organization_id,
       o.name AS organization_name,
       o.alias AS organization_alias,
       o.deleted IS NOT NULL AS organization_deleted,
       c.region,
       c.kubernetes_version,
       (SELECT sh.kubernetes_version
        FROM tenant.gardener_shoots AS sh
        WHERE sh.cluster_id = c.id AND sh.deleted IS NULL
        ORDER BY sh.last_seen DESC, sh.uid
        LIMIT 1) AS observed_kubernetes_version,
       c.created,
       c.deleted,
       s.sync_status,
       s.shoot_status,
       s.shoot_operation,
       s.first_completed,
       s.shoot_status_changed,
       snap.cluster_id IS NOT NULL AS collected,
       snap.observed,
       snap.nodes,
       snap.ready_nodes,
       snap.pods,
       snap.allocatable_pods,
       snap.cpu_allocatable_millicores,
       snap.memory_allocatable_bytes,
       snap.last_error,
       snap.last_error_at,
       (SELECT count(*)
        FROM tenant.drift_findings AS f
        WHERE f.cluster_id = c.id AND f.resolved IS NULL)::integer AS open_drift_findings,
       inventory.interval_seconds AS inventory_interval_seconds,
       inventory.first_completed AS inventory_since,
       s.sync_attempts,
       s.sync_error,
       s.sync_updated,
       s.shoot_message
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
LEFT JOIN tenant.worker_heartbeats AS inventory ON inventory.loop = 'inventory'
WHERE c.organization_id <> tenant.system_organization_id();

ALTER VIEW tenant.staff_clusters OWNER TO fun_owner;
REVOKE ALL ON tenant.staff_clusters FROM PUBLIC;
GRANT SELECT ON tenant.staff_clusters TO fun_platform_admin_api;
COMMENT ON VIEW tenant.staff_clusters IS
    'Every non-system cluster (live or deleted) as the staff API shows it: status and staleness inputs, '
    'latest snapshot, observed version, open drift count, inventory interval, sync state.';
