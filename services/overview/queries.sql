-- The one read of platform-public-api (docs/architecture.md, 'The public API reads one SECURITY DEFINER
-- function'). Role fun_platform_public_api may run nothing else: it has no table grants, only EXECUTE
-- on this SECURITY DEFINER function.

-- name: platform_overview
-- Called by OverviewReader.read (behind the single-flight cache): every listed organization with its counts.
SELECT name, alias, clusters, projects, namespaces
FROM tenant.platform_overview()
ORDER BY name
