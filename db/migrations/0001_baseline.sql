-- 0001, the baseline: every object fleet inventory adds to the platform's database. It squashes the
-- migrations written before it (they had run on no database outside tests and demos) and applies onto
-- Fundament's own database as Fundament has it (schema version 33). Forward-only from here: the next
-- migrations are 0002, 0003, ... (docs/database.md, 'Migrations').
--
-- What this relies on is the platform model: Fundament's tenant tables (organizations, clusters,
-- node_pools, projects, namespaces, cluster_outbox), its roles and its system organization, which
-- Fundament's own migrations create in production and db/fundament/tenant_model.sql stands in for in
-- the demo and the tests. It first checks that they are there and refuses, naming what is missing.
--
-- It adds only objects of its own, and never alters Fundament's: on Fundament's tables the
-- `listed_publicly` column (FUN-23 §4) with its audit trigger, the staff API's read grants and
-- policies, indexes for the staff queries and the triggers that keep the staff listing, each named
-- `fleet_…` so that none can collide with an object a later Fundament release adds; and the tables,
-- views and functions of FUN-23 (snapshots, heartbeats, the shoot mirror, drift findings, the ledger,
-- history, the listing, the public overview function). It never writes public.schema_migrations
-- (Fundament's services refuse to start unless its version is exactly theirs). Nothing here may block
-- an operation of Fundament's: no foreign key of ours points at an organization except from derived
-- rows that go with it (ON DELETE CASCADE), and the triggers of ours on Fundament's tables only refresh
-- derived rows.
--
-- fun_cluster_worker may SELECT, INSERT and UPDATE (named columns of) its tables and never DELETE
-- (rows are resolved, destroyed or soft-deleted instead); fun_platform_admin_api reads; the anonymous
-- fun_platform_public_api may only run tenant.platform_overview().
SET LOCAL lock_timeout = '10s';

-- What this relies on, checked first: a database without it is refused with every missing object named.
DO $platform_model$
DECLARE
    needed constant text[][] := ARRAY[
        ['tenant.organizations', 'id,name,alias,created,deleted'],
        ['tenant.clusters', 'id,organization_id,name,region,kubernetes_version,created,deleted,shoot_status,'
                            'shoot_status_message,shoot_status_updated,outbox_status,outbox_retries,outbox_error'],
        ['tenant.node_pools', 'id,cluster_id,name,machine_type,autoscale_min,autoscale_max,created,deleted'],
        ['tenant.projects', 'id,cluster_id,name,alias,created,deleted'],
        ['tenant.namespaces', 'id,project_id,name,created,deleted'],
        ['tenant.cluster_outbox', 'id,cluster_id,status,processed,created']
    ];
    missing text[] := '{}';
    relation text;
    column_name text;
    role_name text;
BEGIN
    FOR i IN 1 .. array_length(needed, 1) LOOP
        relation := needed[i][1];
        IF to_regclass(relation) IS NULL THEN
            missing := missing || format('table %s', relation);
            CONTINUE;
        END IF;
        FOREACH column_name IN ARRAY string_to_array(needed[i][2], ',') LOOP
            IF NOT EXISTS (
                SELECT 1 FROM pg_catalog.pg_attribute AS a
                WHERE a.attrelid = to_regclass(relation) AND a.attname = column_name AND a.attnum > 0
                  AND NOT a.attisdropped
            ) THEN
                missing := missing || format('column %s.%s', relation, column_name);
            END IF;
        END LOOP;
    END LOOP;
    FOREACH role_name IN ARRAY ARRAY['fun_owner', 'fun_cluster_worker', 'fun_platform_admin_api',
                                     'fun_platform_public_api'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = role_name) THEN
            missing := missing || format('role %s', role_name);
        END IF;
    END LOOP;
    IF cardinality(missing) > 0 THEN
        RAISE EXCEPTION 'the platform model fleet inventory applies onto is incomplete; missing: %',
            array_to_string(missing, '; ')
            USING ERRCODE = 'undefined_object',
                  HINT = 'apply fleet inventory onto Fundament''s database (schema version 33 or later)';
    END IF;
END
$platform_model$;

-- The platform's own organization (Fundament seeds it in every environment): owns first-party things,
-- is no tenant, and every cross-organization query (public or staff) leaves it out through this one
-- function. common/organizations.py holds the same id, and a test holds the two equal.
CREATE FUNCTION tenant.system_organization_id() RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '019b4000-0000-7000-8000-000000000000'::uuid $$;
REVOKE EXECUTE ON FUNCTION tenant.system_organization_id() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.system_organization_id() TO fun_platform_admin_api, fun_cluster_worker;

-- Fundament seeds the system organization in every environment; without it, this is not Fundament's
-- database (or not one it finished setting up).
DO $system_organization$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM tenant.organizations WHERE id = tenant.system_organization_id() AND name = 'system'
    ) THEN
        RAISE EXCEPTION 'the platform model fleet inventory applies onto is incomplete; missing: %',
            format('the system organization (%s, system)', tenant.system_organization_id())
            USING ERRCODE = 'undefined_object';
    END IF;
END
$system_organization$;

GRANT USAGE ON SCHEMA tenant TO fun_platform_public_api, fun_platform_admin_api;

-- PostgreSQL grants EXECUTE on every new function to PUBLIC. fun_owner's functions start with no
-- grant at all instead, so a function added later is private until a migration grants it.
ALTER DEFAULT PRIVILEGES FOR ROLE fun_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

-- Search (ListClusters, ListOrganizations, SearchNamespaces) matches names case-insensitively: a query
-- of three or more characters as a substring, a shorter one as a prefix. Substrings are served by
-- trigram GIN indexes (pg_trgm, which ships with PostgreSQL and is a trusted extension, so the owner
-- may create it). It lives in a schema of its own that no service role may use: the indexes serve
-- plain LIKE, so no caller ever needs one of its functions. Prefixes (too short for a trigram) are
-- served by btree indexes with text_pattern_ops, which answer `lower(name) LIKE 'ab%'` as a range.
CREATE SCHEMA fleet_ext AUTHORIZATION fun_owner;
REVOKE ALL ON SCHEMA fleet_ext FROM PUBLIC;
CREATE EXTENSION pg_trgm SCHEMA fleet_ext;

-- The platform's tables: what fleet inventory adds ------------------------------------------------

-- organizations: FUN-23 §4's opt-in to the public overview, false until an operator lists one. Every
-- change of it is recorded (organization_listing_changes, below), whoever makes it.
ALTER TABLE tenant.organizations ADD COLUMN listed_publicly boolean NOT NULL DEFAULT false;
-- The system organization is never in the public overview, whatever anyone writes. Fundament never
-- writes this column, so the constraint can refuse none of its writes.
ALTER TABLE tenant.organizations ADD CONSTRAINT fleet_organizations_ck_system_unlisted CHECK (
    id <> tenant.system_organization_id() OR NOT listed_publicly
);
-- ListOrganizations pages by (name, id), (alias, name, id) or (created, name, id), over live and
-- deleted rows alike; its query matches lower(name) and lower(alias).
CREATE INDEX fleet_organizations_idx_name_id ON tenant.organizations (name, id);
CREATE INDEX fleet_organizations_idx_alias_name_id ON tenant.organizations (alias, name, id);
CREATE INDEX fleet_organizations_idx_created_name_id ON tenant.organizations (created, name, id);
CREATE INDEX fleet_organizations_idx_name_trgm ON tenant.organizations USING gin (lower(name) fleet_ext.gin_trgm_ops);
CREATE INDEX fleet_organizations_idx_alias_trgm ON tenant.organizations
    USING gin (lower(alias) fleet_ext.gin_trgm_ops);
CREATE INDEX fleet_organizations_idx_name_prefix ON tenant.organizations (lower(name) text_pattern_ops);
CREATE INDEX fleet_organizations_idx_alias_prefix ON tenant.organizations (lower(alias) text_pattern_ops);

-- clusters, by name, organization and region; live ones per organization (the counts).
CREATE INDEX fleet_clusters_idx_name_id ON tenant.clusters (name, id);
CREATE INDEX fleet_clusters_idx_organization_name_id ON tenant.clusters (organization_id, name, id);
CREATE INDEX fleet_clusters_idx_region_name_id ON tenant.clusters (region, name, id);
CREATE INDEX fleet_clusters_idx_live_organization ON tenant.clusters (organization_id) WHERE deleted IS NULL;

CREATE INDEX fleet_node_pools_idx_cluster_name ON tenant.node_pools (cluster_id, name);

-- GetCluster lists a cluster's projects by name; counts walk live projects per cluster.
CREATE INDEX fleet_projects_idx_cluster_name_id ON tenant.projects (cluster_id, name, id);
CREATE INDEX fleet_projects_idx_live_cluster ON tenant.projects (cluster_id) WHERE deleted IS NULL;

-- GetCluster lists namespaces per project by name (deleted ones included for history views); counts
-- walk live namespaces per project; SearchNamespaces walks a name's live namespaces by (name, id).
CREATE INDEX fleet_namespaces_idx_project_name_id ON tenant.namespaces (project_id, name, id);
CREATE INDEX fleet_namespaces_idx_live_name_id ON tenant.namespaces (name, id) WHERE deleted IS NULL;

