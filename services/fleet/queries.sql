-- The SQL of platform-admin-api (fleet.v1), run as fun_platform_admin_api (read only). Loaded once by
-- services/fleet/queries.py; one typed function per block.
--
-- Conventions of every block:
-- - the system organization is left out through tenant.system_organization_id();
-- - List blocks page by keyset: `(sort key) > (%(after_...)s)` in the order of an index, LIMIT the page
--   size plus one (the extra row says whether more follow). The first page passes a sentinel key that
--   sorts before every row ('' for names, the nil UUID, '-infinity'), so there is one plan shape and no
--   OR that would hide the index from the planner;
-- - optional filters are `(%(x)s IS NULL OR ...)`: queries.py executes them unprepared, so each call is
--   planned with its own values and a NULL filter folds away;
-- - status, readiness and staleness go through the SQL twins of common/clusterstatus.py
--   (db/migrations/0004_cluster_status.sql); the time is %(now)s, the service's clock, so SQL and Python
--   judge staleness at the same instant. The service computes the status it returns in Python.

-- name: begin_consistent_read
-- Called by FleetApi.get_cluster and get_fleet_summary before their several queries: one snapshot
-- for all of them, so the parts of one answer agree with each other. Must run first in the transaction.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;

-- name: list_organizations
-- Called by FleetApi.list_organizations: one page of organizations (live and deleted), those whose
-- name or alias matches %(pattern)s when it is set (see services/fleet/search.py), in the order of
-- the organizations_by_* block of orders.sql that queries.py puts in place of the keyset line. The
-- counts are the organization's row of tenant.organization_totals, which the writes keep (migration
-- 0012) over its live clusters: one primary-key lookup per row of the page, so a page costs the same
-- at any depth. A deleted organization (or one without clusters) shows zeros.
-- FleetApi.get_organization reads one organization with it too: organization_id set, the first page
-- by name and LIMIT 1 (the list itself passes NULL).
-- The id is text, the form the response sends; the times are read as the integer microseconds a
-- timestamptz is (queries.OrganizationRow), hence their names.
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

-- name: list_clusters
-- Called by FleetApi.list_clusters: one page of clusters as tenant.staff_clusters shows them
-- (migration 0006), in the order of the clusters_by_* block of orders.sql that queries.py puts in
-- place of the keyset line (and its ORDER BY in place of the order line). The page is chosen in
-- tenant.cluster_listing (migration 0012), which holds every filter and sort key of a cluster with an
-- index per order, and only the page's rows are then read through the view. Filters combine with
-- AND; without include_deleted only live clusters of live organizations are listed. The query's
-- patterns (services/fleet/search.py): %(either)s matches the cluster's name or its organization's
-- name or alias (search_key holds the three, separated by a line feed), %(either_word)s the same
-- pattern after a separator (a short query is a prefix of any of the three); %(cluster_pattern)s and
-- %(organization_pattern)s match one each. The keys' indexes are on tenant.cluster_search (migration
-- 0014), one row per listing row, so each pattern is written twice: in the trigram form of those
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
-- completed pass, which staleness is judged by; queries.py turns them into the bound of the
-- observed index that list_clusters reads.
SELECT hb.interval_seconds, hb.first_completed
FROM tenant.worker_heartbeats AS hb
WHERE hb.loop = 'inventory';

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

-- name: cluster_ledger_counts
-- Called by FleetApi.get_cluster: active ledger rows of one cluster per resource type.
SELECT r.resource_type,
       count(*)::integer AS active,
       (count(*) FILTER (WHERE r.billable))::integer AS active_billable
FROM tenant.infrastructure_resources AS r
WHERE r.cluster_id = %(cluster_id)s::uuid AND r.destroyed IS NULL
GROUP BY r.resource_type
ORDER BY r.resource_type;

-- name: list_drift_findings
-- Called by FleetApi.list_drift_findings: one page of findings by (first_detected, id), open ones only
-- unless include_resolved, with the names of what they concern. Findings about the system
-- organization's clusters are left out. FleetApi.get_cluster reads all open findings about one
-- cluster with it too: cluster_id set, the first-page key and no LIMIT (NULL). Reconcile sets
-- cluster_id on every finding whose cluster it can name, shoot findings included; an unlabeled
-- shoot has no cluster, only the organization whose garden project holds it (f.organization_id),
-- and is not in the shoot mirror, so its uid, name and namespace come from the finding itself.
SELECT f.id,
       f.kind,
       f.subject,
       f.cluster_id,
       c.name AS cluster_name,
       o.id AS organization_id,
       o.name AS organization_name,
       coalesce(f.shoot_uid, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.subject::uuid END) AS shoot_uid,
       coalesce(sh.name, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,name}' END)
           AS shoot_name,
       coalesce(sh.namespace, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,namespace}' END)
           AS shoot_namespace,
       f.details,
       f.first_detected,
       f.last_detected,
       f.resolved
