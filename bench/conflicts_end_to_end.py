"""Labelled conflicts through the real pipeline: each pair of bench/data/conflicts written through the REST API of
a stack this benchmark starts (``engram up``: embedder, classifier and conflicts consumer running), and the
conflicts the consumer opened counted against the labels, per batch.

    BENCH_PORT=18310 python bench/conflicts_end_to_end.py [--batches 1,2,3] [--checkout PATH]

Each pair gets a workspace of its own (the consumer compares only within a workspace, so pairs never meet), and
both memories are written by the development admin, so with one authority, without a kind: the classifier gives
them one, as it would to a user's ``remember``. Every pair's existing memory is written first; once the pipeline
is idle (every stage done), the new memories are written, and the run waits again. Then, per pair, the conflicts
opened between its two memories (``contradiction``, ``refinement``, ``duplicate``), the kinds both memories ended
with, and whether the new memory's conflict check compared anything.

Figures per batch: precision and recall of contradiction conflicts against the ``contradiction`` label (a
compatible pair with a contradiction conflict is a false positive), the pairs with any conflict, and the same
split by whether the two memories ended with the same kind. The "offline" line is tests/support/conflicts_eval.py
on the committed vectors (the rules with no kind in the way): what the consumer would open if it compared every
pair.

``--explain N`` ends with the plan (``EXPLAIN (ANALYZE, BUFFERS)``, as the services' role in the tenant) of the
consumer's neighbour query as engram/db/conflicts.py writes it (across kinds) and with the kind filter of before
(one kind), for a memory of a workspace of N more: bench/latency.py's bulk memories (200 distinct texts), a third
of them made ``decision`` and a sixth ``observation``, loaded into the development workspace after the run.

``--checkout PATH`` starts the stack from another checkout's code (``git archive <commit> | tar -x -C PATH``),
which is how the "before" figures were taken; the pairs and the scoring are always this checkout's. Reads only
committed data; writes nothing into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import launch  # noqa: E402

from tests.support.conflicts_eval import Pair, load_pairs, score, stored_vectors  # noqa: E402

ADMIN_ID = "00000000-0000-4000-8000-000000000004"  # the development admin principal the dev key belongs to


@dataclass
class Case:
    batch: str
    pair: Pair
    workspace_id: str = ""
    existing_id: str = ""
    new_id: str = ""
    kinds: tuple[str, str] = ("", "")
    conflicts: list[str] = field(default_factory=list)
    compared: bool = False
    refused: str = ""  # why remember refused one of the two memories (422)


def start_stack(home: Path, checkout: Path) -> tuple[subprocess.Popen[str], str, str]:
    """``engram up`` from ``checkout``'s code (services inherit its directory and PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    return launch(env, home, checkout)


async def in_parallel(cases: list[Case], work: object, writers: int) -> None:
    queue: asyncio.Queue[Case] = asyncio.Queue()
    for case in cases:
        queue.put_nowait(case)

    async def worker() -> None:
        while not queue.empty():
            await work(queue.get_nowait())  # type: ignore[operator]

    await asyncio.gather(*(worker() for _ in range(writers)))


async def wait_idle(conn: asyncpg.Connection, item_ids: list[str], within_s: float = 3600) -> float:
    """Until every one of ``item_ids`` has its classification and conflict check done (or failed)."""
    started = time.perf_counter()
    while True:
        left = await conn.fetchval(
            """SELECT count(*) FROM unnest($1::uuid[]) AS x(id)
               WHERE (SELECT count(*) FROM item_stages s WHERE s.item_id = x.id
                        AND s.stage IN ('classification', 'conflict_check') AND s.status <> 'pending') < 2""",
            item_ids,
        )
        if left == 0:
            return time.perf_counter() - started
        if time.perf_counter() - started > within_s:
            raise TimeoutError(f"{left} memories not through the pipeline")
        await asyncio.sleep(1.0)


