-- The status poller of `fleet demo` (fleetctl/status_poller/poller.py): the provisioning side's
-- writes, as Fundament's cluster-worker makes them (the shoot columns of tenant.clusters and the rows
-- of tenant.cluster_outbox; db/provisioning.py says how), played for the demo over a privileged
-- (superuser) connection.

-- name: clusters_with_status
-- Called by StatusPoller.run_once: every cluster with the shoot columns of its sync state, if any, as
-- fleet inventory reads them.
SELECT c.id AS cluster_id,
       c.deleted IS NOT NULL AS deleted,
       s.cluster_id IS NOT NULL AND s.shoot_status IS NOT NULL AS has_state,
       s.first_completed IS NOT NULL AS ever_completed,
       s.shoot_status,
       s.shoot_operation,
       s.shoot_message,
       c.shoot_status AS recorded_status,
       c.shoot_status_message AS recorded_message
FROM tenant.clusters AS c
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id

-- name: update_shoot_status
-- Called by StatusPoller.run_once: a cluster's shoot status moved (in Fundament's columns); the time
-- moves only when Fundament's status value changed, as its poller's does (ready and unhealthy are both
-- `ready` there, so a flip between them keeps the time the cluster turned ready).
UPDATE tenant.clusters
SET shoot_status = %(shoot_status)s,
    shoot_status_message = %(shoot_message)s,
    shoot_status_updated = CASE
        WHEN shoot_status IS DISTINCT FROM %(shoot_status)s OR shoot_status_updated IS NULL THEN %(now)s
        ELSE shoot_status_updated
    END
WHERE id = %(cluster_id)s

-- name: record_sync
-- Called by StatusPoller.run_once for a cluster's first status: the sync that made its shoot (completed
-- when the shoot is up), as the outbox worker leaves it; Fundament's trigger copies it onto the cluster.
INSERT INTO tenant.cluster_outbox (cluster_id, event, source, status, created, processed)
VALUES (%(cluster_id)s, 'created', 'trigger', %(sync_status)s, %(now)s,
        CASE WHEN %(sync_status)s = 'completed' THEN %(now)s END)
