-- The SQL of `fleet org list|unlist` (fleetctl/org.py), run as a superuser in ONE transaction: the
-- organization row is locked, its listed_publicly set, and the change recorded in the append-only
-- tenant.organization_listing_changes, so the flag and its history can never disagree.

-- name: lock_live_organization
-- Called first: the live organization of that name (names are unique among live rows), locked until
-- the transaction ends so two operators cannot interleave.
SELECT o.id, o.listed_publicly, o.id = tenant.system_organization_id() AS is_system
FROM tenant.organizations AS o
WHERE o.name = %(name)s AND o.deleted IS NULL
FOR UPDATE

-- name: set_listed_publicly
-- Called when the value changes: the flag the public overview reads.
UPDATE tenant.organizations SET listed_publicly = %(listed)s WHERE id = %(organization_id)s

-- name: record_listing_change
-- Called with set_listed_publicly: who, when and why (the table refuses UPDATE and DELETE).
INSERT INTO tenant.organization_listing_changes (organization_id, listed_publicly, previously_listed, changed_by, reason)
VALUES (%(organization_id)s, %(listed)s, NOT %(listed)s, %(changed_by)s, %(reason)s)
RETURNING id, changed
