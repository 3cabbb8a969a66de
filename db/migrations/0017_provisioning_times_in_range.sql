-- 0017: the provisioning side's times lie within the years 1 to 9999 (UTC).
--
-- PostgreSQL's timestamptz reaches from 4713 BC to the year 294276 and takes 'infinity' and
-- '-infinity'; psycopg's datetime and a protobuf Timestamp hold only the years 1 to 9999. A time
-- outside them in a provisioning table would break every later staff read of its row (psycopg
-- refuses to load it, or the Timestamp is out of its range), so the write is refused here, where the
-- writer sees it. The fleet's own tables are written by the worker from parsed RFC 3339 times, which
-- are within the range.
-- Each ADD CONSTRAINT scans its table once under the migration's lock (about a second for the
-- million namespaces of the scale fleet); a database already holding such a time fails here, names
-- the constraint, and is left unchanged.
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.organizations ADD CONSTRAINT organizations_ck_times_in_range CHECK (
    created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
ALTER TABLE tenant.projects ADD CONSTRAINT projects_ck_times_in_range CHECK (
    created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
ALTER TABLE tenant.clusters ADD CONSTRAINT clusters_ck_times_in_range CHECK (
    created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
ALTER TABLE tenant.node_pools ADD CONSTRAINT node_pools_ck_times_in_range CHECK (
    created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
ALTER TABLE tenant.namespaces ADD CONSTRAINT namespaces_ck_times_in_range CHECK (
    created BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (deleted IS NULL OR deleted BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
ALTER TABLE tenant.cluster_sync_state ADD CONSTRAINT cluster_sync_state_ck_times_in_range CHECK (
    sync_updated BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND shoot_status_changed BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    AND (first_completed IS NULL OR first_completed BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
    AND (ready_since IS NULL OR ready_since BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
);
