-- Database-level privileges of fleet inventory, applied by db/migrate.py on every migrate (idempotent).
-- They live in the database's own ACL, which is not part of its contents: a database created from a
-- template or restored from a dump starts with PostgreSQL's defaults again, so they are re-applied
-- each time rather than once by a numbered migration.
-- TEMP: PUBLIC may create temporary tables by default (writing into the database and its disk). Only
-- the worker needs them (reconcile stages a listing in two temporary tables); the APIs do not.
DO $grants$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', pg_catalog.current_database());
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO fun_cluster_worker', pg_catalog.current_database());
END
$grants$;
