-- The ledger of bench.fleet_usage: three months of autoscaling churn on every cluster of the scale
-- fleet, written in one pass with generate_series (no row goes through Python). Run as a superuser on
-- a copy of the admin world, whose own small ledger it replaces. %(built)s is the end of the history
-- (the build's time), %(churn)s the autoscaled nodes per cluster per day, %(seed)s the random seed.
--
-- Per cluster, in the 92 days before %(built)s:
-- - 10 long-lived rows, created before the history and still active: the cluster, two worker pools,
--   two extensions, a load balancer, two volumes, an ingress and a certificate;
-- - 3 base nodes replaced once a month (a rolling update): 9 rows, the last three active;
-- - %(churn)s autoscaled nodes a day, each up for 1 to 8 hours between 06:00 and 24:00, seen last
--   within one 15-minute inventory interval of going away.
-- Rows per cluster: 19 + 92 x churn (203 at the default churn of 2), about 63 new rows a month.

-- name: begin
-- A bulk load of a bench copy: the per-row FK checks are skipped (the cluster ids come from clusters).
SET session_replication_role = replica;

-- name: seed
SELECT setseed(%(seed)s::double precision);

-- name: empty
TRUNCATE tenant.infrastructure_resources;

-- name: long_lived
INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, resource_id, name, namespace, billable,
                                             created, last_seen, destroyed, destroyed_reason)
SELECT c.id, kind.resource_type, kind.resource_type || ':' || left(md5(c.id::text || kind.name), 16), kind.name,
       kind.namespace, kind.billable, %(built)s::timestamptz - interval '120 days',
       %(built)s::timestamptz - interval '5 minutes', NULL, NULL
FROM tenant.clusters AS c
CROSS JOIN (VALUES ('gardener.cluster', 'cluster', '', true),
                   ('gardener.workerpool', 'pool-a', '', true),
                   ('gardener.workerpool', 'pool-b', '', true),
                   ('gardener.extension', 'shoot-dns-service', '', false),
                   ('gardener.extension', 'shoot-cert-service', '', false),
                   ('kubernetes.loadbalancer', 'web', 'web-0', true),
                   ('kubernetes.persistentvolume', 'pv-data-0', '', true),
                   ('kubernetes.persistentvolume', 'pv-data-1', '', true),
                   ('kubernetes.ingress', 'web', 'web-0', false),
                   ('kubernetes.certificate', 'web-tls', 'web-0', false))
     AS kind(resource_type, name, namespace, billable)
WHERE c.organization_id <> tenant.system_organization_id();

-- name: base_nodes
INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, resource_id, name, namespace, billable,
                                             created, last_seen, destroyed, destroyed_reason)
SELECT c.id, 'kubernetes.node', 'aws:///i-base' || left(md5(c.id::text || m || k), 12), 'base-' || m || '-' || k, '',
       true, born, CASE WHEN m = 2 THEN %(built)s::timestamptz - interval '5 minutes' ELSE gone - interval '7 minutes' END,
       CASE WHEN m = 2 THEN NULL ELSE gone END, CASE WHEN m = 2 THEN NULL ELSE 'not_found' END
FROM tenant.clusters AS c
CROSS JOIN generate_series(0, 2) AS m
CROSS JOIN generate_series(1, 3) AS k
CROSS JOIN LATERAL (
    SELECT %(built)s::timestamptz - interval '92 days' + make_interval(days => 30 * m, mins => 10 * k) AS born,
           %(built)s::timestamptz - interval '92 days' + make_interval(days => 30 * (m + 1), mins => 10 * k + 5) AS gone
) AS t
WHERE c.organization_id <> tenant.system_organization_id();

-- name: churn
INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, resource_id, name, namespace, billable,
                                             created, last_seen, destroyed, destroyed_reason)
SELECT c.id, 'kubernetes.node', 'aws:///i-' || left(md5(c.id::text || d || '-' || k), 16), 'auto-' || d || '-' || k, '',
       true, t.born, t.gone - make_interval(secs => floor(random() * 900)), t.gone, 'not_found'
FROM tenant.clusters AS c
CROSS JOIN generate_series(0, 91) AS d
CROSS JOIN generate_series(1, %(churn)s::integer) AS k
CROSS JOIN LATERAL (
    SELECT s.born, s.born + make_interval(secs => 3600 + floor(random() * 7 * 3600)) AS gone
    FROM (SELECT %(built)s::timestamptz - interval '92 days'
                 + make_interval(days => d, secs => 6 * 3600 + floor(random() * 10 * 3600)) AS born) AS s
) AS t
WHERE c.organization_id <> tenant.system_organization_id();

-- name: end
SET session_replication_role = origin;
