-- The SQL of the staff API's ledger of infrastructure resources: pages of it, and one cluster's active
-- counts. Loaded by services/fleet/queries/ledger.py; the conventions are in base.sql.

-- name: list_infrastructure_resources
-- Called by FleetApi.list_infrastructure_resources: one page of the ledger by (cluster_id,
-- resource_type, namespace, name, id); cluster-wide kinds have namespace ''.
SELECT r.id,
       r.cluster_id,
       c.name AS cluster_name,
       o.name AS organization_name,
       r.resource_type,
       r.resource_id,
       r.name,
       r.namespace,
       r.billable,
       r.created,
       r.last_seen,
       r.destroyed,
       r.destroyed_reason,
       -- A worker pool's spec as reconcile last read it (docs/collector.md, 'The infrastructure ledger').
       CASE WHEN r.resource_type = 'gardener.workerpool' AND jsonb_typeof(r.details -> 'machine_type') = 'string'
                 AND jsonb_typeof(r.details -> 'minimum') = 'number'
                 AND jsonb_typeof(r.details -> 'maximum') = 'number'
            THEN r.details ->> 'machine_type' END AS pool_machine_type,
       CASE WHEN r.resource_type = 'gardener.workerpool' AND jsonb_typeof(r.details -> 'minimum') = 'number'
            THEN (r.details ->> 'minimum')::integer END AS pool_minimum,
       CASE WHEN r.resource_type = 'gardener.workerpool' AND jsonb_typeof(r.details -> 'maximum') = 'number'
            THEN (r.details ->> 'maximum')::integer END AS pool_maximum
FROM tenant.infrastructure_resources AS r
JOIN tenant.clusters AS c ON c.id = r.cluster_id
JOIN tenant.organizations AS o ON o.id = c.organization_id
WHERE c.organization_id <> tenant.system_organization_id()
  AND (%(cluster_id)s::uuid IS NULL OR r.cluster_id = %(cluster_id)s::uuid)
  AND (%(resource_type)s::text IS NULL OR r.resource_type = %(resource_type)s::text)
  AND (%(billable)s::boolean IS NULL OR r.billable = %(billable)s::boolean)
  AND (%(include_destroyed)s::boolean OR r.destroyed IS NULL)
  AND (r.cluster_id, r.resource_type, r.namespace, r.name, r.id)
      > (%(after_cluster_id)s::uuid, %(after_resource_type)s::text, %(after_namespace)s::text,
         %(after_name)s::text, %(after_id)s::uuid)
ORDER BY r.cluster_id, r.resource_type, r.namespace, r.name, r.id
LIMIT %(limit)s;

-- name: cluster_ledger_counts
-- Called by FleetApi.get_cluster: active ledger rows of one cluster per resource type.
SELECT r.resource_type,
       count(*)::integer AS active,
       (count(*) FILTER (WHERE r.billable))::integer AS active_billable
FROM tenant.infrastructure_resources AS r
WHERE r.cluster_id = %(cluster_id)s::uuid AND r.destroyed IS NULL
GROUP BY r.resource_type
ORDER BY r.resource_type;
