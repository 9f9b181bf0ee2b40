"""The chart's manifests run: each rendered Deployment's command, args and environment start as a local process
(tests/support/manifests.py) against the test PostgreSQL and NATS, and the readiness probe the manifest declares
answers. A chart whose command, port, address or probe path does not match the program fails here.

What is swapped, and only that: the database and NATS URLs (for the test servers) and every container port (for
a free local port, consistently in the env, in the probes, and in the Service addresses other pods use).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from engram.db.pool import with_user
from engram.runtime.ports import free_port
from tests.support.helm_chart import (
    Manifest,
    container,
    container_port,
    deployments,
    merged,
    of_kind,
    render,
    resolved_env,
    service_target,
)
from tests.support.manifests import declared_process, local_argv, wait_grpc_serving, wait_http

pytestmark = pytest.mark.timeout(300)

PLACEHOLDERS = {
    "nats": {"enabled": False},
    "externalNats": {"url": "nats://nats.placeholder:4222"},
    "secrets": {
        "databaseUrl": "postgresql://owner:placeholder@db.placeholder:5432/engram",
        "appDatabaseUrl": "postgresql://engram_app:placeholder@db.placeholder:5432/engram",
    },
}
START_ORDER = ("ingest", "recall", "gateway", "embedder", "classifier", "conflicts", "promotion")
HOST_PORT = re.compile(r"^(?P<host>[^:/]+):(?P<port>\d+)$")


class LocalPorts:
    """Container ports of every Deployment, each mapped to a free local port."""

    def __init__(self, workloads: dict[str, Manifest]) -> None:
        self.ports = {
            (name, int(p["containerPort"])): free_port()
            for name, workload in workloads.items()
            for p in container(workload).get("ports", [])
        }

    def of(self, name: str, port: int) -> int:
        return self.ports[(name, port)]


def local_env(
    objects: list[Manifest], name: str, workload: Manifest, ports: LocalPorts, database: str, nats: str
) -> dict[str, str]:
    """The manifest's environment with the test servers and the local ports in."""
    env = resolved_env(objects, workload)
    for variable in ("ENGRAM_NATS_URL",):
        assert variable in env, f"{name}: the manifest sets no {variable}"
        env[variable] = nats
    assert "ENGRAM_APP_DATABASE_URL" in env or "ENGRAM_DATABASE_URL" in env, f"{name}: no database URL"
    if "ENGRAM_DATABASE_URL" in env:
        env["ENGRAM_DATABASE_URL"] = database
    if "ENGRAM_APP_DATABASE_URL" in env:
        env["ENGRAM_APP_DATABASE_URL"] = with_user(database, env["ENGRAM_APP_ROLE"])
    own = {port for (owner, port) in ports.ports if owner == name}
    for variable, value in env.items():
        if value.isdigit() and int(value) in own:
            env[variable] = str(ports.of(name, int(value)))
            continue
        address = HOST_PORT.match(value)
        if address is None:
            continue
        host, port = address["host"], int(address["port"])
        if host == "0.0.0.0" and port in own:
            env[variable] = f"0.0.0.0:{ports.of(name, port)}"
        elif not host.replace(".", "").isdigit():  # a Service name: where that Service sends the traffic
            target, target_port = service_target(objects, host, port)
            env[variable] = f"127.0.0.1:{ports.of(target, target_port)}"
    return env


def probe(
    process: subprocess.Popen[bytes], log: Path, name: str, workload: Manifest, ports: LocalPorts, kind: str
) -> Any:
    """Run the probe of ``kind`` (readinessProbe, livenessProbe) the manifest declares, until it succeeds."""
    declared = container(workload)[kind]
    if "httpGet" in declared:
        port = ports.of(name, container_port(workload, declared["httpGet"]["port"]))
        return wait_http(process, log, f"http://127.0.0.1:{port}{declared['httpGet']['path']}")
    assert "grpc" in declared, f"{name}: {kind} is neither httpGet nor grpc"
    port = ports.of(name, int(declared["grpc"]["port"]))
    wait_grpc_serving(process, log, f"127.0.0.1:{port}", declared["grpc"].get("service", ""))
    return None


def test_each_deployment_starts_as_declared_and_passes_its_readiness_probe(
    migrated: str, nats_url: str, tmp_path: Path
) -> None:
    objects = render(PLACEHOLDERS)
    workloads = deployments(objects)
    assert sorted(workloads) == sorted(START_ORDER)
    ports = LocalPorts(workloads)
    with contextlib.ExitStack() as running:
        for name in START_ORDER:  # ingest and recall first: the gateway is ready only once it reaches both
            workload = workloads[name]
            spec = container(workload)
            env = local_env(objects, name, workload, ports, migrated, nats_url)
            log = tmp_path / f"{name}.log"
            process = running.enter_context(declared_process([*spec["command"], *spec["args"]], env, log))
            ready = probe(process, log, name, workload, ports, "readinessProbe")
            if ready is not None:
                assert ready.json()["status"] == "ready", name
            probe(process, log, name, workload, ports, "livenessProbe")


def test_the_migration_job_migrates_a_fresh_database(migrated: str, tmp_path: Path) -> None:
    objects = render(PLACEHOLDERS)
    job = of_kind(objects, "Job")[0]
    spec = container(job)
    name = f"helm_{uuid.uuid4().hex[:10]}"
    fresh = urlsplit(migrated)._replace(path=f"/{name}").geturl()

    async def create() -> None:
        conn = await asyncpg.connect(migrated)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    asyncio.run(create())
    env = merged(resolved_env(objects, job), {"ENGRAM_DATABASE_URL": fresh})
    assert set(env) >= {"ENGRAM_DATABASE_URL", "ENGRAM_APP_ROLE", "ENGRAM_EMBEDDING_DIMENSIONS"}
    finished = subprocess.run(
        local_argv([*spec["command"], *spec["args"]]),
        env={**{k: str(v) for k, v in env.items()}, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "001_schema.sql" in finished.stdout

    async def applied() -> int:
        conn = await asyncpg.connect(fresh)
        try:
            return int(await conn.fetchval("SELECT count(*) FROM schema_migrations"))
        finally:
            await conn.close()

    assert asyncio.run(applied()) >= 12
