"""Shared fixtures: real PostgreSQL + pgvector and NATS JetStream, started once per test session (or taken
from ENGRAM_TEST_DATABASE_URL / ENGRAM_TEST_NATS_URL), the real embedding model, and a fresh tenant per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.db.migrate import migrate
from engram.db.pool import create_pool
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider, LocalE5Provider
from tests.support.tenants import create_tenant


@pytest.fixture(scope="session")
def runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Under /tmp (never /root): embedded PostgreSQL opens up the permissions of its data dir's parents.
    return tmp_path_factory.mktemp("runtime")


@pytest.fixture(scope="session")
def database_url(runtime_dir: Path) -> Iterator[str]:
    external = os.environ.get("ENGRAM_TEST_DATABASE_URL")
    if external:
        yield external
        return
    from engram.runtime.postgres import EmbeddedPostgres

    server = EmbeddedPostgres(runtime_dir / "pgdata")
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def nats_url(runtime_dir: Path) -> Iterator[str]:
    external = os.environ.get("ENGRAM_TEST_NATS_URL")
    if external:
        yield external
        return
    from engram.runtime.nats import EmbeddedNats

    server = EmbeddedNats(runtime_dir / "nats")
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@pytest_asyncio.fixture(scope="session")
async def migrated(database_url: str) -> str:
    await migrate(database_url, Settings(database_url=database_url))
    return database_url


@pytest.fixture
def settings(migrated: str, nats_url: str) -> Settings:
    """Settings with this test's own stream and subject prefix, so tests never see each other's events."""
    tag = uuid.uuid4().hex[:10]
    return Settings(
        database_url=migrated,
        nats_url=nats_url,
        events_stream=f"TEST_{tag.upper()}",
        events_subject_prefix=f"test-{tag}",
    )


@pytest_asyncio.fixture(scope="session")
async def owner_pool(migrated: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(migrated, role=None, max_size=4)
    yield pool
    await pool.close()


@pytest_asyncio.fixture(scope="session")
async def app_pool(migrated: str) -> AsyncIterator[asyncpg.Pool]:
    """Connections acting as the services' role: Row Level Security applies."""
    pool = await create_pool(migrated, role=Settings().app_role, max_size=8)
    yield pool
    await pool.close()


@pytest.fixture(scope="session")
def embedder() -> EmbeddingProvider:
    settings = Settings()
    return LocalE5Provider(settings.embedding_profile, settings.embedding_dimensions)


@pytest_asyncio.fixture
async def tenant(owner_pool: asyncpg.Pool) -> CallerContext:
    return await create_tenant(owner_pool)
