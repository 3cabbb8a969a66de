-- 0017: the provisioning side's times are finite.
--
-- PostgreSQL's timestamptz takes 'infinity' and '-infinity', which no client type holds: psycopg
-- refuses to load them (a staff read would fail as a whole) and a protobuf Timestamp cannot carry
-- them (its range is years 1 to 9999). Nothing the provisioning side records is infinitely far off,
-- so a write of one is refused here, where the writer sees it, instead of breaking every later read.
-- The fleet's own tables are written by the worker from parsed RFC 3339 times, which are finite.
-- Each ADD CONSTRAINT scans its table once under the migration's lock (about a second for the
-- million namespaces of the scale fleet); a database already holding such a time fails here and
-- names the constraint, and nothing is changed.
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.organizations ADD CONSTRAINT organizations_ck_finite_times
    CHECK (isfinite(created) AND (deleted IS NULL OR isfinite(deleted)));
ALTER TABLE tenant.projects ADD CONSTRAINT projects_ck_finite_times
    CHECK (isfinite(created) AND (deleted IS NULL OR isfinite(deleted)));
ALTER TABLE tenant.clusters ADD CONSTRAINT clusters_ck_finite_times
    CHECK (isfinite(created) AND (deleted IS NULL OR isfinite(deleted)));
ALTER TABLE tenant.node_pools ADD CONSTRAINT node_pools_ck_finite_times
    CHECK (isfinite(created) AND (deleted IS NULL OR isfinite(deleted)));
ALTER TABLE tenant.namespaces ADD CONSTRAINT namespaces_ck_finite_times
    CHECK (isfinite(created) AND (deleted IS NULL OR isfinite(deleted)));
ALTER TABLE tenant.cluster_sync_state ADD CONSTRAINT cluster_sync_state_ck_finite_times
    CHECK (
        isfinite(sync_updated) AND isfinite(shoot_status_changed)
        AND (first_completed IS NULL OR isfinite(first_completed))
        AND (ready_since IS NULL OR isfinite(ready_since))
    );
