-- 0003: an index for ListUsage (the ledger added up over a window).
--
-- ListUsage reads, per cluster and resource type, the rows that start before a window's end and end
-- after its start. The paging index (cluster_id, resource_type, namespace, name, id) finds a
-- cluster's rows but none of their times, so every row of the cluster's history was read from the
-- table. This index orders them by `created` and carries `billable` and `destroyed`: a page of groups
-- is chosen from the index alone, and the rows to add up are read only when they meet the window.
-- `last_seen` is left out on purpose: the inventory moves it on every active row each round, and an
-- index holding it would turn each of those updates from a heap-only (HOT) update into a write to
-- every index of the ledger.
--
-- No rollup table: a rollup would add a write to every ledger change, and the peak count of a step
-- does not add up from parts. docs/performance.md ('Usage over the ledger') says how the ledger grows
-- and bench.fleet_usage measures what this index gives. Nothing here blocks an operation of
-- Fundament's: the ledger is ours alone.
SET LOCAL lock_timeout = '10s';

CREATE INDEX infrastructure_resources_idx_usage ON tenant.infrastructure_resources
    (cluster_id, resource_type, created) INCLUDE (billable, destroyed);
