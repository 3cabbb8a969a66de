-- The sort orders of ListClusters and ListOrganizations: one block per order and direction, each the
-- keyset condition and ORDER BY that end the list's block in queries.sql (queries.py puts the block of
-- the requested order in place of the line `-- keyset --`; both come from these files only).
--
-- Every order ends in (name, id), so the key is unique and a page continues exactly after the last row
-- of the previous one while rows change. The first page passes first_page = true, which folds the
-- keyset condition away (the statements run unprepared, planned with their values). Missing values
-- sort as a fixed low value (0 pods and nodes, '-infinity' for times), the same the key of a row in
-- services/fleet/pages.py uses, so a token always names a position in this order.

-- name: clusters_by_name_asc
AND (%(first_page)s::boolean OR (cluster.name, cluster.id) > (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY cluster.name, cluster.id

-- name: clusters_by_name_desc
AND (%(first_page)s::boolean OR (cluster.name, cluster.id) < (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY cluster.name DESC, cluster.id DESC

-- name: clusters_by_organization_asc
AND (%(first_page)s::boolean OR (cluster.organization_name, cluster.name, cluster.id) > (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY cluster.organization_name, cluster.name, cluster.id

-- name: clusters_by_organization_desc
AND (%(first_page)s::boolean OR (cluster.organization_name, cluster.name, cluster.id) < (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY cluster.organization_name DESC, cluster.name DESC, cluster.id DESC

-- name: clusters_by_pods_asc
AND (%(first_page)s::boolean OR (coalesce(cluster.pods, 0), cluster.name, cluster.id) > (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.pods, 0), cluster.name, cluster.id

-- name: clusters_by_pods_desc
AND (%(first_page)s::boolean OR (coalesce(cluster.pods, 0), cluster.name, cluster.id) < (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.pods, 0) DESC, cluster.name DESC, cluster.id DESC

-- name: clusters_by_nodes_asc
AND (%(first_page)s::boolean OR (coalesce(cluster.nodes, 0), cluster.name, cluster.id) > (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.nodes, 0), cluster.name, cluster.id

-- name: clusters_by_nodes_desc
AND (%(first_page)s::boolean OR (coalesce(cluster.nodes, 0), cluster.name, cluster.id) < (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.nodes, 0) DESC, cluster.name DESC, cluster.id DESC

-- name: clusters_by_observed_asc
AND (%(first_page)s::boolean OR (coalesce(cluster.observed, '-infinity'), cluster.name, cluster.id) > (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.observed, '-infinity'), cluster.name, cluster.id

-- name: clusters_by_observed_desc
AND (%(first_page)s::boolean OR (coalesce(cluster.observed, '-infinity'), cluster.name, cluster.id) < (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.observed, '-infinity') DESC, cluster.name DESC, cluster.id DESC

-- name: clusters_by_status_since_asc
AND (%(first_page)s::boolean OR (coalesce(cluster.shoot_status_changed, '-infinity'), cluster.name, cluster.id) > (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.shoot_status_changed, '-infinity'), cluster.name, cluster.id

-- name: clusters_by_status_since_desc
AND (%(first_page)s::boolean OR (coalesce(cluster.shoot_status_changed, '-infinity'), cluster.name, cluster.id) < (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY coalesce(cluster.shoot_status_changed, '-infinity') DESC, cluster.name DESC, cluster.id DESC

-- name: organizations_by_name_asc
AND (%(first_page)s::boolean OR (o.name, o.id) > (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.name, o.id

-- name: organizations_by_name_desc
AND (%(first_page)s::boolean OR (o.name, o.id) < (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.name DESC, o.id DESC

-- name: organizations_by_alias_asc
AND (%(first_page)s::boolean OR (o.alias, o.name, o.id) > (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.alias, o.name, o.id

-- name: organizations_by_alias_desc
AND (%(first_page)s::boolean OR (o.alias, o.name, o.id) < (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.alias DESC, o.name DESC, o.id DESC

-- name: organizations_by_created_asc
AND (%(first_page)s::boolean OR (o.created, o.name, o.id) > (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.created, o.name, o.id

-- name: organizations_by_created_desc
AND (%(first_page)s::boolean OR (o.created, o.name, o.id) < (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY o.created DESC, o.name DESC, o.id DESC
