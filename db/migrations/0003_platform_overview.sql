-- 0003: tenant.platform_overview(), the whole of the public boundary.
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
-- resolved here. Namespaces are counted per project first (one pass over the live-namespace index,
-- no join per namespace), which keeps the function within a small factor of a plain count.
SET LOCAL lock_timeout = '10s';

-- Live namespaces per project: what platform_overview() and the staff counts aggregate over.
CREATE INDEX namespaces_idx_live_project ON tenant.namespaces (project_id) WHERE deleted IS NULL;
CREATE INDEX projects_idx_live_cluster ON tenant.projects (cluster_id) WHERE deleted IS NULL;
CREATE INDEX clusters_idx_live_organization ON tenant.clusters (organization_id) WHERE deleted IS NULL;

CREATE FUNCTION tenant.platform_overview()
    RETURNS TABLE (name text, alias text, clusters bigint, projects bigint, namespaces bigint)
    LANGUAGE sql
    STABLE
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH listed_organizations AS (
        SELECT tenant.organizations.id, tenant.organizations.name, tenant.organizations.alias
        FROM tenant.organizations
        WHERE tenant.organizations.listed_publicly
          AND tenant.organizations.deleted IS NULL
          AND tenant.organizations.id <> tenant.system_organization_id()
    ),
    live_clusters AS MATERIALIZED (
        SELECT tenant.clusters.id, tenant.clusters.organization_id
        FROM tenant.clusters
        JOIN listed_organizations ON listed_organizations.id = tenant.clusters.organization_id
        WHERE tenant.clusters.deleted IS NULL
    ),
    live_projects AS MATERIALIZED (
        SELECT tenant.projects.id, live_clusters.organization_id
        FROM tenant.projects
        JOIN live_clusters ON live_clusters.id = tenant.projects.cluster_id
        WHERE tenant.projects.deleted IS NULL
    ),
    namespaces_per_project AS (
        SELECT tenant.namespaces.project_id, count(*) AS namespaces
        FROM tenant.namespaces
        WHERE tenant.namespaces.deleted IS NULL
        GROUP BY tenant.namespaces.project_id
    ),
    cluster_counts AS (
        SELECT live_clusters.organization_id, count(*) AS clusters
        FROM live_clusters
        GROUP BY live_clusters.organization_id
    ),
    project_counts AS (
        SELECT live_projects.organization_id,
               count(*) AS projects,
               sum(namespaces_per_project.namespaces) AS namespaces
        FROM live_projects
        LEFT JOIN namespaces_per_project ON namespaces_per_project.project_id = live_projects.id
        GROUP BY live_projects.organization_id
    )
    SELECT listed_organizations.name,
           listed_organizations.alias,
           coalesce(cluster_counts.clusters, 0)::bigint,
           coalesce(project_counts.projects, 0)::bigint,
           coalesce(project_counts.namespaces, 0)::bigint
    FROM listed_organizations
    LEFT JOIN cluster_counts ON cluster_counts.organization_id = listed_organizations.id
    LEFT JOIN project_counts ON project_counts.organization_id = listed_organizations.id
    ORDER BY listed_organizations.name
$$;

ALTER FUNCTION tenant.platform_overview() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.platform_overview() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tenant.platform_overview() TO fun_platform_public_api;
COMMENT ON FUNCTION tenant.platform_overview() IS
    'Per listed, live, non-system organization: name, alias and live clusters, projects, namespaces. No ids.';
