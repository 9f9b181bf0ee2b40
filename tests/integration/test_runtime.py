"""Embedded PostgreSQL and NATS, and `engram up` with fake services — against the real servers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import asyncpg
import nats
import psutil
import pytest

from engram.config import Settings
from engram.runtime.nats import EmbeddedNats
from engram.runtime.ports import free_port
from engram.runtime.postgres import EmbeddedPostgres
from engram.runtime.process_tree import is_alive
from engram.runtime.stack import run_stack
from tests.support.waiting import eventually

REPO_ROOT = Path(__file__).resolve().parents[2]


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Live processes whose command line mentions ``text``."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if text in " ".join(proc.info["cmdline"] or []) and proc.pid != os.getpid() and is_alive(proc):
            found.append(proc)
    return found


def server_processes(data_dir: Path) -> list[psutil.Process]:
    """Live postgres processes serving ``data_dir`` (the postmaster and its children, by working dir)."""
    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "postgres" and is_alive(proc) and Path(proc.cwd()) == data_dir.resolve():
                found.append(proc)
        except psutil.Error:
            continue
    return found


async def execute(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def query(url: str, sql: str) -> object:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


async def test_postgres_runs_pgvector_and_keeps_data_across_restarts(tmp_path: Path) -> None:
    data_dir = tmp_path / "pgdata"
    pg = EmbeddedPostgres(data_dir)
    url = pg.start()
    try:
        assert url == f"postgresql://postgres@127.0.0.1:{pg.port}/postgres"
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            distance = await conn.fetchval("SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector")
            assert 0.0 < distance < 0.01
            await conn.execute("CREATE TABLE notes (id int PRIMARY KEY, body text, embedding vector(3))")
            await conn.execute("INSERT INTO notes VALUES (1, 'élan', '[1,2,3]')")
            assert await conn.fetchval("SELECT upper(body) FROM notes") == "ÉLAN"  # Unicode-aware ctype
        finally:
            await conn.close()
    finally:
        pg.stop()
    assert not server_processes(data_dir)

    again = EmbeddedPostgres(data_dir)  # a new port
    url = again.start()
    try:
        assert await query(url, "SELECT body FROM notes WHERE id = 1") == "élan"
        assert await query(url, "SELECT count(*) FROM notes") == 1
    finally:
        again.stop()
    assert not server_processes(data_dir)


async def test_postgres_recovers_from_a_crashed_previous_run(tmp_path: Path) -> None:
    data_dir = tmp_path / "pgdata"
    orphan, successor = EmbeddedPostgres(data_dir), EmbeddedPostgres(data_dir)
    try:
        orphan.start()
        assert orphan.process is not None
        old_pid = orphan.process.pid
        await execute(orphan.url, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)")

        # A new run while the old server is still up (its parent crashed): the old one is stopped first.
        successor.start()
        assert orphan.process.poll() is not None and old_pid not in [p.pid for p in server_processes(data_dir)]
        assert await query(successor.url, "SELECT x FROM kept") == 42

        # The server is SIGKILLed: it leaves a stale postmaster.pid behind.
        assert successor.process is not None
        successor.process.kill()
        successor.process.wait()
    finally:
        successor.stop()
        orphan.stop()
    assert (data_dir / "postmaster.pid").exists()

    # Its pid now belongs to a live process of the server's own user: PostgreSQL alone would refuse to start.
    squatter = await asyncio.create_subprocess_exec(
        "sleep", "60", user="embedded_postgres" if os.geteuid() == 0 else None
    )
    third = EmbeddedPostgres(data_dir)
    try:
        lines = (data_dir / "postmaster.pid").read_text().split("\n")
        (data_dir / "postmaster.pid").write_text("\n".join([str(squatter.pid), *lines[1:]]))
        third.start()
        assert await query(third.url, "SELECT x FROM kept") == 42
    finally:
        third.stop()
        squatter.kill()
        await squatter.wait()
    assert not server_processes(data_dir)


def test_postgres_start_failure_reports_log_tail(tmp_path: Path) -> None:
    data_dir = tmp_path / "pgdata"
    first = EmbeddedPostgres(data_dir)
    clash = EmbeddedPostgres(tmp_path / "other" / "pgdata", port=first.port)  # the port will be taken
    try:
        first.start()
        with pytest.raises(RuntimeError, match=r"(?s)postgres exited with code 1 while starting.*could not"):
            clash.start()
    finally:
        clash.stop()
        first.stop()
    assert not server_processes(tmp_path / "other" / "pgdata")


async def test_nats_jetstream_publish_and_consume(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    url = server.start()
    assert server.process is not None
    pid = server.process.pid
    try:
        assert url == f"nats://127.0.0.1:{server.port}"
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            await js.add_stream(name="TEST", subjects=["test.>"])
            ack = await js.publish("test.hello", b"hi")
            assert ack.stream == "TEST"
            sub = await js.pull_subscribe("test.>", durable="reader")
            [msg] = await sub.fetch(1, timeout=5)
            assert msg.data == b"hi"
            await msg.ack()
        finally:
            await nc.close()
    finally:
        server.stop()
    assert not psutil.pid_exists(pid) or not is_alive(psutil.Process(pid))
    assert not processes_mentioning(str(tmp_path / "nats"))
    assert (tmp_path / "nats" / "jetstream").is_dir()


# -- engram up, with fake services ---------------------------------------------------------------------

FAKE_SERVICE = """
import json, os, sys, time
name = sys.argv[1]
home = os.environ["ENGRAM_HOME"]
keys = [k for k in os.environ if k.startswith("ENGRAM_") or k in ("PYTHONPATH", "PYTHONUNBUFFERED")]
record = {"pid": os.getpid(), "env": {k: os.environ[k] for k in keys}}
open(os.path.join(home, name + ".json"), "w").write(json.dumps(record))
if name != "gateway":
    time.sleep(600)
