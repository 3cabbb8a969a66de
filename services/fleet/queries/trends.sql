-- The SQL of GetFleetTrends, run by platform-admin-api as fun_platform_admin_api over the fleet
-- history the inventory loop records. Loaded by services/fleet/queries/trends.py.

-- name: fleet_trends
-- Called by FleetApi.get_fleet_trends: the last recording of each step of [start, end) of one
-- resolution and organization (the nil UUID: the fleet), oldest first. The range is read through the
-- primary key (resolution, organization_id, at).
SELECT DISTINCT ON (floor(extract(epoch FROM h.at - %(start)s::timestamptz) / %(step_seconds)s::integer))
       h.at,
       h.clusters,
       h.clusters_by_status,
       h.nodes,
       h.ready_nodes,
       h.pods,
       h.cpu_allocatable_millicores,
       h.memory_allocatable_bytes,
       h.open_findings_by_kind
FROM tenant.fleet_history AS h
WHERE h.resolution = %(resolution)s::text
  AND h.organization_id = %(organization_id)s::uuid
  AND h.at >= %(start)s::timestamptz AND h.at < %(end)s::timestamptz
ORDER BY floor(extract(epoch FROM h.at - %(start)s::timestamptz) / %(step_seconds)s::integer), h.at DESC;
