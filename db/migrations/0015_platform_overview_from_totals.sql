-- 0015: platform_overview() reads each listed organization's row of tenant.organization_totals.
--
-- Since 0012 the writes keep, per organization, the live clusters, their live projects and those
-- projects' live namespaces (tenant.organization_totals, added up from tenant.cluster_listing in the
-- same transaction as every write to the sources). Those are exactly the counts this function
-- returned by walking the live-namespace index of every listed project, which at 50,000 clusters and
-- 1,000,000 namespaces cost several times a plain count of live namespaces. Now it costs one primary
-- key lookup per listed organization, whatever the fleet's size.
-- What the function returns, its signature, owner, grants, comment and search_path are unchanged; it
-- runs as fun_owner, who owns organization_totals, so row security does not narrow it.
SET LOCAL lock_timeout = '10s';

CREATE OR REPLACE FUNCTION tenant.platform_overview()
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
