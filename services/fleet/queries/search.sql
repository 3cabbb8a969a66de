-- The SQL of SearchNamespaces. Loaded by services/fleet/queries/search.py; the conventions are in
-- base.sql.

-- name: search_namespaces
-- Called by FleetApi.search_namespaces: one page of live namespaces in live projects on live clusters
-- of live, non-system organizations, by (name, id), each with where it lives, whose name matches
-- %(pattern)s (or %(name_start)s) or whose Kubernetes name does (services/fleet/parse/search.py,
-- NamespacePatterns). Two ways in, each ordered and cut to the page, each reading its rows whole:
-- - by name: the matching names of tenant.namespace_names in order, and for each its live namespaces
--   by (name, id), so a name shared by thousands of namespaces costs one page of them;
-- - by Kubernetes name: the projects whose name prefix (tenant.namespace_name_prefix, indexed on
--   projects) matches %(project_pattern)s, found first (MATERIALIZED: the prefix of
--   an alert's namespace names a project or two, which the planner cannot know from statistics of
--   hashes), then their namespaces whose name matches %(project_names)s, except those found by name.
WITH by_name AS (
    SELECT found.*
    FROM tenant.namespace_names AS d
    CROSS JOIN LATERAL (
        SELECT n.id,
               n.name,
               p.id AS project_id,
               p.name AS project_name,
               c.id AS cluster_id,
               c.name AS cluster_name,
               o.id AS organization_id,
               o.name AS organization_name,
               o.alias AS organization_alias
        FROM tenant.namespaces AS n
        JOIN tenant.projects AS p ON p.id = n.project_id AND p.deleted IS NULL
        JOIN tenant.clusters AS c ON c.id = p.cluster_id AND c.deleted IS NULL
        JOIN tenant.organizations AS o ON o.id = c.organization_id AND o.deleted IS NULL
        WHERE n.name = d.name
          AND n.deleted IS NULL
          AND o.id <> tenant.system_organization_id()
          AND (n.name, n.id) > (%(after_name)s::text, %(after_id)s::uuid)
        ORDER BY n.id
        LIMIT %(limit)s
    ) AS found
    WHERE (lower(d.name) LIKE %(pattern)s::text OR lower(d.name) LIKE %(name_start)s::text)
      AND d.name >= %(after_name)s::text
    ORDER BY found.name, found.id
    LIMIT %(limit)s
),
matching_projects AS MATERIALIZED (
    SELECT p.id, p.name, p.cluster_id
    FROM tenant.projects AS p
    WHERE %(project_pattern)s::text IS NOT NULL
      AND p.deleted IS NULL
      AND tenant.namespace_name_prefix(p.name, p.id) LIKE %(project_pattern)s::text
),
by_kubernetes_name AS (
    SELECT found.*
    FROM matching_projects AS mp
    -- Per matching project (OFFSET 0 keeps the subquery apart, so the planner cannot turn it into a
    -- hash join over every namespace and cluster on its guess of how many projects match).
    CROSS JOIN LATERAL (
        SELECT n.id,
               n.name,
               mp.id AS project_id,
               mp.name AS project_name,
               c.id AS cluster_id,
               c.name AS cluster_name,
               o.id AS organization_id,
               o.name AS organization_name,
               o.alias AS organization_alias
        FROM tenant.namespaces AS n
        JOIN tenant.clusters AS c ON c.id = mp.cluster_id AND c.deleted IS NULL
        JOIN tenant.organizations AS o ON o.id = c.organization_id AND o.deleted IS NULL
        WHERE n.project_id = mp.id
          AND n.deleted IS NULL
          AND lower(n.name) LIKE %(project_names)s::text
          AND NOT coalesce(lower(n.name) LIKE %(pattern)s::text OR lower(n.name) LIKE %(name_start)s::text, false)
          AND o.id <> tenant.system_organization_id()
          AND (n.name, n.id) > (%(after_name)s::text, %(after_id)s::uuid)
        OFFSET 0
    ) AS found
    ORDER BY found.name, found.id
    LIMIT %(limit)s
)
SELECT m.*
FROM (SELECT * FROM by_name UNION ALL SELECT * FROM by_kubernetes_name) AS m
ORDER BY m.name, m.id
LIMIT %(limit)s;