FROM tenant.drift_findings AS f
LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
LEFT JOIN tenant.organizations AS o ON o.id = coalesce(c.organization_id, f.organization_id)
LEFT JOIN tenant.gardener_shoots AS sh ON sh.uid = f.shoot_uid
WHERE (%(include_resolved)s::boolean OR f.resolved IS NULL)
  AND o.id IS DISTINCT FROM tenant.system_organization_id()
  AND (%(kind)s::text IS NULL OR f.kind = %(kind)s::text)
  AND (%(cluster_id)s::uuid IS NULL OR f.cluster_id = %(cluster_id)s::uuid)
  AND (%(organization_id)s::uuid IS NULL OR o.id = %(organization_id)s::uuid)
  AND (f.first_detected, f.id) > (%(after_first_detected)s::timestamptz, %(after_id)s::uuid)
ORDER BY f.first_detected, f.id
LIMIT %(limit)s;

-- name: cluster_resolved_findings
-- Called by FleetApi.get_cluster with include_resolved: one cluster's resolved findings, newest
-- resolved first, at most %(limit)s (the service asks one more than it returns, to say whether the
-- history was cut). Same columns as list_drift_findings.
SELECT f.id,
       f.kind,
       f.subject,
       f.cluster_id,
       c.name AS cluster_name,
       c.organization_id,
       o.name AS organization_name,
       f.shoot_uid,
       sh.name AS shoot_name,
       sh.namespace AS shoot_namespace,
       f.details,
       f.first_detected,
       f.last_detected,
       f.resolved
FROM tenant.drift_findings AS f
JOIN tenant.clusters AS c ON c.id = f.cluster_id
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.gardener_shoots AS sh ON sh.uid = f.shoot_uid
WHERE f.cluster_id = %(cluster_id)s::uuid
  AND f.resolved IS NOT NULL
  AND c.organization_id <> tenant.system_organization_id()
ORDER BY f.resolved DESC, f.id DESC
LIMIT %(limit)s;

-- name: organization_listing_changes
-- Called by FleetApi.get_organization: the changes of one organization's public listing, newest
-- first, at most %(limit)s.
SELECT l.id, l.listed_publicly, l.previously_listed, l.changed_by, l.reason, l.changed
FROM tenant.organization_listing_changes AS l
WHERE l.organization_id = %(organization_id)s::uuid
ORDER BY l.changed DESC, l.id DESC
LIMIT %(limit)s;

-- name: list_infrastructure_resources
-- Called by FleetApi.list_infrastructure_resources: one page of the ledger by (cluster_id,
-- resource_type, namespace, name, id); cluster-wide kinds have namespace ''.
SELECT r.id,
       r.cluster_id,
       c.name AS cluster_name,
       o.name AS organization_name,
       r.resource_type,
       r.resource_id,
       r.name,
       r.namespace,
       r.billable,
       r.created,
       r.last_seen,
       r.destroyed,
       r.destroyed_reason
FROM tenant.infrastructure_resources AS r
JOIN tenant.clusters AS c ON c.id = r.cluster_id
JOIN tenant.organizations AS o ON o.id = c.organization_id
WHERE c.organization_id <> tenant.system_organization_id()
  AND (%(cluster_id)s::uuid IS NULL OR r.cluster_id = %(cluster_id)s::uuid)
  AND (%(resource_type)s::text IS NULL OR r.resource_type = %(resource_type)s::text)
  AND (%(billable)s::boolean IS NULL OR r.billable = %(billable)s::boolean)
  AND (%(include_destroyed)s::boolean OR r.destroyed IS NULL)
  AND (r.cluster_id, r.resource_type, r.namespace, r.name, r.id)
      > (%(after_cluster_id)s::uuid, %(after_resource_type)s::text, %(after_namespace)s::text,
         %(after_name)s::text, %(after_id)s::uuid)
ORDER BY r.cluster_id, r.resource_type, r.namespace, r.name, r.id
LIMIT %(limit)s;

