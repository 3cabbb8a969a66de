-- 0001: the platform's own tenant model (a faithful subset of Fundament's), its roles'
-- privileges and row security, and the system organization.
--
-- In production other services own these tables; here the fleet generator, the demo and the tests
-- write them. Conventions: uuid ids, timestamptz with past-tense names, soft delete by `deleted`
-- (live = deleted IS NULL, rows are never removed), CHECK constraints instead of enum types,
-- schema-qualified names, row level security on every table with one policy per role (TO role).
--
-- Row security is ENABLEd, not FORCEd: fun_owner owns every table and so is not subject to it. That
-- is deliberate. fun_owner cannot log in and no login role is a member of it; the only code that
-- runs with its rights is tenant.platform_overview() (SECURITY DEFINER, search_path pinned), which
-- must count across every organization. Forcing row security would need a fun_owner policy on every
-- table that says USING (true), which grants nothing less and hides the real boundary.
SET LOCAL lock_timeout = '10s';

CREATE SCHEMA IF NOT EXISTS tenant AUTHORIZATION fun_owner;
GRANT USAGE ON SCHEMA tenant TO fun_platform_public_api, fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;

-- PostgreSQL grants EXECUTE on every new function to PUBLIC. fun_owner's functions start with no
-- grant at all instead, so a function added later is private until a migration grants it.
ALTER DEFAULT PRIVILEGES FOR ROLE fun_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

-- The platform's own organization: owns first-party things, is no tenant, and every
-- cross-organization query (public or staff) leaves it out through this one function.
CREATE FUNCTION tenant.system_organization_id() RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '00000000-0000-0000-0000-000000000001'::uuid $$;
REVOKE EXECUTE ON FUNCTION tenant.system_organization_id() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.system_organization_id() TO fun_platform_admin_api, fun_cluster_worker;

-- The organization a fun_fundament_api session acts for (Fundament sets it per acquired connection);
-- NULL when unset, so an unscoped session sees nothing.
CREATE FUNCTION tenant.current_organization_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT NULLIF(pg_catalog.current_setting('fundament.organization_id', true), '')::uuid $$;
REVOKE EXECUTE ON FUNCTION tenant.current_organization_id() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.current_organization_id() TO fun_fundament_api;

-- organizations -------------------------------------------------------------------------------------
CREATE TABLE tenant.organizations (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    alias text NOT NULL,
    listed_publicly boolean NOT NULL DEFAULT false,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT organizations_pk PRIMARY KEY (id),
    CONSTRAINT organizations_ck_name CHECK (name ~ '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'),
    CONSTRAINT organizations_ck_alias CHECK (char_length(alias) BETWEEN 1 AND 255),
    CONSTRAINT organizations_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    -- The system organization is never in the public overview, whatever anyone writes.
    CONSTRAINT organizations_ck_system_unlisted CHECK (
        id <> '00000000-0000-0000-0000-000000000001'::uuid OR NOT listed_publicly
    )
);
-- A name is unique among live organizations; a deleted one's name can be reused.
CREATE UNIQUE INDEX organizations_uq_live_name ON tenant.organizations (name) WHERE deleted IS NULL;
-- ListOrganizations pages by (name, id) over live and deleted rows alike.
CREATE INDEX organizations_idx_name_id ON tenant.organizations (name, id);
ALTER TABLE tenant.organizations ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organizations TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY organizations_admin_api_read ON tenant.organizations FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY organizations_cluster_worker_read ON tenant.organizations FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY organizations_fundament_api_tenant ON tenant.organizations FOR SELECT TO fun_fundament_api
    USING (id = tenant.current_organization_id());

INSERT INTO tenant.organizations (id, name, alias, listed_publicly, created)
VALUES (tenant.system_organization_id(), 'system', 'System', false, '2020-01-01T00:00:00Z')
ON CONFLICT (id) DO NOTHING;

-- clusters ------------------------------------------------------------------------------------------
CREATE TABLE tenant.clusters (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL,
    name text NOT NULL,
    region text NOT NULL,
    kubernetes_version text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT clusters_pk PRIMARY KEY (id),
    CONSTRAINT clusters_fk_organization FOREIGN KEY (organization_id) REFERENCES tenant.organizations (id),
    CONSTRAINT clusters_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT clusters_ck_region CHECK (char_length(region) BETWEEN 1 AND 255),
    CONSTRAINT clusters_ck_kubernetes_version CHECK (char_length(kubernetes_version) BETWEEN 1 AND 64),
    CONSTRAINT clusters_ck_deleted CHECK (deleted IS NULL OR deleted >= created)
);
CREATE UNIQUE INDEX clusters_uq_live_organization_name ON tenant.clusters (organization_id, name) WHERE deleted IS NULL;
-- ListClusters pages by (name, id); with an organization or a region filter it walks these instead.
CREATE INDEX clusters_idx_name_id ON tenant.clusters (name, id);
CREATE INDEX clusters_idx_organization_name_id ON tenant.clusters (organization_id, name, id);
CREATE INDEX clusters_idx_region_name_id ON tenant.clusters (region, name, id);
ALTER TABLE tenant.clusters ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.clusters TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY clusters_admin_api_read ON tenant.clusters FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY clusters_cluster_worker_read ON tenant.clusters FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY clusters_fundament_api_tenant ON tenant.clusters FOR SELECT TO fun_fundament_api
    USING (organization_id = tenant.current_organization_id());

