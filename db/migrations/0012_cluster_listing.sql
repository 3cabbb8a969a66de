-- 0012: tenant.cluster_listing, one maintained row per non-system cluster holding every key
-- ListClusters filters and sorts by, so that every filter and order combination is served by an index;
-- the names SearchNamespaces walks; the Kubernetes names of namespaces as an index expression.
--
-- Why a table: a cluster's sort keys live in four tables (clusters, organizations, cluster_sync_state,
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
SET LOCAL lock_timeout = '10s';

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
    -- The status inputs (cluster_sync_state; NULL without a row), and the status they give.
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
-- The query: substrings through trigrams, prefixes of a cluster name through a pattern btree. The
-- trigram indexes hold the keys with '-' read as a letter: pg_trgm splits words at any other
-- character, so `prod-1` would be looked up as the trigrams of `prod` and `1`, which nearly every
-- cluster of a fleet named `prod-0`, `ci-1`, ... holds; as `prodz1` its trigrams are selective. The
-- queries match the same expression (to find candidates) and the key itself (the answer). No pending
-- list (fastupdate off): the listing is updated all the time, and a GIN pending list, scanned whole
-- by every search until a vacuum flushes it, would make the planner prefer reading the table.
CREATE INDEX cluster_listing_idx_search_trgm ON tenant.cluster_listing
    USING gin (translate(search_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_listing_idx_organization_trgm ON tenant.cluster_listing
    USING gin (translate(organization_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_listing_idx_cluster_trgm ON tenant.cluster_listing
    USING gin (translate(cluster_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_listing_idx_cluster_prefix ON tenant.cluster_listing (cluster_key text_pattern_ops);

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
    CONSTRAINT organization_totals_fk_organization FOREIGN KEY (organization_id) REFERENCES tenant.organizations (id)
);
ALTER TABLE tenant.organization_totals OWNER TO fun_owner;
ALTER TABLE tenant.organization_totals ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organization_totals TO fun_platform_admin_api;
CREATE POLICY organization_totals_admin_api_read ON tenant.organization_totals
    FOR SELECT TO fun_platform_admin_api USING (true);

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
    LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id
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
    -- The same again for the organizations' totals: make sure their rows exist, lock them in order
    -- (waiting for another writer), then add up what is committed now.
    INSERT INTO tenant.organization_totals AS t
        (organization_id, clusters, projects, namespaces, ready_nodes, pods, clusters_needing_attention)
    SELECT o.id, 0, 0, 0, 0, 0, 0 FROM unnest(organizations) AS o (id)
    ON CONFLICT (organization_id) DO NOTHING;
    PERFORM 1 FROM tenant.organization_totals AS t
    WHERE t.organization_id = ANY (organizations) ORDER BY t.organization_id FOR UPDATE;
    UPDATE tenant.organization_totals AS t
    SET clusters = x.clusters, projects = x.projects, namespaces = x.namespaces, ready_nodes = x.ready_nodes,
        pods = x.pods, clusters_needing_attention = x.clusters_needing_attention
    FROM (
        SELECT o.id,
               count(l.id) AS clusters,
               coalesce(sum(l.projects), 0) AS projects,
               coalesce(sum(l.namespaces), 0) AS namespaces,
               coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
               coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
               count(l.id) FILTER (WHERE l.needs_attention) AS clusters_needing_attention
        FROM unnest(organizations) AS o (id)
        LEFT JOIN tenant.cluster_listing AS l ON l.organization_id = o.id AND NOT l.cluster_deleted
        GROUP BY o.id
    ) AS x
    WHERE t.organization_id = x.id
      AND (t.clusters, t.projects, t.namespaces, t.ready_nodes, t.pods, t.clusters_needing_attention)
          IS DISTINCT FROM (x.clusters, x.projects, x.namespaces, x.ready_nodes, x.pods, x.clusters_needing_attention);
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

-- cluster_sync_state and cluster_snapshots: keyed by cluster_id.
CREATE FUNCTION tenant.cluster_listing_from_cluster_rows() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM tenant.refresh_cluster_listing(ARRAY(SELECT DISTINCT t.cluster_id FROM changed AS t));
    RETURN NULL;
END
$$;

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
ALTER FUNCTION tenant.cluster_listing_from_cluster_rows() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_projects() OWNER TO fun_owner;
ALTER FUNCTION tenant.cluster_listing_from_namespaces() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION
    tenant.cluster_listing_from_clusters(), tenant.cluster_listing_from_organizations(),
    tenant.cluster_listing_from_cluster_rows(), tenant.cluster_listing_from_projects(),
    tenant.cluster_listing_from_namespaces()
FROM PUBLIC;

-- Transition tables allow one event per trigger, so each table has an INSERT and an UPDATE trigger.
-- No role may DELETE these tables (soft delete), so there is no DELETE trigger.
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.clusters REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_clusters();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.clusters REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_clusters();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.organizations REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_organizations();
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.cluster_sync_state REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_cluster_rows();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.cluster_sync_state REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_cluster_rows();
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_cluster_rows();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_cluster_rows();
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.projects REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_projects();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.projects
    REFERENCING NEW TABLE AS changed OLD TABLE AS previous
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_projects();
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.namespaces REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_namespaces();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.namespaces
    REFERENCING NEW TABLE AS changed OLD TABLE AS previous
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_namespaces();

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

-- Every figure of GetFleetSummary in the fleet-wide rows of the history, so the summary is one row of
-- the latest round (NULL in rows recorded before this migration, and in the organization rows for
-- the organization counts). clusters_stale is judged at the recording's time.
ALTER TABLE tenant.fleet_history
    ADD COLUMN organizations integer,
    ADD COLUMN organizations_listed integer,
    ADD COLUMN projects integer,
    ADD COLUMN namespaces integer,
    ADD COLUMN clusters_ready integer,
    ADD COLUMN allocatable_pods bigint,
    ADD COLUMN clusters_stale integer;
