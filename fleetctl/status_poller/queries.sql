-- The status poller of `fleet demo` (fleetctl/status_poller/poller.py): the provisioning side's
-- writes of tenant.cluster_sync_state, played for the demo over a privileged (superuser) connection.

-- name: clusters_with_status
-- Called by StatusPoller.run_once: every cluster with the shoot columns of its sync state, if any.
SELECT c.id AS cluster_id,
       c.deleted IS NOT NULL AS deleted,
       s.cluster_id IS NOT NULL AS has_state,
       s.first_completed IS NOT NULL AS ever_completed,
       s.shoot_status,
       s.shoot_operation,
       s.shoot_message
FROM tenant.clusters AS c
LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id

-- name: update_shoot_status
-- Called by StatusPoller.run_once: a cluster's shoot status moved; `shoot_status_changed` moves only
-- when the status itself changed; `ready_since` (when the shoot entered the ready set) is kept by
-- the table's trigger, so a ready -> unhealthy flip does not move it.
UPDATE tenant.cluster_sync_state
SET shoot_status = %(shoot_status)s,
    shoot_operation = %(shoot_operation)s,
    shoot_message = %(shoot_message)s,
    shoot_status_changed = CASE
        WHEN shoot_status IS DISTINCT FROM %(shoot_status)s THEN %(now)s
        ELSE shoot_status_changed
    END
WHERE cluster_id = %(cluster_id)s

-- name: insert_sync_state
-- Called by StatusPoller.run_once: the first status of a cluster that had no sync state row yet.
INSERT INTO tenant.cluster_sync_state (
    cluster_id, sync_status, sync_attempts, sync_updated, first_completed,
    shoot_status, shoot_operation, shoot_message, shoot_status_changed
)
VALUES (
    %(cluster_id)s, %(sync_status)s, 1, %(now)s, %(first_completed)s,
    %(shoot_status)s, %(shoot_operation)s, %(shoot_message)s, %(now)s
)
ON CONFLICT (cluster_id) DO NOTHING
