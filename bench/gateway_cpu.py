"""The gateway's own CPU per request, in process: the real FastAPI app (middleware, routes, dependencies,
mapping, the access log) driven through ASGI, with the two things outside it replaced by stand-ins that
answer at once — the API-key lookup (``engram.db.keys.find``) and the gRPC stubs. What is left is the Python
the gateway runs per request, without uvicorn's HTTP parsing, the socket, asyncpg or gRPC's C core; on a
loaded machine it is steadier than a whole stack's figure, because nothing waits on another process.

    python bench/gateway_cpu.py --requests 3000 --rounds 5                 # this checkout
    python bench/gateway_cpu.py --source /tmp/before --requests 3000       # another checkout's gateway
    python bench/gateway_cpu.py --ab /tmp/before . --requests 1000 --rounds 10   # both, rounds in turn
    python bench/gateway_cpu.py --calls [--source /tmp/before]             # Python calls per request
    py-spy record -r 500 --format raw -o P.txt -- python bench/gateway_cpu.py --route /v1/recall --rounds 1

Each round times ``POST /v1/remember`` and ``POST /v1/recall`` (4 memories answered) with
``time.process_time``; the access log is written as ``engram up`` writes it (text), to /dev/null.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

KEY_ID = "0123456789abcdef"
SECRET = "A" * 43
TENANT = "00000000-0000-4000-8000-000000000001"
PRINCIPAL = "00000000-0000-4000-8000-000000000004"


def item(pb: Any, n: int) -> Any:
    from google.protobuf import timestamp_pb2

    created = timestamp_pb2.Timestamp(seconds=1_790_000_000 + n, nanos=123_000_000)
    return pb.MemoryItem(
        id=f"00000000-0000-4000-8000-{n:012d}",
        tenant_id=TENANT,
        workspace_id="00000000-0000-4000-8000-000000000002",
        principal_id=PRINCIPAL,
        content=f"memory number {n}: the build uses uv and ruff",
        content_hash="ab" * 32,
        kind="fact",
        tags=["build"],
        importance=0.5,
        visibility="workspace",
        review_status="active",
        authority=60,
        source_type="agent",
        source_trust=0.6,
        memory_confidence=0.7,
        created_at=created,
    )


def build(source: Path) -> tuple[Any, dict[str, bytes]]:
    sys.path.insert(0, str(source))
    from engram.config import Settings
    from engram.db import keys
    from engram.domain.keys import hash_secret
    from engram.domain.models import StoredKey
    from engram.telemetry.logging import configure_logging
    from engram.v1 import admin_pb2, ingest_pb2, memory_pb2, recall_pb2
    from services.gateway.app import create_app
    from services.gateway.auth import Authenticator
    from services.gateway.clients import Downstream
    from services.gateway.limits import Limits

    salt = b"s" * 16
    stored = StoredKey(
        KEY_ID, TENANT, PRINCIPAL, "agent", salt, hash_secret(salt, SECRET), ("read", "write"), True, False
    )

    async def find(pool: Any, key_id: str) -> StoredKey | None:
        return stored if key_id == KEY_ID else None

    keys.find = find  # type: ignore[assignment]
    remembered = ingest_pb2.RememberResponse(
        id=item(memory_pb2, 1).id, status="created", review_status="active", authority=60, item=item(memory_pb2, 1)
    )
    recalled = recall_pb2.RecallResponse()
    for n in range(4):
        entry = recalled.items.add()
        entry.item.CopyFrom(item(memory_pb2, n))
        entry.score = 0.5 - n / 10

    class Stub:
        def __init__(self, answers: dict[str, Any]) -> None:
            for name, answer in answers.items():
                setattr(self, name, self._answer(answer))

        @staticmethod
        def _answer(answer: Any) -> Any:
            async def call(request: Any, **options: Any) -> Any:
                return answer

            return call

    settings = Settings(
        auth_enabled=True,
        rate_limit_remember_per_minute=10**9,
        rate_limit_recall_per_minute=10**9,
        ip_rate_limit_per_minute=10**9,
    )
    sys.stderr = open(os.devnull, "w")  # the access log, written and thrown away
    configure_logging("gateway", "INFO", "text")
    app = create_app(settings)
    ds = Downstream(
        settings,
        None,
        None,
        Stub({"Remember": remembered}),
        Stub({"Recall": recalled}),  # type: ignore[arg-type]
        Stub({"RateLimits": admin_pb2.RateLimitsResponse()}),
    )
    app.state.downstream = ds
    app.state.authenticator = Authenticator(None, settings)  # type: ignore[arg-type]
    app.state.limits = Limits(ds, settings)
    bodies = {
        "/v1/remember": json.dumps({"content": "the build uses uv and ruff"}).encode(),
        "/v1/recall": json.dumps({"query": "which build tools", "mode": "hybrid"}).encode(),
    }
    return app, bodies


async def one(app: Any, path: str, body: bytes) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
        "headers": [
            (b"host", b"127.0.0.1:8080"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"authorization", f"Bearer eng_{KEY_ID}_{SECRET}".encode()),
            (b"user-agent", b"python-httpx/0.28.1"),
            (b"accept", b"*/*"),
        ],
        "state": {},
    }
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def run(app: Any, bodies: dict[str, bytes], requests: int, rounds: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for path, body in bodies.items():
        statuses = {await one(app, path, body) for _ in range(200)}  # warm-up
        assert statuses <= {200, 201}, statuses
        per: list[float] = []
        for _ in range(rounds):
            started = time.process_time()
            for _ in range(requests):
                await one(app, path, body)
            per.append((time.process_time() - started) / requests * 1000)
        result[path] = {
            "cpu_ms_per_request_median": round(statistics.median(per), 4),
            "rounds": [round(p, 4) for p in per],
        }
    return result


async def serve(app: Any, bodies: dict[str, bytes]) -> None:
    """``--serve``: one round per line read (``<path> <requests>``), its CPU ms per request written back."""
    for path, body in bodies.items():
        for _ in range(200):
            await one(app, path, body)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        path, count = line.split()
        started = time.process_time()
        for _ in range(int(count)):
            await one(app, path, bodies[path])
        print(round((time.process_time() - started) / int(count) * 1000, 4), flush=True)


async def calls(app: Any, bodies: dict[str, bytes], requests: int) -> dict[str, Any]:
    """``--calls``: Python function calls per request (cProfile's count), a measure of the gateway's Python that,
    unlike CPU time, does not move with the machine's load: for telling apart changes of a few percent."""
    import cProfile
    import pstats

    result: dict[str, Any] = {}
    for path, body in bodies.items():
        for _ in range(200):
            await one(app, path, body)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(requests):
            await one(app, path, body)
        profile.disable()
        result[path] = {"python_calls_per_request": round(pstats.Stats(profile).total_calls / requests, 1)}
    return result


def compare(sources: list[Path], requests: int, rounds: int) -> dict[str, Any]:
    """``--ab BEFORE AFTER``: both checkouts' gateways in two processes, their rounds taken in turn (never at
    the same time), so that a machine whose speed drifts (other work on its cores) weighs on both alike."""
    import subprocess

    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--serve", "--source", str(source)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for source in sources
    ]
    result: dict[str, Any] = {}
    for path in ("/v1/remember", "/v1/recall"):
        per: list[list[float]] = [[] for _ in sources]
        for n in range(rounds):
            order = range(len(workers)) if n % 2 == 0 else reversed(range(len(workers)))
            for w in order:
                assert workers[w].stdin is not None and workers[w].stdout is not None
                workers[w].stdin.write(f"{path} {requests}\n")
                workers[w].stdin.flush()
                per[w].append(float(workers[w].stdout.readline()))
        result[path] = {
            str(source): {"median": round(statistics.median(p), 4), "min": min(p), "rounds": p}
            for source, p in zip(sources, per, strict=True)
        }
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=30)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=HERE.parent, help="the checkout whose gateway is measured")
    parser.add_argument("--ab", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="two checkouts, in turn")
    parser.add_argument("--requests", type=int, default=3000, help="requests per round and route")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--route", choices=("/v1/remember", "/v1/recall"), help="only this route (for a profiler)")
    parser.add_argument("--calls", action="store_true", help="Python function calls per request, not CPU time")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = sys.stdout
    if args.ab:
        result = compare([p.resolve() for p in args.ab], args.requests, args.rounds)
        load = [round(x, 1) for x in os.getloadavg()]
        out.write(json.dumps({"ab": [str(p) for p in args.ab], "load_average": load, **result}, indent=1) + "\n")
        return
    app, bodies = build(args.source.resolve())
    if args.route:
        bodies = {args.route: bodies[args.route]}
    if args.serve:
        sys.stdout = out
        asyncio.run(serve(app, bodies))
        return
    if args.calls:
        result = asyncio.run(calls(app, bodies, min(args.requests, 500)))
    else:
        result = asyncio.run(run(app, bodies, args.requests, args.rounds))
    load = [round(x, 1) for x in os.getloadavg()]
    out.write(json.dumps({"source": str(args.source), "load_average": load, **result}, indent=1) + "\n")


if __name__ == "__main__":
    main()
