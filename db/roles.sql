-- The cluster-wide roles of fleet inventory (docs/database.md, 'Roles and the public boundary').
-- Idempotent: run it any number of times.
-- Privileges are granted by the migrations, per table; here the roles only come to exist.
-- Passwords are not set here: production sets them (or certificate auth) out of band.
-- Each service role gets a budget (docs/operations.md, 'The database's budget per role'): a connection
-- limit that fits its pools, so that one role (the anonymous API's above all) can never take the
-- connections the others need, and a temp_file_limit, so that a sort or hash that spills cannot fill
-- the disk. Set on every run, so a changed budget applies; superusers are bound by neither.
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
    FOR r IN
        SELECT * FROM (VALUES
            -- 2 replicas x DATABASE_POOL_MAX 2, twice over during a rolling update, and room for a psql
            ('fun_platform_public_api', 12, '32MB'),
            -- 2 replicas x DATABASE_POOL_MAX 4, twice over during a rolling update, and room for a psql
            ('fun_platform_admin_api', 24, '256MB'),
            -- inventory shards and reconcile, INVENTORY_WORKERS + 2 each (64 workers in the benchmarks)
            ('fun_cluster_worker', 100, '256MB')
        ) AS t(name, connections, temp_files)
    LOOP
        EXECUTE format('ALTER ROLE %I CONNECTION LIMIT %s', r.name, r.connections);
        EXECUTE format('ALTER ROLE %I SET temp_file_limit = %L', r.name, r.temp_files);
    END LOOP;
END
$roles$;
