-- The sort orders of ListClusters and ListOrganizations: one block per order and direction, each the
-- keyset condition and ORDER BY that end the list's block in clusters.sql or organizations.sql
-- (base.py's keyset assembly puts the block of the requested order in place of the line `-- keyset --`,
-- and for ListClusters its ORDER BY line in place of `-- order --` too; both come from these files only).
--
-- Every order ends in (name, id), so the key is unique and a page continues exactly after the last row
-- of the previous one while rows change. The first page passes first_page = true, which folds the
-- keyset condition away (the statements run unprepared, planned with their values). ListClusters'
-- keys are columns of tenant.cluster_listing, each with an index in this order; a
-- missing value is stored as a fixed low value (0 pods and nodes, '-infinity' for times), the same
-- the key of a row in services/fleet/pages.py uses, so a token always names a position in this order.

-- name: clusters_by_name_asc
AND (%(first_page)s::boolean OR (listing.name, listing.id) > (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.name, listing.id

-- name: clusters_by_name_desc
AND (%(first_page)s::boolean OR (listing.name, listing.id) < (%(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.name DESC, listing.id DESC

-- name: clusters_by_organization_asc
AND (%(first_page)s::boolean OR (listing.organization_name, listing.name, listing.id) > (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.organization_name, listing.name, listing.id

-- name: clusters_by_organization_desc
AND (%(first_page)s::boolean OR (listing.organization_name, listing.name, listing.id) < (%(after_value)s::text, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.organization_name DESC, listing.name DESC, listing.id DESC

-- name: clusters_by_pods_asc
AND (%(first_page)s::boolean OR (listing.pods, listing.name, listing.id) > (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.pods, listing.name, listing.id

-- name: clusters_by_pods_desc
AND (%(first_page)s::boolean OR (listing.pods, listing.name, listing.id) < (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.pods DESC, listing.name DESC, listing.id DESC

-- name: clusters_by_nodes_asc
AND (%(first_page)s::boolean OR (listing.nodes, listing.name, listing.id) > (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.nodes, listing.name, listing.id

-- name: clusters_by_nodes_desc
AND (%(first_page)s::boolean OR (listing.nodes, listing.name, listing.id) < (%(after_value)s::integer, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.nodes DESC, listing.name DESC, listing.id DESC

-- name: clusters_by_observed_asc
AND (%(first_page)s::boolean OR (listing.observed, listing.name, listing.id) > (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.observed, listing.name, listing.id

-- name: clusters_by_observed_desc
AND (%(first_page)s::boolean OR (listing.observed, listing.name, listing.id) < (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.observed DESC, listing.name DESC, listing.id DESC

-- name: clusters_by_status_since_asc
AND (%(first_page)s::boolean OR (listing.status_since, listing.name, listing.id) > (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.status_since, listing.name, listing.id

-- name: clusters_by_status_since_desc
AND (%(first_page)s::boolean OR (listing.status_since, listing.name, listing.id) < (%(after_value)s::timestamptz, %(after_name)s::text, %(after_id)s::uuid))
ORDER BY listing.status_since DESC, listing.name DESC, listing.id DESC

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