async def run(cases: list[Case], url: str, key: str, database_url: str, writers: int) -> dict[str, float]:
    timings: dict[str, float] = {}
    limits = httpx.Limits(max_connections=writers * 2, max_keepalive_connections=writers * 2)
    async with httpx.AsyncClient(
        base_url=url, timeout=120, limits=limits, headers={"authorization": f"Bearer {key}"}
    ) as client:

        async def workspace(case: Case) -> None:
            name = f"conflicts {case.batch}:{case.pair.id} {time.time_ns()}"
            created = await client.post("/v1/admin/workspaces", json={"name": name})
            created.raise_for_status()
            case.workspace_id = created.json()["id"]
            member = {"principal_id": ADMIN_ID, "role": "owner"}
            (await client.post(f"/v1/admin/workspaces/{case.workspace_id}/members", json=member)).raise_for_status()

        async def write(case: Case, which: str) -> None:
            if case.refused:
                return
            body = {"content": getattr(case.pair, which), "workspace_id": case.workspace_id}
            response = await client.post("/v1/remember", json=body)
            if response.status_code == 422:  # the secret guard, say: the pair is left out, and counted
                case.refused = f"{which}: {response.json().get('code')}"
                return
            response.raise_for_status()
            setattr(case, f"{which}_id", response.json()["id"])

        async def existing(case: Case) -> None:
            await write(case, "existing")

        async def new(case: Case) -> None:
            await write(case, "new")

        conn = await asyncpg.connect(database_url)
        try:
            started = time.perf_counter()
            await in_parallel(cases, workspace, writers)
            await in_parallel(cases, existing, writers)
            timings["existing_written_s"] = round(time.perf_counter() - started, 1)
            stored = [c for c in cases if not c.refused]
            timings["existing_idle_s"] = round(await wait_idle(conn, [c.existing_id for c in stored]), 1)
            started = time.perf_counter()
            await in_parallel(cases, new, writers)
            timings["new_written_s"] = round(time.perf_counter() - started, 1)
            stored = [c for c in cases if not c.refused]
            timings["new_idle_s"] = round(await wait_idle(conn, [c.new_id for c in stored]), 1)
            for case in stored:
                kinds = await conn.fetch(
                    "SELECT id, kind FROM memory_items WHERE id = ANY($1::uuid[])", [case.existing_id, case.new_id]
                )
                by_id = {str(r["id"]): r["kind"] for r in kinds}
                case.kinds = (by_id[case.existing_id], by_id[case.new_id])
                case.conflicts = [
                    r["type"]
                    for r in await conn.fetch(
                        """SELECT type FROM conflicts WHERE least(item_a, item_b) = least($1::uuid, $2::uuid)
                             AND greatest(item_a, item_b) = greatest($1::uuid, $2::uuid)""",
                        case.existing_id,
                        case.new_id,
                    )
                ]
                detail = await conn.fetchval(
                    "SELECT detail FROM item_stages WHERE item_id = $1 AND stage = 'conflict_check'", case.new_id
                )
                head = str(detail or "").split(" ", 1)[0]  # "<n> near memories compared: …" or "<kind> is episodic…"
                case.compared = head.isdigit() and int(head) > 0
        finally:
            await conn.close()
    return timings


class _Captured(Exception):
    def __init__(self, sql: str, args: tuple[object, ...]) -> None:
        self.sql, self.args = sql, args


