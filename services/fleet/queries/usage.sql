-- The SQL of ListUsage: the ledger added up over a window. Loaded by services/fleet/queries/usage.py;
-- the conventions are in base.sql.
--
-- The billing rule (docs/staff-api.md, 'Usage'): a row is present for sure from `created` to
-- `last_seen` (the lower bound) and at most from `created` to `destroyed`, an active row to %(now)s
-- (the upper bound). Both intervals are clipped to the window [%(start)s, %(end)s), and a row counts
-- in the window only when its upper interval meets it. The same predicate picks the groups of a page
-- and the rows that are added up, so every listed group has usage and no row is missed.
--
-- A page is chosen first (one block per aggregate, keyset by its key), then `usage_steps` adds up the
-- rows of exactly the groups of that page.

-- name: usage_groups_by_organization
-- Called by FleetApi.list_usage (aggregate ORGANIZATION): one page of (organization, resource type)
-- with rows present in the window, by (organization name, organization id, type). Organizations are
-- walked by name through their (name, id) index; each one's types come from its clusters' rows.
SELECT o.id AS organization_id,
       o.name AS organization_name,
       NULL::uuid AS cluster_id,
       NULL::text AS cluster_name,
       t.resource_type
FROM tenant.organizations AS o
CROSS JOIN LATERAL (
    SELECT DISTINCT r.resource_type
    FROM tenant.clusters AS c
    JOIN tenant.infrastructure_resources AS r ON r.cluster_id = c.id
    WHERE c.organization_id = o.id
      AND (%(cluster_id)s::uuid IS NULL OR c.id = %(cluster_id)s::uuid)
      AND (%(resource_type)s::text IS NULL OR r.resource_type = %(resource_type)s::text)
      AND (%(include_non_billable)s::boolean OR r.billable)
      AND r.created < %(end)s::timestamptz
      AND greatest(r.created, %(start)s::timestamptz)
          < least(coalesce(r.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
) AS t
WHERE o.id <> tenant.system_organization_id()
  AND (%(organization_id)s::uuid IS NULL OR o.id = %(organization_id)s::uuid)
  AND (o.name, o.id) >= (%(after_organization_name)s::text, %(after_organization_id)s::uuid)
  AND (o.name, o.id, t.resource_type)
      > (%(after_organization_name)s::text, %(after_organization_id)s::uuid, %(after_resource_type)s::text)
ORDER BY o.name, o.id, t.resource_type
LIMIT %(limit)s;

-- name: usage_groups_by_cluster
-- Called by FleetApi.list_usage (aggregate CLUSTER): one page of (cluster, resource type) with rows
-- present in the window, by (organization name, cluster name, cluster id, type), walked through the
-- cluster listing's (organization_name, name, id) index (it holds every non-system cluster, deleted
-- ones too).
SELECT l.organization_id,
       l.organization_name,
       l.id AS cluster_id,
       l.name AS cluster_name,
       t.resource_type
FROM tenant.cluster_listing AS l
CROSS JOIN LATERAL (
    SELECT DISTINCT r.resource_type
    FROM tenant.infrastructure_resources AS r
    WHERE r.cluster_id = l.id
      AND (%(resource_type)s::text IS NULL OR r.resource_type = %(resource_type)s::text)
      AND (%(include_non_billable)s::boolean OR r.billable)
      AND r.created < %(end)s::timestamptz
      AND greatest(r.created, %(start)s::timestamptz)
          < least(coalesce(r.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
) AS t
WHERE (%(organization_id)s::uuid IS NULL OR l.organization_id = %(organization_id)s::uuid)
  AND (%(cluster_id)s::uuid IS NULL OR l.id = %(cluster_id)s::uuid)
  AND (l.organization_name, l.name, l.id)
      >= (%(after_organization_name)s::text, %(after_cluster_name)s::text, %(after_cluster_id)s::uuid)
  AND (l.organization_name, l.name, l.id, t.resource_type)
      > (%(after_organization_name)s::text, %(after_cluster_name)s::text, %(after_cluster_id)s::uuid,
         %(after_resource_type)s::text)
ORDER BY l.organization_name, l.name, l.id, t.resource_type
LIMIT %(limit)s;

-- name: usage_groups_by_resource_type
-- Called by FleetApi.list_usage (aggregate RESOURCE_TYPE): one page of the resource types with rows
-- present in the window over the whole platform (or the filtered organization or cluster), by type.
SELECT NULL::uuid AS organization_id,
       NULL::text AS organization_name,
       NULL::uuid AS cluster_id,
       NULL::text AS cluster_name,
       t.resource_type
FROM (
    SELECT DISTINCT r.resource_type
    FROM tenant.infrastructure_resources AS r
    JOIN tenant.clusters AS c ON c.id = r.cluster_id
    WHERE c.organization_id <> tenant.system_organization_id()
      AND (%(organization_id)s::uuid IS NULL OR c.organization_id = %(organization_id)s::uuid)
      AND (%(cluster_id)s::uuid IS NULL OR r.cluster_id = %(cluster_id)s::uuid)
      AND (%(resource_type)s::text IS NULL OR r.resource_type = %(resource_type)s::text)
      AND (%(include_non_billable)s::boolean OR r.billable)
      AND r.created < %(end)s::timestamptz
      AND greatest(r.created, %(start)s::timestamptz)
          < least(coalesce(r.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
) AS t
WHERE t.resource_type > %(after_resource_type)s::text
ORDER BY t.resource_type
LIMIT %(limit)s;

-- name: usage_steps
-- Called by FleetApi.list_usage: the steps of each group of one page, oldest first. The groups come
-- as arrays by position (their `ordinal`, 1-based); the rows of one group are picked by the branch of
-- the aggregate (the other two branches fold away: %(aggregate)s is a constant of the plan).
--
-- How a step is added up, exactly: the bounds are each row's interval clipped to each step it meets,
-- summed (no sort). The peak needs a sweep: every row contributes its start (+1) and its end (-1),
-- every step start a probe (no change), per group in time order, ends before probes before starts at
-- one instant (intervals are half-open); the running sum is the number of rows present, and the peak
-- of a step is the largest running sum at its start or just after a row started in it (the count
-- rises nowhere else). Times are microseconds since the window's start (bigint, exact), a step is the
-- integer quotient by %(step_us)s, the seconds are the sums / 10^6.
--
-- The rows of a group are read per cluster and type through infrastructure_resources_idx_usage: the
-- LATERAL subqueries end in OFFSET 0 so the planner keeps them as per-cluster index scans (it cannot
-- know the page holds a few groups and would otherwise hash-join against the whole ledger).
WITH grp AS (
    SELECT g.organization_id, g.cluster_id, g.resource_type, g.ordinal
    FROM unnest(%(organization_ids)s::uuid[], %(cluster_ids)s::uuid[], %(resource_types)s::text[])
         WITH ORDINALITY AS g(organization_id, cluster_id, resource_type, ordinal)
),
picked AS (
    SELECT g.ordinal, r.created, r.last_seen, r.destroyed
    FROM grp AS g
    JOIN tenant.clusters AS c ON c.organization_id = g.organization_id
    CROSS JOIN LATERAL (
        SELECT x.created, x.last_seen, x.destroyed
        FROM tenant.infrastructure_resources AS x
        WHERE x.cluster_id = c.id AND x.resource_type = g.resource_type
          AND (%(include_non_billable)s::boolean OR x.billable)
          AND x.created < %(end)s::timestamptz
          AND greatest(x.created, %(start)s::timestamptz)
              < least(coalesce(x.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
        OFFSET 0
    ) AS r
    WHERE %(aggregate)s::text = 'organization'
      AND (%(cluster_id)s::uuid IS NULL OR c.id = %(cluster_id)s::uuid)
    UNION ALL
    SELECT g.ordinal, r.created, r.last_seen, r.destroyed
    FROM grp AS g
    CROSS JOIN LATERAL (
        SELECT x.created, x.last_seen, x.destroyed
        FROM tenant.infrastructure_resources AS x
        WHERE x.cluster_id = g.cluster_id AND x.resource_type = g.resource_type
          AND (%(include_non_billable)s::boolean OR x.billable)
          AND x.created < %(end)s::timestamptz
          AND greatest(x.created, %(start)s::timestamptz)
              < least(coalesce(x.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
        OFFSET 0
    ) AS r
    WHERE %(aggregate)s::text = 'cluster'
    UNION ALL
    SELECT g.ordinal, r.created, r.last_seen, r.destroyed
    FROM grp AS g
    JOIN tenant.infrastructure_resources AS r ON r.resource_type = g.resource_type
    JOIN tenant.clusters AS c ON c.id = r.cluster_id
    WHERE %(aggregate)s::text = 'resource_type'
      AND c.organization_id <> tenant.system_organization_id()
      AND (%(organization_id)s::uuid IS NULL OR c.organization_id = %(organization_id)s::uuid)
      AND (%(cluster_id)s::uuid IS NULL OR r.cluster_id = %(cluster_id)s::uuid)
      AND (%(include_non_billable)s::boolean OR r.billable)
      AND r.created < %(end)s::timestamptz
      AND greatest(r.created, %(start)s::timestamptz)
          < least(coalesce(r.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
),
clipped AS (
    -- Each row's times as microseconds since the window's start (bigint): everything below is integer
    -- arithmetic, exact and cheaper than numeric. s: start, u: upper end, l: lower end (s <= l <= u).
    SELECT p.ordinal, p.s, p.u, least(greatest(p.l, p.s), p.u) AS l
    FROM (
        SELECT picked.ordinal,
               (extract(epoch FROM greatest(picked.created, %(start)s::timestamptz) - %(start)s::timestamptz)
                * 1000000)::bigint AS s,
               (extract(epoch FROM least(coalesce(picked.destroyed, %(now)s::timestamptz), %(end)s::timestamptz)
                                   - %(start)s::timestamptz) * 1000000)::bigint AS u,
               (extract(epoch FROM picked.last_seen - %(start)s::timestamptz) * 1000000)::bigint AS l
        FROM picked
    ) AS p
),
pieces AS (
    -- Each row's share of each step it meets: its interval clipped to the step, for both bounds.
    SELECT c.ordinal,
           k AS step,
           greatest(0, least(c.l, (k + 1) * %(step_us)s::bigint) - greatest(c.s, k * %(step_us)s::bigint)) AS lower_us,
           least(c.u, (k + 1) * %(step_us)s::bigint) - greatest(c.s, k * %(step_us)s::bigint) AS upper_us
    FROM clipped AS c
    CROSS JOIN LATERAL generate_series(c.s / %(step_us)s::bigint, (c.u - 1) / %(step_us)s::bigint) AS k
),
sums AS (
    SELECT ordinal, step, sum(lower_us) AS lower_us, sum(upper_us) AS upper_us
    FROM pieces
    GROUP BY ordinal, step
),
events AS (
    SELECT ordinal, s AS at, 2 AS rank, 1 AS delta FROM clipped
    UNION ALL
    SELECT ordinal, u, 0, -1 FROM clipped
    UNION ALL
    SELECT grp.ordinal, probe.at, 1, 0
    FROM grp
    CROSS JOIN (
        SELECT k * %(step_us)s::bigint AS at FROM generate_series(0, %(steps)s::integer - 1) AS k
    ) AS probe
),
running AS (
    SELECT e.ordinal,
           e.at,
           e.rank,
           sum(e.delta) OVER (PARTITION BY e.ordinal ORDER BY e.at, e.rank ROWS UNBOUNDED PRECEDING) AS present
    FROM events AS e
),
peaks AS (
    SELECT r.ordinal, r.at / %(step_us)s::bigint AS step, max(r.present) AS peak
    FROM running AS r
    WHERE r.rank > 0 AND r.at < %(window_us)s::bigint
    GROUP BY r.ordinal, r.at / %(step_us)s::bigint
)
SELECT p.ordinal::integer AS ordinal,
       p.step::integer AS step,
       coalesce(s.lower_us, 0)::numeric / 1000000 AS lower_seconds,
       coalesce(s.upper_us, 0)::numeric / 1000000 AS upper_seconds,
       p.peak::bigint AS peak
FROM peaks AS p
LEFT JOIN sums AS s ON s.ordinal = p.ordinal AND s.step = p.step
ORDER BY p.ordinal, p.step;
