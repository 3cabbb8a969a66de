-- 0016: drop the search indexes of 0009 that no query reads any more.
--
-- ListClusters matches names through tenant.cluster_search (migration 0014) and SearchNamespaces
-- walks tenant.namespace_names and then each name's namespaces by (name, id) (migration 0012), so
-- the trigram and prefix indexes on lower(name) of clusters and of live namespaces serve nothing;
-- the namespace pair alone is a trigram entry per namespace (a million at the scale fleet) that
-- every namespace written by the provisioning side still paid for. The plan tests
-- (tests/fleet/test_plans.py) hold every search to an index without them. The organizations'
-- indexes stay: ListOrganizations' query matches lower(name) and lower(alias).
SET LOCAL lock_timeout = '10s';

DROP INDEX tenant.clusters_idx_name_trgm;
DROP INDEX tenant.clusters_idx_name_prefix;
DROP INDEX tenant.namespaces_idx_live_name_trgm;
DROP INDEX tenant.namespaces_idx_live_name_prefix;
