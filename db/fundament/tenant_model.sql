-- The platform model this project stands in for: Fundament's tenant tables at Fundament's schema
-- version 33, as far as fleet inventory relies on them or lives beside them. In production Fundament's
-- own migrations create and own these objects; a platform team applies only db/migrations/ (fleet
-- inventory's own objects) onto that database. The demo and the tests have no Fundament, so
-- `db.migrate.apply_platform_model()` builds this stand-in once, as Fundament has it: the columns,
-- CHECKs, foreign keys (ON DELETE NO ACTION), the delete-order triggers, the cluster outbox and its
-- triggers, the authorization outbox triggers, the roles' grants and policies, the system organization
-- and the version table at 33.
--
-- Left out, because nothing of fleet inventory reads or writes them and none of them constrains what
-- it does: users, memberships and the project-admin constraint trigger, limits, the catalog schema
-- (the clusters' and node pools' catalog references are plain nullable columns here), appstore, authn's
-- API keys and dcim. Ids default to gen_random_uuid() (Fundament's uuidv7() is PostgreSQL 18's), except
-- the cluster outbox's, whose order matters (stand-in's time-ordered `tenant.standin_uuidv7()`).
--
-- Row security is ENABLEd, not FORCEd: fun_owner owns every table and so is not subject to it.
SET LOCAL lock_timeout = '10s';

CREATE SCHEMA IF NOT EXISTS tenant AUTHORIZATION fun_owner;
CREATE SCHEMA IF NOT EXISTS authn AUTHORIZATION fun_owner;
CREATE SCHEMA IF NOT EXISTS authz AUTHORIZATION fun_owner;
GRANT USAGE ON SCHEMA tenant, authn TO fun_cluster_worker, fun_fundament_api;
GRANT USAGE ON SCHEMA authz TO fun_cluster_worker, fun_fundament_api;

-- Fundament's session context: organization-api sets it per acquired connection.
CREATE FUNCTION authn.current_organization_id() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(pg_catalog.current_setting('app.current_organization_id', true), '')::uuid $$;
GRANT EXECUTE ON FUNCTION authn.current_organization_id() TO fun_fundament_api;

