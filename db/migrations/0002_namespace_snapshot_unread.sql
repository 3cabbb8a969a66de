-- 0002: a namespace the collector could not read this round keeps its last count, marked unread.
--
-- The Prometheus source matches a namespace by its generated name when kube-state-metrics does not
-- export the fundament.io/namespace-id label; a match that is not certain (a renamed project, two
-- candidates, no candidate) must never be stored as 0 pods. The row's `pods` and `observed` stay those
-- of the last read; `unread_reason` says why this round could not read it and `unread_at` when that
-- round stored (docs/collector.md, 'Which namespace is which'). A read clears both. A namespace never
-- read has no row, and an unread round adds none.
--
-- Written beside the baseline so the collector's tests can run; the lead renumbers or folds it in.
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.namespace_snapshots
    ADD COLUMN unread_reason text,
    ADD COLUMN unread_at timestamptz,
    ADD CONSTRAINT namespace_snapshots_ck_unread_pair CHECK ((unread_reason IS NULL) = (unread_at IS NULL)),
    ADD CONSTRAINT namespace_snapshots_ck_unread_reason CHECK (
        unread_reason IN ('not_found', 'renamed', 'ambiguous')
    );

GRANT UPDATE (unread_reason, unread_at) ON tenant.namespace_snapshots TO fun_cluster_worker;
