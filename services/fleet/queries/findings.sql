-- The SQL of the staff API's drift findings: pages of them, and one cluster's open and resolved ones.
-- Loaded by services/fleet/queries/findings.py; the conventions are in base.sql.

-- name: list_drift_findings
-- Called by FleetApi.list_drift_findings: one page of findings by (first_detected, id), open ones only
-- unless include_resolved, with the names of what they concern. Findings about the system
-- organization's clusters are left out. FleetApi.get_cluster reads all open findings about one
-- cluster with it too: cluster_id set, the first-page key and no LIMIT (NULL). Reconcile sets
-- cluster_id on every finding whose cluster it can name, shoot findings included; an unlabeled
-- shoot has no cluster, only the organization whose garden project holds it (f.organization_id),
-- and is not in the shoot mirror, so its uid, name and namespace come from the finding itself.
SELECT f.id,
       f.kind,
       f.subject,
       f.cluster_id,
       c.name AS cluster_name,
       o.id AS organization_id,
       o.name AS organization_name,
       coalesce(f.shoot_uid, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.subject::uuid END) AS shoot_uid,
       coalesce(sh.name, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,name}' END)
           AS shoot_name,
       coalesce(sh.namespace, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,namespace}' END)
           AS shoot_namespace,
       f.details,
       f.first_detected,
       f.last_detected,
       f.resolved
FROM tenant.drift_findings AS f
LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
LEFT JOIN tenant.organizations AS o ON o.id = coalesce(c.organization_id, f.organization_id)
LEFT JOIN tenant.gardener_shoots AS sh ON sh.uid = f.shoot_uid
WHERE (%(include_resolved)s::boolean OR f.resolved IS NULL)
  AND o.id IS DISTINCT FROM tenant.system_organization_id()
  AND (%(kind)s::text IS NULL OR f.kind = %(kind)s::text)
  AND (%(cluster_id)s::uuid IS NULL OR f.cluster_id = %(cluster_id)s::uuid)
  AND (%(organization_id)s::uuid IS NULL OR o.id = %(organization_id)s::uuid)
  AND (f.first_detected, f.id) > (%(after_first_detected)s::timestamptz, %(after_id)s::uuid)
ORDER BY f.first_detected, f.id
LIMIT %(limit)s;

-- name: cluster_resolved_findings
-- Called by FleetApi.get_cluster with include_resolved: one cluster's resolved findings, newest
-- resolved first, at most %(limit)s (the service asks one more than it returns, to say whether the
-- history was cut). Same columns as list_drift_findings.
SELECT f.id,
       f.kind,
       f.subject,
       f.cluster_id,
       c.name AS cluster_name,
       c.organization_id,
       o.name AS organization_name,
       f.shoot_uid,
       sh.name AS shoot_name,
       sh.namespace AS shoot_namespace,
       f.details,
       f.first_detected,
       f.last_detected,
       f.resolved
FROM tenant.drift_findings AS f
JOIN tenant.clusters AS c ON c.id = f.cluster_id
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.gardener_shoots AS sh ON sh.uid = f.shoot_uid
WHERE f.cluster_id = %(cluster_id)s::uuid
  AND f.resolved IS NOT NULL
  AND c.organization_id <> tenant.system_organization_id()
ORDER BY f.resolved DESC, f.id DESC
LIMIT %(limit)s;

-- name: list_finding_history
-- Called by FleetApi.list_finding_history: one page of the finding history grouped by finding (kind
-- and subject), as of %(as_of)s (the walk's first page: occurrences opened later are left out, so the
-- sort key of every entry stays put while a person pages), most recently opened first by
-- (opened_last, kind, subject) descending. The filters select occurrences, so an entry counts the
-- occurrences that match them; the latest occurrence comes with the names list_drift_findings gives.
-- open_seconds counts an open occurrence up to %(now)s.
WITH occurrences AS (
    SELECT f.id, f.kind, f.subject, f.first_detected, f.last_detected, f.resolved
    FROM tenant.drift_findings AS f
    LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
    LEFT JOIN tenant.organizations AS o ON o.id = coalesce(c.organization_id, f.organization_id)
    WHERE f.first_detected <= %(as_of)s::timestamptz
      AND o.id IS DISTINCT FROM tenant.system_organization_id()
      AND (%(kind)s::text IS NULL OR f.kind = %(kind)s::text)
      AND (%(cluster_id)s::uuid IS NULL OR f.cluster_id = %(cluster_id)s::uuid)
      AND (%(organization_id)s::uuid IS NULL OR o.id = %(organization_id)s::uuid)
),
grouped AS (
    SELECT kind,
           subject,
           max(first_detected) AS opened_last,
           min(first_detected) AS group_first_detected,
           max(last_detected) AS group_last_detected,
           count(*)::integer AS opened,
           count(resolved)::integer AS resolutions,
           sum(extract(epoch FROM greatest(coalesce(resolved, %(now)s::timestamptz) - first_detected,
                                            interval '0')))::bigint AS open_seconds,
           bool_or(resolved IS NULL) AS is_open,
           (array_agg(id ORDER BY first_detected DESC, id DESC))[1] AS latest_id
    FROM occurrences
    GROUP BY kind, subject
)
SELECT %(as_of)s::timestamptz AS as_of,
       g.opened_last,
       g.group_first_detected,
       g.group_last_detected,
       g.opened,
       g.resolutions,
       g.open_seconds,
       g.is_open,
       f.id,
       f.kind,
       f.subject,
       f.cluster_id,
       c.name AS cluster_name,
       o.id AS organization_id,
       o.name AS organization_name,
       coalesce(f.shoot_uid, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.subject::uuid END) AS shoot_uid,
       coalesce(sh.name, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,name}' END)
           AS shoot_name,
       coalesce(sh.namespace, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.details #>> '{shoot,namespace}' END)
           AS shoot_namespace,
       f.details,
       f.first_detected,
       f.last_detected,
       f.resolved
FROM grouped AS g
JOIN tenant.drift_findings AS f ON f.id = g.latest_id
LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id
LEFT JOIN tenant.organizations AS o ON o.id = coalesce(c.organization_id, f.organization_id)
LEFT JOIN tenant.gardener_shoots AS sh ON sh.uid = f.shoot_uid
WHERE (NOT %(open_only)s::boolean OR g.is_open)
  AND (g.opened_last, g.kind, g.subject)
      < (%(after_opened)s::timestamptz, %(after_kind)s::text, %(after_subject)s::text)
ORDER BY g.opened_last DESC, g.kind DESC, g.subject DESC
LIMIT %(limit)s;
