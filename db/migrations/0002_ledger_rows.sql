-- 0002: the ledger as a billing record (docs/collector.md, 'The infrastructure ledger').
--
-- 1. Honest times for rows closed because their cluster or organization went away. Reconcile used to
--    set `destroyed` to the time of the pass that closed them, which can be months after the shoot
--    was gone (the pass runs only once the cluster row is deleted too). The first evidence that such
--    a row's resource was gone is when the garden stopped listing the cluster's shoot (the shoot
--    mirror's `deleted`), or the cluster's (organization's) deletion when no shoot was ever seen.
--    Rows already closed that way are corrected here, only ever earlier and never before `last_seen`.
-- 2. The cluster, its worker pools and its extensions and add-ons as ledger rows of their own, written
--    by reconcile from the garden's Shoot. What Gardener says of a row beyond its name (a pool's
--    machine type, minimum and maximum) goes into `details`, which the worker may update while the
--    row is active.
--
-- Only objects of ours change: nothing here touches a table of Fundament's or can block one of its
-- operations.
SET LOCAL lock_timeout = '10s';

-- What the reconcile pass knows of a row beyond its key; NULL for the inventory's own types. Bounded,
-- because it is copied from a garden answer.
ALTER TABLE tenant.infrastructure_resources ADD COLUMN details jsonb;
ALTER TABLE tenant.infrastructure_resources ADD CONSTRAINT infrastructure_resources_ck_details CHECK (
    details IS NULL OR jsonb_typeof(details) = 'object' AND octet_length(details::text) <= 4096
);
GRANT UPDATE (details) ON tenant.infrastructure_resources TO fun_cluster_worker;
COMMENT ON COLUMN tenant.infrastructure_resources.details IS
    'gardener.workerpool: {"machine_type", "minimum", "maximum"} as the Shoot says now; NULL for other types';

-- The closing pass looks up when the garden stopped listing a gone cluster's shoots.
CREATE INDEX gardener_shoots_idx_cluster_deleted ON tenant.gardener_shoots (cluster_id, deleted);

-- The correction. A destroyed row is history that no UPDATE may rewrite (the trigger refuses it for
-- every role), so it is switched off for this one statement inside this migration's transaction; the
-- table stays locked until the transaction ends, so no other writer can slip through meanwhile.
ALTER TABLE tenant.infrastructure_resources DISABLE TRIGGER infrastructure_resources_keep_destroyed;
WITH evidence AS (
    SELECT r.id,
           coalesce(
               (SELECT max(s.deleted) FROM tenant.gardener_shoots AS s WHERE s.cluster_id = r.cluster_id),
               CASE WHEN r.destroyed_reason = 'cluster_deleted' THEN c.deleted ELSE o.deleted END
           ) AS gone
    FROM tenant.infrastructure_resources AS r
    JOIN tenant.clusters AS c ON c.id = r.cluster_id
    JOIN tenant.organizations AS o ON o.id = c.organization_id
    WHERE r.destroyed_reason IN ('cluster_deleted', 'organization_deleted')
)
UPDATE tenant.infrastructure_resources AS r
SET destroyed = GREATEST(r.last_seen, e.gone)
FROM evidence AS e
WHERE r.id = e.id AND e.gone IS NOT NULL AND GREATEST(r.last_seen, e.gone) < r.destroyed;
ALTER TABLE tenant.infrastructure_resources ENABLE TRIGGER infrastructure_resources_keep_destroyed;