-- A cluster's first completed sync: "a sync ever completed" (the sync state's first_completed).
CREATE INDEX fleet_cluster_outbox_idx_cluster_completed ON tenant.cluster_outbox (cluster_id, id)
    WHERE status = 'completed' AND cluster_id IS NOT NULL;

-- The staff API reads every platform table it shows, through USING (true) policies; it writes nothing.
GRANT SELECT ON tenant.organizations, tenant.clusters, tenant.node_pools, tenant.projects, tenant.namespaces
    TO fun_platform_admin_api;
CREATE POLICY fleet_organizations_admin_api_read ON tenant.organizations
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY fleet_clusters_admin_api_read ON tenant.clusters FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY fleet_node_pools_admin_api_read ON tenant.node_pools FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY fleet_projects_admin_api_read ON tenant.projects FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY fleet_namespaces_admin_api_read ON tenant.namespaces FOR SELECT TO fun_platform_admin_api USING (true);

-- The cluster status rules ------------------------------------------------------------------------

-- The SQL twins of common/clusterstatus.py, so the staff API can filter, page and count by status,
-- readiness and staleness inside one query. The Python module is the definition; these functions
-- must agree with it on every combination of inputs, which tests/db/test_clusterstatus_sql.py proves
-- by enumerating them. All are IMMUTABLE SQL functions of their arguments only (the time is an
-- argument), without SET clauses, so the planner inlines them into the calling query. They run with
-- the caller's rights and read no table.

-- The console status of a cluster. `deleted`: the cluster row is soft-deleted. `sync_status` NULL
-- means the cluster has no sync state (tenant.fleet_sync_state). `ever_completed`: first_completed IS NOT NULL.
CREATE FUNCTION tenant.cluster_status(
    deleted boolean, sync_status text, shoot_status text, shoot_operation text, ever_completed boolean
) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN deleted THEN CASE WHEN shoot_status = 'deleted' THEN 'deleted' ELSE 'deleting' END
        WHEN sync_status IS NULL THEN 'provisioning'
        WHEN shoot_status = 'error' OR sync_status = 'failed' THEN 'error'
        WHEN shoot_status = 'missing' AND ever_completed THEN 'lost'
        WHEN shoot_status = 'hibernating' THEN 'stopping'
        WHEN shoot_status = 'hibernated' THEN 'stopped'
        WHEN shoot_status = 'progressing' THEN
            CASE WHEN NOT ever_completed OR shoot_operation = 'create' THEN 'starting' ELSE 'upgrading' END
        WHEN shoot_status = 'unhealthy' THEN 'unhealthy'
        WHEN shoot_status = 'ready' THEN
            CASE WHEN ever_completed AND sync_status IN ('pending', 'retrying') THEN 'upgrading' ELSE 'running' END
        ELSE 'provisioning'
    END
$$;

-- UNHEALTHY, ERROR and LOST: the staff view's "needs attention" filter and count.
CREATE FUNCTION tenant.cluster_needs_attention(status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(status IN ('unhealthy', 'error', 'lost'), false) $$;

-- STARTING and UPGRADING.
CREATE FUNCTION tenant.cluster_is_updating(status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(status IN ('starting', 'upgrading'), false) $$;

-- Ready (what the collector reads): a live cluster of a live, non-system organization whose shoot is
-- ready or unhealthy.
CREATE FUNCTION tenant.cluster_is_ready(
    cluster_deleted boolean, organization_deleted boolean, organization_id uuid, shoot_status text
) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(
        NOT cluster_deleted AND NOT organization_deleted
        AND organization_id <> tenant.system_organization_id()
        AND shoot_status IN ('ready', 'unhealthy'),
        false
    )
$$;

-- Staleness: a ready cluster whose snapshot is older than three inventory intervals, as
-- the collector last recorded its interval. Not stale: a cluster ready (`ready_since`, from the
-- sync state) for less than three intervals; anything before the collector ever ran
-- (`interval_seconds` NULL). A ready cluster never collected (`observed` NULL) is stale once it has
-- been ready, and the collector has been running (`collector_since`, its first completed pass), for
-- three intervals: by then it had three chances to read it. `as_of` is the time of the question.
CREATE FUNCTION tenant.snapshot_is_stale(
    ready boolean,
    observed timestamptz,
    ready_since timestamptz,
    interval_seconds integer,
    collector_since timestamptz,
    as_of timestamptz
) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(
        ready
        AND interval_seconds IS NOT NULL
        AND (ready_since IS NULL OR extract(epoch FROM as_of - ready_since) >= 3 * interval_seconds)
        AND CASE
            WHEN observed IS NULL THEN
                collector_since IS NULL OR extract(epoch FROM as_of - collector_since) >= 3 * interval_seconds
            ELSE extract(epoch FROM as_of - observed) > 3 * interval_seconds
        END,
        false
    )
$$;

REVOKE EXECUTE ON FUNCTION
    tenant.cluster_status(boolean, text, text, text, boolean),
    tenant.cluster_needs_attention(text),
    tenant.cluster_is_updating(text),
    tenant.cluster_is_ready(boolean, boolean, uuid, text),
    tenant.snapshot_is_stale(boolean, timestamptz, timestamptz, integer, timestamptz, timestamptz)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    tenant.cluster_status(boolean, text, text, text, boolean),
    tenant.cluster_needs_attention(text),
    tenant.cluster_is_updating(text),
    tenant.cluster_is_ready(boolean, boolean, uuid, text),
    tenant.snapshot_is_stale(boolean, timestamptz, timestamptz, integer, timestamptz, timestamptz)
TO fun_platform_admin_api, fun_cluster_worker;

-- The sync state, as fleet inventory reads it ----------------------------------------------------

-- Fundament keeps a cluster's sync state as columns on tenant.clusters (the status poller writes
-- shoot_status, its message and time; a trigger copies the latest cluster_outbox row's status,
-- retries and error) and in the outbox itself (whether a sync ever completed). This view puts it in
-- FUN-23's vocabulary, one row per cluster the provisioning side has said anything about (no row:
-- PROVISIONING). It is named fleet_… because a later Fundament release has a view of its own called
-- cluster_sync_state.
--
-- shoot_status: Fundament's value, except two its poller encodes in the message: a ready shoot whose
-- conditions are not all healthy is `unhealthy`, and a shoot not found after a sync ever completed is
-- `missing` (reference: the producer rules of Fundament's GetShootStatus). shoot_operation: the
-- operation a progressing shoot's message names ("Create: …", "Reconcile: …"; "Shoot is being
-- created" has no operation yet and is a create), `delete` for a deleting one.
--
-- Times from the provisioning side's writers decide staleness, so they are clamped to this database's
-- clock: a status time in the future (another writer's clock running ahead) counts as now, never as a
-- longer grace (`shoot_status_changed`, `ready_since`). `ready_since` is when the shoot entered the
-- ready set (ready or unhealthy): Fundament's poller stops polling a ready cluster, so its status time
-- is when it turned ready. `sync_updated` is when the latest cluster row of the outbox was written or
-- processed.
CREATE VIEW tenant.fleet_sync_state WITH (security_invoker = true) AS
SELECT c.id AS cluster_id,
       coalesce(c.outbox_status, 'pending') AS sync_status,
       c.outbox_retries AS sync_attempts,
       c.outbox_error AS sync_error,
       (SELECT least(coalesce(o.processed, o.created), now())
        FROM tenant.cluster_outbox AS o
        WHERE o.cluster_id = c.id
        ORDER BY o.id DESC
        LIMIT 1) AS sync_updated,
       first.completed AS first_completed,
       x.shoot_status,
       CASE
           WHEN c.shoot_status = 'progressing' THEN CASE
               WHEN c.shoot_status_message = 'Shoot is being created' THEN 'create'
               WHEN lower(split_part(c.shoot_status_message, ':', 1)) IN ('create', 'reconcile', 'delete', 'migrate',
                                                                         'restore')
                   THEN lower(split_part(c.shoot_status_message, ':', 1))
           END
           WHEN c.shoot_status IN ('deleting', 'deleted') THEN 'delete'
       END AS shoot_operation,
       c.shoot_status_message AS shoot_message,
       -- least() passes over NULL, so a status never written stays NULL only through the CASE.
       CASE WHEN c.shoot_status_updated IS NOT NULL THEN least(c.shoot_status_updated, now()) END
           AS shoot_status_changed,
       CASE WHEN x.shoot_status IN ('ready', 'unhealthy') AND c.shoot_status_updated IS NOT NULL
           THEN least(c.shoot_status_updated, now())
       END AS ready_since
FROM tenant.clusters AS c
LEFT JOIN LATERAL (
    SELECT coalesce(o.processed, o.created) AS completed
    FROM tenant.cluster_outbox AS o
    WHERE o.cluster_id = c.id AND o.status = 'completed'
    ORDER BY o.id
    LIMIT 1
) AS first ON true
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN c.shoot_status = 'ready' AND c.shoot_status_message = 'Shoot reconciled but not all conditions healthy'
            THEN 'unhealthy'
        WHEN c.shoot_status = 'pending' AND c.shoot_status_message = 'Shoot not found in Gardener'
             AND first.completed IS NOT NULL
            THEN 'missing'
        ELSE c.shoot_status
    END AS shoot_status
) AS x
WHERE c.outbox_status IS NOT NULL OR c.shoot_status IS NOT NULL;

ALTER VIEW tenant.fleet_sync_state OWNER TO fun_owner;
REVOKE ALL ON tenant.fleet_sync_state FROM PUBLIC;
GRANT SELECT ON tenant.fleet_sync_state TO fun_platform_admin_api, fun_cluster_worker;
-- The view reads the outbox with the caller's rights: the staff role may read it (it has no row
-- security; the worker may already, as Fundament grants).
GRANT SELECT ON tenant.cluster_outbox TO fun_platform_admin_api;

