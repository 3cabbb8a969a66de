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
-- How a step is added up, exactly: one sweep per group in time order. Every row contributes its start
-- (+1) and its end (-1, left out at the window's end, where no count is read any more), every step
-- start a probe (no change), ends before probes before starts at one instant (intervals are
-- half-open); the running sum is the number of rows present, and the peak of a step is the largest
-- running sum at its start or just after a row started in it (the count rises nowhere else). The
-- bounds ride on the same rows: a row that lies in one step (every row when the step is the window)
-- carries its two lengths on its start event; only the rows that meet more than one step are
-- clipped to each step they meet (`spread`). Times are microseconds since the window's start
-- (bigint), a step is the integer quotient by %(step_us)s, the seconds are the sums / 10^6.
--
-- Each time is clipped to the window as a timestamp first, so every offset lies in [0, 366 days]
-- (parse/requests.py bounds the window): date_part's double carries such an interval's microseconds
-- with an error far below 0.5 (about 10^-2 at 366 days), so rounding gives them back exactly, at a
-- fraction of the cost of extract's numeric.
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
    -- arithmetic, exact. s: start, u: upper end, l: lower end (s <= l <= u), clipped as timestamps.
    SELECT p.ordinal,
           round(date_part('epoch', p.s - %(start)s::timestamptz) * 1000000)::bigint AS s,
           round(date_part('epoch', p.u - %(start)s::timestamptz) * 1000000)::bigint AS u,
           round(date_part('epoch', least(greatest(p.l, p.s), p.u) - %(start)s::timestamptz) * 1000000)::bigint AS l
    FROM (
        SELECT picked.ordinal, greatest(picked.created, %(start)s::timestamptz) AS s,
               least(coalesce(picked.destroyed, %(now)s::timestamptz), %(end)s::timestamptz) AS u,
               picked.last_seen AS l
        FROM picked
    ) AS p
),
spread AS (
    -- The bounds of the rows that meet more than one step, each row's interval clipped to each step.
    SELECT c.ordinal,
           k AS step,
           sum(greatest(0, least(c.l, (k + 1) * %(step_us)s::bigint) - greatest(c.s, k * %(step_us)s::bigint))) AS lower_us,
           sum(least(c.u, (k + 1) * %(step_us)s::bigint) - greatest(c.s, k * %(step_us)s::bigint)) AS upper_us
    FROM clipped AS c
    CROSS JOIN LATERAL generate_series(c.s / %(step_us)s::bigint, (c.u - 1) / %(step_us)s::bigint) AS k
    WHERE c.s / %(step_us)s::bigint <> (c.u - 1) / %(step_us)s::bigint
    GROUP BY c.ordinal, k
),
events AS (
    -- A row's start carries its bounds when it lies in one step; an end at the window's end changes
    -- no count the window sees and is left out.
    SELECT ordinal, s AS at, 2 AS rank, 1 AS delta,
           CASE WHEN s / %(step_us)s::bigint = (u - 1) / %(step_us)s::bigint THEN l - s ELSE 0 END AS lower_us,
           CASE WHEN s / %(step_us)s::bigint = (u - 1) / %(step_us)s::bigint THEN u - s ELSE 0 END AS upper_us
    FROM clipped
    UNION ALL
    SELECT ordinal, u, 0, -1, 0, 0 FROM clipped WHERE u < %(window_us)s::bigint
    UNION ALL
    SELECT grp.ordinal, probe.at, 1, 0, 0, 0
    FROM grp
    CROSS JOIN (
        SELECT k * %(step_us)s::bigint AS at FROM generate_series(0, %(steps)s::integer - 1) AS k
    ) AS probe
),
running AS (
    SELECT e.ordinal, e.at, e.rank, e.lower_us, e.upper_us,
           sum(e.delta) OVER (PARTITION BY e.ordinal ORDER BY e.at, e.rank ROWS UNBOUNDED PRECEDING) AS present
    FROM events AS e
),
steps AS (
    SELECT r.ordinal, r.at / %(step_us)s::bigint AS step,
           max(r.present) FILTER (WHERE r.rank > 0) AS peak,
           sum(r.lower_us) AS lower_us, sum(r.upper_us) AS upper_us
    FROM running AS r
    GROUP BY r.ordinal, r.at / %(step_us)s::bigint
)
SELECT p.ordinal::integer AS ordinal,
       p.step::integer AS step,
       (p.lower_us + coalesce(s.lower_us, 0))::numeric / 1000000 AS lower_seconds,
       (p.upper_us + coalesce(s.upper_us, 0))::numeric / 1000000 AS upper_seconds,
       p.peak::bigint AS peak
FROM steps AS p
LEFT JOIN spread AS s ON s.ordinal = p.ordinal AND s.step = p.step
ORDER BY p.ordinal, p.step;
