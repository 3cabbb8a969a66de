-- 0007: the cluster lifecycle the inventory follows: when a cluster turned ready, and why a ledger row
-- was closed.
--
-- cluster_sync_state.ready_since: when the cluster's shoot entered the ready set (shoot_status ready
-- or unhealthy, the shoot statuses the collector reads), NULL while it is outside it. FUN-23 grants a
-- cluster that turned ready less than three inventory intervals ago time before its snapshot may be
-- called stale; shoot_status_changed moves on every change (ready -> unhealthy too), so keying the
-- grace on it excused a two-hour-old snapshot for three more intervals after any flip. A trigger
-- keeps the column, whoever writes the row (the provisioning side in production, the seed and the
-- demo's status poller here): entering the set sets it to the change's time, moving within the set
-- keeps it, leaving the set clears it. tenant.snapshot_is_stale is unchanged; its callers now pass
-- this column as `ready_since`.
--
-- infrastructure_resources.destroyed_reason: how a row's destruction was decided. `not_found`: an
-- inventory pass listed the resource's type and the resource was gone. `cluster_deleted` and
-- `organization_deleted`: reconcile closed the active rows of a cluster that is deleted (or whose
-- organization is) once the garden no longer lists a shoot for it; an unreachable, lost or
-- hibernated cluster keeps its rows. Set exactly when `destroyed` is.
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.cluster_sync_state ADD COLUMN ready_since timestamptz;
-- The best known time for clusters ready now: their last status change.
UPDATE tenant.cluster_sync_state SET ready_since = shoot_status_changed WHERE shoot_status IN ('ready', 'unhealthy');

CREATE FUNCTION tenant.cluster_sync_state_keep_ready_since() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.shoot_status NOT IN ('ready', 'unhealthy') THEN
        NEW.ready_since := NULL;
    ELSIF TG_OP = 'INSERT' THEN
        NEW.ready_since := coalesce(NEW.ready_since, NEW.shoot_status_changed);
    ELSIF OLD.shoot_status IN ('ready', 'unhealthy') THEN
        NEW.ready_since := coalesce(OLD.ready_since, NEW.shoot_status_changed);
    ELSIF NEW.shoot_status_changed IS DISTINCT FROM OLD.shoot_status_changed THEN
        NEW.ready_since := NEW.shoot_status_changed;
    ELSE
        -- Turned ready without the writer moving shoot_status_changed: now is the best known time.
        NEW.ready_since := now();
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION tenant.cluster_sync_state_keep_ready_since() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.cluster_sync_state_keep_ready_since() FROM PUBLIC;

CREATE TRIGGER cluster_sync_state_ready_since
    BEFORE INSERT OR UPDATE ON tenant.cluster_sync_state
    FOR EACH ROW EXECUTE FUNCTION tenant.cluster_sync_state_keep_ready_since();

ALTER TABLE tenant.cluster_sync_state
    ADD CONSTRAINT cluster_sync_state_ck_ready_since CHECK ((ready_since IS NOT NULL) = (shoot_status IN ('ready', 'unhealthy')));

ALTER TABLE tenant.infrastructure_resources ADD COLUMN destroyed_reason text;
UPDATE tenant.infrastructure_resources SET destroyed_reason = 'not_found' WHERE destroyed IS NOT NULL;
ALTER TABLE tenant.infrastructure_resources
    ADD CONSTRAINT infrastructure_resources_ck_destroyed_reason CHECK (
        destroyed_reason IN ('not_found', 'cluster_deleted', 'organization_deleted')
        AND destroyed IS NOT NULL
        OR destroyed_reason IS NULL AND destroyed IS NULL
    );

-- The staff view gains ready_since (appended: CREATE OR REPLACE keeps the columns before it).
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
       s.ready_since
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
LEFT JOIN tenant.worker_heartbeats AS inventory ON inventory.loop = 'inventory'
WHERE c.organization_id <> tenant.system_organization_id();
