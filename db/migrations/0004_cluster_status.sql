-- 0004: the SQL twins of common/clusterstatus.py, so the staff API can filter,
-- page and count by status, readiness and staleness inside one query.
--
-- The Python module is the definition; these functions must agree with it on every combination of
-- inputs, which tests/db/test_clusterstatus_sql.py proves by enumerating them. All are IMMUTABLE SQL
-- functions of their arguments only (the time is an argument), without SET clauses, so the planner
-- inlines them into the calling query. They run with the caller's rights and read no table.
SET LOCAL lock_timeout = '10s';

-- The console status of a cluster. `deleted`: the cluster row is soft-deleted. `sync_status` NULL
-- means the cluster has no cluster_sync_state row. `ever_completed`: first_completed IS NOT NULL.
CREATE FUNCTION tenant.cluster_status(
    deleted boolean, sync_status text, shoot_status text, shoot_operation text, ever_completed boolean
) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN deleted THEN CASE WHEN shoot_status = 'deleted' THEN 'deleted' ELSE 'deleting' END
        WHEN sync_status IS NULL THEN 'provisioning'
        WHEN shoot_status = 'error' OR sync_status = 'failed' THEN 'error'
        WHEN shoot_status = 'missing' AND ever_completed THEN 'lost'
        WHEN shoot_status = 'hibernating' THEN 'stopping'
        WHEN shoot_status = 'hibernated' THEN 'stopped'
        WHEN shoot_status = 'progressing' THEN
            CASE WHEN NOT ever_completed OR shoot_operation = 'create' THEN 'starting' ELSE 'upgrading' END
        WHEN shoot_status = 'unhealthy' THEN 'unhealthy'
        WHEN shoot_status = 'ready' THEN
            CASE WHEN ever_completed AND sync_status IN ('pending', 'retrying') THEN 'upgrading' ELSE 'running' END
        ELSE 'provisioning'
    END
$$;

-- UNHEALTHY, ERROR and LOST: the staff view's "needs attention" filter and count.
CREATE FUNCTION tenant.cluster_needs_attention(status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(status IN ('unhealthy', 'error', 'lost'), false) $$;

-- STARTING and UPGRADING.
CREATE FUNCTION tenant.cluster_is_updating(status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(status IN ('starting', 'upgrading'), false) $$;

-- Ready (what the collector reads): a live cluster of a live, non-system organization whose shoot is
-- ready or unhealthy.
CREATE FUNCTION tenant.cluster_is_ready(
    cluster_deleted boolean, organization_deleted boolean, organization_id uuid, shoot_status text
) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(
        NOT cluster_deleted AND NOT organization_deleted
        AND organization_id <> tenant.system_organization_id()
        AND shoot_status IN ('ready', 'unhealthy'),
        false
    )
$$;

-- Staleness: a ready cluster whose snapshot is older than three inventory intervals, as
-- the collector last recorded its interval. Not stale: a cluster ready (`ready_since`, from
-- shoot_status_changed) for less than three intervals; anything before the collector ever ran
-- (`interval_seconds` NULL). A ready cluster never collected (`observed` NULL) is stale once it has
-- been ready, and the collector has been running (`collector_since`, its first completed pass), for
-- three intervals: by then it had three chances to read it. `as_of` is the time of the question.
CREATE FUNCTION tenant.snapshot_is_stale(
    ready boolean,
    observed timestamptz,
    ready_since timestamptz,
    interval_seconds integer,
    collector_since timestamptz,
    as_of timestamptz
) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(
        ready
        AND interval_seconds IS NOT NULL
        AND (ready_since IS NULL OR extract(epoch FROM as_of - ready_since) >= 3 * interval_seconds)
        AND CASE
            WHEN observed IS NULL THEN
                collector_since IS NULL OR extract(epoch FROM as_of - collector_since) >= 3 * interval_seconds
            ELSE extract(epoch FROM as_of - observed) > 3 * interval_seconds
        END,
        false
    )
$$;

REVOKE EXECUTE ON FUNCTION
    tenant.cluster_status(boolean, text, text, text, boolean),
    tenant.cluster_needs_attention(text),
    tenant.cluster_is_updating(text),
    tenant.cluster_is_ready(boolean, boolean, uuid, text),
    tenant.snapshot_is_stale(boolean, timestamptz, timestamptz, integer, timestamptz, timestamptz)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    tenant.cluster_status(boolean, text, text, text, boolean),
    tenant.cluster_needs_attention(text),
    tenant.cluster_is_updating(text),
    tenant.cluster_is_ready(boolean, boolean, uuid, text),
    tenant.snapshot_is_stale(boolean, timestamptz, timestamptz, integer, timestamptz, timestamptz)
TO fun_platform_admin_api, fun_cluster_worker;
