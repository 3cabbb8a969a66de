-- 0010: the sixth drift kind (unlabeled_shoot), the history of findings, and the audit of listing
-- an organization publicly.
--
-- unlabeled_shoot: a shoot in the garden project of a live organization that carries no
-- fundament.io/cluster-id label. Its subject is the shoot uid; it is not in the shoot mirror (which
-- holds the shoots that name a cluster), so its shoot_uid stays NULL and its details name the shoot;
-- the new organization_id column names the organization whose garden project holds it.
--
-- Finding history: ListDriftFindings and GetCluster can include resolved findings. The existing
-- indexes are partial (open findings only); two whole ones serve the same keyset over every row.
--
-- organization_listing_changes: every change of organizations.listed_publicly made by the operator
-- command `fleet org list|unlist`, with who, when and why. Append-only: no role may UPDATE or
-- DELETE it, and a trigger refuses both (and TRUNCATE) even to the owner and superusers.
SET LOCAL lock_timeout = '10s';

ALTER TABLE tenant.drift_findings
    DROP CONSTRAINT drift_findings_ck_kind,
    ADD CONSTRAINT drift_findings_ck_kind CHECK (kind IN (
        'orphan_shoot', 'shoot_of_deleted_cluster', 'missing_shoot', 'version_mismatch', 'organization_mismatch',
        'unlabeled_shoot'
    )),
    -- The organization a finding concerns when no cluster is (an unlabeled shoot: its project's owner).
    ADD COLUMN organization_id uuid,
    ADD CONSTRAINT drift_findings_fk_organization FOREIGN KEY (organization_id) REFERENCES tenant.organizations (id);
-- Reconcile moves it with the rest of a finding it sees again (0008 grants UPDATE column by column).
GRANT UPDATE (organization_id) ON tenant.drift_findings TO fun_cluster_worker;

-- ListDriftFindings{include_resolved}: every finding by (first_detected, id), optionally of one cluster.
CREATE INDEX drift_findings_idx_first_detected ON tenant.drift_findings (first_detected, id);
CREATE INDEX drift_findings_idx_cluster_first_detected ON tenant.drift_findings (cluster_id, first_detected, id);

CREATE TABLE tenant.organization_listing_changes (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL,
    -- The value listed_publicly was set to, and the one it had before.
    listed_publicly boolean NOT NULL,
    previously_listed boolean NOT NULL,
    -- Who made the change: the operator's OS user, or what `--by` named.
    changed_by text NOT NULL,
    reason text NOT NULL,
    changed timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT organization_listing_changes_pk PRIMARY KEY (id),
    CONSTRAINT organization_listing_changes_fk_organization FOREIGN KEY (organization_id)
        REFERENCES tenant.organizations (id),
    CONSTRAINT organization_listing_changes_ck_changed CHECK (listed_publicly <> previously_listed),
    CONSTRAINT organization_listing_changes_ck_changed_by CHECK (char_length(changed_by) BETWEEN 1 AND 255),
    CONSTRAINT organization_listing_changes_ck_reason CHECK (char_length(btrim(reason)) BETWEEN 1 AND 1000),
    CONSTRAINT organization_listing_changes_ck_not_system CHECK (
        organization_id <> '00000000-0000-0000-0000-000000000001'::uuid
    )
);
-- GetOrganization shows an organization's changes, newest first.
CREATE INDEX organization_listing_changes_idx_organization
    ON tenant.organization_listing_changes (organization_id, changed DESC, id);

CREATE FUNCTION tenant.refuse_listing_change_rewrite() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'tenant.organization_listing_changes is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
REVOKE ALL ON FUNCTION tenant.refuse_listing_change_rewrite() FROM PUBLIC;

CREATE TRIGGER organization_listing_changes_append_only
    BEFORE UPDATE OR DELETE ON tenant.organization_listing_changes
    FOR EACH ROW EXECUTE FUNCTION tenant.refuse_listing_change_rewrite();
CREATE TRIGGER organization_listing_changes_no_truncate
    BEFORE TRUNCATE ON tenant.organization_listing_changes
    FOR EACH STATEMENT EXECUTE FUNCTION tenant.refuse_listing_change_rewrite();

ALTER TABLE tenant.organization_listing_changes ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON tenant.organization_listing_changes TO fun_platform_admin_api;
CREATE POLICY organization_listing_changes_admin_api_read ON tenant.organization_listing_changes
    FOR SELECT TO fun_platform_admin_api USING (true);
