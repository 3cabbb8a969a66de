-- The SQL of one reconcile pass, run by collector/reconcile/store.py inside ONE
-- transaction that ReconcileLoop.run_once opens after a complete shoot listing. Set-based on purpose:
-- the listed shoots and the findings that hold now are COPied into temporary tables, then each step
-- below is one statement over all of them, so a pass costs a handful of round trips at any fleet size.

-- name: lock_pass
-- Called first in every pass: one pass at a time (the loop and `cluster-worker reconcile --once` may
-- overlap), held until the transaction ends. A row lock, not an advisory lock: taking it needs UPDATE
-- on tenant.worker_locks, which only the worker role has, so no other role can hold it against us.
UPDATE tenant.worker_locks SET last_taken = statement_timestamp() WHERE name = 'reconcile' RETURNING name

-- name: create_listed_stage
-- Called by stage_shoots: the shoots of this listing, dropped when the transaction ends.
CREATE TEMPORARY TABLE reconcile_listed (
    uid uuid PRIMARY KEY,
    name text NOT NULL,
    namespace text NOT NULL,
    cluster_label text NOT NULL,
    organization_label text,
    cluster_id uuid,
    organization_id uuid,
    kubernetes_version text NOT NULL,
    region text NOT NULL,
    created timestamptz NOT NULL
) ON COMMIT DROP

-- name: copy_listed
-- Called by stage_shoots: COPY target for the listed shoots.
COPY pg_temp.reconcile_listed (
    uid, name, namespace, cluster_label, organization_label, cluster_id, organization_id,
    kubernetes_version, region, created
) FROM STDIN

-- name: analyze_listed
-- Called by stage_shoots: temporary tables get no autovacuum statistics; the planner needs the row count.
ANALYZE pg_temp.reconcile_listed

-- name: read_clusters
-- Called by read_clusters: every live cluster, plus the deleted ones a listed shoot still names, with
-- their organization's deletion and their sync state; the inputs of the drift rules.
SELECT c.id, c.organization_id, c.kubernetes_version, c.deleted, o.deleted AS organization_deleted,
       s.cluster_id IS NOT NULL AS has_sync_state, s.sync_status, s.shoot_status, s.shoot_operation,
       s.first_completed
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
WHERE c.deleted IS NULL
   OR c.id IN (SELECT l.cluster_id FROM pg_temp.reconcile_listed AS l WHERE l.cluster_id IS NOT NULL)

-- name: read_garden_organizations
-- Called by read_garden_organizations: every live organization but the system one; reconcile maps
-- Gardener's projects to them (by label, else by name) and looks for unlabeled shoots in their namespaces.
SELECT o.id, o.name
FROM tenant.organizations AS o
WHERE o.deleted IS NULL AND o.id <> tenant.system_organization_id()
ORDER BY o.id

-- name: refresh_known_shoots
-- Called by store_shoots: known shoots listed again; last_seen moves, the observed fields follow the
-- garden, and one that had dropped out of the listing is live again.
WITH refreshed AS (
    UPDATE tenant.gardener_shoots AS s
    SET name = l.name,
        namespace = l.namespace,
        cluster_label = l.cluster_label,
        organization_label = l.organization_label,
        cluster_id = l.cluster_id,
        organization_id = l.organization_id,
        kubernetes_version = l.kubernetes_version,
        region = l.region,
        created = l.created,
        -- GREATEST: a clock that stepped back must not break last_seen >= first_seen.
        last_seen = GREATEST(%(now)s, s.last_seen),
        deleted = NULL
    FROM pg_temp.reconcile_listed AS l
    WHERE s.uid = l.uid
    RETURNING 1
)
SELECT count(*) FROM refreshed

