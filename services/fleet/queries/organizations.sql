-- The SQL of the staff API's organizations: pages of them, one of them, its listing changes. Loaded by
-- services/fleet/queries/organizations.py; the conventions are in base.sql.

-- name: list_organizations
-- Called by FleetApi.list_organizations: one page of organizations (live and deleted), those whose
-- name or alias matches %(pattern)s when it is set (see services/fleet/parse/search.py), in the order of
-- the organizations_by_* block of orders.sql that organizations.py puts in place of the keyset line. The
-- counts are the organization's row of tenant.organization_totals, which the writes keep
-- over its live clusters: one primary-key lookup per row of the page, so a page costs the same
-- at any depth. A deleted organization (or one without clusters) shows zeros.
-- FleetApi.get_organization reads one organization with it too: organization_id set, the first page
-- by name and LIMIT 1 (the list itself passes NULL).
-- The id is text, the form the response sends; the times are read as the integer microseconds a
-- timestamptz is (organizations.OrganizationRow), hence their names.
SELECT o.id::text AS id,
       o.name,
       o.alias,
       o.listed_publicly,
       o.created AS created_micros,
       o.deleted AS deleted_micros,
       coalesce(counts.clusters, 0)::integer AS clusters,
       coalesce(counts.projects, 0)::integer AS projects,
       coalesce(counts.namespaces, 0)::integer AS namespaces,
       coalesce(counts.ready_nodes, 0)::bigint AS ready_nodes,
       coalesce(counts.pods, 0)::bigint AS pods,
       coalesce(counts.clusters_needing_attention, 0)::integer AS clusters_needing_attention
FROM tenant.organizations AS o
LEFT JOIN tenant.organization_totals AS counts ON counts.organization_id = o.id AND o.deleted IS NULL
WHERE o.id <> tenant.system_organization_id()
  AND (%(pattern)s::text IS NULL OR lower(o.name) LIKE %(pattern)s::text OR lower(o.alias) LIKE %(pattern)s::text)
  AND (%(organization_id)s::uuid IS NULL OR o.id = %(organization_id)s::uuid)
-- keyset --
LIMIT %(limit)s;

-- name: organization_listing_changes
-- Called by FleetApi.get_organization: the changes of one organization's public listing, newest
-- first, at most %(limit)s.
SELECT l.id, l.listed_publicly, l.previously_listed, l.changed_by, l.reason, l.changed
FROM tenant.organization_listing_changes AS l
WHERE l.organization_id = %(organization_id)s::uuid
ORDER BY l.changed DESC, l.id DESC
LIMIT %(limit)s;
