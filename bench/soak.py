"""Soak: N writers and M readers against `engram up` for T minutes, then reconcile.

    python bench/soak.py --writers 4 --readers 2 --minutes 10        # starts its own stack in a temp dir
    python bench/soak.py --url http://127.0.0.1:8080 --key "$(cat .engram/dev-key)" \\
        --database-url postgresql://postgres@127.0.0.1:5432/postgres --minutes 10      # a running stack

Writers remember distinct texts (a short pause between requests); readers alternate recall, search and reading
back an acknowledged item. At the end, once the pipeline has caught up, every acknowledged write must be stored
once, embedded once and classified once, and no request may have failed. The memory (RSS and USS) of every
process of the stack (gateway, ingest, recall, the consumers, NATS, the PostgreSQL postmaster and all its
backends together) is sampled every 30 s; the report gives it after the warm-up, at the middle and at the end.
Choose a write rate the embedder keeps up with (``--pause-s``): on 2 shared cores that is about 3-4 writes a
second; faster, the backlog grows for the whole run and the reconciliation waits for it.
Writes bench/results/soak-<date>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_EVERY_S = 30.0
SERVICES = ("gateway", "ingest", "recall", "embedder", "classifier", "conflicts", "promotion")
TOPICS = ["billing", "search", "onboarding", "the VPN", "staging", "payroll", "the wiki", "backups"]
PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Esther", "Farid", "Grace", "Hiro"]


class Soak:
    """The clients and what they were told."""

    def __init__(self, url: str, key: str, run: str, pause_s: float) -> None:
        self.url, self.key, self.run, self.pause_s = url, key, run, pause_s
        self.acknowledged: dict[str, str] = {}
        self.deduplicated = 0
        self.reads = 0
        self.errors: Counter[str] = Counter()
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, headers={"authorization": f"Bearer {self.key}"})

    def request(self, client: httpx.Client, method: str, path: str, body: object = None) -> httpx.Response | None:
        try:
            answer = client.request(method, path, json=body)
        except httpx.HTTPError as exc:
            with self.lock:
                self.errors[f"{method} {path.split('/')[2]}: {type(exc).__name__}"] += 1
            return None
        if answer.status_code >= 300:
            with self.lock:
                self.errors[f"{method} {path.split('/')[2]}: {answer.status_code}"] += 1
            return None
        return answer

    def writer(self, number: int) -> None:
        rng = random.Random(number)
        with self.client() as client:
            n = 0
            while not self.stop.is_set():
                text = (
                    f"Soak {self.run} w{number} #{n}: {rng.choice(PEOPLE)} now owns {rng.choice(TOPICS)} "
                    f"for release {rng.randint(1, 400)}."
                )
                n += 1
                answer = self.request(client, "POST", "/v1/remember", {"content": text})
                if answer is not None:
                    with self.lock:
                        self.acknowledged[answer.json()["id"]] = text
                        self.deduplicated += answer.status_code == 200
                time.sleep(self.pause_s)

    def reader(self, number: int) -> None:
        rng = random.Random(1000 + number)
        with self.client() as client:
            while not self.stop.is_set():
                pick = rng.random()
                with self.lock:
                    known = list(self.acknowledged) if pick < 0.34 else []
                if known:
                    answer = self.request(client, "GET", f"/v1/items/{rng.choice(known)}")
                elif pick < 0.67:
                    query = f"who owns {rng.choice(TOPICS)}?"
                    answer = self.request(client, "POST", "/v1/recall", {"query": query, "item_budget": 5})
                else:
                    answer = self.request(
                        client, "POST", "/v1/search", {"query": rng.choice(PEOPLE), "mode": "keyword"}
                    )
                if answer is not None:
                    with self.lock:
                        self.reads += 1
                time.sleep(self.pause_s)


# -- the processes of the stack ----------------------------------------------------------------------------------


def stack_processes(root_pid: int) -> dict[str, list[psutil.Process]]:
    """The stack's processes by role: each service, nats, postgres (postmaster and backends), engram up."""
    root = psutil.Process(root_pid)
    roles: dict[str, list[psutil.Process]] = {"engram up": [root]}
    for child in root.children(recursive=True):
        try:
            name, cmdline = child.name(), " ".join(child.cmdline())
        except psutil.Error:
            continue
        role = next((s for s in SERVICES if f"services.{s}" in cmdline), None)
        if role is None:
            role = "nats" if name == "nats-server" else "postgres (all)" if name == "postgres" else name
        roles.setdefault(role, []).append(child)
    return roles