-- name: insert_new_shoots
-- Called by store_shoots: shoots this mirror has never seen (a shoot re-created under the same name
-- has a new uid, so it is a new row).
WITH inserted AS (
    INSERT INTO tenant.gardener_shoots (
        uid, name, namespace, cluster_label, organization_label, cluster_id, organization_id,
        kubernetes_version, region, created, first_seen, last_seen
    )
    SELECT l.uid, l.name, l.namespace, l.cluster_label, l.organization_label, l.cluster_id, l.organization_id,
           l.kubernetes_version, l.region, l.created, %(now)s, %(now)s
    FROM pg_temp.reconcile_listed AS l
    WHERE NOT EXISTS (SELECT 1 FROM tenant.gardener_shoots AS s WHERE s.uid = l.uid)
    ON CONFLICT (uid) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM inserted

-- name: soft_delete_unlisted_shoots
-- Called by store_shoots: live shoots the listing no longer has; the row is kept with `deleted` set.
WITH gone AS (
    UPDATE tenant.gardener_shoots AS s
    SET deleted = GREATEST(%(now)s, s.last_seen)
    WHERE s.deleted IS NULL
      AND NOT EXISTS (SELECT 1 FROM pg_temp.reconcile_listed AS l WHERE l.uid = s.uid)
    RETURNING 1
)
SELECT count(*) FROM gone

-- name: close_ledger_of_gone_clusters
-- Called by close_ledger_of_gone_clusters after store_shoots: the active ledger rows of a cluster that
-- is deleted, or whose organization is, are recorded as destroyed once this complete listing has no
-- shoot claiming it (the shoot is gone, so is everything that ran in it). A deletion still under way
-- (its shoot listed), a lost, unreachable or hibernated cluster keep their rows. `destroyed_reason`
-- says how it was decided; a row closed once is never touched again (destroyed IS NULL).
-- `destroyed` is the first evidence that the resources were gone, not this pass's time: when the
-- garden stopped listing the cluster's shoot (the mirror's `deleted`, set by store_shoots, this pass's
-- time when the shoot vanished just now), or, when no shoot of the cluster was ever mirrored, the
-- cluster's (organization's) deletion; never before the row was last seen, never after now.
WITH gone_clusters AS (
    SELECT c.id,
           CASE WHEN c.deleted IS NOT NULL THEN 'cluster_deleted' ELSE 'organization_deleted' END AS reason,
           coalesce(c.deleted, o.deleted) AS deleted
    FROM tenant.clusters AS c
    JOIN tenant.organizations AS o ON o.id = c.organization_id
    WHERE (c.deleted IS NOT NULL OR o.deleted IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM pg_temp.reconcile_listed AS l WHERE l.cluster_id = c.id)
      AND EXISTS (
          SELECT 1 FROM tenant.infrastructure_resources AS r WHERE r.cluster_id = c.id AND r.destroyed IS NULL
      )
),
evidence AS (
    SELECT g.id, g.reason,
           LEAST(
               %(now)s,
               coalesce(
                   (SELECT max(s.deleted) FROM tenant.gardener_shoots AS s WHERE s.cluster_id = g.id), g.deleted
               )
           ) AS gone
    FROM gone_clusters AS g
),
closed AS (
    UPDATE tenant.infrastructure_resources AS r
    SET destroyed = GREATEST(e.gone, r.last_seen), destroyed_reason = e.reason
    FROM evidence AS e
    WHERE r.cluster_id = e.id AND r.destroyed IS NULL
    RETURNING e.reason
)
SELECT reason, count(*) FROM closed GROUP BY reason

-- name: create_gardener_ledger_stage
-- Called by store_gardener_ledger: the rows this listing's shoots imply (ledger_rows.py), and which
-- (cluster, type) pairs it could read at all; dropped when the transaction ends.
CREATE TEMPORARY TABLE reconcile_ledger (
    cluster_id uuid NOT NULL,
    resource_type text NOT NULL,
    name text NOT NULL,
    resource_id text NOT NULL,
    billable boolean NOT NULL,
    details jsonb,
    PRIMARY KEY (cluster_id, resource_type, name)
) ON COMMIT DROP

-- name: create_gardener_ledger_listed_stage
-- Called by store_gardener_ledger: the (cluster, type) pairs this listing could read.
CREATE TEMPORARY TABLE reconcile_ledger_listed (
    cluster_id uuid NOT NULL,
    resource_type text NOT NULL,
    PRIMARY KEY (cluster_id, resource_type)
) ON COMMIT DROP