-- Status times in the future, as this database's clock sees them (the worker counts them each round,
-- fleet_inventory_skewed_status_times): the sync state clamps them, this says how many it clamped.
CREATE FUNCTION tenant.skewed_status_times() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*) FROM tenant.clusters
    WHERE tenant.clusters.shoot_status_updated > now() AND tenant.clusters.deleted IS NULL
$$;
ALTER FUNCTION tenant.skewed_status_times() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.skewed_status_times() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.skewed_status_times() TO fun_cluster_worker;

-- The tables of FUN-23 -----------------------------------------------------------------------------
--
-- Snapshots are tables of their own, never columns on tenant.clusters: in Fundament every change to a
-- cluster row queues an authorization outbox row, and the collector writes every interval. The worker
-- may UPDATE only the columns it really moves: ids, keys, created and first-seen times are fixed at
-- INSERT.

-- cluster_snapshots: the latest observation per cluster. A failed collection keeps the numbers
-- and `observed` of the last good one and records last_error/last_error_at.
CREATE TABLE tenant.cluster_snapshots (
    cluster_id uuid NOT NULL,
    observed timestamptz,
    nodes integer NOT NULL DEFAULT 0,
    ready_nodes integer NOT NULL DEFAULT 0,
    pods integer NOT NULL DEFAULT 0,
    allocatable_pods integer NOT NULL DEFAULT 0,
    cpu_allocatable_millicores bigint NOT NULL DEFAULT 0,
    memory_allocatable_bytes bigint NOT NULL DEFAULT 0,
    last_error text,
    last_error_at timestamptz,
    -- Which collection source produced the numbers: the shoot's API server (`apiserver`), its
    -- Prometheus (`prometheus`) or mock mode (`mock`). Set with the numbers by every good collection
    -- and left as it was by a failed one, so it always says where the numbers shown came from.
    source text,
    CONSTRAINT cluster_snapshots_pk PRIMARY KEY (cluster_id),
    CONSTRAINT cluster_snapshots_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT cluster_snapshots_ck_counts CHECK (
        nodes >= 0 AND ready_nodes BETWEEN 0 AND nodes AND pods >= 0 AND allocatable_pods >= 0
        AND cpu_allocatable_millicores >= 0 AND memory_allocatable_bytes >= 0
    ),
    -- Either a collection succeeded once (observed) or one failed (last_error_at), or both.
    CONSTRAINT cluster_snapshots_ck_something_happened CHECK (observed IS NOT NULL OR last_error_at IS NOT NULL),
    CONSTRAINT cluster_snapshots_ck_error_pair CHECK ((last_error IS NULL) = (last_error_at IS NULL)),
    CONSTRAINT cluster_snapshots_ck_source CHECK (source IN ('apiserver', 'prometheus', 'mock'))
);
ALTER TABLE tenant.cluster_snapshots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_snapshots TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.cluster_snapshots TO fun_cluster_worker;
GRANT UPDATE (
    observed, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores, memory_allocatable_bytes,
    last_error, last_error_at, source
) ON tenant.cluster_snapshots TO fun_cluster_worker;
CREATE POLICY cluster_snapshots_admin_api_read ON tenant.cluster_snapshots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY cluster_snapshots_cluster_worker_write ON tenant.cluster_snapshots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- node_pool_snapshots: nodes per node pool as the collector last counted them.
CREATE TABLE tenant.node_pool_snapshots (
    node_pool_id uuid NOT NULL,
    cluster_id uuid NOT NULL,
    observed timestamptz NOT NULL,
    nodes integer NOT NULL,
    ready_nodes integer NOT NULL,
    CONSTRAINT node_pool_snapshots_pk PRIMARY KEY (node_pool_id),
    CONSTRAINT node_pool_snapshots_fk_node_pool FOREIGN KEY (node_pool_id) REFERENCES tenant.node_pools (id),
    CONSTRAINT node_pool_snapshots_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT node_pool_snapshots_ck_counts CHECK (nodes >= 0 AND ready_nodes BETWEEN 0 AND nodes)
);
CREATE INDEX node_pool_snapshots_idx_cluster ON tenant.node_pool_snapshots (cluster_id);
ALTER TABLE tenant.node_pool_snapshots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.node_pool_snapshots TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.node_pool_snapshots TO fun_cluster_worker;
GRANT UPDATE (
    cluster_id, observed, nodes, ready_nodes
) ON tenant.node_pool_snapshots TO fun_cluster_worker;
CREATE POLICY node_pool_snapshots_admin_api_read ON tenant.node_pool_snapshots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY node_pool_snapshots_cluster_worker_write ON tenant.node_pool_snapshots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- namespace_snapshots: running pods per tenant namespace as the collector last counted them. A
-- namespace a round could not read with certainty (the Prometheus source matching it by a name that a
-- project rename changed, two candidates, none) is never stored as 0 pods: its `pods` and `observed`
-- stay those of the last read, `unread_reason` says why this round could not read it and `unread_at`
-- when that round stored (docs/collector.md, 'Which namespace is which'). A read clears both; a
-- namespace never read has no row.
CREATE TABLE tenant.namespace_snapshots (
    namespace_id uuid NOT NULL,
    cluster_id uuid NOT NULL,
    observed timestamptz NOT NULL,
    pods integer NOT NULL,
    unread_reason text,
    unread_at timestamptz,
    CONSTRAINT namespace_snapshots_pk PRIMARY KEY (namespace_id),
    CONSTRAINT namespace_snapshots_fk_namespace FOREIGN KEY (namespace_id) REFERENCES tenant.namespaces (id),
    CONSTRAINT namespace_snapshots_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT namespace_snapshots_ck_pods CHECK (pods >= 0),
    CONSTRAINT namespace_snapshots_ck_unread_pair CHECK ((unread_reason IS NULL) = (unread_at IS NULL)),
    CONSTRAINT namespace_snapshots_ck_unread_reason CHECK (unread_reason IN ('not_found', 'renamed', 'ambiguous'))
);
CREATE INDEX namespace_snapshots_idx_cluster ON tenant.namespace_snapshots (cluster_id);
ALTER TABLE tenant.namespace_snapshots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespace_snapshots TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.namespace_snapshots TO fun_cluster_worker;
GRANT UPDATE (
    cluster_id, observed, pods, unread_reason, unread_at
) ON tenant.namespace_snapshots TO fun_cluster_worker;
CREATE POLICY namespace_snapshots_admin_api_read ON tenant.namespace_snapshots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY namespace_snapshots_cluster_worker_write ON tenant.namespace_snapshots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- worker_heartbeats: one row per periodic loop and shard. `last_completed` is when the loop last
-- completed a pass (inventory: queued a round; reconcile: stored a listing) and `interval_seconds` its
-- interval then; staleness is measured in those intervals. `first_completed` keeps when the loop first
-- ever completed a pass (the default fills it on the first insert; an upsert leaves it alone), so a
-- cluster the collector never read is only called stale once the collector had time to read it.
-- `shard` is `i/N`: the inventory split over N processes (INVENTORY_SHARD) writes one row per shard,
-- so each reports its own freshness; a loop that is not split is `0/1`.
CREATE TABLE tenant.worker_heartbeats (
    loop text NOT NULL,
    last_completed timestamptz NOT NULL,
    interval_seconds integer NOT NULL,
    first_completed timestamptz NOT NULL DEFAULT now(),
    details jsonb NOT NULL DEFAULT '{}'::jsonb,
    shard text NOT NULL DEFAULT '0/1',
    CONSTRAINT worker_heartbeats_pk PRIMARY KEY (loop, shard),
    CONSTRAINT worker_heartbeats_ck_loop CHECK (loop IN ('inventory', 'reconcile')),
    CONSTRAINT worker_heartbeats_ck_interval CHECK (interval_seconds > 0),
    CONSTRAINT worker_heartbeats_ck_details CHECK (jsonb_typeof(details) = 'object'),
    CONSTRAINT worker_heartbeats_ck_shard CHECK (
        shard ~ '^[0-9]{1,4}/[0-9]{1,4}$'
        AND split_part(shard, '/', 1)::integer < split_part(shard, '/', 2)::integer
    )
);
ALTER TABLE tenant.worker_heartbeats ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.worker_heartbeats TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.worker_heartbeats TO fun_cluster_worker;
GRANT UPDATE (
    last_completed, interval_seconds, details
) ON tenant.worker_heartbeats TO fun_cluster_worker;
CREATE POLICY worker_heartbeats_admin_api_read ON tenant.worker_heartbeats
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY worker_heartbeats_cluster_worker_write ON tenant.worker_heartbeats
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- worker_loops: one row per loop, over the shards of its current split (the N of the row written
-- last; rows of an earlier split are history). A loop is as fresh as its oldest shard, so a shard
-- that stopped shows; `shards_reporting` below `shards` says that a shard has not reported yet.
CREATE VIEW tenant.worker_loops WITH (security_invoker = true) AS
SELECT h.loop,
       current.shards,
       count(*)::integer AS shards_reporting,
       min(h.last_completed) AS last_completed,
       max(h.last_completed) AS newest_completed,
       max(h.interval_seconds) AS interval_seconds,
       min(h.first_completed) AS first_completed
