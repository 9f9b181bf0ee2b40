"""The body of ``engram up``: embedded servers, migrations and every service, supervised."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import httpx

import engram
from engram.config import Settings
from engram.db.pool import with_user
from engram.runtime.dev_key import DEV_KEY_FILE, ensure_dev_key
from engram.runtime.home_lock import hold_home
from engram.runtime.nats import EmbeddedNats
from engram.runtime.ports import free_ports, listen
from engram.runtime.postgres import EmbeddedPostgres
from engram.runtime.supervisor import ChildSpec, Supervisor

SERVICES = ("ingest", "recall", "embedder", "classifier", "conflicts", "promotion", "gateway")
GATEWAY_READY_TIMEOUT = 120.0

Migrate = Callable[[str, Settings], Awaitable[list[str]]]


def service_command(name: str) -> list[str]:
    """The argv that runs one service."""
    return [sys.executable, "-m", f"services.{name}"]


def source_root() -> Path:
    """The directory that holds the ``engram`` and ``services`` packages."""
    return Path(engram.__file__).resolve().parent.parent


def gateway_url(host: str, port: int) -> str:
    """The URL clients use to reach a gateway bound to ``host`` (a wildcard address means loopback)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def run_stack(
    settings: Settings,
    on_ready: Callable[[str], None] | None = None,
    stop_event: asyncio.Event | None = None,
    *,
    services: Sequence[str] = SERVICES,
    command: Callable[[str], list[str]] = service_command,
    migrate: Migrate | None = None,
) -> None:
    """Start everything, print ``gateway: <url>`` once the gateway is ready, run until ``stop_event`` is set
    (None: until SIGINT/SIGTERM), then stop services, NATS and Postgres in that order.

    ``services``, ``command`` and ``migrate`` exist for tests. Nothing started is left running on return,
    including when start-up fails or is interrupted.
    """
    with hold_home(settings.home.expanduser().resolve()):
        _check_gateway_port(settings)
        loop = asyncio.get_running_loop()
        handled: list[signal.Signals] = []
        if stop_event is None:
            stop_event = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop_event.set)
                handled.append(sig)
        supervisor = Supervisor()
        startup = asyncio.create_task(_start(settings, supervisor, services, command, migrate, on_ready))
        stopper = asyncio.create_task(stop_event.wait())
        try:
            await asyncio.wait({startup, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if startup.done():
                startup.result()  # re-raises a start-up failure
                await stopper
        finally:
            for task in (startup, stopper):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            try:
                await supervisor.stop()
            finally:
                (settings.home.expanduser().resolve() / STACK_FILE).unlink(missing_ok=True)
                for sig in handled:
                    loop.remove_signal_handler(sig)


def _check_gateway_port(settings: Settings) -> None:
    """Refuse at once, before anything starts, when the gateway could not listen (``CannotListen`` names the
    setting); the gateway itself checks again as it starts."""
    listen(
        settings.gateway_host,
        settings.gateway_port,
        host_setting="ENGRAM_GATEWAY_HOST",
        port_setting="ENGRAM_GATEWAY_PORT",
    ).close()


async def _start(
    settings: Settings,
    supervisor: Supervisor,
    services: Sequence[str],
    command: Callable[[str], list[str]],
    migrate: Migrate | None,
    on_ready: Callable[[str], None] | None,
) -> None:
    home = settings.home.expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    external_database = settings.database_url is not None
    database_url = settings.database_url or await _start_postgres(supervisor, home, settings.postgres_shared_buffers)
    nats_url = settings.nats_url or await _start_nats(supervisor, home)
    settings = settings.model_copy(update={"home": home, "database_url": database_url, "nats_url": nats_url})

    if migrate is None:
        from engram.db.migrate import migrate as default_migrate

        migrate = default_migrate
    applied = await migrate(database_url, settings)
    _say(f"migrations applied: {', '.join(applied)}" if applied else "database schema is up to date")
    dev_key = await ensure_dev_key(database_url, settings, home) if settings.auth_enabled else None

    url = gateway_url(settings.gateway_host, settings.gateway_port)
    # every port in one call, so no two services are handed the same one
    ports = iter(free_ports(2 + sum(name != "gateway" for name in services)))
    base_env = _service_env(
        settings,
        home,
        database_url,
        nats_url,
        embedded_database=not external_database,
        grpc_ports=(next(ports), next(ports)),
    )
    metrics: dict[str, str] = {}
    for name in services:
        env = dict(base_env)
        if name == "gateway":
            env.pop("ENGRAM_METRICS_PORT", None)
            ready, timeout = _http_ready(f"{url}/ready"), GATEWAY_READY_TIMEOUT
        else:
            env["ENGRAM_METRICS_PORT"] = str(next(ports))
            metrics[name] = f"http://{settings.metrics_host}:{env['ENGRAM_METRICS_PORT']}/metrics"
            ready, timeout = None, 60.0
        await supervisor.start(ChildSpec(name=name, argv=command(name), env=env, ready=ready, ready_timeout=timeout))

    _write_stack_file(home, url, database_url, nats_url, base_env, metrics)
    if dev_key is not None:  # before the gateway line, which is the "ready" signal tools wait for
        print(f"dev key: {dev_key}  (also in {home / DEV_KEY_FILE})", flush=True)
    else:
        _say("authentication is OFF (ENGRAM_AUTH_ENABLED=false): every request runs as the development admin")
    print(f"gateway: {url}", flush=True)
    if on_ready is not None:
        on_ready(url)


async def _start_postgres(supervisor: Supervisor, home: Path, shared_buffers: str) -> str:
    if os.geteuid() == 0 and home.is_relative_to("/root"):
        _say(
            f"warning: ENGRAM_HOME {home} is under /root; running as root, the embedded Postgres opens "
            "every parent directory of its data to other users (chmod o+rx)"
        )
    postgres = EmbeddedPostgres(home / "pgdata", shared_buffers=shared_buffers)
    await asyncio.to_thread(postgres.prepare)
    cmd = postgres.command()
    await supervisor.start(
        ChildSpec(
            name="postgres",
            argv=cmd.argv,
            user=cmd.user,
            ready=postgres.ready,
            log_path=postgres.log_path,
            stop_signal=signal.SIGINT,  # fast shutdown; the postmaster stops its own children
            signal_group=False,
        )
    )
    return postgres.url


async def _start_nats(supervisor: Supervisor, home: Path) -> str:
    nats = EmbeddedNats(home / "nats")
    await asyncio.to_thread(nats.prepare)
    await supervisor.start(ChildSpec(name="nats", argv=nats.command(), ready=nats.ready, log_path=nats.log_path))
    return nats.url


def _service_env(
    settings: Settings,
    home: Path,
    database_url: str,
    nats_url: str,
    embedded_database: bool,
    grpc_ports: tuple[int, int],
) -> dict[str, str]:
    python_path = [str(source_root()), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {
        **os.environ,
        "ENGRAM_HOME": str(home),
        "ENGRAM_DATABASE_URL": database_url,
        **({"ENGRAM_APP_DATABASE_URL": with_user(database_url, settings.app_role)} if embedded_database else {}),
        "ENGRAM_NATS_URL": nats_url,
        "ENGRAM_INGEST_ADDR": f"127.0.0.1:{grpc_ports[0]}",
        "ENGRAM_RECALL_ADDR": f"127.0.0.1:{grpc_ports[1]}",
        "ENGRAM_GATEWAY_HOST": settings.gateway_host,
        "ENGRAM_GATEWAY_PORT": str(settings.gateway_port),
        # the gateway presents it to ingest and recall; a fresh one per run unless the operator set one
        "ENGRAM_INTERNAL_TOKEN": settings.internal_token or secrets.token_urlsafe(32),
        # readable lines on the console `engram up` prints them to, unless the operator chose a format
        "ENGRAM_LOG_FORMAT": settings.log_format if "log_format" in settings.model_fields_set else "text",
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join(python_path),
    }


def _http_ready(url: str) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        try:
            async with httpx.AsyncClient(timeout=2.0) as client:
                return (await client.get(url)).status_code == 200
        except httpx.HTTPError:
            return False

    return probe


STACK_FILE = "stack.json"


def _write_stack_file(
    home: Path, gateway: str, database_url: str, nats_url: str, env: dict[str, str], metrics: dict[str, str]
) -> None:
    """Where the running stack's parts are, for operators and tools (removed again on stop). Mode 0600: it
    holds the database owner's URL."""
    info = {
        "gateway": gateway,
        "database_url": database_url,
        "nats_url": nats_url,
        "ingest_addr": env["ENGRAM_INGEST_ADDR"],
        "recall_addr": env["ENGRAM_RECALL_ADDR"],
        "metrics": {"gateway": f"{gateway}/metrics", **metrics},
        "pid": os.getpid(),
    }
    fd = os.open(home / STACK_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file was left behind with a wider mode
    with os.fdopen(fd, "w") as file:
        file.write(json.dumps(info, indent=2) + "\n")


def _say(message: str) -> None:
    print(f"engram: {message}", file=sys.stderr, flush=True)
