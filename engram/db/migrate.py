"""Migration runner: numbered SQL files applied in order under an advisory lock, with checksums.

Applied migrations are recorded in ``schema_migrations``; running again applies only new files, and a file
whose content changed after it was applied stops the run. After the files, the runner grants the service
role its privileges and makes sure the configured embedding profile has its HNSW index.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from engram.config import Settings
from engram.errors import EngramError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x656E6772616D  # "engram"
_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


class MigrationError(EngramError):
    code = "migration_failed"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file name {path.name!r} does not match NNN_name.sql")
        found.append(Migration(int(match.group(1)), path.name, path.read_text()))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migrations share a number: {versions}")
    return found


def profile_index_name(profile: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", profile.lower()).strip("_")
    return f"memory_embeddings_hnsw_{slug}"[:63]


async def migrate(database_url: str, settings: Settings, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations; return the names applied now. Safe to run concurrently and repeatedly."""
    migrations = load_migrations(directory)
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
        try:
            applied = await _apply(conn, migrations)
            await _grant_app_role(conn, settings.app_role)
            await _ensure_profile_index(conn, settings.embedding_profile, settings.embedding_dimensions)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    finally:
        await conn.close()
    return applied


async def _apply(conn: asyncpg.Connection, migrations: list[Migration]) -> list[str]:
    await conn.execute(
        """CREATE TABLE IF NOT EXISTS schema_migrations (
               version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
               applied_at timestamptz NOT NULL DEFAULT now())"""
    )
    rows = await conn.fetch("SELECT version, name, checksum FROM schema_migrations")
    recorded = {r["version"]: r for r in rows}
    applied: list[str] = []
    for migration in migrations:
        row = recorded.get(migration.version)
        if row is not None:
            if row["checksum"] != migration.checksum:
                raise MigrationError(
                    f"migration {migration.name} was edited after it was applied "
                    f"(checksum {row['checksum'][:12]} recorded, {migration.checksum[:12]} on disk); "
                    "add a new migration instead"
                )
            continue
        async with conn.transaction():
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
        applied.append(migration.name)
    return applied


async def _grant_app_role(conn: asyncpg.Connection, role: str) -> None:
    """The services' role: no ownership, no BYPASSRLS, only data privileges."""
    exists = await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
    ident = _quote_ident(role)
    if not exists:
        await conn.execute(f"CREATE ROLE {ident} LOGIN NOBYPASSRLS")
    # it logs in (passwordless where the server trusts local connections; set a password for remote ones)
    await conn.execute(f"ALTER ROLE {ident} LOGIN NOBYPASSRLS NOSUPERUSER NOCREATEDB NOCREATEROLE")
    await conn.execute(f"GRANT USAGE ON SCHEMA public TO {ident}")
    await conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {ident}")
    await conn.execute(f"REVOKE ALL ON schema_migrations FROM {ident}")
    await conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {ident}")
    await conn.execute(f"GRANT {ident} TO CURRENT_USER")


async def _ensure_profile_index(conn: asyncpg.Connection, profile: str, dimensions: int) -> None:
    name = profile_index_name(profile)
    literal = profile.replace("'", "''")
    await conn.execute(
        f"CREATE INDEX IF NOT EXISTS {_quote_ident(name)} ON memory_embeddings "
        f"USING hnsw ((embedding::vector({int(dimensions)})) vector_cosine_ops) WHERE profile = '{literal}'"
    )


def _quote_ident(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", name):
        raise MigrationError(f"unsafe SQL identifier {name!r}")
    return f'"{name}"'