def memory_mb(root_pid: int) -> dict[str, dict[str, float]]:
    """Per role, resident (RSS) and unique (USS) memory. PostgreSQL's backends each count the shared buffers
    they touched in their RSS, so its sum overstates; their USS adds up to what they hold on their own."""
    sample: dict[str, dict[str, float]] = {}
    for role, processes in stack_processes(root_pid).items():
        rss = uss = 0
        for process in processes:
            try:
                info = process.memory_full_info()
            except psutil.Error:
                continue
            rss, uss = rss + info.rss, uss + info.uss
        sample[role] = {"rss": round(rss / 2**20, 1), "uss": round(uss / 2**20, 1)}
    return dict(sorted(sample.items()))


def pids(root_pid: int) -> dict[str, list[int]]:
    """The pid of each service, NATS and the postmaster: a restart during the soak would change one."""
    roles = stack_processes(root_pid)
    postmaster = [p.pid for p in roles.get("postgres (all)", []) if p.ppid() == root_pid]
    return {role: sorted(p.pid for p in roles.get(role, [])) for role in (*SERVICES, "nats")} | {"postgres": postmaster}


# -- reconciliation -----------------------------------------------------------------------------------------------


async def effects(database_url: str, ids: list[str]) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM memory_items WHERE id = ANY($1::uuid[])) AS stored,
                      (SELECT count(DISTINCT item_id) FROM memory_embeddings WHERE item_id = ANY($1::uuid[]))
                          AS embedded,
                      (SELECT count(*) FROM memory_embeddings WHERE item_id = ANY($1::uuid[])) AS vectors,
                      (SELECT count(DISTINCT item_id) FROM classification_receipts WHERE item_id = ANY($1::uuid[]))
                          AS classified,
                      (SELECT count(*) FROM classification_receipts WHERE item_id = ANY($1::uuid[])) AS receipts,
                      (SELECT count(*) FROM item_stages WHERE item_id = ANY($1::uuid[]) AND status = 'failed')
                          AS stages_failed""",
            ids,
        )
        return dict(row)
    finally:
        await conn.close()


async def reconcile(database_url: str, ids: list[str], within_s: float) -> tuple[dict[str, int], float]:
    """Wait for the pipeline to catch up with every acknowledged write; the counts and how long it took."""
    started = time.monotonic()
    while True:
        counts = await effects(database_url, ids)
        if counts["embedded"] == counts["classified"] == len(ids) or time.monotonic() - started > within_s:
            return counts, round(time.monotonic() - started, 1)
        await asyncio.sleep(2)


# -- the stack ------------------------------------------------------------------------------------------------------


def start_stack(
    home: Path, extra_env: dict[str, str] | None = None, source: Path = ROOT
) -> tuple[subprocess.Popen[bytes], str, str]:
    """`engram up` in ``home`` from the checkout ``source``, its output in a log file (a pipe nobody reads would
    fill and stall it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    if source != ROOT:
        env["PYTHONPATH"] = str(source)
    env.update(
        ENGRAM_HOME=str(home),
        ENGRAM_GATEWAY_PORT=os.environ.get("BENCH_PORT", "18182"),
        ENGRAM_RATE_LIMIT_REMEMBER_PER_MINUTE="1000000",  # the soak measures the stack, not the rate limits
        ENGRAM_RATE_LIMIT_RECALL_PER_MINUTE="1000000",
        ENGRAM_IP_RATE_LIMIT_PER_MINUTE="1000000",  # every client is 127.0.0.1
    )
    env.update(extra_env or {})
    home.mkdir(parents=True, exist_ok=True)
    log = (home.parent / "engram-up.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "engram.cli", "up"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=source
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        for line in (home.parent / "engram-up.log").read_text(errors="replace").splitlines():
            if line.startswith("gateway: "):
                return process, line.split(" ", 1)[1].strip(), (home / "dev-key").read_text().strip()
        time.sleep(0.5)
    process.terminate()
    raise RuntimeError(f"engram up was not ready; see {home.parent / 'engram-up.log'}")


def soak(args: argparse.Namespace, url: str, key: str, database_url: str, root_pid: int | None) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    clients = Soak(url, key, run, args.pause_s)
    threads = [threading.Thread(target=clients.writer, args=(n,), daemon=True) for n in range(args.writers)]
    threads += [threading.Thread(target=clients.reader, args=(n,), daemon=True) for n in range(args.readers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    duration = args.minutes * 60
    series: list[dict[str, Any]] = []
    pids_at_start = pids(root_pid) if root_pid else {}
    while (elapsed := time.monotonic() - started) < duration:
        if root_pid:
            series.append({"t_s": round(elapsed), "memory_mb": memory_mb(root_pid)})
        with clients.lock:
            print(
                f"{elapsed:6.0f}s  acknowledged {len(clients.acknowledged)}  reads {clients.reads}  "
                f"errors {sum(clients.errors.values())}",
                flush=True,
            )
        time.sleep(min(SAMPLE_EVERY_S, max(0.0, duration - elapsed)))
    clients.stop.set()
    for thread in threads:
        thread.join(timeout=120)
    if root_pid:
        series.append({"t_s": round(time.monotonic() - started), "memory_mb": memory_mb(root_pid)})
    ids = list(clients.acknowledged)
    counts, caught_up_s = asyncio.run(reconcile(database_url, ids, args.catch_up_minutes * 60))
    warm = series[1] if len(series) > 2 else series[0] if series else None
    reconciled = (
        counts["stored"] == counts["embedded"] == counts["classified"] == len(ids)
        and counts["vectors"] == counts["receipts"] == len(ids)
        and counts["stages_failed"] == 0
    )
    return {
        "writers": args.writers,
        "readers": args.readers,
        "minutes": args.minutes,
        "pause_s": args.pause_s,
        "acknowledged": len(ids),
        "deduplicated_answers": clients.deduplicated,
        "reads": clients.reads,
        "writes_per_s": round(len(ids) / duration, 1),
        "reads_per_s": round(clients.reads / duration, 1),
        "errors": dict(clients.errors),
        "effects": counts,
        "pipeline_caught_up_after_s": caught_up_s,
        "reconciled": reconciled and not clients.errors,
        "restarted": {k: v for k, v in pids(root_pid).items() if v != pids_at_start.get(k)} if root_pid else {},
        "memory_mb": {
            "after_warm_up": warm,
            "middle": series[len(series) // 2] if series else None,
            "end": series[-1] if series else None,
        },
        "memory_series": series,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--pause-s", type=float, default=0.05, help="each client's pause between requests")
    parser.add_argument("--catch-up-minutes", type=float, default=15, help="most to wait for the pipeline at the end")
    parser.add_argument("--url", help="gateway of a running stack (default: start one)")
    parser.add_argument("--key", default=os.environ.get("ENGRAM_API_KEY", ""), help="API key for --url")
    parser.add_argument("--database-url", help="the running stack's database (owner URL), for the reconciliation")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    process = None
    url, key, database_url, root_pid = args.url, args.key, args.database_url, None
    if url is None:
        home = Path(tempfile.mkdtemp(prefix="engram-soak-", dir="/tmp")) / "home"
        process, url, key = start_stack(home)
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        root_pid = process.pid
        print(f"stack at {url} (log: {home.parent / 'engram-up.log'})", flush=True)
    if not database_url:
        parser.error("--database-url is needed with --url")
    try:
        results = soak(args, url, key, database_url, root_pid)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=120)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit.stdout.strip(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        **results,
    }
    out = ROOT / "bench" / "results" / f"soak-{datetime.now(UTC):%Y-%m-%d}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "memory_series"}, indent=2))
    print(f"written to {out.relative_to(ROOT)}")
    sys.exit(0 if report["reconciled"] else 1)


if __name__ == "__main__":
    main()