-- name: fleet_totals
-- Called by FleetApi's summary read: platform-wide totals over live clusters of live, non-system
-- organizations, ready-cluster sums from the snapshots, project and namespace counts, and the stale
-- count, all from tenant.cluster_listing (migration 0012), which the writes of every source keep: one
-- row per cluster holds its snapshot, readiness and live project and namespace counts, so the
-- 1,000,000 namespaces of the scale fleet are added up as 50,000 numbers in one pass, in the same
-- snapshot as the rest of the summary.
WITH inventory AS (
    SELECT hb.interval_seconds, hb.first_completed
    FROM tenant.worker_heartbeats AS hb
    WHERE hb.loop = 'inventory'
),
live_organizations AS (
    SELECT o.listed_publicly
    FROM tenant.organizations AS o
    WHERE o.deleted IS NULL AND o.id <> tenant.system_organization_id()
),
cluster_totals AS (
    SELECT count(*) AS clusters,
           coalesce(sum(l.projects), 0) AS projects,
           coalesce(sum(l.namespaces), 0) AS namespaces,
           count(*) FILTER (WHERE l.ready) AS clusters_ready,
           coalesce(sum(l.nodes) FILTER (WHERE l.ready), 0) AS nodes,
           coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
           coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
           coalesce(sum(l.allocatable_pods) FILTER (WHERE l.ready), 0) AS allocatable_pods,
           coalesce(sum(l.cpu_allocatable_millicores) FILTER (WHERE l.ready), 0) AS cpu_allocatable_millicores,
           coalesce(sum(l.memory_allocatable_bytes) FILTER (WHERE l.ready), 0) AS memory_allocatable_bytes,
           count(*) FILTER (WHERE tenant.snapshot_is_stale(
               l.ready, nullif(l.observed, '-infinity'), l.ready_since,
               inventory.interval_seconds, inventory.first_completed, %(now)s::timestamptz
           )) AS clusters_stale
    FROM tenant.cluster_listing AS l
    LEFT JOIN inventory ON true
    WHERE l.live
)
SELECT (SELECT count(*) FROM live_organizations)::integer AS organizations,
       (SELECT count(*) FROM live_organizations WHERE listed_publicly)::integer AS organizations_listed,
       t.clusters::integer,
       t.projects::integer,
       t.namespaces::integer,
       t.clusters_ready::integer,
       t.nodes::bigint,
       t.ready_nodes::bigint,
       t.pods::bigint,
       t.allocatable_pods::bigint,
       t.cpu_allocatable_millicores::bigint,
       t.memory_allocatable_bytes::bigint,
       t.clusters_stale::integer
FROM cluster_totals AS t;

-- name: latest_fleet_totals
-- Called by FleetApi.get_fleet_summary first: the fleet-wide totals the inventory loop recorded at
-- the end of its latest round (collector/inventory/history.sql), one row through the history's
-- primary key; rows recorded before migration 0012 lack the summary's figures and are passed over.
-- The service uses it when it is recent enough (three inventory intervals), else fleet_totals.
SELECT h.at,
       h.organizations,
       h.organizations_listed,
       h.clusters,
       h.projects,
       h.namespaces,
       h.clusters_ready,
       h.nodes,
       h.ready_nodes,
       h.pods,
       h.allocatable_pods,
       h.cpu_allocatable_millicores,
       h.memory_allocatable_bytes,
       h.clusters_stale,
       h.clusters_by_status,
       h.open_findings_by_kind
FROM tenant.fleet_history AS h
WHERE h.resolution = 'round'
  AND h.organization_id = '00000000-0000-0000-0000-000000000000'::uuid
  AND h.organizations IS NOT NULL
ORDER BY h.at DESC
LIMIT 1;

-- name: fleet_status_inputs
-- Called by FleetApi.get_fleet_summary: live clusters of live, non-system organizations grouped by the
-- inputs of their status (a few hundred combinations at most), from tenant.cluster_listing; the
-- service derives each group's status with clusterstatus in Python and adds them up.
SELECT l.sync_status,
       l.shoot_status,
       l.shoot_operation,
       l.ever_completed,
       count(*)::integer AS clusters
FROM tenant.cluster_listing AS l
WHERE l.live
GROUP BY 1, 2, 3, 4;

-- name: open_findings_by_kind
-- Called by FleetApi.get_fleet_summary: open drift findings per kind, the system organization's left out.
SELECT f.kind, count(*)::integer AS findings
FROM tenant.drift_findings AS f
LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
WHERE f.resolved IS NULL
  AND c.organization_id IS DISTINCT FROM tenant.system_organization_id()
GROUP BY f.kind
ORDER BY f.kind;

-- name: loop_freshness
-- Called by FleetApi.get_fleet_summary: each worker loop's last completed pass and interval.
SELECT hb.loop, hb.last_completed, hb.interval_seconds
FROM tenant.worker_heartbeats AS hb
ORDER BY hb.loop;

-- name: search_namespaces
-- Called by FleetApi.search_namespaces: one page of live namespaces in live projects on live clusters
-- of live, non-system organizations, by (name, id), each with where it lives, whose name matches
-- %(pattern)s (or %(name_start)s) or whose Kubernetes name does (services/fleet/search.py,
-- NamespacePatterns). Two ways in, each ordered and cut to the page, each reading its rows whole:
-- - by name: the matching names of tenant.namespace_names in order, and for each its live namespaces
--   by (name, id), so a name shared by thousands of namespaces costs one page of them;
-- - by Kubernetes name: the projects whose name prefix (tenant.namespace_name_prefix, indexed on
--   projects, migration 0012) matches %(project_pattern)s, found first (MATERIALIZED: the prefix of
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
