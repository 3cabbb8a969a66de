-- 0008: a database boundary that holds against a hostile process holding one of our roles.
--
-- 1. The reconcile pass serialises on a row lock of tenant.worker_locks instead of an advisory lock.
--    Any role may take any advisory lock, so the anonymous API could hold reconcile's and fail every
--    pass; a row lock needs UPDATE on the table, which only the worker role has.
-- 2. The worker may UPDATE only the columns it really moves; ids, keys, created and first-seen times
--    are fixed at INSERT. A resolved finding and a destroyed ledger row are history: a trigger
--    refuses any UPDATE of them, for every role, the owner's included.
-- 3. PostgreSQL's own catalog (run as the migrating superuser): large objects cannot be created by
--    PUBLIC; per-relation statistics and sizes, and the row-count columns of pg_class, are readable
--    only by pg_read_all_stats and the two roles that read every row anyway; advisory locks are no
--    longer PUBLIC's. Temporary tables are a database privilege, kept outside the database's
--    contents, so db/database_grants.sql (applied on every migrate) revokes TEMP from PUBLIC.
SET LOCAL lock_timeout = '10s';

-- 1. The reconcile lock.
CREATE TABLE tenant.worker_locks (
    name text NOT NULL,
    -- When a pass last took the lock (the statement taking it sets it, which is what locks the row).
    last_taken timestamptz,
    CONSTRAINT worker_locks_pk PRIMARY KEY (name),
    CONSTRAINT worker_locks_ck_name CHECK (name IN ('reconcile'))
);
INSERT INTO tenant.worker_locks (name) VALUES ('reconcile');
ALTER TABLE tenant.worker_locks ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.worker_locks TO fun_platform_admin_api;
GRANT SELECT, UPDATE (last_taken) ON tenant.worker_locks TO fun_cluster_worker;
CREATE POLICY worker_locks_admin_api_read ON tenant.worker_locks
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY worker_locks_cluster_worker_take ON tenant.worker_locks
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- 2. The worker's UPDATE narrowed to the columns its statements set.
REVOKE UPDATE ON tenant.cluster_snapshots FROM fun_cluster_worker;
GRANT UPDATE (
    observed, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores, memory_allocatable_bytes,
    last_error, last_error_at
) ON tenant.cluster_snapshots TO fun_cluster_worker;

REVOKE UPDATE ON tenant.node_pool_snapshots FROM fun_cluster_worker;
GRANT UPDATE (cluster_id, observed, nodes, ready_nodes) ON tenant.node_pool_snapshots TO fun_cluster_worker;

REVOKE UPDATE ON tenant.namespace_snapshots FROM fun_cluster_worker;
GRANT UPDATE (cluster_id, observed, pods) ON tenant.namespace_snapshots TO fun_cluster_worker;

REVOKE UPDATE ON tenant.worker_heartbeats FROM fun_cluster_worker;
GRANT UPDATE (last_completed, interval_seconds, details) ON tenant.worker_heartbeats TO fun_cluster_worker;

REVOKE UPDATE ON tenant.gardener_shoots FROM fun_cluster_worker;
GRANT UPDATE (
    name, namespace, cluster_label, organization_label, cluster_id, organization_id, kubernetes_version, region,
    created, last_seen, deleted
) ON tenant.gardener_shoots TO fun_cluster_worker;

REVOKE UPDATE ON tenant.drift_findings FROM fun_cluster_worker;
GRANT UPDATE (cluster_id, shoot_uid, details, last_detected, resolved) ON tenant.drift_findings TO fun_cluster_worker;

REVOKE UPDATE ON tenant.infrastructure_resources FROM fun_cluster_worker;
GRANT UPDATE (resource_id, last_seen, destroyed, destroyed_reason) ON tenant.infrastructure_resources
    TO fun_cluster_worker;

-- A closed row (TG_ARGV[0] names the column that closed it) is never updated again.
CREATE FUNCTION tenant.refuse_rewriting_history() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog
AS $$
BEGIN
    RAISE EXCEPTION 'tenant.% row % is % and is never rewritten', TG_TABLE_NAME, OLD.id, TG_ARGV[0]
        USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER drift_findings_keep_resolved BEFORE UPDATE ON tenant.drift_findings
    FOR EACH ROW WHEN (OLD.resolved IS NOT NULL) EXECUTE FUNCTION tenant.refuse_rewriting_history('resolved');
CREATE TRIGGER infrastructure_resources_keep_destroyed BEFORE UPDATE ON tenant.infrastructure_resources
    FOR EACH ROW WHEN (OLD.destroyed IS NOT NULL) EXECUTE FUNCTION tenant.refuse_rewriting_history('destroyed');

-- 3. PostgreSQL's catalog: only the superuser may change its privileges.
RESET ROLE;
DO $catalog$
DECLARE
    f regprocedure;
    pg_class_columns text;
BEGIN
    -- Large objects: creating one writes into the database; no role of ours needs that.
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND p.proname IN ('lo_create', 'lo_creat', 'lo_from_bytea', 'lo_import')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
    -- Statistics of one relation, function or database (every pg_stat_get_*(oid)), and sizes: the
    -- row and page counts of tenant tables. Monitoring keeps them through pg_read_all_stats, and the
    -- two roles that read every row anyway (the staff API, the worker) keep them too.
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND ((p.proname LIKE 'pg\_stat\_get\_%' AND p.pronargs = 1 AND p.proargtypes[0] = 'pg_catalog.oid'::regtype)
               OR p.proname IN ('pg_relation_size', 'pg_total_relation_size', 'pg_table_size', 'pg_indexes_size'))
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO pg_read_all_stats, fun_platform_admin_api, fun_cluster_worker', f);
    END LOOP;
    -- Advisory locks: a lock any role can take is a lock any role can hold against us.
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND (p.proname LIKE 'pg\_advisory\_%' OR p.proname LIKE 'pg\_try\_advisory\_%')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
    -- pg_class: every column stays readable by PUBLIC but the planner's counts of rows and pages.
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO pg_class_columns
    FROM pg_catalog.pg_attribute AS a
    WHERE a.attrelid = 'pg_catalog.pg_class'::regclass AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attname NOT IN ('reltuples', 'relpages', 'relallvisible', 'relallfrozen');
    REVOKE SELECT ON pg_catalog.pg_class FROM PUBLIC;
    EXECUTE format('GRANT SELECT (%s) ON pg_catalog.pg_class TO PUBLIC', pg_class_columns);
    GRANT SELECT ON pg_catalog.pg_class TO pg_read_all_stats, fun_platform_admin_api, fun_cluster_worker;
END
$catalog$;
