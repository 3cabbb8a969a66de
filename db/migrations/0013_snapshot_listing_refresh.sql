-- 0013: a snapshot write refreshes only what a snapshot moves in tenant.cluster_listing.
--
-- The collector writes every cluster's snapshot once a round. Through refresh_cluster_listing each of
-- those writes also recomputed the whole listing row (its organization, sync state, project and
-- namespace counts) and cost the round about a third more than without the listing on a 2-core
-- machine (bench.collector_fanout). A snapshot moves only the listing's snapshot columns and its
-- organization's totals, so its triggers now copy just those columns, under the same row locks and
-- in the same order as the full refresh, and then recompute the organizations' totals
-- (refresh_organization_totals, the full refresh's last step, now a function of its own).
SET LOCAL lock_timeout = '10s';

CREATE FUNCTION tenant.refresh_organization_totals(organizations uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF cardinality(organizations) = 0 THEN
        RETURN;
    END IF;
    -- Make sure the rows exist, lock them in order (waiting for another writer), then add up what
    -- is committed now.
    INSERT INTO tenant.organization_totals AS t
        (organization_id, clusters, projects, namespaces, ready_nodes, pods, clusters_needing_attention)
    SELECT o.id, 0, 0, 0, 0, 0, 0 FROM unnest(organizations) AS o (id)
    ON CONFLICT (organization_id) DO NOTHING;
    PERFORM 1 FROM tenant.organization_totals AS t
    WHERE t.organization_id = ANY (organizations) ORDER BY t.organization_id FOR UPDATE;
    UPDATE tenant.organization_totals AS t
    SET clusters = x.clusters, projects = x.projects, namespaces = x.namespaces, ready_nodes = x.ready_nodes,
        pods = x.pods, clusters_needing_attention = x.clusters_needing_attention
    FROM (
        SELECT o.id,
               count(l.id) AS clusters,
               coalesce(sum(l.projects), 0) AS projects,
               coalesce(sum(l.namespaces), 0) AS namespaces,
               coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
               coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
               count(l.id) FILTER (WHERE l.needs_attention) AS clusters_needing_attention
        FROM unnest(organizations) AS o (id)
        LEFT JOIN tenant.cluster_listing AS l ON l.organization_id = o.id AND NOT l.cluster_deleted
        GROUP BY o.id
    ) AS x
    WHERE t.organization_id = x.id
      AND (t.clusters, t.projects, t.namespaces, t.ready_nodes, t.pods, t.clusters_needing_attention)
          IS DISTINCT FROM (x.clusters, x.projects, x.namespaces, x.ready_nodes, x.pods, x.clusters_needing_attention);
END
$$;
ALTER FUNCTION tenant.refresh_organization_totals(uuid[]) OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.refresh_organization_totals(uuid[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION tenant.refresh_cluster_listing(ids uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    organizations uuid[];
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    -- Wait for any other writer of these rows (in id order, so two writers never deadlock here).
    PERFORM 1 FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids) ORDER BY l.id FOR UPDATE;
    -- The organizations whose totals move: the clusters' own, before and after (a cluster may move).
    organizations := ARRAY(
        SELECT l.organization_id FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids)
        UNION
        SELECT c.organization_id FROM tenant.clusters AS c
        WHERE c.id = ANY (ids) AND c.organization_id <> tenant.system_organization_id()
    );
    INSERT INTO tenant.cluster_listing AS l (
        id, organization_id, name, organization_name, organization_alias, region, cluster_deleted, live,
        sync_status, shoot_status, shoot_operation, ever_completed, ready, ready_since,
        observed, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores, memory_allocatable_bytes,
        status_since, projects, namespaces
    )
    SELECT c.id, c.organization_id, c.name, o.name, o.alias, c.region, c.deleted IS NOT NULL,
           c.deleted IS NULL AND o.deleted IS NULL,
           s.sync_status, s.shoot_status, s.shoot_operation, s.first_completed IS NOT NULL,
           tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status),
           s.ready_since,
           coalesce(snap.observed, '-infinity'), coalesce(snap.nodes, 0), coalesce(snap.ready_nodes, 0),
           coalesce(snap.pods, 0), coalesce(snap.allocatable_pods, 0), coalesce(snap.cpu_allocatable_millicores, 0),
           coalesce(snap.memory_allocatable_bytes, 0),
           coalesce(s.shoot_status_changed, '-infinity'),
           coalesce(per.projects, 0), coalesce(per.namespaces, 0)
    FROM tenant.clusters AS c
    JOIN tenant.organizations AS o ON o.id = c.organization_id
    LEFT JOIN tenant.cluster_sync_state AS s ON s.cluster_id = c.id
    LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
    LEFT JOIN LATERAL (
        SELECT count(*) AS projects, sum((SELECT count(*) FROM tenant.namespaces AS n
                                          WHERE n.project_id = p.id AND n.deleted IS NULL)) AS namespaces
        FROM tenant.projects AS p
        WHERE p.cluster_id = c.id AND p.deleted IS NULL
    ) AS per ON true
    WHERE c.id = ANY (ids) AND c.organization_id <> tenant.system_organization_id()
    ON CONFLICT (id) DO UPDATE SET
        organization_id = EXCLUDED.organization_id, name = EXCLUDED.name,
        organization_name = EXCLUDED.organization_name, organization_alias = EXCLUDED.organization_alias,
        region = EXCLUDED.region, cluster_deleted = EXCLUDED.cluster_deleted, live = EXCLUDED.live,
        sync_status = EXCLUDED.sync_status, shoot_status = EXCLUDED.shoot_status,
        shoot_operation = EXCLUDED.shoot_operation, ever_completed = EXCLUDED.ever_completed,
        ready = EXCLUDED.ready, ready_since = EXCLUDED.ready_since, observed = EXCLUDED.observed,
        nodes = EXCLUDED.nodes, ready_nodes = EXCLUDED.ready_nodes, pods = EXCLUDED.pods,
        allocatable_pods = EXCLUDED.allocatable_pods,
        cpu_allocatable_millicores = EXCLUDED.cpu_allocatable_millicores,
        memory_allocatable_bytes = EXCLUDED.memory_allocatable_bytes, status_since = EXCLUDED.status_since,
        projects = EXCLUDED.projects, namespaces = EXCLUDED.namespaces
    -- An unchanged row is not rewritten (no new row version, no index entries).
    WHERE (l.organization_id, l.name, l.organization_name, l.organization_alias, l.region, l.cluster_deleted,
           l.live, l.sync_status, l.shoot_status, l.shoot_operation, l.ever_completed, l.ready, l.ready_since,
           l.observed, l.nodes, l.ready_nodes, l.pods, l.allocatable_pods, l.cpu_allocatable_millicores,
           l.memory_allocatable_bytes, l.status_since, l.projects, l.namespaces)
          IS DISTINCT FROM
          (EXCLUDED.organization_id, EXCLUDED.name, EXCLUDED.organization_name, EXCLUDED.organization_alias,
           EXCLUDED.region, EXCLUDED.cluster_deleted, EXCLUDED.live, EXCLUDED.sync_status, EXCLUDED.shoot_status,
           EXCLUDED.shoot_operation, EXCLUDED.ever_completed, EXCLUDED.ready, EXCLUDED.ready_since,
           EXCLUDED.observed, EXCLUDED.nodes, EXCLUDED.ready_nodes, EXCLUDED.pods, EXCLUDED.allocatable_pods,
           EXCLUDED.cpu_allocatable_millicores, EXCLUDED.memory_allocatable_bytes, EXCLUDED.status_since,
           EXCLUDED.projects, EXCLUDED.namespaces);
    PERFORM tenant.refresh_organization_totals(organizations);
END
$$;

CREATE FUNCTION tenant.cluster_listing_from_snapshots() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    ids uuid[];
BEGIN
    ids := ARRAY(SELECT DISTINCT t.cluster_id FROM changed AS t);
    -- The full refresh's lock, in its order: a writer of the same cluster's other sources waits here.
    PERFORM 1 FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids) ORDER BY l.id FOR UPDATE;
    UPDATE tenant.cluster_listing AS l
    SET observed = coalesce(snap.observed, '-infinity'), nodes = coalesce(snap.nodes, 0),
        ready_nodes = coalesce(snap.ready_nodes, 0), pods = coalesce(snap.pods, 0),
        allocatable_pods = coalesce(snap.allocatable_pods, 0),
        cpu_allocatable_millicores = coalesce(snap.cpu_allocatable_millicores, 0),
        memory_allocatable_bytes = coalesce(snap.memory_allocatable_bytes, 0)
    FROM tenant.cluster_snapshots AS snap
    WHERE snap.cluster_id = l.id AND l.id = ANY (ids)
      AND (l.observed, l.nodes, l.ready_nodes, l.pods, l.allocatable_pods, l.cpu_allocatable_millicores,
           l.memory_allocatable_bytes)
          IS DISTINCT FROM
          (coalesce(snap.observed, '-infinity'), coalesce(snap.nodes, 0), coalesce(snap.ready_nodes, 0),
           coalesce(snap.pods, 0), coalesce(snap.allocatable_pods, 0),
           coalesce(snap.cpu_allocatable_millicores, 0), coalesce(snap.memory_allocatable_bytes, 0));
    PERFORM tenant.refresh_organization_totals(ARRAY(
        SELECT DISTINCT l.organization_id FROM tenant.cluster_listing AS l WHERE l.id = ANY (ids)
    ));
    RETURN NULL;
END
$$;
ALTER FUNCTION tenant.cluster_listing_from_snapshots() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.cluster_listing_from_snapshots() FROM PUBLIC;

DROP TRIGGER cluster_listing_insert ON tenant.cluster_snapshots;
DROP TRIGGER cluster_listing_update ON tenant.cluster_snapshots;
CREATE TRIGGER cluster_listing_insert AFTER INSERT ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_snapshots();
CREATE TRIGGER cluster_listing_update AFTER UPDATE ON tenant.cluster_snapshots REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.cluster_listing_from_snapshots();
