-- The provisioning side's writes (db/provisioning.py), as Fundament's cluster-worker makes them: for
-- the stand-in's writers only (the seed, the demo's status poller, the tests). Fleet inventory itself
-- never writes these columns or this table.

-- name: record_shoot_status
-- Called by provisioning.write_sync_state and record_shoot_status: the status poller's write of a
-- cluster's shoot. The time moves only when the status value changes.
UPDATE tenant.clusters
SET shoot_status = %(shoot_status)s,
    shoot_status_message = %(message)s,
    shoot_status_updated = CASE
        WHEN shoot_status IS DISTINCT FROM %(shoot_status)s OR shoot_status_updated IS NULL THEN %(at)s
        ELSE shoot_status_updated
    END
WHERE id = %(cluster_id)s

-- name: record_sync
-- Called by provisioning.write_sync_state and record_sync: one sync of a cluster, as the outbox
-- worker left it; Fundament's trigger copies its status onto the cluster.
INSERT INTO tenant.cluster_outbox (cluster_id, event, source, status, retries, status_info, created, processed, failed)
VALUES (
    %(cluster_id)s, %(event)s, %(source)s, %(status)s, %(retries)s, %(status_info)s, %(created)s, %(processed)s,
    %(failed)s
)

-- name: delete_cluster_namespaces
-- Called by provisioning.delete_cluster first: the cluster's live namespaces.
UPDATE tenant.namespaces SET deleted = %(at)s
WHERE deleted IS NULL AND project_id IN (SELECT id FROM tenant.projects WHERE cluster_id = %(cluster_id)s)

-- name: delete_cluster_projects
-- Called by provisioning.delete_cluster next: the cluster's live projects.
UPDATE tenant.projects SET deleted = %(at)s WHERE deleted IS NULL AND cluster_id = %(cluster_id)s

-- name: delete_cluster
-- Called by provisioning.delete_cluster last: the cluster itself.
UPDATE tenant.clusters SET deleted = %(at)s WHERE id = %(cluster_id)s