FROM tenant.worker_heartbeats AS h
JOIN (
    SELECT DISTINCT ON (w.loop) w.loop, split_part(w.shard, '/', 2)::integer AS shards
    FROM tenant.worker_heartbeats AS w
    ORDER BY w.loop, w.last_completed DESC
) AS current ON current.loop = h.loop AND split_part(h.shard, '/', 2)::integer = current.shards
GROUP BY h.loop, current.shards;
ALTER VIEW tenant.worker_loops OWNER TO fun_owner;
REVOKE ALL ON tenant.worker_loops FROM PUBLIC;
GRANT SELECT ON tenant.worker_loops TO fun_platform_admin_api, fun_cluster_worker;

-- gardener_shoots: every shoot reconcile listed, upserted by uid, soft-deleted when no longer
-- listed. The raw label values are kept as they were (a label may be no UUID at all, or name a
-- cluster or organization that does not exist), so there is no foreign key on the parsed ids:
-- cluster_id/organization_id are the labels parsed as UUIDs, NULL when they are not UUIDs.
CREATE TABLE tenant.gardener_shoots (
    uid uuid NOT NULL,
    name text NOT NULL,
    namespace text NOT NULL,
    cluster_label text NOT NULL,
    organization_label text,
    cluster_id uuid,
    organization_id uuid,
    kubernetes_version text NOT NULL,
    region text NOT NULL,
    created timestamptz NOT NULL,
    first_seen timestamptz NOT NULL,
    last_seen timestamptz NOT NULL,
    deleted timestamptz,
    CONSTRAINT gardener_shoots_pk PRIMARY KEY (uid),
    CONSTRAINT gardener_shoots_ck_seen CHECK (last_seen >= first_seen),
    CONSTRAINT gardener_shoots_ck_deleted CHECK (deleted IS NULL OR deleted >= first_seen)
);
-- A cluster's live shoot(s): observed version, missing_shoot, findings per cluster.
CREATE INDEX gardener_shoots_idx_live_cluster ON tenant.gardener_shoots (cluster_id) WHERE deleted IS NULL;
CREATE INDEX gardener_shoots_idx_namespace_name ON tenant.gardener_shoots (namespace, name);
ALTER TABLE tenant.gardener_shoots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.gardener_shoots TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.gardener_shoots TO fun_cluster_worker;
GRANT UPDATE (
    name, namespace, cluster_label, organization_label, cluster_id, organization_id, kubernetes_version, region,
    created, last_seen, deleted
) ON tenant.gardener_shoots TO fun_cluster_worker;
CREATE POLICY gardener_shoots_admin_api_read ON tenant.gardener_shoots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY gardener_shoots_cluster_worker_write ON tenant.gardener_shoots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- drift_findings: disagreements between the database and Gardener (docs/reconcile.md, the kinds). At most one open finding
-- per (kind, subject); a finding is resolved, never deleted, and one that comes back is a new row.
CREATE TABLE tenant.drift_findings (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    kind text NOT NULL,
    -- The shoot uid or the cluster id (as text), depending on the kind.
    subject text NOT NULL,
    cluster_id uuid,
    shoot_uid uuid,
    details jsonb NOT NULL DEFAULT '{}'::jsonb,
    first_detected timestamptz NOT NULL,
    last_detected timestamptz NOT NULL,
    resolved timestamptz,
    -- The organization a finding concerns when no cluster is (an unlabeled shoot: its project's owner).
    -- No foreign key: a finding is history, kept when the organization is deleted for good, and its
    -- details name the organization as it was.
    organization_id uuid,
    CONSTRAINT drift_findings_pk PRIMARY KEY (id),
    CONSTRAINT drift_findings_ck_kind CHECK (kind IN (
        'orphan_shoot', 'shoot_of_deleted_cluster', 'missing_shoot', 'version_mismatch', 'organization_mismatch',
        'unlabeled_shoot'
    )),
    CONSTRAINT drift_findings_ck_subject CHECK (char_length(subject) BETWEEN 1 AND 255),
    CONSTRAINT drift_findings_ck_details CHECK (jsonb_typeof(details) = 'object'),
    CONSTRAINT drift_findings_ck_detected CHECK (last_detected >= first_detected),
    CONSTRAINT drift_findings_ck_resolved CHECK (resolved IS NULL OR resolved >= first_detected),
    CONSTRAINT drift_findings_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    -- Reconcile stores shoots and findings in one transaction; checking at commit frees it from an order.
    CONSTRAINT drift_findings_fk_shoot FOREIGN KEY (shoot_uid) REFERENCES tenant.gardener_shoots (uid)
        DEFERRABLE INITIALLY DEFERRED
);
CREATE UNIQUE INDEX drift_findings_uq_open_kind_subject ON tenant.drift_findings (kind, subject) WHERE resolved IS NULL;
-- ListDriftFindings pages open findings by (first_detected, id), optionally of one kind.
CREATE INDEX drift_findings_idx_open_first_detected ON tenant.drift_findings (first_detected, id) WHERE resolved IS NULL;
CREATE INDEX drift_findings_idx_open_kind_first_detected ON tenant.drift_findings (kind, first_detected, id)
    WHERE resolved IS NULL;
-- Open findings per cluster: counts in ListClusters, GetCluster, and the cluster/organization filters.
CREATE INDEX drift_findings_idx_open_cluster ON tenant.drift_findings (cluster_id, first_detected, id)
    WHERE resolved IS NULL;
-- The same keysets over every finding, resolved ones included (ListDriftFindings{include_resolved}).
CREATE INDEX drift_findings_idx_first_detected ON tenant.drift_findings (first_detected, id);
CREATE INDEX drift_findings_idx_cluster_first_detected ON tenant.drift_findings (cluster_id, first_detected, id);
ALTER TABLE tenant.drift_findings ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.drift_findings TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.drift_findings TO fun_cluster_worker;
GRANT UPDATE (
    cluster_id, shoot_uid, details, last_detected, resolved, organization_id
) ON tenant.drift_findings TO fun_cluster_worker;
CREATE POLICY drift_findings_admin_api_read ON tenant.drift_findings
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY drift_findings_cluster_worker_write ON tenant.drift_findings
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- infrastructure_resources: the ledger, one row per lifetime of one resource. Cluster-wide kinds
-- (nodes, persistent volumes) have namespace '' rather than NULL, so that two active rows of the same
-- cluster-wide resource collide on the unique index just like namespaced ones do.
CREATE TABLE tenant.infrastructure_resources (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    cluster_id uuid NOT NULL,
    -- A source's namespaced id, e.g. kubernetes.node or kubernetes.loadbalancer.
    resource_type text NOT NULL,
    -- The cloud's id (provider id, volume handle, LB hostname or IP, secret name); NULL while unknown.
    resource_id text,
    name text NOT NULL,
    namespace text NOT NULL DEFAULT '',
    billable boolean NOT NULL,
    created timestamptz NOT NULL,
    last_seen timestamptz NOT NULL,
    destroyed timestamptz,
    -- How the destruction was decided. `not_found`: an inventory pass listed the resource's type and
    -- the resource was gone. `cluster_deleted` and `organization_deleted`: reconcile closed the active
    -- rows of a cluster that is deleted (or whose organization is) once the garden no longer lists a
    -- shoot for it; an unreachable, lost or hibernated cluster keeps its rows. Set exactly when
    -- `destroyed` is.
    destroyed_reason text,
    CONSTRAINT infrastructure_resources_pk PRIMARY KEY (id),
    CONSTRAINT infrastructure_resources_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT infrastructure_resources_ck_resource_type CHECK (resource_type ~ '^[a-z0-9]+(\.[a-z0-9]+)+$'),
    CONSTRAINT infrastructure_resources_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT infrastructure_resources_ck_seen CHECK (last_seen >= created),
    CONSTRAINT infrastructure_resources_ck_destroyed CHECK (destroyed IS NULL OR destroyed >= created),
    CONSTRAINT infrastructure_resources_ck_destroyed_reason CHECK (
        destroyed_reason IN ('not_found', 'cluster_deleted', 'organization_deleted')
        AND destroyed IS NOT NULL
        OR destroyed_reason IS NULL AND destroyed IS NULL
    )
);
CREATE UNIQUE INDEX infrastructure_resources_uq_active ON tenant.infrastructure_resources
    (cluster_id, resource_type, namespace, name) WHERE destroyed IS NULL;
-- ListInfrastructureResources pages by (cluster_id, resource_type, namespace, name, id).
CREATE INDEX infrastructure_resources_idx_paging ON tenant.infrastructure_resources
    (cluster_id, resource_type, namespace, name, id);
ALTER TABLE tenant.infrastructure_resources ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.infrastructure_resources TO fun_platform_admin_api;
GRANT SELECT, INSERT ON tenant.infrastructure_resources TO fun_cluster_worker;
GRANT UPDATE (
    resource_id, last_seen, destroyed, destroyed_reason
) ON tenant.infrastructure_resources TO fun_cluster_worker;
CREATE POLICY infrastructure_resources_admin_api_read ON tenant.infrastructure_resources
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY infrastructure_resources_cluster_worker_write ON tenant.infrastructure_resources
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- Locks, history and audit ------------------------------------------------------------------------

-- worker_locks: the reconcile pass serialises on a row lock of this table, not an advisory lock. Any
-- role may take any advisory lock, so the anonymous API could hold reconcile's and fail every pass; a
-- row lock needs UPDATE on the table, which only the worker role has.
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

-- A resolved finding and a destroyed ledger row are history: a trigger refuses any UPDATE of them, for
-- every role, the owner's included. TG_ARGV[0] names the column that closed the row.
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
    -- Every other figure of GetFleetSummary, in the fleet-wide rows (NULL in the organization rows),
    -- so the summary is one row of the latest round; clusters_stale is judged at the recording's time.
    organizations integer,
    organizations_listed integer,
    projects integer,
    namespaces integer,
    clusters_ready integer,
    allocatable_pods bigint,
    clusters_stale integer,
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

-- organization_listing_changes: every change of organizations.listed_publicly, whoever makes it: a
-- trigger on organizations records it, so a change made with plain SQL (as an operator following FUN-23
-- §4 might) is recorded too. `fleet org list|unlist` names its author and reason for the row through
-- two settings of its transaction (fleet.listing_changed_by, fleet.listing_reason); without them the
-- row says who the session was and that no reason was given. The organization's name and alias are
-- kept in the row and there is no foreign key, so the record outlives the organization, even one
-- deleted for good (funops does that). Append-only: no role may UPDATE or DELETE it, and a trigger
-- refuses both (and TRUNCATE) to everyone, the owner included. A superuser is trusted: it can turn
-- triggers off (session_replication_role) like any other guard of the database.
CREATE TABLE tenant.organization_listing_changes (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL,
    organization_name text NOT NULL,
    organization_alias text NOT NULL,
    -- The value listed_publicly was set to, and the one it had before.
    listed_publicly boolean NOT NULL,
    previously_listed boolean NOT NULL,
    -- Who made the change: what `fleet org` was told (`--by`, else the operator's OS user), else the
    -- database session's user.
    changed_by text NOT NULL,
    reason text NOT NULL,
    changed timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT organization_listing_changes_pk PRIMARY KEY (id),
    CONSTRAINT organization_listing_changes_ck_changed CHECK (listed_publicly <> previously_listed),
    CONSTRAINT organization_listing_changes_ck_changed_by CHECK (char_length(changed_by) BETWEEN 1 AND 255),
    CONSTRAINT organization_listing_changes_ck_reason CHECK (char_length(btrim(reason)) BETWEEN 1 AND 1000)
);
-- GetOrganization shows an organization's changes, newest first.
CREATE INDEX organization_listing_changes_idx_organization
    ON tenant.organization_listing_changes (organization_id, changed DESC, id);

CREATE FUNCTION tenant.refuse_listing_change_rewrite() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'tenant.organization_listing_changes is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
REVOKE ALL ON FUNCTION tenant.refuse_listing_change_rewrite() FROM PUBLIC;

CREATE TRIGGER organization_listing_changes_append_only
    BEFORE UPDATE OR DELETE ON tenant.organization_listing_changes
    FOR EACH ROW EXECUTE FUNCTION tenant.refuse_listing_change_rewrite();
CREATE TRIGGER organization_listing_changes_no_truncate
    BEFORE TRUNCATE ON tenant.organization_listing_changes
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.refuse_listing_change_rewrite();

ALTER TABLE tenant.organization_listing_changes ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organization_listing_changes TO fun_platform_admin_api;
CREATE POLICY organization_listing_changes_admin_api_read ON tenant.organization_listing_changes
    FOR SELECT TO fun_platform_admin_api USING (true);

-- Records a change of listed_publicly (an organization made listed counts as one). Runs as the owner:
-- whoever may write the column may leave its record, and nobody needs a grant on the table for it.
CREATE FUNCTION tenant.record_listing_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    previously boolean := CASE WHEN TG_OP = 'INSERT' THEN false ELSE OLD.listed_publicly END;
BEGIN
    IF NEW.listed_publicly IS DISTINCT FROM previously THEN
        INSERT INTO tenant.organization_listing_changes
            (organization_id, organization_name, organization_alias, listed_publicly, previously_listed,
             changed_by, reason)
        VALUES (
            NEW.id, NEW.name, NEW.alias, NEW.listed_publicly, previously,
            coalesce(nullif(current_setting('fleet.listing_changed_by', true), ''), session_user::text),
            coalesce(nullif(current_setting('fleet.listing_reason', true), ''),
                     'changed outside `fleet org`: no reason given')
        );
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION tenant.record_listing_change() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.record_listing_change() FROM PUBLIC;
CREATE TRIGGER fleet_organizations_listing_audit
    AFTER INSERT OR UPDATE OF listed_publicly ON tenant.organizations
    FOR EACH ROW EXECUTE FUNCTION tenant.record_listing_change();

-- The staff listing --------------------------------------------------------------------------------

-- tenant.cluster_listing: one maintained row per non-system cluster holding every key
-- ListClusters filters and sorts by, so that every filter and order combination is served by an index;
-- the names SearchNamespaces walks; the Kubernetes names of namespaces as an index expression.
--
-- Why a table: a cluster's sort keys live in four places (clusters, organizations, the sync state,
-- cluster_snapshots), so no index can hold (pods, name, id) or (status, observed, name, id), and a
-- page sorted by pods had to sort every matching cluster. Snapshots stay tables of their own and no
-- column is added to clusters (a change to a cluster row has side effects in Fundament); the listing is
-- derived from them and written only by the triggers below, whoever writes the sources (the collector,
-- reconcile, the provisioning side, the seed). It also carries each cluster's live project and
-- namespace counts, so the organization list and the fleet summary add up one row per cluster instead
-- of counting a million namespaces.
--
-- Consistency: every trigger is statement-level (one refresh per statement, COPY included) and
-- recomputes the affected clusters' rows from the sources with tenant.refresh_cluster_listing, which
-- first locks those rows: a concurrent writer of the same cluster waits for the other to commit and
-- then recomputes from what it committed (a new snapshot per statement at READ COMMITTED), so the
-- last writer never puts back older values. A reader sees the listing and the sources in the same
-- snapshot, so a page's keys are the keys of the rows it returns.

CREATE TABLE tenant.cluster_listing (
    id uuid NOT NULL,
    organization_id uuid NOT NULL,
    name text NOT NULL,
    organization_name text NOT NULL,
    organization_alias text NOT NULL,
    region text NOT NULL,
    cluster_deleted boolean NOT NULL,
    -- The cluster and its organization are live.
    live boolean NOT NULL,
    -- The status inputs (tenant.fleet_sync_state; NULL without a row), and the status they give.
    sync_status text,
    shoot_status text,
    shoot_operation text,
    ever_completed boolean NOT NULL,
    status text GENERATED ALWAYS AS (
        tenant.cluster_status(cluster_deleted, sync_status, shoot_status, shoot_operation, ever_completed)
    ) STORED,
    needs_attention boolean GENERATED ALWAYS AS (tenant.cluster_needs_attention(
        tenant.cluster_status(cluster_deleted, sync_status, shoot_status, shoot_operation, ever_completed)
    )) STORED,
    -- What the collector reads (tenant.cluster_is_ready), and since when.
    ready boolean NOT NULL,
    ready_since timestamptz,
    -- The latest snapshot, 0 and '-infinity' when never collected (how the orders sort a missing value).
    observed timestamptz NOT NULL,
    nodes integer NOT NULL,
    ready_nodes integer NOT NULL,
    pods integer NOT NULL,
    allocatable_pods integer NOT NULL,
    cpu_allocatable_millicores bigint NOT NULL,
    memory_allocatable_bytes bigint NOT NULL,
    -- shoot_status_changed, '-infinity' without a sync state.
    status_since timestamptz NOT NULL,
    -- Live projects of the cluster, and live namespaces of those projects.
    projects integer NOT NULL,
    namespaces integer NOT NULL,
    -- What ListClusters' query matches. A line feed separates the names: a query holds no control
    -- character (services/fleet/search.py), so no match spans two names.
    cluster_key text GENERATED ALWAYS AS (lower(name)) STORED,
    organization_key text GENERATED ALWAYS AS (lower(organization_name) || E'\n' || lower(organization_alias)) STORED,
    search_key text GENERATED ALWAYS AS (
        lower(name) || E'\n' || lower(organization_name) || E'\n' || lower(organization_alias)
    ) STORED,
    CONSTRAINT cluster_listing_pk PRIMARY KEY (id),
    CONSTRAINT cluster_listing_fk_cluster FOREIGN KEY (id) REFERENCES tenant.clusters (id)
);
ALTER TABLE tenant.cluster_listing OWNER TO fun_owner;
ALTER TABLE tenant.cluster_listing ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_listing TO fun_platform_admin_api;
CREATE POLICY cluster_listing_admin_api_read ON tenant.cluster_listing
    FOR SELECT TO fun_platform_admin_api USING (true);

-- One index per order and way in: the order alone (every filter that is common walks it and filters;
-- include_deleted too), by organization, by status. Each key ends in (name, id) like the order, and a
-- descending page reads the same index backwards.
CREATE INDEX cluster_listing_idx_name ON tenant.cluster_listing (name, id);
CREATE INDEX cluster_listing_idx_organization_name ON tenant.cluster_listing (organization_name, name, id);
CREATE INDEX cluster_listing_idx_pods ON tenant.cluster_listing (pods, name, id);
CREATE INDEX cluster_listing_idx_nodes ON tenant.cluster_listing (nodes, name, id);
CREATE INDEX cluster_listing_idx_observed ON tenant.cluster_listing (observed, name, id);
CREATE INDEX cluster_listing_idx_status_since ON tenant.cluster_listing (status_since, name, id);
CREATE INDEX cluster_listing_idx_org_name ON tenant.cluster_listing (organization_id, name, id);
CREATE INDEX cluster_listing_idx_org_organization_name ON tenant.cluster_listing (organization_id, organization_name, name, id);
CREATE INDEX cluster_listing_idx_org_pods ON tenant.cluster_listing (organization_id, pods, name, id);
CREATE INDEX cluster_listing_idx_org_nodes ON tenant.cluster_listing (organization_id, nodes, name, id);
CREATE INDEX cluster_listing_idx_org_observed ON tenant.cluster_listing (organization_id, observed, name, id);
CREATE INDEX cluster_listing_idx_org_status_since ON tenant.cluster_listing (organization_id, status_since, name, id);
CREATE INDEX cluster_listing_idx_status_name ON tenant.cluster_listing (status, name, id);
CREATE INDEX cluster_listing_idx_status_organization_name ON tenant.cluster_listing (status, organization_name, name, id);
CREATE INDEX cluster_listing_idx_status_pods ON tenant.cluster_listing (status, pods, name, id);
CREATE INDEX cluster_listing_idx_status_nodes ON tenant.cluster_listing (status, nodes, name, id);
CREATE INDEX cluster_listing_idx_status_observed ON tenant.cluster_listing (status, observed, name, id);
CREATE INDEX cluster_listing_idx_status_status_since ON tenant.cluster_listing (status, status_since, name, id);
-- The few clusters that need attention, whatever the order (read whole, then sorted).
CREATE INDEX cluster_listing_idx_needs_attention ON tenant.cluster_listing (id) WHERE needs_attention;
-- organization_totals: per organization, what ListOrganizations shows of its live clusters, added up
-- from the listing by the same refresh, so a page of 500 organizations reads 500 rows.
CREATE TABLE tenant.organization_totals (
    organization_id uuid NOT NULL,
    clusters integer NOT NULL,
    projects integer NOT NULL,
    namespaces integer NOT NULL,
    ready_nodes bigint NOT NULL,
    pods bigint NOT NULL,
    clusters_needing_attention integer NOT NULL,
    CONSTRAINT organization_totals_pk PRIMARY KEY (organization_id),
    -- Derived: the row goes with its organization, whatever deletes it.
    CONSTRAINT organization_totals_fk_organization FOREIGN KEY (organization_id) REFERENCES tenant.organizations (id)
        ON DELETE CASCADE
);
ALTER TABLE tenant.organization_totals OWNER TO fun_owner;
ALTER TABLE tenant.organization_totals ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organization_totals TO fun_platform_admin_api;
CREATE POLICY organization_totals_admin_api_read ON tenant.organization_totals
    FOR SELECT TO fun_platform_admin_api USING (true);

-- Adds up the totals of `organizations` from their clusters' listing rows (the last step of every
-- listing refresh). Per organization, a LATERAL subquery reads only that organization's clusters: the
-- generic plan of an aggregate over all of them hashed the whole listing to total one organization.
CREATE FUNCTION tenant.refresh_organization_totals(organizations uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF cardinality(organizations) = 0 THEN
        RETURN;
    END IF;
    -- Make sure the rows exist, lock them in order (waiting for another writer), then add up what
    -- is committed now.
    INSERT INTO tenant.organization_totals AS t
        (organization_id, clusters, projects, namespaces, ready_nodes, pods, clusters_needing_attention)
    SELECT o.id, 0, 0, 0, 0, 0, 0 FROM unnest(organizations) AS o (id)
    ON CONFLICT (organization_id) DO NOTHING;
    PERFORM 1 FROM tenant.organization_totals AS t
    WHERE t.organization_id = ANY (organizations) ORDER BY t.organization_id FOR UPDATE;
    -- Per organization, its clusters through the (organization_id, ...) indexes of the listing.
    UPDATE tenant.organization_totals AS t
    SET clusters = x.clusters, projects = x.projects, namespaces = x.namespaces, ready_nodes = x.ready_nodes,
        pods = x.pods, clusters_needing_attention = x.clusters_needing_attention
    FROM unnest(organizations) AS o (id)
    CROSS JOIN LATERAL (
        SELECT count(*) AS clusters,
               coalesce(sum(l.projects), 0) AS projects,
               coalesce(sum(l.namespaces), 0) AS namespaces,
               coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
               coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
               count(*) FILTER (WHERE l.needs_attention) AS clusters_needing_attention
        FROM tenant.cluster_listing AS l
        WHERE l.organization_id = o.id AND NOT l.cluster_deleted
    ) AS x
    WHERE t.organization_id = o.id
      AND (t.clusters, t.projects, t.namespaces, t.ready_nodes, t.pods, t.clusters_needing_attention)
          IS DISTINCT FROM (x.clusters, x.projects, x.namespaces, x.ready_nodes, x.pods, x.clusters_needing_attention);
END
$$;
ALTER FUNCTION tenant.refresh_organization_totals(uuid[]) OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.refresh_organization_totals(uuid[]) FROM PUBLIC;


-- Recomputes the listing rows of `ids` from the sources (a cluster of the system organization has
-- none). Runs as the owner: the roles whose writes call it have no grant on the listing.
-- Generic plans: every statement here is a few index lookups by id whatever the array holds, and
-- planning them anew on each call (PL/pgSQL's custom plans) cost twice what running them does.
CREATE FUNCTION tenant.refresh_cluster_listing(ids uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    organizations uuid[];
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    -- Wait for any other writer of these rows (in id order, so two writers never deadlock here).
    PERFORM 1 FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids) ORDER BY l.id FOR UPDATE;
    -- The organizations whose totals move: the clusters' own, before and after (a cluster may move).
    organizations := ARRAY(
        SELECT l.organization_id FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids)
        UNION
        SELECT c.organization_id FROM tenant.clusters AS c
        WHERE c.id = ANY (ids) AND c.organization_id <> tenant.system_organization_id()
    );
    INSERT INTO tenant.cluster_listing AS l (
        id, organization_id, name, organization_name, organization_alias, region, cluster_deleted, live,
        sync_status, shoot_status, shoot_operation, ever_completed, ready, ready_since,
        observed, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores, memory_allocatable_bytes,
        status_since, projects, namespaces
    )
    SELECT c.id, c.organization_id, c.name, o.name, o.alias, c.region, c.deleted IS NOT NULL,
           c.deleted IS NULL AND o.deleted IS NULL,
           s.sync_status, s.shoot_status, s.shoot_operation, s.first_completed IS NOT NULL,
           tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status),
           s.ready_since,
           coalesce(snap.observed, '-infinity'), coalesce(snap.nodes, 0), coalesce(snap.ready_nodes, 0),
           coalesce(snap.pods, 0), coalesce(snap.allocatable_pods, 0), coalesce(snap.cpu_allocatable_millicores, 0),
           coalesce(snap.memory_allocatable_bytes, 0),
           coalesce(s.shoot_status_changed, '-infinity'),
           coalesce(per.projects, 0), coalesce(per.namespaces, 0)
    FROM tenant.clusters AS c
    JOIN tenant.organizations AS o ON o.id = c.organization_id
    LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
    LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
    LEFT JOIN LATERAL (
        SELECT count(*) AS projects, sum((SELECT count(*) FROM tenant.namespaces AS n
                                          WHERE n.project_id = p.id AND n.deleted IS NULL)) AS namespaces
        FROM tenant.projects AS p
        WHERE p.cluster_id = c.id AND p.deleted IS NULL
    ) AS per ON true
    WHERE c.id = ANY (ids) AND c.organization_id <> tenant.system_organization_id()
    ON CONFLICT (id) DO UPDATE SET
        organization_id = EXCLUDED.organization_id, name = EXCLUDED.name,
        organization_name = EXCLUDED.organization_name, organization_alias = EXCLUDED.organization_alias,
        region = EXCLUDED.region, cluster_deleted = EXCLUDED.cluster_deleted, live = EXCLUDED.live,
        sync_status = EXCLUDED.sync_status, shoot_status = EXCLUDED.shoot_status,
        shoot_operation = EXCLUDED.shoot_operation, ever_completed = EXCLUDED.ever_completed,
        ready = EXCLUDED.ready, ready_since = EXCLUDED.ready_since, observed = EXCLUDED.observed,
        nodes = EXCLUDED.nodes, ready_nodes = EXCLUDED.ready_nodes, pods = EXCLUDED.pods,
        allocatable_pods = EXCLUDED.allocatable_pods,
        cpu_allocatable_millicores = EXCLUDED.cpu_allocatable_millicores,
        memory_allocatable_bytes = EXCLUDED.memory_allocatable_bytes, status_since = EXCLUDED.status_since,
        projects = EXCLUDED.projects, namespaces = EXCLUDED.namespaces
    -- An unchanged row is not rewritten (no new row version, no index entries).
    WHERE (l.organization_id, l.name, l.organization_name, l.organization_alias, l.region, l.cluster_deleted,
           l.live, l.sync_status, l.shoot_status, l.shoot_operation, l.ever_completed, l.ready, l.ready_since,
           l.observed, l.nodes, l.ready_nodes, l.pods, l.allocatable_pods, l.cpu_allocatable_millicores,
           l.memory_allocatable_bytes, l.status_since, l.projects, l.namespaces)
          IS DISTINCT FROM
          (EXCLUDED.organization_id, EXCLUDED.name, EXCLUDED.organization_name, EXCLUDED.organization_alias,
           EXCLUDED.region, EXCLUDED.cluster_deleted, EXCLUDED.live, EXCLUDED.sync_status, EXCLUDED.shoot_status,
           EXCLUDED.shoot_operation, EXCLUDED.ever_completed, EXCLUDED.ready, EXCLUDED.ready_since,
           EXCLUDED.observed, EXCLUDED.nodes, EXCLUDED.ready_nodes, EXCLUDED.pods, EXCLUDED.allocatable_pods,
           EXCLUDED.cpu_allocatable_millicores, EXCLUDED.memory_allocatable_bytes, EXCLUDED.status_since,
           EXCLUDED.projects, EXCLUDED.namespaces);
    PERFORM tenant.refresh_organization_totals(organizations);