-- name: copy_gardener_ledger
-- Called by store_gardener_ledger: COPY target for the implied rows.
COPY pg_temp.reconcile_ledger (cluster_id, resource_type, name, resource_id, billable, details) FROM STDIN

-- name: copy_gardener_ledger_listed
-- Called by store_gardener_ledger: COPY target for the (cluster, type) pairs read.
COPY pg_temp.reconcile_ledger_listed (cluster_id, resource_type) FROM STDIN

-- name: analyze_gardener_ledger
-- Called by store_gardener_ledger: temporary tables get no autovacuum statistics.
ANALYZE pg_temp.reconcile_ledger

-- name: analyze_gardener_ledger_listed
-- Called by store_gardener_ledger: as above.
ANALYZE pg_temp.reconcile_ledger_listed

-- name: close_gardener_rows
-- Called by store_gardener_ledger after close_ledger_of_gone_clusters: an active gardener.* row is
-- gone when no listed shoot claims its cluster any more (this complete listing is the evidence), or
-- when its type was read for the cluster and the shoot no longer has it, or has it from another shoot
-- (a re-created shoot: new uid, new rows). A type that could not be read leaves its rows alone.
WITH closed AS (
    UPDATE tenant.infrastructure_resources AS r
    SET destroyed = GREATEST(%(now)s, r.last_seen), destroyed_reason = 'not_found'
    WHERE r.destroyed IS NULL
      AND r.resource_type = ANY (%(types)s::text[])
      AND (
          NOT EXISTS (SELECT 1 FROM pg_temp.reconcile_listed AS l WHERE l.cluster_id = r.cluster_id)
          OR (
              EXISTS (
                  SELECT 1 FROM pg_temp.reconcile_ledger_listed AS t
                  WHERE t.cluster_id = r.cluster_id AND t.resource_type = r.resource_type
              )
              AND NOT EXISTS (
                  SELECT 1 FROM pg_temp.reconcile_ledger AS d
                  WHERE d.cluster_id = r.cluster_id AND d.resource_type = r.resource_type AND d.name = r.name
                    AND d.resource_id = r.resource_id
              )
          )
      )
    RETURNING r.resource_type
)
SELECT resource_type, count(*) FROM closed GROUP BY resource_type

-- name: change_gardener_details
-- Called by store_gardener_ledger: active rows whose shoot now says otherwise of them (a pool's
-- machine type, minimum or maximum) follow it; the row is the same resource, so it stays.
WITH changed AS (
    UPDATE tenant.infrastructure_resources AS r
    SET details = d.details, last_seen = GREATEST(%(now)s, r.last_seen)
    FROM pg_temp.reconcile_ledger AS d
    WHERE r.destroyed IS NULL AND r.cluster_id = d.cluster_id AND r.resource_type = d.resource_type
      AND r.namespace = '' AND r.name = d.name AND r.resource_id = d.resource_id
      AND r.details IS DISTINCT FROM d.details
    RETURNING r.resource_type
)
SELECT resource_type, count(*) FROM changed GROUP BY resource_type

-- name: touch_gardener_rows
-- Called by store_gardener_ledger: every active row the listing still shows was seen now.
WITH touched AS (
    UPDATE tenant.infrastructure_resources AS r
    SET last_seen = %(now)s
    FROM pg_temp.reconcile_ledger AS d
    WHERE r.destroyed IS NULL AND r.cluster_id = d.cluster_id AND r.resource_type = d.resource_type
      AND r.namespace = '' AND r.name = d.name AND r.resource_id = d.resource_id
      AND r.last_seen < %(now)s
    RETURNING 1
)
SELECT count(*) FROM touched

-- name: insert_gardener_rows
-- Called by store_gardener_ledger last: implied rows with no active row are created now. The partial
-- unique index on active rows makes a racing insert do nothing.
WITH inserted AS (
    INSERT INTO tenant.infrastructure_resources (
        cluster_id, resource_type, resource_id, name, namespace, billable, created, last_seen, details
    )
    SELECT d.cluster_id, d.resource_type, d.resource_id, d.name, '', d.billable, %(now)s, %(now)s, d.details
    FROM pg_temp.reconcile_ledger AS d
    WHERE NOT EXISTS (
        SELECT 1 FROM tenant.infrastructure_resources AS r
        WHERE r.destroyed IS NULL AND r.cluster_id = d.cluster_id AND r.resource_type = d.resource_type
          AND r.namespace = '' AND r.name = d.name
    )
    ON CONFLICT (cluster_id, resource_type, namespace, name) WHERE destroyed IS NULL DO NOTHING
    RETURNING resource_type
)
SELECT resource_type, count(*) FROM inserted GROUP BY resource_type

