"""The compose manifests run: each Engram service's declared command and environment, started as a local process
against the test servers, answers the healthcheck its compose service declares, and serves the metrics
Prometheus is told to scrape.

What a container engine would provide is rebuilt here: the image's ``ENV`` under the service's
``environment``, ``engram`` (the image's ENTRYPOINT) before the ``command``, and the compose hosts
``postgres``/``nats``/``ingest``/``recall`` replaced by the test servers and the locally started peers. Ports a
container would have to itself are mapped to free host ports (container port → host port, as ``ports:``
would), and the healthcheck's command runs with the same mapping, its URL path untouched. A database of its own,
migrated by the ``migrate`` service's command, and a stream of its own keep these processes apart from other
tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
import yaml

from engram.config import Settings
from engram.db.migrate import load_migrations
from engram.db.pool import with_user
from engram.runtime.ports import free_ports
from tests.support.compose import ROOT, final_stage, image_environment, load_compose
from tests.support.manifests import declared_process, local_argv, wait_http
from tests.support.waiting import eventually_blocking

pytestmark = pytest.mark.timeout(300)

COMPOSE = load_compose()
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
ENTRYPOINT: list[str] = yaml.safe_load([i.arguments for i in final_stage() if i.keyword == "ENTRYPOINT"][-1])
PEERS = ("ingest", "recall")  # what the gateway calls, started first (it waits for them to be healthy)
LATER = ("embedder", "classifier", "conflicts", "promotion", "gateway")
GRPC_ADDRS = ("ENGRAM_INGEST_ADDR", "ENGRAM_RECALL_ADDR")
# The settings each role binds a port from (the program's side of the contract: see each services/*/__main__.py).
BINDS = {
    "gateway": ("ENGRAM_GATEWAY_PORT",),
    "ingest": ("ENGRAM_METRICS_PORT", "ENGRAM_INGEST_ADDR"),
    "recall": ("ENGRAM_METRICS_PORT", "ENGRAM_RECALL_ADDR"),
}
PROBE_URL = re.compile(r"http://127\.0\.0\.1:(\d+)(/[^'\"\s]*)")


@dataclass
class Local:
    """One compose service as a local process: its argv, environment and container → host port map."""

    name: str
    argv: list[str]
    env: dict[str, str]
    ports: dict[int, int] = field(default_factory=dict)

    def host_port(self, container_port: int) -> int:
        assert container_port in self.ports, (
            f"{self.name} is probed or scraped on port {container_port}, but it listens on "
            f"{sorted(self.ports) or 'no port'} (its environment decides)"
        )
        return self.ports[container_port]


def _database(url: str, owner_url: str, database: str) -> str:
    """A compose database URL pointed at the test server and ``database``, logging in as the same role."""
    compose = urlsplit(url)
    assert (compose.hostname, compose.port) == ("postgres", 5432), f"{url} does not name the postgres service"
    owner = SERVICES["postgres"]["environment"]["POSTGRES_USER"]
    assert compose.path == "/" + SERVICES["postgres"]["environment"]["POSTGRES_DB"]
    test = urlsplit(owner_url)._replace(path=f"/{database}")
    if compose.username == owner:
        return urlunsplit(test)
    assert compose.username == Settings().app_role, f"{url} logs in as {compose.username}, not the app role"
    return with_user(urlunsplit(test), Settings().app_role)


def localise(name: str, owner_url: str, database: str, nats_url: str, stream: str, peers: dict[str, Local]) -> Local:
    service = SERVICES[name]
    image_env = {k: v for k, v in image_environment().items() if k.startswith("ENGRAM_")}
    env = {**image_env, **{k: str(v) for k, v in service.get("environment", {}).items()}}
    local = Local(name, [*ENTRYPOINT, *service["command"]], env)
    command = service["command"]
    binds = BINDS.get(command[1], ("ENGRAM_METRICS_PORT",)) if command[0] == "serve" else ()
    wanted = {int(env[k].rsplit(":", 1)[-1]) for k in binds}
    local.ports = dict(zip(sorted(wanted), free_ports(len(wanted)), strict=True))
    for key in ("ENGRAM_DATABASE_URL", "ENGRAM_APP_DATABASE_URL"):
        if key in env:
            env[key] = _database(env[key], owner_url, database)
    if "ENGRAM_NATS_URL" in env:
        assert env["ENGRAM_NATS_URL"] == "nats://nats:4222", "the NATS URL does not name the nats service"
        env["ENGRAM_NATS_URL"] = nats_url
    for key in binds:
        host, _, port = env[key].rpartition(":")
        bind_host = host or env["ENGRAM_GATEWAY_HOST" if key == "ENGRAM_GATEWAY_PORT" else "ENGRAM_METRICS_HOST"]
        assert bind_host == "0.0.0.0", f"{name} binds {key} on {bind_host}: unreachable from other containers"
        env[key] = f"{host}:{local.ports[int(port)]}" if host else str(local.ports[int(port)])
    for key in GRPC_ADDRS:
        if key in env and key not in binds:
            host, port = env[key].rsplit(":", 1)
            if host != "0.0.0.0":  # a compose service name: the peer started here
                assert host in peers, f"{name}'s {key} names {host}, which is not a started service"
                env[key] = f"127.0.0.1:{peers[host].host_port(int(port))}"
    env["ENGRAM_EVENTS_STREAM"] = stream  # the test NATS is shared with other tests
    env["ENGRAM_EVENTS_SUBJECT_PREFIX"] = stream.lower()
    return local


def healthcheck(local: Local, test: list[str] | None = None) -> tuple[list[str], str]:
    """The service's declared healthcheck command (or ``test``) with the probed port mapped, and its URL."""
    test = SERVICES[local.name]["healthcheck"]["test"] if test is None else test
    assert test[0] == "CMD", f"{local.name}: a CMD healthcheck runs without a shell"
    argv = list(test[1:])
    probes = [PROBE_URL.search(arg) for arg in argv]
    found = [p for p in probes if p]
    assert len(found) == 1, f"{local.name}'s healthcheck requests no local URL"
    port = local.host_port(int(found[0].group(1)))
    argv = [PROBE_URL.sub(lambda m: f"http://127.0.0.1:{port}{m.group(2)}", arg) for arg in argv]
    return argv, f"http://127.0.0.1:{port}{found[0].group(2)}"