from http.server import BaseHTTPRequestHandler, HTTPServer
class Ready(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/ready" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
HTTPServer((os.environ["ENGRAM_GATEWAY_HOST"], int(os.environ["ENGRAM_GATEWAY_PORT"])), Ready).serve_forever()
"""


def fake_command(name: str) -> list[str]:
    return [sys.executable, "-c", FAKE_SERVICE, name]


async def fake_migrate(database_url: str, settings: Settings) -> list[str]:
    assert settings.database_url == database_url and settings.nats_url
    await query(database_url, "CREATE EXTENSION IF NOT EXISTS vector")
    return ["000_fake"]


def postmaster_pid(home: Path) -> int | None:
    try:
        return int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


async def test_run_stack_starts_supervises_and_stops_everything(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    # fake migrations create no schema, so no development key can be issued: authentication off
    settings = Settings(
        home=home,
        gateway_port=free_port(),
        database_url=None,
        nats_url=None,
        auth_enabled=False,
        postgres_shared_buffers="200MB",
    )
    stop = asyncio.Event()
    ready: list[str] = []
    stack = asyncio.create_task(run_stack(settings, ready.append, stop, command=fake_command, migrate=fake_migrate))

    def came_up() -> list[str]:
        assert not stack.done(), stack.exception()
        return ready

    await eventually(came_up, timeout=60, message="run_stack did not report ready")
    url = f"http://127.0.0.1:{settings.gateway_port}"
    assert ready == [url]

    records = {
        name: json.loads((home / f"{name}.json").read_text()) for name in ("ingest", "recall", "embedder", "gateway")
    }
    env = records["ingest"]["env"]
    database_url = env["ENGRAM_DATABASE_URL"]
    assert database_url.startswith("postgresql://postgres@127.0.0.1:")
    assert env["ENGRAM_NATS_URL"].startswith("nats://127.0.0.1:")
    assert env["ENGRAM_HOME"] == str(home.resolve())
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(REPO_ROOT)
    assert env["ENGRAM_GATEWAY_PORT"] == str(settings.gateway_port)
    metrics = {records[n]["env"]["ENGRAM_METRICS_PORT"] for n in ("ingest", "recall", "embedder")}
    assert len(metrics) == 3 and "ENGRAM_METRICS_PORT" not in records["gateway"]["env"]
    assert all(r["env"]["ENGRAM_INGEST_ADDR"] == env["ENGRAM_INGEST_ADDR"] for r in records.values())
    assert await query(database_url, "SELECT extname FROM pg_extension WHERE extname = 'vector'") == "vector"
    assert await query(database_url, "SHOW shared_buffers") == "200MB"  # ENGRAM_POSTGRES_SHARED_BUFFERS

    # Postgres is supervised too: SIGKILL it and it comes back on the same URL.
    old = postmaster_pid(home)
    assert old is not None
    os.kill(old, signal.SIGKILL)

    async def restarted() -> bool:
        return postmaster_pid(home) not in (None, old) and await query(database_url, "SELECT 1") == 1

    await eventually(
        restarted,
        timeout=30,
        interval=0.1,
        ignoring=(OSError, asyncpg.PostgresError),
        message="postgres was not restarted",
    )

    stop.set()
    await asyncio.wait_for(stack, 60)
    for record in records.values():
        assert not psutil.pid_exists(record["pid"]) or not is_alive(psutil.Process(record["pid"]))
    assert not processes_mentioning(str(home))
    assert not server_processes(home / "pgdata")

    out, err = capfd.readouterr()
    assert out.count("gateway: ") == 1 and f"gateway: {url}\n" in out
    assert "supervisor: postgres exited with code -9; restarting in 0.5s" in err


async def test_run_stack_cleans_up_when_start_up_fails(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def broken_migrate(database_url: str, settings: Settings) -> list[str]:
        raise RuntimeError("migration 002 is broken")

    # fake migrations create no schema, so no development key can be issued: authentication off
    settings = Settings(home=home, gateway_port=free_port(), database_url=None, nats_url=None, auth_enabled=False)
    with pytest.raises(RuntimeError, match="migration 002 is broken"):
        await run_stack(settings, None, asyncio.Event(), command=fake_command, migrate=broken_migrate)
    assert not processes_mentioning(str(home))
    assert not server_processes(home / "pgdata")
