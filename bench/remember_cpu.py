"""Where one acknowledged remember's CPU goes: 4 writers through the gateway of a stack this script starts, with
each process's CPU per write, the rate and the latency, and optionally PostgreSQL's statements per write
(``pg_stat_statements``) and a sampling profile of the gateway and ingest processes (py-spy).

    cd bench && python remember_cpu.py --writes 400                        # CPU per process, rate, p50/p95
    cd bench && python remember_cpu.py --writes 400 --statements           # + statements per remember
    cd bench && python remember_cpu.py --writes 400 --py-spy /tmp/pyspy/bin/py-spy --profile-dir /tmp/prof
    cd bench && python remember_cpu.py --source /tmp/before --env ENGRAM_POSSIBLE_SUPERSEDES_WINDOW=1
    cd bench && python remember_cpu.py --writes 400 --recalls 400            # + CPU per recall, 4 clients
    cd bench && python remember_cpu.py --recalls 400 --recall-mode semantic --statements  # + statements per recall
    cd bench && python remember_cpu.py --writes 400 --bulk 100000 --drain    # a 100k store; the pipeline's share

``--source DIR`` runs ``engram up`` from another checkout (an A/B against a commit: ``git worktree add DIR
<commit>``; this script's own code measures both). ``--env KEY=VALUE`` passes a setting to every service. ``--bulk
N`` loads N memories with their vectors (``latency.py``'s loader, which vacuums) before the warm-up; ``--drain``
also reads every process's CPU once the pipeline has worked off the writes (the consumers lag behind 4 writers),
and with ``--statements`` the pipeline's statements per batch. The pipeline consumers run as they do under
``engram up``; their CPU is printed apart from the acknowledged path (gateway, ingest — which also runs the outbox
relay —, PostgreSQL, NATS). A profile slows what it samples: the CPU figures of a run with ``--py-spy`` are not
comparable with one without.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from latency import (  # noqa: E402
    bulk_load,
    launch,
    process_cpu,
    recall_load,
    remember_load,
    synthetic,
    wait_pipeline_idle,
)

ACKNOWLEDGED = ("gateway", "ingest", "postgres", "nats")


def preload_statements(source: Path, home: Path) -> None:
    """Initialise the embedded PostgreSQL's data directory (``source``'s runtime) and preload ``pg_stat_statements``."""
    sys.path.insert(0, str(source))
    from engram.runtime.postgres import EmbeddedPostgres

    EmbeddedPostgres(home / "pgdata").prepare()
    with (home / "pgdata" / "postgresql.conf").open("a") as conf:
        conf.write("\nshared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n")


def start(
    source: Path, home: Path, env_extra: dict[str, str], statements: bool
) -> tuple[subprocess.Popen[str], str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(env_extra)
    env["PYTHONPATH"] = str(source)
    if statements:
        preload_statements(source, home)
    return launch(env, home, source)


def service_pids(root: int) -> dict[str, int]:
    import psutil

    found: dict[str, int] = {}
    for part in psutil.Process(root).children(recursive=True):
        try:
            words = part.cmdline()
        except psutil.Error:
            continue
        name = next((w.split(".")[1] for w in words if w.startswith("services.")), None)
        if name:
            found[name] = part.pid
    return found


def summarize_raw(path: Path, top: int) -> dict[str, Any]:
    """From py-spy's collapsed stacks: the share of the event loop's busy samples (the main thread, less the
    samples waiting in ``select``) each function is on the stack (inclusive) and at its top (self), the
    largest first. Other threads (gRPC's poller, the metrics server) are left out."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        if not frames or not frames[0].startswith("_run_module_as_main") or "select (selectors.py" in frames[-1]:
            continue
        count = int(count_text)
        total += count
        for frame in set(frames):
            inclusive[frame] += count
        own[frames[-1]] += count

    def share(counter: collections.Counter[str]) -> list[tuple[str, float]]:
        return [(f, round(100 * n / max(total, 1), 1)) for f, n in counter.most_common(top)]

    return {"busy_samples": total, "inclusive_percent": share(inclusive), "self_percent": share(own)}


async def statements_per(
    database_url: str, n: int, *, reset: bool, unit: str = "write", least: float = 0.25, total: bool = True
) -> list[dict[str, Any]]:
    """Reset ``pg_stat_statements`` (``reset``), or read each statement's calls, execution ms and shared blocks
    (``[hit, read]``: found in PostgreSQL's buffers, read from outside them) per ``unit`` since the reset, the
    costliest first, leaving out statements called fewer than ``least`` times a ``unit``; with ``total``, a last
    row counts every statement, however rare."""
    import asyncpg

    conn = await asyncpg.connect(database_url)
    try:
        if reset:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            await conn.execute("SELECT pg_stat_statements_reset()")
            return []
        rows = await conn.fetch(
            "SELECT query, calls, total_exec_time, rows, shared_blks_hit, shared_blks_read FROM pg_stat_statements"
            " ORDER BY total_exec_time DESC"
        )
    finally:
        await conn.close()
    listed = [
        {
            f"calls_per_{unit}": round(r["calls"] / n, 2),
            f"ms_per_{unit}": round(r["total_exec_time"] / n, 3),
            f"blocks_per_{unit}": [round(r["shared_blks_hit"] / n, 1), round(r["shared_blks_read"] / n, 1)],
            "query": " ".join(r["query"].split())[:160],
        }
        for r in rows
        if r["calls"] >= n * least
    ]
    if not total:
        return listed
    # a simple query of two statements counts two
    every = sum(r["calls"] for r in rows if "pg_stat_statements" not in r["query"])
    return [*listed, {f"calls_per_{unit}": round(every / n, 2), f"ms_per_{unit}": 0.0, "query": "(all)"}]


async def run(args: argparse.Namespace, url: str, key: str, root: int, home: Path) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {key}"}
    stack = json.loads((home / "stack.json").read_text())
    database_url = stack["database_url"]
    result: dict[str, Any] = {}
    if args.bulk:  # a large store first, vacuumed and analyzed (latency.py's loader, with the embeddings)
        result["bulk_load_s"] = round(await bulk_load(database_url, args.bulk), 1)
    async with httpx.AsyncClient(base_url=url, timeout=60, headers=headers) as client:
        await remember_load(client, [f"warm-up {n}: {t}" for n, t in enumerate(synthetic(args.warmup, seed=3))], 4)
        await asyncio.sleep(args.settle_s)  # the pipeline works off the warm-up's memories
        if args.drain:
            await wait_pipeline_idle(database_url, stack["nats_url"])
        if args.statements:
            await statements_per(database_url, 1, reset=True)
        spies: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        if args.py_spy:
            args.profile_dir.mkdir(parents=True, exist_ok=True)
            for name, pid in service_pids(root).items():
                if name in ("gateway", "ingest"):
                    out = args.profile_dir / f"{args.label}-{name}.txt"
                    command = [args.py_spy, "record", "-p", str(pid), "-r", "200", "--format", "raw", "-o", str(out)]
                    spies.append(
                        (name, subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out)  # noqa: ASYNC220
                    )
            await asyncio.sleep(1.0)
        texts = [f"probe {n}: {t}" for n, t in enumerate(synthetic(args.writes, seed=21))]
        before = process_cpu(root)
        result["load"] = await remember_load(client, texts, args.writers)
        after = process_cpu(root)
        for _, spy, _ in spies:
            spy.send_signal(2)
        for name, spy, out in spies:
            spy.wait(timeout=60)
            if out.exists():
                result[f"profile_{name}"] = summarize_raw(out, args.top)
        if args.drain:  # the pipeline's whole work for these writes: every process's CPU until it is idle
            result["drain_s"] = round(await wait_pipeline_idle(database_url, stack["nats_url"]), 1)
            drained = process_cpu(root)
            result["cpu_ms_per_write_drained"] = {
                k: round((v - before.get(k, 0.0)) / args.writes * 1000, 2)
                for k, v in sorted(drained.items(), key=lambda kv: -(kv[1] - before.get(kv[0], 0.0)))
            }
        if args.statements:
            least = 0.02 if args.drain else 0.25  # drained: the pipeline's statements per batch too
            result["statements"] = await statements_per(database_url, args.writes, reset=False, least=least)
            result["statements_per_write"] = result["statements"].pop()["calls_per_write"]
        if args.recalls:  # after the writes: recalls at 4 clients over what was written, CPU per recall
            await asyncio.sleep(args.settle_s)
            per_client = max(1, args.recalls // 4)
            if args.statements:
                await statements_per(database_url, 1, reset=True)
            recall_before = process_cpu(root)
            result["recall"] = await recall_load(client, args.recall_mode, 4, per_client)
            recall_after = process_cpu(root)
            if args.statements:  # every statement a recall causes: gateway (key, rate limit) and recall
                per_recall = await statements_per(database_url, 4 * per_client, reset=False, unit="recall")
                result["recall_statements"] = per_recall
                result["statements_per_recall"] = per_recall.pop()["calls_per_recall"]
            recalled = {
                k: round((v - recall_before.get(k, 0.0)) / (4 * per_client) * 1000, 2) for k, v in recall_after.items()
            }
            result["cpu_ms_per_recall"] = dict(sorted(recalled.items(), key=lambda kv: -kv[1]))
    cpu = {k: round((v - before.get(k, 0.0)) / args.writes * 1000, 2) for k, v in after.items()}
    result["cpu_ms_per_write"] = dict(sorted(cpu.items(), key=lambda kv: -kv[1]))
    result["acknowledged_path_ms"] = round(sum(cpu.get(k, 0.0) for k in ACKNOWLEDGED), 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=400, help="measured remembers")
    parser.add_argument("--warmup", type=int, default=100, help="remembers before the measured ones")
    parser.add_argument("--settle-s", type=float, default=10.0, help="pause after the warm-up")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--source", type=Path, default=HERE.parent, help="the checkout `engram up` runs from")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for every service (repeatable)")
    parser.add_argument(
        "--statements", action="store_true", help="load pg_stat_statements; statements per write and per recall"
    )
    parser.add_argument("--py-spy", help="path of a py-spy binary: profile gateway and ingest during the writes")
    parser.add_argument("--profile-dir", type=Path, default=Path(tempfile.gettempdir()) / "remember-cpu-profiles")
    parser.add_argument("--label", default="run", help="names the profile files and the printed result")
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    parser.add_argument("--out", type=Path, help="also write the result here (JSON)")
    parser.add_argument("--bulk", type=int, default=0, help="memories bulk-loaded into the tenant before the warm-up")
    parser.add_argument(
        "--drain", action="store_true", help="after the writes, wait for the pipeline to go idle: its CPU per write too"
    )
    parser.add_argument("--recalls", type=int, default=0, help="after the writes, this many recalls at 4 clients")
    parser.add_argument("--recall-mode", default="keyword", help="the recalls' mode (keyword: no query embedding)")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=args.source)
    scratch = Path(tempfile.mkdtemp(prefix="remember-cpu-", dir="/tmp"))
    started = time.perf_counter()
    process, url, key = start(args.source.resolve(), scratch / "home", env, args.statements)
    try:
        result = asyncio.run(run(args, url, key, process.pid, scratch / "home"))
    finally:
        process.terminate()
        process.wait(timeout=90)
        shutil.rmtree(scratch, ignore_errors=True)
    loadavg = os.getloadavg()
    report = {
        "label": args.label,
        "commit": commit.stdout.strip(),
        "env": env,
        "writes": args.writes,
        "writers": args.writers,
        "load_average": [round(x, 1) for x in loadavg],
        "seconds": round(time.perf_counter() - started),
        **result,
    }
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
