-- The cluster-wide roles of fleet inventory (docs/database.md, 'Roles and the public boundary').
-- Idempotent: run it any number of times.
-- Privileges are granted by the migrations, per table; here the roles only come to exist.
-- Passwords are not set here: production sets them (or certificate auth) out of band.
-- Two runs at once (two migrators, two test sessions on one server) take turns on a transaction-level
-- advisory lock; each query in the block takes a fresh snapshot, so the second sees the first's roles.
DO $roles$
DECLARE
    r record;
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('fleet inventory roles'));
    FOR r IN
        SELECT * FROM (VALUES
            ('fun_owner', false),                -- owns every object; nobody logs in as it
            ('fun_platform_public_api', true),   -- may only EXECUTE tenant.platform_overview()
            ('fun_platform_admin_api', true),    -- reads everything, writes nothing
            ('fun_cluster_worker', true),        -- writes snapshots, heartbeats, shoots, findings, ledger
            ('fun_fundament_api', true)          -- a tenant-scoped role; proves the boundary holds
        ) AS t(name, login)
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r.name) THEN
            IF r.login THEN
                EXECUTE format('CREATE ROLE %I LOGIN NOINHERIT', r.name);
            ELSE
                EXECUTE format('CREATE ROLE %I NOLOGIN', r.name);
            END IF;
        END IF;
    END LOOP;
END
$roles$;
