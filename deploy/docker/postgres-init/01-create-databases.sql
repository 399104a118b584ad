-- Runs once, when the postgres container initialises an empty data volume.
-- One database per owning service; each service migrates its own (see docker-compose.yml).
CREATE DATABASE svc_account_admin;
CREATE DATABASE svc_billing;
