-- 0009: search in the staff view. ListClusters, ListOrganizations and SearchNamespaces match names
-- case-insensitively: a query of three or more characters as a substring, a shorter one as a prefix.
--
-- Substrings are served by trigram GIN indexes (pg_trgm, which ships with PostgreSQL and is a trusted
-- extension, so the owner may create it). It lives in a schema of its own that no service role may
-- use: the indexes serve plain LIKE, so no caller ever needs one of its functions. Prefixes (too
-- short for a trigram) are served by btree indexes with text_pattern_ops, which answer
-- `lower(name) LIKE 'ab%'` as a range. Both index lower(name), the expression the queries match.
SET LOCAL lock_timeout = '10s';

CREATE SCHEMA fleet_ext AUTHORIZATION fun_owner;
REVOKE ALL ON SCHEMA fleet_ext FROM PUBLIC;
CREATE EXTENSION pg_trgm SCHEMA fleet_ext;

-- clusters: by name (ListClusters' query).
CREATE INDEX clusters_idx_name_trgm ON tenant.clusters USING gin (lower(name) fleet_ext.gin_trgm_ops);
CREATE INDEX clusters_idx_name_prefix ON tenant.clusters (lower(name) text_pattern_ops);

-- organizations: by name and alias (ListOrganizations' query, and ListClusters' by organization).
CREATE INDEX organizations_idx_name_trgm ON tenant.organizations USING gin (lower(name) fleet_ext.gin_trgm_ops);
CREATE INDEX organizations_idx_alias_trgm ON tenant.organizations USING gin (lower(alias) fleet_ext.gin_trgm_ops);
CREATE INDEX organizations_idx_name_prefix ON tenant.organizations (lower(name) text_pattern_ops);
CREATE INDEX organizations_idx_alias_prefix ON tenant.organizations (lower(alias) text_pattern_ops);
-- ListOrganizations' other orders: (alias, name, id) and (created, name, id).
CREATE INDEX organizations_idx_alias_name_id ON tenant.organizations (alias, name, id);
CREATE INDEX organizations_idx_created_name_id ON tenant.organizations (created, name, id);

-- namespaces: live ones by name (SearchNamespaces), and in (name, id) order for a common substring.
CREATE INDEX namespaces_idx_live_name_trgm ON tenant.namespaces USING gin (lower(name) fleet_ext.gin_trgm_ops)
    WHERE deleted IS NULL;
CREATE INDEX namespaces_idx_live_name_prefix ON tenant.namespaces (lower(name) text_pattern_ops)
    WHERE deleted IS NULL;
CREATE INDEX namespaces_idx_live_name_id ON tenant.namespaces (name, id) WHERE deleted IS NULL;

-- The status of a live cluster, as an expression index: ListClusters' status filter on live clusters
-- spells exactly this expression (queries.sql), so ANALYZE keeps statistics on it and the planner
-- knows how common each status is (a function it cannot see into it would guess at). A common status
-- then walks the order's index and filters; a rare one reads its clusters through this index.
CREATE INDEX cluster_sync_state_idx_live_status ON tenant.cluster_sync_state
    (tenant.cluster_status(false, sync_status, shoot_status, shoot_operation, first_completed IS NOT NULL));

-- fleet_history: a bounded history of what the collector observes, for trends. The inventory loop
-- writes after each round one fleet-wide row (resolution 'round') and, in the first round of each
-- hour, one row per live organization and one fleet-wide (resolution 'hour'): the hourly rows are the
-- downsampled history, the round rows the recent detail. organization_id is the nil UUID for the
-- fleet-wide rows (a key part, so never NULL). Counts follow GetFleetSummary's rules: live clusters
-- of live, non-system organizations, node, pod and capacity totals over ready clusters only.
-- Rows older than the configured retention are pruned by tenant.prune_fleet_history (the worker
-- deletes nothing itself; the function runs as the owner and deletes only by age).
CREATE TABLE tenant.fleet_history (
    resolution text NOT NULL,
    organization_id uuid NOT NULL,
    at timestamptz NOT NULL,
    clusters integer NOT NULL,
    clusters_by_status jsonb NOT NULL,
    nodes bigint NOT NULL,
    ready_nodes bigint NOT NULL,
    pods bigint NOT NULL,
    cpu_allocatable_millicores bigint NOT NULL,
    memory_allocatable_bytes bigint NOT NULL,
    open_findings_by_kind jsonb NOT NULL,
    CONSTRAINT fleet_history_pk PRIMARY KEY (resolution, organization_id, at),
    CONSTRAINT fleet_history_ck_resolution CHECK (resolution IN ('round', 'hour')),
    CONSTRAINT fleet_history_ck_objects CHECK (
        jsonb_typeof(clusters_by_status) = 'object' AND jsonb_typeof(open_findings_by_kind) = 'object'
    )
);
ALTER TABLE tenant.fleet_history ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.fleet_history TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.fleet_history TO fun_cluster_worker;
CREATE POLICY fleet_history_admin_api_read ON tenant.fleet_history
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY fleet_history_cluster_worker_write ON tenant.fleet_history
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- Deletes history rows older than the retention of their resolution; returns how many.
CREATE FUNCTION tenant.prune_fleet_history(round_before timestamptz, hour_before timestamptz) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog
AS $$
    WITH gone AS (
        DELETE FROM tenant.fleet_history AS h
        WHERE (h.resolution = 'round' AND h.at < round_before) OR (h.resolution = 'hour' AND h.at < hour_before)
        RETURNING 1
    )
    SELECT count(*) FROM gone
$$;
REVOKE EXECUTE ON FUNCTION tenant.prune_fleet_history(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.prune_fleet_history(timestamptz, timestamptz) TO fun_cluster_worker;
