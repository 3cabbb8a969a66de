-- The SQL of the staff API's clusters: pages of them (the keyset blocks of their orders are in
-- orders.sql), one of them with its node pools, projects and namespaces, and the inventory clock
-- staleness is judged by. Loaded by services/fleet/queries/clusters.py; the conventions are in base.sql.

-- name: list_clusters
-- Called by FleetApi.list_clusters: one page of clusters as tenant.staff_clusters shows them
--, in the order of the clusters_by_* block of orders.sql that clusters.py puts in
-- place of the keyset line (and its ORDER BY in place of the order line). The page is chosen in
-- tenant.cluster_listing, which holds every filter and sort key of a cluster with an
-- index per order, and only the page's rows are then read through the view. Filters combine with
-- AND; without include_deleted only live clusters of live organizations are listed. The query's
-- patterns (services/fleet/parse/search.py): %(either)s matches the cluster's name or its organization's
-- name or alias (search_key holds the three, separated by a line feed), %(either_word)s the same
-- pattern after a separator (a short query is a prefix of any of the three); %(cluster_pattern)s and
-- %(organization_pattern)s match one each. The keys' indexes are on tenant.cluster_search,
-- one row per listing row, so each pattern is written twice: in the trigram form of those
-- indexes on the search row (candidates), and as asked on the listing's own copy of the keys (the
-- answer). Without a query both fold away and the planner removes the join (nothing of it is read);
-- with one, the join is inner and the planner drives it from either side: a rare name from its
-- trigram index, a common one by walking the order's index, testing each listing row itself and
-- looking up the search row only for those that match.
SELECT cluster.*
FROM (
    SELECT listing.id, listing.name, listing.organization_name, listing.pods, listing.nodes, listing.observed,
           listing.status_since
    FROM tenant.cluster_listing AS listing
    LEFT JOIN tenant.cluster_search AS search ON search.id = listing.id
    WHERE (%(include_deleted)s::boolean OR listing.live)
      AND (%(organization_id)s::uuid IS NULL OR listing.organization_id = %(organization_id)s::uuid)
      AND (%(region)s::text IS NULL OR listing.region = %(region)s::text)
      AND (%(statuses)s::text[] IS NULL OR listing.status = ANY (%(statuses)s::text[]))
      AND (NOT %(needs_attention)s::boolean OR listing.needs_attention)
      -- A walk by snapshot time reads the snapshots up to its first page's time, then those taken since
      -- (clusters.py, walk_by_observed); both bounds are NULL for every other list and fold away.
      AND (%(observed_at_most)s::timestamptz IS NULL OR listing.observed <= %(observed_at_most)s::timestamptz)
      AND (%(observed_after)s::timestamptz IS NULL OR listing.observed > %(observed_after)s::timestamptz)
      -- Stale implies collected before the stale bound (or never, '-infinity'): a range of the observed
      -- index that the exact test then narrows. %(stale_before)s is NULL before the collector ran
      -- (then nothing is stale).
      AND (NOT %(stale)s::boolean OR (listing.observed < %(stale_before)s::timestamptz AND tenant.snapshot_is_stale(
              listing.ready, nullif(listing.observed, '-infinity'), listing.ready_since,
              %(inventory_interval_seconds)s::integer, %(inventory_since)s::timestamptz, %(now)s::timestamptz
          )))
      -- Each pattern twice: in the trigram form of the index (candidates), then as asked (the answer).
      AND (%(cluster_pattern)s::text IS NULL OR (
              (translate(search.cluster_key, '-', 'z') LIKE %(cluster_trigrams)s::text
               OR search.cluster_key LIKE %(cluster_pattern)s::text)
              AND listing.cluster_key LIKE %(cluster_pattern)s::text))
      AND (%(organization_pattern)s::text IS NULL OR (
              (translate(search.organization_key, '-', 'z') LIKE %(organization_trigrams)s::text
               OR translate(search.organization_key, '-', 'z') LIKE %(organization_word_trigrams)s::text)
              AND (listing.organization_key LIKE %(organization_pattern)s::text
                   OR listing.organization_key LIKE %(organization_word)s::text)))
      AND (%(either)s::text IS NULL OR (
              (translate(search.search_key, '-', 'z') LIKE %(either_trigrams)s::text
               OR translate(search.search_key, '-', 'z') LIKE %(either_word_trigrams)s::text)
              AND (listing.search_key LIKE %(either)s::text OR listing.search_key LIKE %(either_word)s::text)))
-- keyset --
    LIMIT %(limit)s
) AS listing
-- OFFSET 0 keeps the view from being pulled up into a join the planner may hash over every cluster:
-- each row of the page reads its cluster through the primary keys.
CROSS JOIN LATERAL (
    SELECT view.* FROM tenant.staff_clusters AS view WHERE view.id = listing.id OFFSET 0
) AS cluster
-- order --
;

-- name: inventory_clock
-- Called by FleetApi.list_clusters for its stale filter: the inventory loop's interval and first
-- completed pass, which staleness is judged by; clusters.py turns them into the bound of the
-- observed index that list_clusters reads.
SELECT loops.interval_seconds, loops.first_completed
FROM tenant.worker_loops AS loops
WHERE loops.loop = 'inventory';

-- name: get_cluster
-- Called by FleetApi.get_cluster: one cluster, any state but the system organization's, as
-- list_clusters shows it (the same view).
SELECT cluster.*
FROM tenant.staff_clusters AS cluster
WHERE cluster.id = %(cluster_id)s::uuid;

-- name: cluster_node_pools
-- Called by FleetApi.get_cluster: every live node pool of one cluster by name, with its snapshot.
SELECT np.id,
       np.name,
       np.machine_type,
       np.autoscale_min,
       np.autoscale_max,
       nps.observed,
       nps.nodes,
       nps.ready_nodes
FROM tenant.node_pools AS np
LEFT JOIN tenant.node_pool_snapshots AS nps ON nps.node_pool_id = np.id
WHERE np.cluster_id = %(cluster_id)s::uuid AND np.deleted IS NULL
ORDER BY np.name, np.id;

-- name: cluster_projects
-- Called by FleetApi.get_cluster: every live project of one cluster by name, with its live namespaces.
SELECT p.id,
       p.name,
       p.alias,
       (SELECT count(*)
        FROM tenant.namespaces AS n
        WHERE n.project_id = p.id AND n.deleted IS NULL)::integer AS namespaces
FROM tenant.projects AS p
WHERE p.cluster_id = %(cluster_id)s::uuid AND p.deleted IS NULL
ORDER BY p.name, p.id;

-- name: cluster_namespaces
-- Called by FleetApi.get_cluster: every live namespace of a live project of one cluster, by project
-- name then name, with its pod count.
SELECT n.id,
       n.name,
       p.id AS project_id,
       p.name AS project_name,
       nss.observed,
       nss.pods
FROM tenant.projects AS p
JOIN tenant.namespaces AS n ON n.project_id = p.id AND n.deleted IS NULL
LEFT JOIN tenant.namespace_snapshots AS nss ON nss.namespace_id = n.id
WHERE p.cluster_id = %(cluster_id)s::uuid AND p.deleted IS NULL
ORDER BY p.name, p.id, n.name, n.id;
