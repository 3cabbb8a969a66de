-- The platform model this project stands in for: Fundament's tenant tables, as far as fleet inventory
-- relies on them. In production Fundament's own migrations create and own these tables; a platform
-- team applies only db/migrations/ (fleet inventory's own objects) onto that database. The demo and the
-- tests have no Fundament, so `db.migrate.apply_platform_model()` builds this stand-in first, once.
--
-- Conventions (Fundament's): uuid ids, timestamptz with past-tense names, soft delete by `deleted`
-- (live = deleted IS NULL), CHECK constraints instead of enum types, schema-qualified names, row level
-- security on every table with one policy per role (TO role).
--
-- Row security is ENABLEd, not FORCEd: fun_owner owns every table and so is not subject to it. That is
-- deliberate. fun_owner cannot log in and no login role is a member of it; the only code that runs
-- with its rights is fleet inventory's SECURITY DEFINER functions, which must see every organization.
SET LOCAL lock_timeout = '10s';

CREATE SCHEMA IF NOT EXISTS tenant AUTHORIZATION fun_owner;
GRANT USAGE ON SCHEMA tenant TO fun_cluster_worker, fun_fundament_api;

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
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT organizations_pk PRIMARY KEY (id),
    CONSTRAINT organizations_ck_name CHECK (name ~ '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'),
    CONSTRAINT organizations_ck_alias CHECK (char_length(alias) BETWEEN 1 AND 255),
    CONSTRAINT organizations_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    CONSTRAINT organizations_ck_times_in_range CHECK (
        created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    )
);
-- A name is unique among live organizations; a deleted one's name can be reused.
CREATE UNIQUE INDEX organizations_uq_live_name ON tenant.organizations (name) WHERE deleted IS NULL;
ALTER TABLE tenant.organizations ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organizations TO fun_cluster_worker, fun_fundament_api;
CREATE POLICY organizations_cluster_worker_read ON tenant.organizations FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY organizations_fundament_api_tenant ON tenant.organizations FOR SELECT TO fun_fundament_api
    USING (id = tenant.current_organization_id());

-- The platform's own organization: owns first-party things and is no tenant.
INSERT INTO tenant.organizations (id, name, alias, created)
VALUES ('00000000-0000-0000-0000-000000000001', 'system', 'System', '2020-01-01T00:00:00Z')
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
    CONSTRAINT clusters_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    CONSTRAINT clusters_ck_times_in_range CHECK (
        created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    )
);
CREATE UNIQUE INDEX clusters_uq_live_organization_name ON tenant.clusters (organization_id, name) WHERE deleted IS NULL;
ALTER TABLE tenant.clusters ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.clusters TO fun_cluster_worker, fun_fundament_api;
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
    CONSTRAINT node_pools_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    CONSTRAINT node_pools_ck_times_in_range CHECK (
        created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    )
);
CREATE UNIQUE INDEX node_pools_uq_live_cluster_name ON tenant.node_pools (cluster_id, name) WHERE deleted IS NULL;
ALTER TABLE tenant.node_pools ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.node_pools TO fun_cluster_worker, fun_fundament_api;
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
    CONSTRAINT projects_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    CONSTRAINT projects_ck_times_in_range CHECK (
        created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    )
);
CREATE UNIQUE INDEX projects_uq_live_cluster_name ON tenant.projects (cluster_id, name) WHERE deleted IS NULL;
ALTER TABLE tenant.projects ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.projects TO fun_cluster_worker, fun_fundament_api;
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
    CONSTRAINT namespaces_ck_deleted CHECK (deleted IS NULL OR deleted >= created),
    CONSTRAINT namespaces_ck_times_in_range CHECK (
        created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    )
);
CREATE UNIQUE INDEX namespaces_uq_live_project_name ON tenant.namespaces (project_id, name) WHERE deleted IS NULL;
ALTER TABLE tenant.namespaces ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespaces TO fun_cluster_worker, fun_fundament_api;
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
    -- When shoot_status last changed.
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
GRANT SELECT ON tenant.cluster_sync_state TO fun_cluster_worker, fun_fundament_api;
CREATE POLICY cluster_sync_state_cluster_worker_read ON tenant.cluster_sync_state
    FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY cluster_sync_state_fundament_api_tenant ON tenant.cluster_sync_state FOR SELECT TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.clusters WHERE tenant.clusters.id = cluster_id));