async def _create_database(owner_url: str, database: str, drop: bool = False) -> None:
    conn = await asyncpg.connect(owner_url)
    try:
        if drop:
            await conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        else:
            await conn.execute(f'CREATE DATABASE "{database}"')
    finally:
        await conn.close()


def run_migrate(
    owner_url: str, database: str, tmp: Path, command: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The migrate service's command (or ``command`` in its place, as `docker compose run migrate <command>`)."""
    local = localise("migrate", owner_url, database, "", "UNUSED", {})
    argv = local.argv if command is None else [*ENTRYPOINT, *command]
    base = {"PATH": str(Path(local_argv(["engram"])[0]).parent), "HOME": str(tmp)}
    return subprocess.run(
        local_argv(argv), env={**base, **local.env}, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def database(migrated: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh database on the test server (created with the owner URL), dropped afterwards."""
    name = f"compose_{uuid.uuid4().hex[:10]}"
    asyncio.run(_create_database(migrated, name))
    try:
        yield name
    finally:
        asyncio.run(_create_database(migrated, name, drop=True))


@pytest.fixture(scope="module")
def migrated_by_compose(migrated: str, database: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The fresh database after the `migrate` service's command ran once (its outcome is kept for the test)."""
    done = run_migrate(migrated, database, tmp_path_factory.mktemp("migrate"))
    assert done.returncode == 0, f"migrate exited {done.returncode}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def stack(
    migrated: str, database: str, migrated_by_compose: str, nats_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Local]]:
    """Every Engram compose service running locally: ingest and recall first and healthy, then the rest."""
    logs = tmp_path_factory.mktemp("compose-logs")
    stream = f"COMPOSE_{uuid.uuid4().hex[:8].upper()}"
    started: dict[str, Local] = {}
    with contextlib.ExitStack() as stack:
        for group in (PEERS, LATER):
            waiting = []
            for name in group:
                local = localise(name, migrated, database, nats_url, stream, started)
                log = logs / f"{name}.log"
                process = stack.enter_context(declared_process(local.argv, local.env, log))
                waiting.append((local, process, log))
            for local, process, log in waiting:  # as depends_on: service_healthy — the declared probe answers
                wait_http(process, log, healthcheck(local)[1])
                started[local.name] = local
        yield started


def test_the_migrate_service_migrates_a_fresh_database_and_is_idempotent(
    migrated: str, database: str, migrated_by_compose: str, tmp_path: Path
) -> None:
    applied = migrated_by_compose.strip().removeprefix("applied: ").split(", ")
    assert applied == [m.name for m in load_migrations()]
    again = run_migrate(migrated, database, tmp_path)
    assert again.returncode == 0 and "nothing" in again.stdout, again.stdout + again.stderr


@pytest.mark.parametrize("name", [*PEERS, *LATER])
def test_each_service_answers_its_declared_healthcheck(name: str, stack: dict[str, Local]) -> None:
    argv, url = healthcheck(stack[name])
    assert httpx.get(url, timeout=5).status_code == 200
    done = subprocess.run(local_argv(argv), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, f"{name}'s healthcheck failed: {done.stderr[-2000:]}"


def test_prometheus_targets_serve_metrics(stack: dict[str, Local]) -> None:
    config = yaml.safe_load((ROOT / "deploy/compose/prometheus.yml").read_text())
    scraped = set()
    for job in config["scrape_configs"]:
        for static in job.get("static_configs", []):
            for target in static["targets"]:
                host, port = target.rsplit(":", 1)
                if host not in stack:
                    continue  # prometheus itself and the collector
                url = f"http://127.0.0.1:{stack[host].host_port(int(port))}{job.get('metrics_path', '/metrics')}"
                response = httpx.get(url, timeout=5)
                assert response.status_code == 200, f"{job['job_name']}: {url} answered {response.status_code}"
                assert "# TYPE" in response.text, f"{job['job_name']}: {url} is not a Prometheus exposition"
                scraped.add(host)
    assert scraped == set(stack)


def test_the_first_key_from_compose_run_remembers_and_the_pipeline_embeds(
    migrated: str, database: str, stack: dict[str, Local], tmp_path: Path
) -> None:
    """`docker compose run --rm migrate bootstrap-key` (the README's first key), then a first remember through the
    published gateway, embedded by the embedder over the compose NATS wiring and found by recall."""
    done = run_migrate(migrated, database, tmp_path, ["bootstrap-key"])
    assert done.returncode == 0, done.stdout + done.stderr
    key = done.stdout.strip().splitlines()[-1]
    assert key.startswith("eng_")
    gateway = f"http://127.0.0.1:{stack['gateway'].host_port(8080)}"
    with httpx.Client(base_url=gateway, headers={"authorization": f"Bearer {key}"}, timeout=30) as client:
        created = client.post("/v1/remember", json={"content": "Compose deploys keep their secrets in .env."})
        assert created.status_code == 201, created.text
        item_id = created.json()["id"]
        eventually_blocking(
            lambda: client.get(f"/v1/items/{item_id}/status").json()["embedding"] == "done",
            message=f"{item_id} embedded",
        )
        found = client.post("/v1/recall", json={"query": "where do compose secrets live?", "mode": "semantic"})
        assert found.status_code == 200, found.text
        assert item_id in [hit["item"]["id"] for hit in found.json()["items"]]


def test_a_healthcheck_on_a_port_the_service_does_not_serve_is_caught() -> None:
    """The mapping refuses what a container would fail on: probing a port the service's environment does not bind."""
    recall = Local("recall", [], {}, ports={9464: 1})
    declared = SERVICES["recall"]["healthcheck"]["test"]
    assert healthcheck(recall, declared)[1] == "http://127.0.0.1:1/ready"
    with pytest.raises(AssertionError, match="port 9465"):
        healthcheck(recall, [arg.replace("9464", "9465") for arg in declared])


def test_the_nats_service_runs_jetstream_on_its_volume_and_answers_its_healthcheck(tmp_path: Path) -> None:
    """The nats service's command, run with this machine's nats-server: JetStream on, stored where the volume is
    mounted, and the monitoring URL its healthcheck requests answers."""
    service = SERVICES["nats"]
    argv = list(service["command"])
    assert "--jetstream" in argv or "-js" in argv
    store = argv[argv.index("--store_dir") + 1]
    assert any(str(volume).split(":")[1] == store for volume in service["volumes"]), "the store is not on a volume"
    monitor, client = free_ports(2)
    declared_monitor = int(argv[argv.index("--http_port") + 1])
    argv[argv.index("--store_dir") + 1] = str(tmp_path / "store")
    argv[argv.index("--http_port") + 1] = str(monitor)
    url = next(m for m in (PROBE_URL.search(arg) for arg in service["healthcheck"]["test"]) if m)
    assert int(url.group(1)) == declared_monitor, "the healthcheck probes another port than monitoring listens on"
    assert "js-enabled-only=true" in url.group(2)
    log = tmp_path / "nats.log"
    with declared_process([*argv, "--port", str(client), "--addr", "127.0.0.1"], {}, log) as process:
        wait_http(process, log, f"http://127.0.0.1:{monitor}{url.group(2)}", timeout_s=30)
    assert (tmp_path / "store" / "jetstream").is_dir()