END
$$;
ALTER FUNCTION tenant.refresh_cluster_listing(uuid[]) OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.refresh_cluster_listing(uuid[]) FROM PUBLIC;

-- namespace_names: every name a namespace ever had, once. SearchNamespaces walks the matching names in
-- order and each name's live namespaces by (name, id), so a common name (thousands of `api-0`) costs a
-- page, not a sort of every match. It only grows; names are few next to namespaces.
CREATE TABLE tenant.namespace_names (
    name text NOT NULL,
    CONSTRAINT namespace_names_pk PRIMARY KEY (name)
);
ALTER TABLE tenant.namespace_names OWNER TO fun_owner;
ALTER TABLE tenant.namespace_names ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespace_names TO fun_platform_admin_api;
CREATE POLICY namespace_names_admin_api_read ON tenant.namespace_names
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE INDEX namespace_names_idx_name_trgm ON tenant.namespace_names USING gin (lower(name) fleet_ext.gin_trgm_ops);

-- The trigger functions: each gathers the clusters its statement touched (from the transition
-- tables) and refreshes them once.
CREATE FUNCTION tenant.cluster_listing_from_clusters() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM tenant.refresh_cluster_listing(ARRAY(SELECT DISTINCT t.id FROM changed AS t));
    RETURN NULL;
