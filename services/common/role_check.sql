-- What an API's readiness asks PostgreSQL about its own role (services/common/role_check.py). Both
-- queries read the catalog only (pg_class, pg_proc, pg_namespace, pg_depend and the has_*_privilege
-- functions), which every role may, so they answer for a role that may read no table at all. Neither
-- runs the API's own reads: asking whether the role may is one cheap catalog query.

-- name: current_role
-- Called by role_findings: the role the pool's sessions act as, named in the reason.
SELECT current_user::text

-- name: role_findings
-- Called by role_findings, as the API's own role: one row per thing wrong with that role.
--   cannot_read     a relation the API reads that the role may not SELECT (or that does not exist)
--   cannot_execute  a function the API calls that the role may not EXECUTE (or that does not exist)
--   may_use         (only when nothing else is allowed) a relation outside PostgreSQL's own schemas,
--                   not one the API reads, on which the role holds any privilege, on it or a column
--   may_execute     (only when nothing else is allowed) a function outside PostgreSQL's own schemas
--                   and not an extension's, not one the API calls, that the role may EXECUTE and
--                   PUBLIC may not
-- Names are schema-qualified; functions are matched by name, any argument list (shown with it).
-- A needed object counts only with USAGE on its schema too (without it nothing in it can be named);
-- a granted one counts whatever the schema says, as tests/db/test_privileges.py counts it.
WITH user_relations AS (
    SELECT c.oid,
           n.oid AS schema_oid,
           n.nspname || '.' || c.relname AS name
    FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND n.nspname NOT LIKE 'pg\_%%'
),
user_functions AS (
    SELECT p.oid,
           n.oid AS schema_oid,
           n.nspname || '.' || p.proname AS name,
           p.oid::pg_catalog.regprocedure::text AS signature
    FROM pg_catalog.pg_proc AS p
    JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND n.nspname NOT LIKE 'pg\_%%'
      AND NOT EXISTS (
          SELECT 1 FROM pg_catalog.pg_depend AS d
          WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.deptype = 'e'
      )
)
SELECT 'cannot_read' AS finding, needed.name AS object
FROM pg_catalog.unnest(%(reads)s::text[]) AS needed(name)
WHERE NOT EXISTS (
    SELECT 1 FROM user_relations AS r
    WHERE r.name = needed.name
      AND pg_catalog.has_schema_privilege(r.schema_oid, 'USAGE')
      AND pg_catalog.has_table_privilege(r.oid, 'SELECT')
)
UNION ALL
SELECT 'cannot_execute',
       coalesce((SELECT pg_catalog.string_agg(f.signature, ', ' ORDER BY f.signature)
                 FROM user_functions AS f WHERE f.name = needed.name), needed.name || '()')
FROM pg_catalog.unnest(%(executes)s::text[]) AS needed(name)
WHERE NOT EXISTS (
    SELECT 1 FROM user_functions AS f
    WHERE f.name = needed.name
      AND pg_catalog.has_schema_privilege(f.schema_oid, 'USAGE')
      AND pg_catalog.has_function_privilege(f.oid, 'EXECUTE')
)
UNION ALL
SELECT 'may_use', r.name
FROM user_relations AS r
WHERE %(nothing_else)s::boolean
  AND r.name <> ALL (%(reads)s::text[])
  AND (pg_catalog.has_table_privilege(r.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
       OR pg_catalog.has_any_column_privilege(r.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))
UNION ALL
SELECT 'may_execute', f.signature
FROM user_functions AS f
WHERE %(nothing_else)s::boolean
  AND f.name <> ALL (%(executes)s::text[])
  AND pg_catalog.has_function_privilege(f.oid, 'EXECUTE')
  -- What PUBLIC may execute every role may: it tells nothing about this role's configuration (the
  -- platform's own database leaves its functions open to PUBLIC, PostgreSQL's default).
  AND NOT pg_catalog.has_function_privilege('public', f.oid, 'EXECUTE')
ORDER BY 1, 2
