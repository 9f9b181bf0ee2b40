"""The floor under a remember on this machine: the CPU that the parts of Engram's write path cost when they do
nothing else. Each part runs alone, in its own process, loaded by 4 concurrent clients as `latency.py` loads
remember:

- **http**: uvicorn + FastAPI, one POST route that validates a JSON body like remember's (pydantic) and answers
  201 with a small JSON body — no authentication, no gRPC call. Variants by uvicorn's HTTP parser (h11, the
  pure-Python default, or httptools) and event loop (asyncio or uvloop).
- **grpc**: a grpc.aio server whose unary method answers at once; the client is this process (4 concurrent
  calls), as the gateway calls ingest.
- **postgres**: 4 asyncpg connections each inserting one row and committing (``synchronous_commit`` on, as
  Engram runs), against an embedded PostgreSQL started for the run: PostgreSQL's CPU per write and the rate.

CPU is user + system time from /proc over the loaded interval, per request; the rate is the loaded interval's.
A write through Engram crosses all three (HTTP in the gateway, a gRPC call to ingest, a transaction), so the
sum of their server-side CPU is the least any remember can cost on this stack's design, before authentication,
validation rules, deduplication, the audit row, the outbox and NATS.

    cd bench && python write_floor.py --requests 3000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLIENTS = 4
BODY = {
    "content": "The staging database was moved to the eu-west-2 region on Monday after the latency review.",
    "kind": "fact",
    "tags": ["infra", "database"],
    "workspace_id": "00000000-0000-0000-0000-000000000001",
}

HTTP_SERVER = """
import socket, sys, uvicorn
from fastapi import FastAPI
from pydantic import BaseModel, Field

class Remember(BaseModel):
    content: str = Field(min_length=1, max_length=100_000)
    kind: str | None = None
    tags: list[str] = Field(default_factory=list)
    workspace_id: str | None = None

app = FastAPI()

@app.post("/v1/memories", status_code=201)
async def remember(body: Remember) -> dict[str, object]:
    return {"id": "5b0f6c9e-8f0e-4d55-9d43-3f1c1f0b6a10", "kind": body.kind, "created": True}

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen(128)
print("ready", flush=True)
config = uvicorn.Config(app, http=sys.argv[2], loop=sys.argv[3], log_level="warning", access_log=False)
uvicorn.Server(config).run(sockets=[sock])
"""

GRPC_SERVER = """
import asyncio, sys, grpc

async def main():
    async def echo(request, context):
        return request

    handler = grpc.method_handlers_generic_handler(
        "bench.Floor", {"Echo": grpc.unary_unary_rpc_method_handler(echo)})
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{sys.argv[1]}")
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()

if sys.argv[2] == "uvloop":
    import uvloop
    uvloop.run(main())
else:
    asyncio.run(main())
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu(process: psutil.Process, children: bool = False) -> float:
    parts = [process, *process.children(recursive=True)] if children else [process]
    total = 0.0
    for part in parts:
        try:
            times = part.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def start(code: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError("the server did not start")
    return process


async def closed_loop(call: Any, requests: int) -> tuple[float, float]:
    """``requests`` calls of ``call`` by CLIENTS concurrent clients; (seconds, this process's CPU seconds)."""
    remaining = requests

    async def client() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    me = psutil.Process()
    cpu_before, started = cpu(me), time.perf_counter()
    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return time.perf_counter() - started, cpu(me) - cpu_before


def report(part: str, variant: str, requests: int, seconds: float, server_cpu: float, client_cpu: float) -> dict:
    row = {
        "part": part,
        "variant": variant,
        "requests": requests,
        "per_second": round(requests / seconds, 1),
        "server_cpu_ms": round(server_cpu / requests * 1000, 3),
        "client_cpu_ms": round(client_cpu / requests * 1000, 3),
    }
    print(json.dumps(row), flush=True)
    return row


async def http(requests: int, parser: str, loop: str) -> dict:
    import httpx

    port = free_port()
    server = start(HTTP_SERVER, str(port), parser, loop)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:

            async def call() -> None:
                response = await client.post("/v1/memories", json=BODY)
                assert response.status_code == 201, response.text

            for _ in range(50):
                await call()
            process = psutil.Process(server.pid)
            before = cpu(process)
            seconds, client_cpu = await closed_loop(call, requests)
            return report("http", f"{parser}+{loop}", requests, seconds, cpu(process) - before, client_cpu)
    finally:
        server.terminate()
        server.wait(timeout=30)


async def grpc_call(requests: int, loop: str) -> dict:
    import grpc

    port = free_port()
    server = start(GRPC_SERVER, str(port), loop)
    payload = json.dumps(BODY).encode()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary("/bench.Floor/Echo")

            async def call() -> None:
                assert await echo(payload) == payload

            for _ in range(50):
                await call()
            process = psutil.Process(server.pid)
            before = cpu(process)
            seconds, client_cpu = await closed_loop(call, requests)
            return report(
                "grpc", f"server {loop}, client asyncio", requests, seconds, cpu(process) - before, client_cpu
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


async def postgres(requests: int) -> dict:
    import asyncpg

    from engram.runtime.postgres import EmbeddedPostgres

    data = Path(tempfile.mkdtemp(prefix="write-floor-", dir="/tmp")) / "pgdata"
    server = EmbeddedPostgres(data)
    url = server.start()
    try:
        pool = await asyncpg.create_pool(url, min_size=CLIENTS, max_size=CLIENTS)
        async with pool.acquire() as conn:
            assert await conn.fetchval("SHOW synchronous_commit") == "on"
            await conn.execute(
                "CREATE TABLE floor (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, content text NOT NULL,"
                " created_at timestamptz NOT NULL DEFAULT now())"
            )

        async def call() -> None:
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute("INSERT INTO floor (content) VALUES ($1)", BODY["content"])

        for _ in range(50):
            await call()
        assert server.process is not None
        postmaster = psutil.Process(server.process.pid)
        before = cpu(postmaster, children=True)
        seconds, client_cpu = await closed_loop(call, requests)
        row = report(
            "postgres", "insert + commit", requests, seconds, cpu(postmaster, children=True) - before, client_cpu
        )
        await pool.close()
        return row
    finally:
        server.stop()


async def run(args: argparse.Namespace) -> list[dict]:
    rows = []
    for parser_name, loop in (("h11", "asyncio"), ("httptools", "asyncio"), ("httptools", "uvloop")):
        rows.append(await http(args.requests, parser_name, loop))
    for loop in ("asyncio", "uvloop"):
        rows.append(await grpc_call(args.requests, loop))
    rows.append(await postgres(args.requests))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000, help="requests per part and variant")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = parser.parse_args()
    rows = asyncio.run(run(args))
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"load_average": load, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