END
$$;

CREATE FUNCTION tenant.cluster_listing_from_organizations() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM tenant.refresh_cluster_listing(ARRAY(
        SELECT c.id FROM tenant.clusters AS c WHERE c.organization_id IN (SELECT t.id FROM changed AS t)
    ));
    RETURN NULL;
END
$$;

-- cluster_outbox: a cluster's rows move its sync state's first_completed and sync_updated (the
-- statuses themselves reach the cluster row through Fundament's trigger, and so the clusters trigger).
-- The outbox also queues node pool, namespace and membership rows, which move no listing row.
CREATE FUNCTION tenant.cluster_listing_from_outbox() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM tenant.refresh_cluster_listing(ARRAY(
        SELECT DISTINCT t.cluster_id FROM changed AS t WHERE t.cluster_id IS NOT NULL
    ));
    RETURN NULL;
END
$$;

-- cluster_snapshots: the collector writes every cluster's snapshot once a round, and a snapshot moves
-- only the listing's snapshot columns and its organization's totals, so this copies just those,
-- under the same row locks and in the same order as the full refresh.
CREATE FUNCTION tenant.cluster_listing_from_snapshots() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    ids uuid[];
BEGIN
    ids := ARRAY(SELECT DISTINCT t.cluster_id FROM changed AS t);
    -- The full refresh's lock, in its order: a writer of the same cluster's other sources waits here.
    PERFORM 1 FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids) ORDER BY l.id FOR UPDATE;
    UPDATE tenant.cluster_listing AS l
    SET observed = coalesce(snap.observed, '-infinity'), nodes = coalesce(snap.nodes, 0),
        ready_nodes = coalesce(snap.ready_nodes, 0), pods = coalesce(snap.pods, 0),
        allocatable_pods = coalesce(snap.allocatable_pods, 0),
        cpu_allocatable_millicores = coalesce(snap.cpu_allocatable_millicores, 0),
        memory_allocatable_bytes = coalesce(snap.memory_allocatable_bytes, 0)
    FROM tenant.cluster_snapshots AS snap
    WHERE snap.cluster_id = l.id AND l.id = ANY (ids)
      AND (l.observed, l.nodes, l.ready_nodes, l.pods, l.allocatable_pods, l.cpu_allocatable_millicores,
           l.memory_allocatable_bytes)
          IS DISTINCT FROM
          (coalesce(snap.observed, '-infinity'), coalesce(snap.nodes, 0), coalesce(snap.ready_nodes, 0),
           coalesce(snap.pods, 0), coalesce(snap.allocatable_pods, 0),
           coalesce(snap.cpu_allocatable_millicores, 0), coalesce(snap.memory_allocatable_bytes, 0));
    PERFORM tenant.refresh_organization_totals(ARRAY(
        SELECT DISTINCT l.organization_id FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids)
    ));
    RETURN NULL;
