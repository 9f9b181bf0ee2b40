"""possible_supersedes through ingest's trigram sketches (services/ingest/supersedes.py): do the Python trigrams
give pg_trgm's similarity, does the sketch pass over any pair that reaches the threshold, and where does the
time go?

    python bench/supersedes_cache.py         # starts an embedded PostgreSQL in a temp dir

1. Every MSRP sentence pair (train, val, test; read from ../shared/bench/msrp at run time): pg_trgm's
   ``similarity`` against the Python trigrams' (``engram.domain.trigrams.similarity``) and the sketch's
   ``estimate``; precision / recall on test at the threshold of plain ``similarity()`` and of the cached path
   (a pair is scored by PostgreSQL only when its estimate reaches the threshold less ``MARGIN``).
2. Cost in PostgreSQL over a window of 500 synthetic memories (latency.py's templates): reading the window,
   ``show_trgm`` of each row (the extraction of one text), ``similarity()`` of each row with a query (two
   extractions and the comparison), and ``similarity()`` on the few ids the sketches pick; and in Python the
   sketches' comparison of a query with the 500. Median of repeated runs, on whatever load the machine has.
"""

from __future__ import annotations

import asyncio
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import synthetic

from engram.domain import trigrams
from engram.runtime.postgres import EmbeddedPostgres

DATA = next(
    (p / "shared" / "bench" for p in Path(__file__).resolve().parents[1:4] if (p / "shared" / "bench").exists()),
    Path(__file__).resolve().parents[2] / "shared" / "bench",
)
THRESHOLD = 0.35


def msrp(split: str) -> list[tuple[int, str, str]]:
    with (DATA / "msrp" / f"msr-para-{split}.tsv").open(encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [(int(r[0]), r[3], r[4]) for r in rows if len(r) >= 5]


def pr(labels: list[int], chosen: list[bool]) -> tuple[float, float]:
    tp = sum(1 for label, c in zip(labels, chosen, strict=True) if c and label)
    fp = sum(1 for label, c in zip(labels, chosen, strict=True) if c and not label)
    fn = sum(1 for label, c in zip(labels, chosen, strict=True) if not c and label)
    return tp / (tp + fp), tp / (tp + fn)


async def corpus(conn: asyncpg.Connection) -> None:
    floor = THRESHOLD - trigrams.MARGIN
    for split in ("train", "val", "test"):
        pairs = msrp(split)
        pg = [
            float(r["s"])
            for r in await conn.fetch(
                "SELECT similarity(a, b) AS s FROM unnest($1::text[], $2::text[]) WITH ORDINALITY t(a, b, n) "
                "ORDER BY n",
                [p[1] for p in pairs],
                [p[2] for p in pairs],
            )
        ]
        exact = [trigrams.similarity(trigrams.trigrams(a), trigrams.trigrams(b)) for _, a, b in pairs]
        estimate = [trigrams.estimate(trigrams.sketch(a), trigrams.sketch(b)) for _, a, b in pairs]
        differ = [abs(p - e) for p, e in zip(pg, exact, strict=True)]
        below = [e - p for p, e in zip(pg, estimate, strict=True)]
        missed = sum(1 for p, e in zip(pg, estimate, strict=True) if p >= THRESHOLD and e < floor)
        print(
            f"{split}: {len(pairs)} pairs; |Python − pg_trgm| max {max(differ):.2e}, pairs differing by > 1e-6: "
            f"{sum(d > 1e-6 for d in differ)}; estimate − pg_trgm min {min(below):+.4f} max {max(below):+.4f}; "
            f"pairs at ≥ {THRESHOLD} the sketches pass over: {missed}; pairs sent to PostgreSQL: "
            f"{sum(e >= floor for e in estimate)}"
        )
        if split == "test":
            labels = [p[0] for p in pairs]
            plain = pr(labels, [p >= THRESHOLD for p in pg])
            cached = pr(labels, [p >= THRESHOLD and e >= floor for p, e in zip(pg, estimate, strict=True)])
            print(
                f"test P / R at {THRESHOLD}: similarity() {plain[0]:.3f} / {plain[1]:.3f}; "
                f"cached path {cached[0]:.3f} / {cached[1]:.3f}"
            )


async def timed(conn: asyncpg.Connection, sql: str, *args: object, runs: int = 30) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await conn.fetch(sql, *args)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def costs(conn: asyncpg.Connection) -> None:
    texts = synthetic(501, seed=7)
    query, window = texts[0], texts[1:]
    await conn.execute("CREATE TABLE w (id serial PRIMARY KEY, content text)")
    await conn.executemany("INSERT INTO w (content) VALUES ($1)", [(t,) for t in window])
    await conn.execute("VACUUM ANALYZE w")
    sketches = [(n, trigrams.sketch(t)) for n, t in enumerate(window, start=1)]
    q = trigrams.sketch(query)
    chosen = [int(key) for _, key in trigrams.candidates(q, sketches, THRESHOLD - trigrams.MARGIN)]  # type: ignore[call-overload]
    grams = trigrams.trigrams(query)
    reach = sum(trigrams.similarity(grams, trigrams.trigrams(window[n - 1])) >= THRESHOLD for n in chosen)
    print(
        f"window of {len(window)} (mean {statistics.mean(map(len, window)):.0f} characters); "
        f"the sketches pick {len(chosen)}, of which "
        f"{reach} "
        f"reach {THRESHOLD}"
    )
    rows = [
        ("read the window (ids)", "SELECT id FROM w"),
        ("read the window (texts)", "SELECT left(content, 1000) FROM w"),
        ("show_trgm of each row (one text's trigrams)", "SELECT show_trgm(left(content, 1000)) FROM w"),
        ("similarity() of each row with the query (today)", "SELECT similarity(left(content, 1000), $1) FROM w"),
    ]
    for label, sql in rows:
        args = (query,) if "$1" in sql else ()
        print(f"  PostgreSQL, {label}: {await timed(conn, sql, *args):.2f} ms")
    picked = await timed(
        conn, "SELECT similarity(left(content, 1000), $1) FROM w WHERE id = ANY($2::int[])", query, chosen
    )
    print(f"  PostgreSQL, similarity() of the {len(chosen)} picked: {picked:.2f} ms")
    best = await timed(
        conn, "SELECT similarity(left(content, 1000), $1) FROM w WHERE id = ANY($2::int[])", query, chosen[:10]
    )
    print(f"  PostgreSQL, similarity() of the 10 best estimates (what a remember scores first): {best:.2f} ms")
    samples = []
    for _ in range(30):
        started = time.perf_counter()
        trigrams.candidates(trigrams.sketch(query), sketches, THRESHOLD - trigrams.MARGIN)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"  Python, the query's sketch and its comparison with the 500: {statistics.median(samples):.2f} ms")
    samples = []
    for text in window[:100]:
        started = time.perf_counter()
        trigrams.sketch(text)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"  Python, one window item's sketch (a cache miss): {statistics.median(samples):.3f} ms")


async def main(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        if (DATA / "msrp").exists():
            await corpus(conn)
        else:
            print(f"MSRP not found at {DATA / 'msrp'}: the corpus part is skipped")
        await costs(conn)
    finally:
        await conn.close()


if __name__ == "__main__":
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="engram-supersedes-", dir="/tmp")) / "pgdata")
    try:
        asyncio.run(main(server.start()))
    finally:
        server.stop()
