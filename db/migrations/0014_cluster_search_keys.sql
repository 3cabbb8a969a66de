-- 0014: the listing's search keys move to tenant.cluster_search, and an organization's totals are
-- added up from its own clusters only.
--
-- Why: every snapshot write (once per cluster per round) moves `observed`, an indexed column of
-- tenant.cluster_listing, so the row is never updated in place (no HOT update) and every index of the
-- listing gets a new entry, the three trigram GIN indexes of its search keys included: about forty
-- trigrams each, inserted one by one (fastupdate is off). Those three were most of what a snapshot
-- write cost the database. The keys hold only names, which change when a cluster or an organization
-- is renamed, so they now live in a table of their own that a snapshot write never touches.
--
-- And: refresh_organization_totals runs with generic plans, and the generic plan of its aggregate
-- (organizations unnested, LEFT JOIN the listing, GROUP BY) hashed the whole listing to total one
-- organization; a LATERAL subquery per organization reads only that organization's clusters.
SET LOCAL lock_timeout = '10s';

-- One row per listing row: a copy of the listing's lowered keys (migration 0012 spells them), and the
-- indexes that find them (moved unchanged from the listing; see 0012 for why '-' is read as 'z' and
-- why no pending list).
CREATE TABLE tenant.cluster_search (
    id uuid NOT NULL,
    cluster_key text NOT NULL,
    organization_key text NOT NULL,
    search_key text NOT NULL,
    CONSTRAINT cluster_search_pk PRIMARY KEY (id),
    CONSTRAINT cluster_search_fk_listing FOREIGN KEY (id) REFERENCES tenant.cluster_listing (id)
);
ALTER TABLE tenant.cluster_search OWNER TO fun_owner;
ALTER TABLE tenant.cluster_search ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.cluster_search TO fun_platform_admin_api;
CREATE POLICY cluster_search_admin_api_read ON tenant.cluster_search
    FOR SELECT TO fun_platform_admin_api USING (true);

-- The listing keeps its key columns, unindexed: a page that walks an order's index tests the query
-- on the row it already holds and looks up the search row only for the rows that match.
DROP INDEX tenant.cluster_listing_idx_search_trgm;
DROP INDEX tenant.cluster_listing_idx_organization_trgm;
DROP INDEX tenant.cluster_listing_idx_cluster_trgm;
DROP INDEX tenant.cluster_listing_idx_cluster_prefix;

INSERT INTO tenant.cluster_search (id, cluster_key, organization_key, search_key)
SELECT l.id, l.cluster_key, l.organization_key, l.search_key FROM tenant.cluster_listing AS l;

CREATE INDEX cluster_search_idx_search_trgm ON tenant.cluster_search
    USING gin (translate(search_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_organization_trgm ON tenant.cluster_search
    USING gin (translate(organization_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_cluster_trgm ON tenant.cluster_search
    USING gin (translate(cluster_key, '-', 'z') fleet_ext.gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX cluster_search_idx_cluster_prefix ON tenant.cluster_search (cluster_key text_pattern_ops);

-- Written with its listing row: when the row is made, and when one of its names changes (the keys are
-- generated, so NEW holds them already). The listing row is locked by whoever writes it
-- (refresh_cluster_listing), so its search row is written in the same order. A snapshot write sets
-- none of the three names, so these triggers do not even fire.
CREATE FUNCTION tenant.cluster_search_from_listing() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO tenant.cluster_search AS s (id, cluster_key, organization_key, search_key)
    VALUES (NEW.id, NEW.cluster_key, NEW.organization_key, NEW.search_key)
    ON CONFLICT (id) DO UPDATE SET
        cluster_key = EXCLUDED.cluster_key, organization_key = EXCLUDED.organization_key,
        search_key = EXCLUDED.search_key;
    RETURN NULL;
END
$$;
ALTER FUNCTION tenant.cluster_search_from_listing() OWNER TO fun_owner;
REVOKE EXECUTE ON FUNCTION tenant.cluster_search_from_listing() FROM PUBLIC;

CREATE TRIGGER cluster_search_insert AFTER INSERT ON tenant.cluster_listing
    FOR EACH ROW EXECUTE FUNCTION tenant.cluster_search_from_listing();
CREATE TRIGGER cluster_search_update AFTER UPDATE OF name, organization_name, organization_alias
    ON tenant.cluster_listing FOR EACH ROW
    -- search_key joins the other two, so these say whether any key moved.
    WHEN ((OLD.cluster_key, OLD.organization_key) IS DISTINCT FROM (NEW.cluster_key, NEW.organization_key))
    EXECUTE FUNCTION tenant.cluster_search_from_listing();

CREATE OR REPLACE FUNCTION tenant.refresh_organization_totals(organizations uuid[]) RETURNS void
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
    -- Per organization, its clusters through the (organization_id, ...) indexes of the listing.
    UPDATE tenant.organization_totals AS t
    SET clusters = x.clusters, projects = x.projects, namespaces = x.namespaces, ready_nodes = x.ready_nodes,
        pods = x.pods, clusters_needing_attention = x.clusters_needing_attention
    FROM unnest(organizations) AS o (id)
    CROSS JOIN LATERAL (
        SELECT count(*) AS clusters,
               coalesce(sum(l.projects), 0) AS projects,
               coalesce(sum(l.namespaces), 0) AS namespaces,
               coalesce(sum(l.ready_nodes) FILTER (WHERE l.ready), 0) AS ready_nodes,
               coalesce(sum(l.pods) FILTER (WHERE l.ready), 0) AS pods,
               count(*) FILTER (WHERE l.needs_attention) AS clusters_needing_attention
        FROM tenant.cluster_listing AS l
        WHERE l.organization_id = o.id AND NOT l.cluster_deleted
    ) AS x
    WHERE t.organization_id = o.id
      AND (t.clusters, t.projects, t.namespaces, t.ready_nodes, t.pods, t.clusters_needing_attention)
          IS DISTINCT FROM (x.clusters, x.projects, x.namespaces, x.ready_nodes, x.pods, x.clusters_needing_attention);
END
$$;