class _Capture:
    """A connection that records the neighbour query engram/db/conflicts.py sends, instead of running it."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def execute(self, sql: str, *args: object) -> str:
        return str(await self.conn.execute(sql, *args))

    async def fetch(self, sql: str, *args: object) -> list[object]:
        raise _Captured(sql, args)


async def explain(database_url: str, item_id: str) -> dict[str, str]:
    """The plans of the neighbour query for ``item_id``, across kinds and within its kind."""
    from pgvector.asyncpg import register_vector

    from engram.config import Settings
    from engram.db import conflicts, embeddings, items
    from services.conflicts.service import EPISODIC_KINDS

    settings = Settings()
    conn = await asyncpg.connect(database_url)
    await register_vector(conn)
    plans: dict[str, str] = {}
    try:
        tenant = str(await conn.fetchval("SELECT tenant_id FROM memory_items WHERE id = $1", item_id))
        async with conn.transaction():
            await conn.execute(f"SET LOCAL ROLE {settings.app_role}")
            await conn.execute("SELECT set_config('app.tenant_id', $1, true)", tenant)
            item = await items.get(conn, item_id)
            vector = await embeddings.vector(conn, item_id, settings.embedding_profile)
            assert item is not None and vector is not None
            try:
                await conflicts.nearest_live(
                    _Capture(conn),  # type: ignore[arg-type]
                    item,
                    vector,
                    settings.embedding_profile,
                    settings.embedding_dimensions,
                    5,
                    settings.conflict_similarity_floor - 0.05,
                    EPISODIC_KINDS,
                )
            except _Captured as captured:
                sql, args = captured.sql, list(captured.args)
            one_kind = sql.replace("i.kind <> ALL($4::text[])", "i.kind = ANY($4::text[])")
            for name, text, values in (
                ("across kinds", sql, args),
                ("one kind", one_kind, [*args[:3], [item.kind], *args[4:]]),
            ):
                rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + text, *values)
                plans[name] = "\n".join(r[0] for r in rows)
    finally:
        await conn.close()
    return plans


async def explain_bulk(database_url: str, n: int) -> dict[str, str]:
    """``n`` bulk memories of mixed kinds in the development workspace, then the plans for one of them."""
    sys.path.insert(0, str(ROOT / "bench"))
    from latency import bulk_load, development_owner

    owner = development_owner()
    await bulk_load(database_url, n, distinct=200, owner=owner)
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():
            await conn.execute("SELECT set_config('app.tenant_id', $1, true)", str(owner.tenant_id))
            await conn.execute(
                """UPDATE memory_items SET kind = CASE WHEN n % 6 < 2 THEN 'decision' ELSE 'observation' END
                   FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM memory_items
                         WHERE workspace_id = $1) numbered
                   WHERE memory_items.id = numbered.id AND numbered.n % 6 < 3""",
                owner.workspace_id,
            )
        await conn.execute("ANALYZE memory_items")
        item_id = str(
            await conn.fetchval(
                "SELECT id FROM memory_items WHERE workspace_id = $1 AND kind = 'fact' LIMIT 1", owner.workspace_id
            )
        )
    finally:
        await conn.close()
    return await explain(database_url, item_id)


def figures(cases: list[Case]) -> dict[str, object]:
    def pr(subset: list[Case]) -> dict[str, object]:
        tp = sum(c.pair.label == "contradiction" and "contradiction" in c.conflicts for c in subset)
        fp = sum(c.pair.label != "contradiction" and "contradiction" in c.conflicts for c in subset)
        positives = sum(c.pair.label == "contradiction" for c in subset)
        return {
            "pairs": len(subset),
            "contradictions": positives,
            "tp": tp,
            "fp": fp,
            "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
            "recall": round(tp / positives, 3) if positives else 1.0,
        }

    same = [c for c in cases if c.kinds[0] == c.kinds[1]]
    other = [c for c in cases if c.kinds[0] != c.kinds[1]]
    opened = Counter(t for c in cases for t in c.conflicts)
    by_type: dict[str, dict[str, int]] = {}
    for c in cases:
        row = by_type.setdefault(f"{c.pair.label}/{c.pair.type}", Counter())
        row["pairs"] += 1
        for t in c.conflicts:
            row[t] += 1
    return {
        "all": pr(cases),
        "same_final_kind": pr(same),
        "other_final_kinds": pr(other),
        "compared": sum(c.compared for c in cases),
        "conflicts_opened": dict(opened),
        "by_label_type": {k: dict(v) for k, v in sorted(by_type.items())},
        "kind_pairs": dict(Counter(f"{c.kinds[0]}/{c.kinds[1]}" for c in cases).most_common()),
        "missed": [  # labelled contradictions with no contradiction conflict: id, final kinds, compared at all
            f"{c.pair.id} {c.kinds[0]}/{c.kinds[1]}{'' if c.compared else ' (not compared)'}"
            for c in cases
            if c.pair.label == "contradiction" and "contradiction" not in c.conflicts
        ],
    }


def offline(pairs: list[Pair]) -> dict[str, object]:
    s = score(pairs, stored_vectors())
    return {
        "tp": s.true_positives,
        "fp": s.false_positives,
        "precision": round(s.precision, 3),
        "recall": round(s.recall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,2,3", help="batches of bench/data/conflicts, comma-separated")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the code the stack runs (default: this one)")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--limit", type=int, default=0, help="at most this many pairs a batch (0: all)")
    parser.add_argument("--explain", type=int, default=0, help="print the neighbour query's plans in a workspace of N")
    args = parser.parse_args()
    cases = []
    for batch in args.batches.split(","):
        pairs = load_pairs(None, batch)
        cases += [Case(batch, p) for p in (pairs[: args.limit] if args.limit else pairs)]
    checkout = args.checkout.resolve()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    home = Path(tempfile.mkdtemp(prefix="engram-conflicts-e2e-", dir="/tmp")) / "home"
    started = time.perf_counter()
    process, url, key = start_stack(home, checkout)
    print(f"stack ({checkout}) ready in {time.perf_counter() - started:.1f}s at {url}", flush=True)
    try:
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        timings = asyncio.run(run(cases, url, key, database_url, args.writers))
        plans = asyncio.run(explain_bulk(database_url, args.explain)) if args.explain else {}
    finally:
        process.terminate()
        process.wait(timeout=60)
    report: dict[str, object] = {"scoring_commit": commit.stdout.strip(), "stack_code": str(checkout), **timings}
    report["refused"] = {f"{c.batch}:{c.pair.id}": c.refused for c in cases if c.refused}
    for batch in args.batches.split(","):  # a pair remember refused is left out of both figures
        subset = [c for c in cases if c.batch == batch and not c.refused]
        report[f"batch {batch}"] = {"end_to_end": figures(subset), "offline": offline([c.pair for c in subset])}
    print(json.dumps(report, indent=2))
    for name, plan in plans.items():
        print(f"--- neighbour query, {name}\n{plan}")


if __name__ == "__main__":
    main()
