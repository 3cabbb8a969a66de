-- 0002: the tables FUN-23 adds: the collector's latest observations, the worker
-- loops' heartbeats, the mirror of Gardener's shoots, drift findings and the infrastructure ledger.
--
-- Snapshots are tables of their own, never columns on tenant.clusters: in Fundament every change to
-- a cluster row queues an authorization outbox row, and the collector writes every interval.
-- fun_cluster_worker may SELECT, INSERT and UPDATE these tables and never DELETE (rows are resolved,
-- destroyed or soft-deleted instead); fun_platform_admin_api reads them all.
SET LOCAL lock_timeout = '10s';

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
    CONSTRAINT cluster_snapshots_pk PRIMARY KEY (cluster_id),
    CONSTRAINT cluster_snapshots_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT cluster_snapshots_ck_counts CHECK (
        nodes >= 0 AND ready_nodes BETWEEN 0 AND nodes AND pods >= 0 AND allocatable_pods >= 0
        AND cpu_allocatable_millicores >= 0 AND memory_allocatable_bytes >= 0
    ),
    -- Either a collection succeeded once (observed) or one failed (last_error_at), or both.
    CONSTRAINT cluster_snapshots_ck_something_happened CHECK (observed IS NOT NULL OR last_error_at IS NOT NULL),
    CONSTRAINT cluster_snapshots_ck_error_pair CHECK ((last_error IS NULL) = (last_error_at IS NULL))
);
ALTER TABLE tenant.cluster_snapshots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_snapshots TO fun_platform_admin_api;
GRANT SELECT, INSERT, UPDATE ON tenant.cluster_snapshots TO fun_cluster_worker;
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
GRANT SELECT, INSERT, UPDATE ON tenant.node_pool_snapshots TO fun_cluster_worker;
CREATE POLICY node_pool_snapshots_admin_api_read ON tenant.node_pool_snapshots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY node_pool_snapshots_cluster_worker_write ON tenant.node_pool_snapshots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- namespace_snapshots: running pods per tenant namespace as the collector last counted them.
CREATE TABLE tenant.namespace_snapshots (
    namespace_id uuid NOT NULL,
    cluster_id uuid NOT NULL,
    observed timestamptz NOT NULL,
    pods integer NOT NULL,
    CONSTRAINT namespace_snapshots_pk PRIMARY KEY (namespace_id),
    CONSTRAINT namespace_snapshots_fk_namespace FOREIGN KEY (namespace_id) REFERENCES tenant.namespaces (id),
    CONSTRAINT namespace_snapshots_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT namespace_snapshots_ck_pods CHECK (pods >= 0)
);
CREATE INDEX namespace_snapshots_idx_cluster ON tenant.namespace_snapshots (cluster_id);
ALTER TABLE tenant.namespace_snapshots ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespace_snapshots TO fun_platform_admin_api;
GRANT SELECT, INSERT, UPDATE ON tenant.namespace_snapshots TO fun_cluster_worker;
CREATE POLICY namespace_snapshots_admin_api_read ON tenant.namespace_snapshots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY namespace_snapshots_cluster_worker_write ON tenant.namespace_snapshots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- worker_heartbeats: one row per periodic loop. `last_completed` is when the loop last completed a
-- pass (inventory: queued a round; reconcile: stored a listing) and `interval_seconds` its interval
-- then; staleness is measured in those intervals. `first_completed` keeps when the loop first
-- ever completed a pass (the default fills it on the first insert; an upsert leaves it alone), so a
-- cluster the collector never read is only called stale once the collector had time to read it.
CREATE TABLE tenant.worker_heartbeats (
    loop text NOT NULL,
    last_completed timestamptz NOT NULL,
    interval_seconds integer NOT NULL,
    first_completed timestamptz NOT NULL DEFAULT now(),
    details jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT worker_heartbeats_pk PRIMARY KEY (loop),
    CONSTRAINT worker_heartbeats_ck_loop CHECK (loop IN ('inventory', 'reconcile')),
    CONSTRAINT worker_heartbeats_ck_interval CHECK (interval_seconds > 0),
    CONSTRAINT worker_heartbeats_ck_details CHECK (jsonb_typeof(details) = 'object')
);
ALTER TABLE tenant.worker_heartbeats ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.worker_heartbeats TO fun_platform_admin_api;
GRANT SELECT, INSERT, UPDATE ON tenant.worker_heartbeats TO fun_cluster_worker;
CREATE POLICY worker_heartbeats_admin_api_read ON tenant.worker_heartbeats
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY worker_heartbeats_cluster_worker_write ON tenant.worker_heartbeats
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

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
GRANT SELECT, INSERT, UPDATE ON tenant.gardener_shoots TO fun_cluster_worker;
CREATE POLICY gardener_shoots_admin_api_read ON tenant.gardener_shoots
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY gardener_shoots_cluster_worker_write ON tenant.gardener_shoots
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);

-- drift_findings: disagreements between the database and Gardener. At most one open finding
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
    CONSTRAINT drift_findings_pk PRIMARY KEY (id),
    CONSTRAINT drift_findings_ck_kind CHECK (kind IN (
        'orphan_shoot', 'shoot_of_deleted_cluster', 'missing_shoot', 'version_mismatch', 'organization_mismatch'
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
ALTER TABLE tenant.drift_findings ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.drift_findings TO fun_platform_admin_api;
GRANT SELECT, INSERT, UPDATE ON tenant.drift_findings TO fun_cluster_worker;
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
    CONSTRAINT infrastructure_resources_pk PRIMARY KEY (id),
    CONSTRAINT infrastructure_resources_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT infrastructure_resources_ck_resource_type CHECK (resource_type ~ '^[a-z0-9]+(\.[a-z0-9]+)+$'),
    CONSTRAINT infrastructure_resources_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT infrastructure_resources_ck_seen CHECK (last_seen >= created),
    CONSTRAINT infrastructure_resources_ck_destroyed CHECK (destroyed IS NULL OR destroyed >= created)
);
CREATE UNIQUE INDEX infrastructure_resources_uq_active ON tenant.infrastructure_resources
    (cluster_id, resource_type, namespace, name) WHERE destroyed IS NULL;
-- ListInfrastructureResources pages by (cluster_id, resource_type, namespace, name, id).
CREATE INDEX infrastructure_resources_idx_paging ON tenant.infrastructure_resources
    (cluster_id, resource_type, namespace, name, id);
ALTER TABLE tenant.infrastructure_resources ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.infrastructure_resources TO fun_platform_admin_api;
GRANT SELECT, INSERT, UPDATE ON tenant.infrastructure_resources TO fun_cluster_worker;
CREATE POLICY infrastructure_resources_admin_api_read ON tenant.infrastructure_resources
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY infrastructure_resources_cluster_worker_write ON tenant.infrastructure_resources
    FOR ALL TO fun_cluster_worker USING (true) WITH CHECK (true);