-- A time-ordered uuid (version 7 layout): what uuidv7() gives on PostgreSQL 18, for the outbox's order.
CREATE FUNCTION tenant.standin_uuidv7() RETURNS uuid
    LANGUAGE sql VOLATILE
    AS $$
    SELECT encode(
        set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
            PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
            FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;

-- The authorization outbox: every change to a row the authz-worker mirrors queues one row here.
CREATE TABLE authz.outbox (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    project_id uuid,
    cluster_id uuid,
    node_pool_id uuid,
    namespace_id uuid,
    created timestamptz NOT NULL DEFAULT now(),
    processed timestamptz,
    retries integer NOT NULL DEFAULT 0,
    failed timestamptz,
    CONSTRAINT outbox_pk PRIMARY KEY (id),
    CONSTRAINT outbox_ck_single_fk CHECK (num_nonnulls(project_id, cluster_id, node_pool_id, namespace_id) = 1)
);
CREATE INDEX outbox_idx_unprocessed ON authz.outbox (created) WHERE processed IS NULL;
GRANT INSERT ON authz.outbox TO fun_cluster_worker;

CREATE FUNCTION authz.clusters_sync_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW IS DISTINCT FROM OLD THEN
        INSERT INTO authz.outbox (cluster_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION authz.projects_sync_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW IS DISTINCT FROM OLD THEN
        INSERT INTO authz.outbox (project_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION authz.node_pools_sync_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW IS DISTINCT FROM OLD THEN
        INSERT INTO authz.outbox (node_pool_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION authz.namespaces_sync_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW IS DISTINCT FROM OLD THEN
        INSERT INTO authz.outbox (namespace_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;

-- organizations -------------------------------------------------------------------------------------
CREATE TABLE tenant.organizations (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    alias text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    CONSTRAINT organizations_pk PRIMARY KEY (id),
    CONSTRAINT organizations_uq_name UNIQUE NULLS NOT DISTINCT (name, deleted),
    CONSTRAINT organizations_ck_name CHECK (name ~ '^[a-z][a-z0-9-]*[a-z0-9]$' AND name !~ '--'),
    CONSTRAINT organizations_ck_alias CHECK (char_length(alias) >= 1 AND char_length(alias) <= 255)
);
ALTER TABLE tenant.organizations ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organizations TO fun_cluster_worker;
GRANT SELECT, INSERT, UPDATE ON tenant.organizations TO fun_fundament_api;
CREATE POLICY organizations_cluster_worker_policy ON tenant.organizations FOR SELECT TO fun_cluster_worker
    USING (true);
CREATE POLICY organizations_organization_policy ON tenant.organizations FOR ALL TO fun_fundament_api
    USING (id = authn.current_organization_id());

-- The system organization (Fundament's seed, 0100-system-org.sql): first-party things, no members.
INSERT INTO tenant.organizations (id, name, alias)
VALUES ('019b4000-0000-7000-8000-000000000000', 'system', 'System')
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, alias = EXCLUDED.alias;

-- clusters ------------------------------------------------------------------------------------------
CREATE TABLE tenant.clusters (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL,
    name text NOT NULL,
    region text NOT NULL,
    kubernetes_version text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    deleted timestamptz,
    -- Nothing writes it since Fundament's migration 008.
    synced timestamptz,
    -- Written by the provisioning side's status poller; no CHECK (values: pending, progressing, ready,
    -- error, deleting, deleted).
    shoot_status text,
    shoot_status_message text,
    shoot_status_updated timestamptz,
    -- Copied from the latest-written cluster_outbox row by its trigger.
    outbox_status text,
    outbox_retries integer NOT NULL DEFAULT 0,
    outbox_error text,
    -- Catalog references (Fundament's catalog schema is not part of this stand-in).
    region_id uuid,
    kubernetes_version_id uuid,
    CONSTRAINT clusters_pk PRIMARY KEY (id),
    CONSTRAINT clusters_fk_organization FOREIGN KEY (organization_id) REFERENCES tenant.organizations (id),
    CONSTRAINT clusters_uq_name UNIQUE NULLS NOT DISTINCT (organization_id, name, deleted)
);
CREATE INDEX clusters_idx_needs_sync ON tenant.clusters (synced) WHERE deleted IS NULL;
ALTER TABLE tenant.clusters ENABLE ROW LEVEL SECURITY;
GRANT SELECT, UPDATE ON tenant.clusters TO fun_cluster_worker;
GRANT SELECT, INSERT, UPDATE ON tenant.clusters TO fun_fundament_api;
CREATE POLICY cluster_worker_all_access ON tenant.clusters FOR ALL TO fun_cluster_worker USING (true);
CREATE POLICY clusters_organization_policy ON tenant.clusters FOR ALL TO fun_fundament_api
    USING (organization_id = authn.current_organization_id());

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
    region_machine_type_id uuid,
    CONSTRAINT node_pools_pk PRIMARY KEY (id),
    CONSTRAINT node_pools_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT node_pools_uq_name UNIQUE NULLS NOT DISTINCT (cluster_id, name, deleted)
);
CREATE INDEX node_pools_idx_cluster_id ON tenant.node_pools (cluster_id);
ALTER TABLE tenant.node_pools ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.node_pools TO fun_cluster_worker;
GRANT SELECT, INSERT, UPDATE ON tenant.node_pools TO fun_fundament_api;
CREATE POLICY node_pools_cluster_worker_read ON tenant.node_pools FOR SELECT TO fun_cluster_worker USING (true);
-- The subquery runs under the caller's own clusters policy, so it sees only its organization's clusters.
CREATE POLICY node_pools_organization_policy ON tenant.node_pools FOR ALL TO fun_fundament_api
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
    CONSTRAINT projects_uq_cluster_name UNIQUE NULLS NOT DISTINCT (cluster_id, name, deleted),
    CONSTRAINT projects_ck_alias CHECK (char_length(alias) >= 1 AND char_length(alias) <= 255)
);
ALTER TABLE tenant.projects ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.projects TO fun_cluster_worker;
GRANT SELECT, INSERT, UPDATE ON tenant.projects TO fun_fundament_api;
CREATE POLICY projects_cluster_worker_policy ON tenant.projects FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY projects_organization_policy ON tenant.projects FOR ALL TO fun_fundament_api
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
    CONSTRAINT namespaces_ck_name CHECK (name = name),
    CONSTRAINT namespaces_uq_name UNIQUE NULLS NOT DISTINCT (project_id, name, deleted)
);
CREATE INDEX namespaces_idx_project_id ON tenant.namespaces (project_id) WHERE deleted IS NULL;
ALTER TABLE tenant.namespaces ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.namespaces TO fun_cluster_worker;
GRANT SELECT, INSERT, UPDATE ON tenant.namespaces TO fun_fundament_api;
CREATE POLICY namespaces_cluster_worker_policy ON tenant.namespaces FOR SELECT TO fun_cluster_worker USING (true);
CREATE POLICY namespaces_organization_policy ON tenant.namespaces FOR ALL TO fun_fundament_api
    USING (EXISTS (SELECT 1 FROM tenant.projects WHERE tenant.projects.id = project_id));

-- Delete order, leaves first (SECURITY INVOKER, as Fundament has them).
CREATE FUNCTION tenant.clusters_tr_verify_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.deleted IS NOT NULL AND EXISTS (
        SELECT 1 FROM tenant.projects WHERE cluster_id = NEW.id AND deleted IS NULL
    ) THEN
        RAISE EXCEPTION 'Cannot delete cluster with undeleted projects';
    END IF;
    RETURN NEW;
END
$$;
CREATE FUNCTION tenant.projects_tr_verify_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.deleted IS NOT NULL AND EXISTS (
        SELECT 1 FROM tenant.namespaces WHERE project_id = NEW.id AND deleted IS NULL
    ) THEN
        RAISE EXCEPTION 'Cannot delete project with undeleted namespaces';
    END IF;
    RETURN NEW;
END
$$;
CREATE CONSTRAINT TRIGGER clusters_tr_verify_deleted AFTER UPDATE OF deleted ON tenant.clusters
    FOR EACH ROW EXECUTE FUNCTION tenant.clusters_tr_verify_deleted();
CREATE CONSTRAINT TRIGGER projects_tr_verify_deleted AFTER UPDATE OF deleted ON tenant.projects
    FOR EACH ROW EXECUTE FUNCTION tenant.projects_tr_verify_deleted();

-- cluster_outbox: what the provisioning side must sync (no row security) ----------------------------
CREATE TABLE tenant.cluster_outbox (
    id uuid NOT NULL DEFAULT tenant.standin_uuidv7(),
    cluster_id uuid,
    node_pool_id uuid,
    namespace_id uuid,
    organization_user_id uuid,
    project_member_id uuid,
    event text NOT NULL,
    source text NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    retries integer NOT NULL DEFAULT 0,
    retry_after timestamptz,
    processed timestamptz,
    failed timestamptz,
    status_info text,
    created timestamptz NOT NULL DEFAULT now(),
    deferrals integer NOT NULL DEFAULT 0,
    CONSTRAINT cluster_outbox_pk PRIMARY KEY (id),
    CONSTRAINT cluster_outbox_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT cluster_outbox_fk_node_pool FOREIGN KEY (node_pool_id) REFERENCES tenant.node_pools (id),
    CONSTRAINT cluster_outbox_fk_namespace FOREIGN KEY (namespace_id) REFERENCES tenant.namespaces (id),
    CONSTRAINT cluster_outbox_ck_single_fk CHECK (
        num_nonnulls(cluster_id, node_pool_id, namespace_id, organization_user_id, project_member_id) = 1
    ),
    CONSTRAINT cluster_outbox_ck_status CHECK (status IN ('pending', 'completed', 'retrying', 'failed')),
    CONSTRAINT cluster_outbox_ck_event CHECK (event IN ('created', 'updated', 'deleted', 'reconcile', 'ready')),
    CONSTRAINT cluster_outbox_ck_source CHECK (source IN ('trigger', 'reconcile', 'manual', 'status'))
);
CREATE INDEX cluster_outbox_idx_pending ON tenant.cluster_outbox (status, retry_after, id);
CREATE INDEX cluster_outbox_idx_cluster ON tenant.cluster_outbox (cluster_id, id DESC);
CREATE INDEX cluster_outbox_idx_node_pool ON tenant.cluster_outbox (node_pool_id, id DESC);
CREATE INDEX cluster_outbox_idx_namespace ON tenant.cluster_outbox (namespace_id, id DESC);
GRANT SELECT, INSERT, UPDATE ON tenant.cluster_outbox TO fun_cluster_worker;

-- The audit trail of a cluster's syncs and statuses.
CREATE TABLE tenant.cluster_events (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    cluster_id uuid NOT NULL,
    event_type text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    sync_action text,
    message text,
    attempt integer,
    CONSTRAINT cluster_events_pk PRIMARY KEY (id),
    CONSTRAINT cluster_events_fk_cluster FOREIGN KEY (cluster_id) REFERENCES tenant.clusters (id),
    CONSTRAINT cluster_events_ck_event_type CHECK (event_type IN (
        'sync_requested', 'sync_claimed', 'sync_succeeded', 'sync_failed', 'status_progressing', 'status_ready',
        'status_error', 'status_deleted', 'user_sync_succeeded', 'user_sync_failed'
    )),
    CONSTRAINT cluster_events_ck_sync_action CHECK (sync_action IS NULL OR sync_action IN ('sync', 'delete'))
);
CREATE INDEX cluster_events_idx_cluster_created ON tenant.cluster_events (cluster_id DESC, created DESC);
ALTER TABLE tenant.cluster_events ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT ON tenant.cluster_events TO fun_cluster_worker;
CREATE POLICY cluster_events_worker_all_access ON tenant.cluster_events FOR ALL TO fun_cluster_worker USING (true);

-- Outbox rows from the tenant tables, and the latest cluster row's state copied onto the cluster.
CREATE FUNCTION tenant.cluster_outbox_cluster_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT'
       OR OLD.deleted IS DISTINCT FROM NEW.deleted
       OR OLD.region IS DISTINCT FROM NEW.region
       OR OLD.kubernetes_version IS DISTINCT FROM NEW.kubernetes_version
    THEN
        INSERT INTO tenant.cluster_outbox (cluster_id, event, source)
        VALUES (NEW.id,
                CASE
                    WHEN TG_OP = 'INSERT' THEN 'created'
                    WHEN OLD.deleted IS NULL AND NEW.deleted IS NOT NULL THEN 'deleted'
                    ELSE 'updated'
                END,
                'trigger');
    END IF;
    RETURN NEW;
END
$$;
CREATE FUNCTION tenant.node_pool_outbox_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    INSERT INTO tenant.cluster_outbox (node_pool_id, event, source)
    VALUES (NEW.id,
            CASE
                WHEN TG_OP = 'INSERT' THEN 'created'
                WHEN OLD.deleted IS NULL AND NEW.deleted IS NOT NULL THEN 'deleted'
                ELSE 'updated'
            END,
            'trigger');
    RETURN NULL;
END
$$;
CREATE FUNCTION tenant.namespace_outbox_trigger() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW IS DISTINCT FROM OLD THEN
        INSERT INTO tenant.cluster_outbox (namespace_id, event, source)
        VALUES (NEW.id,
                CASE
                    WHEN TG_OP = 'INSERT' THEN 'created'
                    WHEN OLD.deleted IS NULL AND NEW.deleted IS NOT NULL THEN 'deleted'
                    ELSE 'updated'
                END,
                'trigger');
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION tenant.cluster_outbox_update_cluster_status() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    resolved_cluster_id uuid;
BEGIN
    IF NEW.cluster_id IS NOT NULL THEN
        UPDATE tenant.clusters
        SET outbox_status = NEW.status, outbox_retries = NEW.retries, outbox_error = NEW.status_info
        WHERE tenant.clusters.id = NEW.cluster_id;
    ELSIF NEW.node_pool_id IS NOT NULL THEN
        SELECT tenant.node_pools.cluster_id INTO resolved_cluster_id
        FROM tenant.node_pools WHERE tenant.node_pools.id = NEW.node_pool_id;
        IF resolved_cluster_id IS NOT NULL THEN
            UPDATE tenant.clusters
            SET outbox_status = NEW.status, outbox_retries = NEW.retries, outbox_error = NEW.status_info
            WHERE tenant.clusters.id = resolved_cluster_id;
        END IF;
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION tenant.cluster_outbox_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('cluster_outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER cluster_outbox_cluster AFTER INSERT OR UPDATE ON tenant.clusters
    FOR EACH ROW EXECUTE FUNCTION tenant.cluster_outbox_cluster_trigger();
CREATE TRIGGER node_pool_outbox AFTER INSERT OR UPDATE OF name, machine_type, region_machine_type_id,
    autoscale_min, autoscale_max, deleted ON tenant.node_pools
    FOR EACH ROW EXECUTE FUNCTION tenant.node_pool_outbox_trigger();
CREATE TRIGGER namespace_outbox AFTER INSERT OR UPDATE ON tenant.namespaces
    FOR EACH ROW EXECUTE FUNCTION tenant.namespace_outbox_trigger();
CREATE TRIGGER cluster_outbox_update_cluster_status AFTER INSERT OR UPDATE ON tenant.cluster_outbox
    FOR EACH ROW EXECUTE FUNCTION tenant.cluster_outbox_update_cluster_status();
CREATE TRIGGER cluster_outbox_notify AFTER INSERT ON tenant.cluster_outbox
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_outbox_notify();

CREATE TRIGGER clusters_sync_trigger AFTER INSERT OR UPDATE ON tenant.clusters
    FOR EACH ROW EXECUTE FUNCTION authz.clusters_sync_trigger();
CREATE TRIGGER projects_sync_trigger AFTER INSERT OR UPDATE ON tenant.projects
    FOR EACH ROW EXECUTE FUNCTION authz.projects_sync_trigger();
CREATE TRIGGER node_pools_sync_trigger AFTER INSERT OR UPDATE ON tenant.node_pools
    FOR EACH ROW EXECUTE FUNCTION authz.node_pools_sync_trigger();
CREATE TRIGGER namespaces_sync_trigger AFTER INSERT OR UPDATE ON tenant.namespaces
    FOR EACH ROW EXECUTE FUNCTION authz.namespaces_sync_trigger();

-- Fundament's version table (trek's, in schema public, where fun_owner may create nothing): Fundament's
-- services refuse to start unless it says 33.
RESET ROLE;
CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    dirty boolean NOT NULL,
    CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);
INSERT INTO public.schema_migrations (version, dirty) VALUES (33, false);