-- node_pools ----------------------------------------------------------------------------------------
CREATE TABLE tenant.node_pools (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    cluster_id uuid NOT NULL,
    name text NOT NULL,
    machine_type text NOT NULL,
    autoscale_min integer NOT NULL,
    autoscale_max integer NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT node_pools_pk PRIMARY KEY (id),
    CONSTRAINT node_pools_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT node_pools_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT node_pools_ck_autoscale CHECK (autoscale_min >= 0 AND autoscale_max >= autoscale_min),
    CONSTRAINT node_pools_ck_deleted CHECK (deleted IS NULL OR deleted >= created)
);
CREATE UNIQUE INDEX node_pools_uq_live_cluster_name ON tenant.node_pools (cluster_id, name) WHERE deleted IS NULL;
CREATE INDEX node_pools_idx_cluster_name ON tenant.node_pools (cluster_id, name);
ALTER TABLE tenant.node_pools ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.node_pools TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY node_pools_admin_api_read ON tenant.node_pools FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY node_pools_cluster_worker_read ON tenant.node_pools FOR SELECT TO fun_cluster_worker USING (true);
-- The subquery runs under the caller's own clusters policy, so it sees only its organization's clusters.
CREATE POLICY node_pools_fundament_api_tenant ON tenant.node_pools FOR SELECT TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.clusters WHERE tenant.clusters.id = cluster_id));

-- projects ------------------------------------------------------------------------------------------
CREATE TABLE tenant.projects (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    cluster_id uuid NOT NULL,
    name text NOT NULL,
    alias text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT projects_pk PRIMARY KEY (id),
    CONSTRAINT projects_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT projects_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT projects_ck_alias CHECK (char_length(alias) BETWEEN 1 AND 255),
    CONSTRAINT projects_ck_deleted CHECK (deleted IS NULL OR deleted >= created)
);
CREATE UNIQUE INDEX projects_uq_live_cluster_name ON tenant.projects (cluster_id, name) WHERE deleted IS NULL;
-- GetCluster lists a cluster's projects by name; counts walk projects per cluster.
CREATE INDEX projects_idx_cluster_name_id ON tenant.projects (cluster_id, name, id);
ALTER TABLE tenant.projects ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.projects TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY projects_admin_api_read ON tenant.projects FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY projects_cluster_worker_read ON tenant.projects FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY projects_fundament_api_tenant ON tenant.projects FOR SELECT TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.clusters WHERE tenant.clusters.id = cluster_id));

-- namespaces ----------------------------------------------------------------------------------------
CREATE TABLE tenant.namespaces (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL,
    name text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT namespaces_pk PRIMARY KEY (id),
    CONSTRAINT namespaces_fk_project FOREIGN KEY (project_id) REFERENCES tenant.projects (id),
    CONSTRAINT namespaces_ck_name CHECK (char_length(name) BETWEEN 1 AND 255),
    CONSTRAINT namespaces_ck_deleted CHECK (deleted IS NULL OR deleted >= created)
);
CREATE UNIQUE INDEX namespaces_uq_live_project_name ON tenant.namespaces (project_id, name) WHERE deleted IS NULL;
-- GetCluster lists namespaces per project by name (deleted ones included for history views).
CREATE INDEX namespaces_idx_project_name_id ON tenant.namespaces (project_id, name, id);
ALTER TABLE tenant.namespaces ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespaces TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY namespaces_admin_api_read ON tenant.namespaces FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY namespaces_cluster_worker_read ON tenant.namespaces FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY namespaces_fundament_api_tenant ON tenant.namespaces FOR SELECT TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.projects WHERE tenant.projects.id = project_id));

-- cluster_sync_state --------------------------------------------------------------------------------
-- The cluster's own latest sync, as the provisioning side records it (in Fundament these are columns
-- on clusters, fed by the outbox; here a 1:1 table). No service role writes it.
CREATE TABLE tenant.cluster_sync_state (
    cluster_id uuid NOT NULL,
    sync_status text NOT NULL,
    sync_attempts integer NOT NULL DEFAULT 0,
    sync_error text,
    sync_updated timestamptz NOT NULL DEFAULT now(),
    -- Set once, by the first completed sync: "a sync ever completed".
    first_completed timestamptz,
    shoot_status text NOT NULL,
    shoot_operation text,
    shoot_message text,
    -- When shoot_status last changed; for a ready cluster: ready since.
    shoot_status_changed timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT cluster_sync_state_pk PRIMARY KEY (cluster_id),
    CONSTRAINT cluster_sync_state_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT cluster_sync_state_ck_sync_status CHECK (sync_status IN ('pending', 'retrying', 'completed', 'failed')),
    CONSTRAINT cluster_sync_state_ck_sync_attempts CHECK (sync_attempts >= 0),
    CONSTRAINT cluster_sync_state_ck_shoot_status CHECK (shoot_status IN (
        'pending', 'progressing', 'ready', 'unhealthy', 'error', 'missing',
        'hibernating', 'hibernated', 'deleting', 'deleted'
    )),
    CONSTRAINT cluster_sync_state_ck_shoot_operation CHECK (
        shoot_operation IS NULL OR shoot_operation IN ('create', 'reconcile', 'delete', 'migrate', 'restore')
    ),
    -- A completed latest sync implies a sync ever completed.
    CONSTRAINT cluster_sync_state_ck_first_completed CHECK (sync_status <> 'completed' OR first_completed IS NOT NULL)
);
ALTER TABLE tenant.cluster_sync_state ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_sync_state TO fun_platform_admin_api, fun_cluster_worker, fun_fundament_api;
CREATE POLICY cluster_sync_state_admin_api_read ON tenant.cluster_sync_state
    FOR SELECT TO fun_platform_admin_api USING (true);
CREATE POLICY cluster_sync_state_cluster_worker_read ON tenant.cluster_sync_state
    FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY cluster_sync_state_fundament_api_tenant ON tenant.cluster_sync_state FOR SELECT TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.clusters WHERE tenant.clusters.id = cluster_id));
