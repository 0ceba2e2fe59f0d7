-- Least-privilege PostgreSQL roles for a gpucat DuckLake catalog, run once by an administrator:
--   psql -d <lake database> -v db=<lake database> -v writer=gpucat_writer -v writer_password=... \
--        -v reader=gpucat_reader -v reader_password=... -f warehouse/postgres/lake_roles.sql
-- The writer (refresh) owns DuckLake's tables in the public schema and nothing else; the reader
-- (every other command, and `gpucat sql`) may only SELECT them. Neither is a superuser, so
-- neither can read server files (pg_read_file), roles (pg_authid) or end other sessions.
CREATE ROLE :"writer" LOGIN PASSWORD :'writer_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
CREATE ROLE :"reader" LOGIN PASSWORD :'reader_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO :"writer", :"reader";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO :"writer";
GRANT USAGE ON SCHEMA public TO :"reader";
ALTER DEFAULT PRIVILEGES FOR ROLE :"writer" IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";
