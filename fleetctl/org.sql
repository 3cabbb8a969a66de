-- The SQL of `fleet org list|unlist` (fleetctl/org.py), run as a superuser in ONE transaction: the
-- organization row is locked and its listed_publicly set; the trigger on organizations records the
-- change in the append-only tenant.organization_listing_changes (as it records every writer's), with
-- the author and reason this transaction names, so the flag and its history can never disagree.

-- name: lock_live_organization
-- Called first: the live organization of that name (names are unique among live rows), locked until
-- the transaction ends so two operators cannot interleave.
SELECT o.id, o.listed_publicly, o.id = tenant.system_organization_id() AS is_system
FROM tenant.organizations AS o
WHERE o.name = %(name)s AND o.deleted IS NULL
FOR UPDATE

-- name: name_the_change
-- Called before set_listed_publicly: the author and reason the audit trigger records, for this
-- transaction only.
SELECT set_config('fleet.listing_changed_by', %(changed_by)s, true),
       set_config('fleet.listing_reason', %(reason)s, true)

-- name: set_listed_publicly
-- Called when the value changes: the flag the public overview reads.
UPDATE tenant.organizations SET listed_publicly = %(listed)s WHERE id = %(organization_id)s

-- name: recorded_change
-- Called after set_listed_publicly: the record the trigger wrote in this transaction.
SELECT c.id, c.changed
FROM tenant.organization_listing_changes AS c
WHERE c.organization_id = %(organization_id)s AND c.changed = now()
ORDER BY c.id
LIMIT 1
