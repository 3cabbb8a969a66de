-- 0011: which collection source produced a cluster's snapshot.
--
-- The collector can fill the snapshots from each shoot's API server (`apiserver`) or from the
-- shoot's Prometheus (`prometheus`, kube-state-metrics series); mock mode writes `mock`. The column
-- is set with the numbers by every good collection and left as it was by a failed one, so it always
-- says where the numbers shown came from. Rows written before this migration say nothing (NULL).
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.cluster_snapshots ADD COLUMN source text;
ALTER TABLE tenant.cluster_snapshots
    ADD CONSTRAINT cluster_snapshots_ck_source CHECK (source IN ('apiserver', 'prometheus', 'mock'));
GRANT UPDATE (source) ON tenant.cluster_snapshots TO fun_cluster_worker;

-- The staff view gains snapshot_source (appended: CREATE OR REPLACE keeps the columns before it).
CREATE OR REPLACE VIEW tenant.staff_clusters WITH (security_invoker = true) AS
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
       s.shoot_message,
       s.ready_since,
       snap.source AS snapshot_source
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
LEFT JOIN tenant.worker_heartbeats AS inventory ON inventory.loop = 'inventory'
WHERE c.organization_id <> tenant.system_organization_id();