END
$$;
ALTER FUNCTION tenant.cluster_listing_from_snapshots() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.cluster_listing_from_snapshots() FROM PUBLIC;

-- projects: their cluster's project and namespace counts (an update may also move a project).
CREATE FUNCTION tenant.cluster_listing_from_projects() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        PERFORM tenant.refresh_cluster_listing(ARRAY(
            SELECT t.cluster_id FROM changed AS t UNION SELECT t.cluster_id FROM previous AS t
        ));
    ELSE
        PERFORM tenant.refresh_cluster_listing(ARRAY(SELECT DISTINCT t.cluster_id FROM changed AS t));
    END IF;
    RETURN NULL;
END
$$;

-- namespaces: their cluster's namespace count, and the names SearchNamespaces walks.
CREATE FUNCTION tenant.cluster_listing_from_namespaces() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO tenant.namespace_names (name)
    SELECT DISTINCT t.name FROM changed AS t
    ON CONFLICT (name) DO NOTHING;
    IF TG_OP = 'UPDATE' THEN
        PERFORM tenant.refresh_cluster_listing(ARRAY(
            SELECT p.cluster_id FROM tenant.projects AS p
            WHERE p.id IN (SELECT t.project_id FROM changed AS t UNION SELECT t.project_id FROM previous AS t)
        ));
    ELSE
        PERFORM tenant.refresh_cluster_listing(ARRAY(
            SELECT p.cluster_id FROM tenant.projects AS p WHERE p.id IN (SELECT t.project_id FROM changed AS t)
        ));
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION tenant.cluster_listing_from_clusters() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_organizations() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_outbox() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_projects() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_namespaces() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_snapshots() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION
    tenant.cluster_listing_from_clusters(), tenant.cluster_listing_from_organizations(),
    tenant.cluster_listing_from_outbox(), tenant.cluster_listing_from_projects(),
    tenant.cluster_listing_from_namespaces(), tenant.cluster_listing_from_snapshots()
FROM PUBLIC;

-- Transition tables allow one event per trigger, so each table has an INSERT and an UPDATE trigger.
-- Fundament soft-deletes clusters, projects and namespaces; an organization it may delete for good
-- (funops), which it can only while no cluster refers to it, so no listing row is left behind, and
-- organization_totals' row goes with it (ON DELETE CASCADE). The triggers on Fundament's tables are
-- named fleet_… like every object of ours there.
CREATE TRIGGER fleet_cluster_listing_insert AFTER INSERT ON tenant.clusters REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_clusters();
CREATE TRIGGER fleet_cluster_listing_update AFTER UPDATE ON tenant.clusters REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_clusters();
CREATE TRIGGER fleet_cluster_listing_update AFTER UPDATE ON tenant.organizations REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_organizations();
CREATE TRIGGER fleet_cluster_listing_insert AFTER INSERT ON tenant.cluster_outbox REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_outbox();
CREATE TRIGGER fleet_cluster_listing_update AFTER UPDATE ON tenant.cluster_outbox REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_outbox();
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_snapshots();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_snapshots();
CREATE TRIGGER fleet_cluster_listing_insert AFTER INSERT ON tenant.projects REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_projects();
CREATE TRIGGER fleet_cluster_listing_update AFTER UPDATE ON tenant.projects
    REFERENCING NEW TABLE AS changed OLD TABLE AS previous
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_projects();
CREATE TRIGGER fleet_cluster_listing_insert AFTER INSERT ON tenant.namespaces REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_namespaces();
CREATE TRIGGER fleet_cluster_listing_update AFTER UPDATE ON tenant.namespaces
    REFERENCING NEW TABLE AS changed OLD TABLE AS previous
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_namespaces();

