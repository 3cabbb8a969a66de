-- 0001: the tenant schema. (Filled in by the database issue.)
SET LOCAL lock_timeout = '10s';
CREATE SCHEMA IF NOT EXISTS tenant AUTHORIZATION fun_owner;
