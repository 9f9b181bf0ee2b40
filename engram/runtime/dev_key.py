"""The development admin key `engram up` prints and keeps in $ENGRAM_HOME/dev-key."""

from __future__ import annotations

import os
from pathlib import Path

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import identity, keys
from engram.db.pool import create_pool
from engram.domain.keys import parse_key, secret_matches

DEV_KEY_FILE = "dev-key"


async def issue_admin_key(database_url: str, settings: Settings, label: str) -> str:
    """A new admin-scoped key for the development tenant's admin principal."""
    pool = await create_pool(database_url, role=settings.app_role, max_size=2)
    try:
        issued = await identity.create_key(pool, DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, ["admin"], label)
    finally:
        await pool.close()
    return issued.key


async def ensure_dev_key(database_url: str, settings: Settings, home: Path) -> str:
    """The key in ``home/dev-key`` while it still works; otherwise a new one, written there (mode 0600)."""
    path = home / DEV_KEY_FILE
    if path.exists():
        current = path.read_text().strip()
        parsed = parse_key(current)
        if parsed is not None:
            pool = await create_pool(database_url, role=settings.app_role, max_size=2)
            try:
                record = await keys.find(pool, parsed[0])
            finally:
                await pool.close()
            if record is not None and record.usable and secret_matches(record.salt, record.secret_hash, parsed[1]):
                return current
    key = await issue_admin_key(database_url, settings, "development key (engram up)")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file already existed with a wider mode
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key