-- cluster_search: one row per listing row, a copy of its lowered keys, and the indexes that find them.
-- Why a table of its own: every snapshot write moves `observed`, an indexed column of the listing, so
-- the listing row is never updated in place and every index of the listing gets a new entry; trigram
-- GIN entries (about forty per key) on the listing were most of what a snapshot write cost. The keys
-- hold only names, which change when a cluster or an organization is renamed, so they live here, where
-- a snapshot write never reaches. The listing keeps its key columns, unindexed: a page that walks an
-- order's index tests the query on the row it already holds and looks up the search row only for the
-- rows that match.
--
-- The trigram indexes hold the keys with '-' read as a letter: pg_trgm splits words at any other
-- character, so `prod-1` would be looked up as the trigrams of `prod` and `1`, which nearly every
-- cluster of a fleet named `prod-0`, `ci-1`, ... holds; as `prodz1` its trigrams are selective. The
-- queries match the same expression (to find candidates) and the key itself (the answer). No pending
-- list (fastupdate off): a GIN pending list, scanned whole by every search until a vacuum flushes it,
-- would make the planner prefer reading the table.
CREATE TABLE tenant.cluster_search (
    id uuid NOT NULL,
    cluster_key text NOT NULL,
    organization_key text NOT NULL,
    search_key text NOT NULL,
    CONSTRAINT cluster_search_pk PRIMARY KEY (id),
    CONSTRAINT cluster_search_fk_listing FOREIGN KEY (id) REFERENCES tenant.cluster_listing (id)
);
ALTER TABLE tenant.cluster_search OWNER TO fun_owner;
ALTER TABLE tenant.cluster_search ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_search TO fun_platform_admin_api;
CREATE POLICY cluster_search_admin_api_read ON tenant.cluster_search
    FOR SELECT TO fun_platform_admin_api USING (true);

CREATE INDEX cluster_search_idx_search_trgm ON tenant.cluster_search
    USING gin (translate(search_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_organization_trgm ON tenant.cluster_search
    USING gin (translate(organization_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_cluster_trgm ON tenant.cluster_search
    USING gin (translate(cluster_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_cluster_prefix ON tenant.cluster_search (cluster_key text_pattern_ops);

-- Written with its listing row: when the row is made, and when one of its names changes (the keys are
-- generated, so NEW holds them already). The listing row is locked by whoever writes it
-- (refresh_cluster_listing), so its search row is written in the same order. A snapshot write sets
-- none of the three names, so these triggers do not even fire.
CREATE FUNCTION tenant.cluster_search_from_listing() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO tenant.cluster_search AS s (id, cluster_key, organization_key, search_key)
    VALUES (NEW.id, NEW.cluster_key, NEW.organization_key, NEW.search_key)
    ON CONFLICT (id) DO UPDATE SET
        cluster_key = EXCLUDED.cluster_key, organization_key = EXCLUDED.organization_key,
        search_key = EXCLUDED.search_key;
    RETURN NULL;
END
$$;
ALTER FUNCTION tenant.cluster_search_from_listing() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.cluster_search_from_listing() FROM PUBLIC;

CREATE TRIGGER cluster_search_insert AFTER INSERT ON tenant.cluster_listing
    FOR EACH ROW EXECUTE FUNCTION tenant.cluster_search_from_listing();
CREATE TRIGGER cluster_search_update AFTER UPDATE OF name, organization_name, organization_alias
    ON tenant.cluster_listing FOR EACH ROW
    -- search_key joins the other two, so these say whether any key moved.
    WHEN ((OLD.cluster_key, OLD.organization_key) IS DISTINCT FROM (NEW.cluster_key, NEW.organization_key))
    EXECUTE FUNCTION tenant.cluster_search_from_listing();

-- The rows of what exists already.
SELECT tenant.refresh_cluster_listing(ARRAY(SELECT c.id FROM tenant.clusters AS c));
INSERT INTO tenant.namespace_names (name) SELECT DISTINCT n.name FROM tenant.namespaces AS n ON CONFLICT DO NOTHING;

-- The first part of a namespace's name on its shoot (common/naming.py, namespace_name): 12 characters
-- naming its project; the whole name is this, '-', the namespace's name. IMMUTABLE (sha256, encode and
-- regexp_replace are), so projects can index it and SearchNamespaces can find a namespace by the name
-- an alert shows. Characters are kept as [a-z0-9] after lowering ASCII letters, as the contract does.
CREATE FUNCTION tenant.namespace_name_prefix(project_name text, project_id uuid) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT left(x.kept, 8) || left(x.digest, 8 - length(left(x.kept, 8))) || substr(x.digest, 9, 4)
    FROM (SELECT regexp_replace(lower(project_name), '[^a-z0-9]+', '', 'g') AS kept,
                 encode(sha256(uuid_send(project_id)), 'hex') AS digest) AS x
$$;
ALTER FUNCTION tenant.namespace_name_prefix(text, uuid) OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.namespace_name_prefix(text, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.namespace_name_prefix(text, uuid) TO fun_platform_admin_api;
CREATE INDEX projects_idx_live_namespace_prefix_trgm ON tenant.projects
    USING gin (tenant.namespace_name_prefix(name, id) fleet_ext.gin_trgm_ops) WHERE deleted IS NULL;
CREATE INDEX projects_idx_live_namespace_prefix ON tenant.projects
    (tenant.namespace_name_prefix(name, id) text_pattern_ops) WHERE deleted IS NULL;

-- The recorder reads the listing too (one row per live cluster, its counts included).
GRANT SELECT ON tenant.cluster_listing TO fun_cluster_worker;
CREATE POLICY cluster_listing_cluster_worker_read ON tenant.cluster_listing
    FOR SELECT TO fun_cluster_worker USING (true);


-- The public boundary ------------------------------------------------------------------------------

-- tenant.platform_overview(), the whole of the public boundary.
--
-- fun_platform_public_api has no table grant at all; this function is the one thing it can do. It
-- runs as its owner fun_owner (SECURITY DEFINER; fun_owner owns the tables, so row security does not
-- narrow it), returns one row per listed, live, non-system organization with counts along
-- organization -> cluster -> project -> namespace where every level is live, and nothing else: no
-- ids, no cluster or namespace names. Organizations that are not listed are in no total either; the
-- totals the API shows are the sum of these rows.
--
-- search_path is pinned to pg_catalog, pg_temp (pg_temp last, so a temporary object can shadow
-- nothing) and every name inside is schema-qualified, so no object a caller can create is ever
-- resolved here. It reads each listed organization's row of tenant.organization_totals, which every
-- write to the platform's tables keeps in the same transaction (the listing's refresh): one primary
-- key lookup per listed organization, whatever the fleet's size.
CREATE FUNCTION tenant.platform_overview()
    RETURNS TABLE (name text, alias text, clusters bigint, projects bigint, namespaces bigint)
    LANGUAGE sql
    STABLE
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT tenant.organizations.name,
           tenant.organizations.alias,
           coalesce(tenant.organization_totals.clusters, 0)::bigint,
           coalesce(tenant.organization_totals.projects, 0)::bigint,
           coalesce(tenant.organization_totals.namespaces, 0)::bigint
    FROM tenant.organizations
    LEFT JOIN tenant.organization_totals
        ON tenant.organization_totals.organization_id = tenant.organizations.id
    WHERE tenant.organizations.listed_publicly
      AND tenant.organizations.deleted IS NULL
      AND tenant.organizations.id <> tenant.system_organization_id()
    ORDER BY tenant.organizations.name
$$;

ALTER FUNCTION tenant.platform_overview() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.platform_overview() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.platform_overview() TO fun_platform_public_api;
COMMENT ON FUNCTION tenant.platform_overview() IS
    'Per listed, live, non-system organization: name, alias and live clusters, projects, namespaces. No ids.';

-- The staff view of a cluster ----------------------------------------------------------------------

-- tenant.staff_clusters: the one definition of a cluster as the staff API shows it.
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
       s.shoot_message,
       s.ready_since,
       snap.source AS snapshot_source
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
LEFT JOIN tenant.worker_loops AS inventory ON inventory.loop = 'inventory'
WHERE c.organization_id <> tenant.system_organization_id();

ALTER VIEW tenant.staff_clusters OWNER TO fun_owner;
REVOKE ALL ON tenant.staff_clusters FROM PUBLIC;
GRANT SELECT ON tenant.staff_clusters TO fun_platform_admin_api;
COMMENT ON VIEW tenant.staff_clusters IS
    'Every non-system cluster (live or deleted) as the staff API shows it: status and staleness inputs, '
    'latest snapshot, observed version, open drift count, inventory interval, sync state.';

-- PostgreSQL's own catalog ---------------------------------------------------------------------------

-- PostgreSQL's catalog (run as the migrating superuser: only it may change these privileges): large
-- objects cannot be created by PUBLIC; per-relation statistics and sizes, and the row-count columns of
-- pg_class, are readable only by pg_read_all_stats and the two roles that read every row anyway;
-- advisory locks are no longer PUBLIC's. Temporary tables are a database privilege, kept outside the
-- database's contents, so db/database_grants.sql (applied on every migrate) revokes TEMP from PUBLIC.
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
