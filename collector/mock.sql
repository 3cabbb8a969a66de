-- The SQL of GARDENER_MODE=mock, run by collector/mock.py as role fun_cluster_worker: the database
-- describes the garden and every shoot, so the worker runs with no Kubernetes at all.

-- name: mock_shoots
-- Called by MockGardener.list_shoots: every live cluster of a live tenant organization, described as
-- its shoot would be.
SELECT c.id AS cluster_id, o.id AS organization_id, o.name AS organization_name, c.name, c.region,
    c.kubernetes_version, c.created,
    -- Its live node pools, as the provisioning side turns them into spec.provider.workers.
    coalesce(
        (SELECT jsonb_agg(
                    jsonb_build_array(p.name, p.machine_type, p.autoscale_min, p.autoscale_max) ORDER BY p.name
                )
         FROM tenant.node_pools AS p
         WHERE p.cluster_id = c.id AND p.deleted IS NULL),
        '[]'::jsonb
    ) AS pools
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()
ORDER BY c.id

-- name: mock_node_pools
-- Called by MockReader.read: every live node pool runs its autoscaler minimum.
SELECT name, autoscale_min
FROM tenant.node_pools
WHERE cluster_id = %(cluster_id)s AND deleted IS NULL
ORDER BY name

-- name: live_namespaces
-- Called by MockReader.read: the live namespaces of live projects of the cluster.
SELECT n.id, n.name
FROM tenant.namespaces AS n
JOIN tenant.projects AS p ON p.id = n.project_id
WHERE p.cluster_id = %(cluster_id)s AND p.deleted IS NULL AND n.deleted IS NULL
ORDER BY n.id
