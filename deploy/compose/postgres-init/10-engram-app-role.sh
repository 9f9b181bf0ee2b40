#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume (docker-entrypoint-initdb.d).
# Creates the role the Engram services log in as, with the password from .env (ENGRAM_APP_DB_PASSWORD).
# `engram migrate` (the owner) then grants it its data privileges; it owns nothing and cannot bypass Row
# Level Security. Changing ENGRAM_APP_DB_PASSWORD later needs an ALTER ROLE by hand: this script only runs
# on an empty volume.
set -eu
psql --set ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    --set app_password="$ENGRAM_APP_DB_PASSWORD" <<'SQL'
CREATE ROLE engram_app LOGIN NOBYPASSRLS NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
SQL