-- name: create_findings_stage
-- Called by store_findings: the findings that hold in this pass, dropped when the transaction ends.
CREATE TEMPORARY TABLE reconcile_findings (
    kind text NOT NULL,
    subject text NOT NULL,
    cluster_id uuid,
    shoot_uid uuid,
    organization_id uuid,
    details jsonb NOT NULL,
    PRIMARY KEY (kind, subject)
) ON COMMIT DROP

-- name: copy_findings
-- Called by store_findings: COPY target for the findings that hold now.
COPY pg_temp.reconcile_findings (kind, subject, cluster_id, shoot_uid, organization_id, details) FROM STDIN

-- name: resolve_unseen_findings
-- Called by store_findings: open findings this pass no longer sees are resolved (never deleted),
-- except those of a kind the pass could not evaluate (not seen is not gone).
WITH resolved AS (
    UPDATE tenant.drift_findings AS f
    SET resolved = GREATEST(%(now)s, f.last_detected)
    WHERE f.resolved IS NULL
      AND f.kind <> ALL (%(not_evaluated)s::text[])
      AND NOT EXISTS (
          SELECT 1 FROM pg_temp.reconcile_findings AS n WHERE n.kind = f.kind AND n.subject = f.subject
      )
    RETURNING f.kind
)
SELECT kind, count(*) FROM resolved GROUP BY kind

-- name: move_seen_findings
-- Called by store_findings: open findings seen again keep first_detected; last_detected moves and
-- details show the latest observation.
WITH moved AS (
    UPDATE tenant.drift_findings AS f
    SET last_detected = GREATEST(%(now)s, f.last_detected),
        details = n.details,
        cluster_id = n.cluster_id,
        shoot_uid = n.shoot_uid,
        organization_id = n.organization_id
    FROM pg_temp.reconcile_findings AS n
    WHERE f.resolved IS NULL AND f.kind = n.kind AND f.subject = n.subject
    RETURNING f.kind
)
SELECT kind, count(*) FROM moved GROUP BY kind

-- name: open_new_findings
-- Called by store_findings: findings with no open row become new rows (a recurrence after
-- resolution too); the partial unique index keeps one open row per (kind, subject).
WITH opened AS (
    INSERT INTO tenant.drift_findings (
        kind, subject, cluster_id, shoot_uid, organization_id, details, first_detected, last_detected
    )
    SELECT n.kind, n.subject, n.cluster_id, n.shoot_uid, n.organization_id, n.details, %(now)s, %(now)s
    FROM pg_temp.reconcile_findings AS n
    WHERE NOT EXISTS (
        SELECT 1 FROM tenant.drift_findings AS f
        WHERE f.resolved IS NULL AND f.kind = n.kind AND f.subject = n.subject
    )
    ON CONFLICT (kind, subject) WHERE resolved IS NULL DO NOTHING
    RETURNING kind
)
SELECT kind, count(*) FROM opened GROUP BY kind

-- name: record_heartbeat
-- Called last in every stored pass: when reconcile last completed and at what interval, so the
-- staff view can tell how old the last good pass is.
INSERT INTO tenant.worker_heartbeats (loop, last_completed, interval_seconds, first_completed, details)
VALUES ('reconcile', %(now)s, %(interval_seconds)s, %(now)s, %(details)s)
ON CONFLICT (loop, shard) DO UPDATE
SET last_completed = EXCLUDED.last_completed,
    interval_seconds = EXCLUDED.interval_seconds,
    details = EXCLUDED.details

-- name: count_open_findings
-- Called after storing a pass: open findings per kind, for the summary and the metrics.
SELECT kind, count(*) FROM tenant.drift_findings WHERE resolved IS NULL GROUP BY kind
