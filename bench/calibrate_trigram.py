"""Calibrate the trigram-similarity threshold behind ``possible_supersedes`` on the Microsoft Research
Paraphrase Corpus: choose the threshold with the best F1 on train + val, report precision and recall on test.

    python bench/calibrate_trigram.py        # starts an embedded PostgreSQL in a temp dir (pg_trgm's own similarity)

The corpus is loaded from ../shared/bench/msrp at run time (non-commercial licence; never copied here).
"""

from __future__ import annotations

import asyncio
import csv
import sys
import tempfile
from pathlib import Path

import asyncpg

from engram.runtime.postgres import EmbeddedPostgres

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "msrp"


def load(name: str) -> list[tuple[int, str, str]]:
    with (DATA / f"msr-para-{name}.tsv").open(encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [(int(r[0]), r[3], r[4]) for r in rows if len(r) >= 5]


async def similarities(url: str, pairs: list[tuple[int, str, str]]) -> list[tuple[int, float]]:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        values = await conn.fetch(
            "SELECT similarity(a, b) AS s FROM unnest($1::text[], $2::text[]) AS t(a, b)",
            [p[1] for p in pairs],
            [p[2] for p in pairs],
        )
    finally:
        await conn.close()
    return [(label, float(v["s"])) for (label, _, _), v in zip(pairs, values, strict=True)]


def scores(scored: list[tuple[int, float]], threshold: float) -> tuple[float, float, float]:
    tp = sum(1 for label, s in scored if s >= threshold and label == 1)
    fp = sum(1 for label, s in scored if s >= threshold and label == 0)
    fn = sum(1 for label, s in scored if s < threshold and label == 1)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> None:
    if not DATA.exists():
        sys.exit(f"MSRP data not found at {DATA}")
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="engram-calib-", dir="/tmp")) / "pgdata")
    url = server.start()
    try:
        tune = asyncio.run(similarities(url, load("train") + load("val")))
        test = asyncio.run(similarities(url, load("test")))
    finally:
        server.stop()
    candidates = [round(0.05 * i, 2) for i in range(2, 19)]
    best = max(candidates, key=lambda t: scores(tune, t)[2])
    print("threshold  train+val P / R / F1")
    for t in candidates:
        p, r, f = scores(tune, t)
        print(f"{t:9.2f}  {p:.3f} / {r:.3f} / {f:.3f}{'   <- best F1' if t == best else ''}")
    p, r, f = scores(test, best)
    print(f"test at {best}: precision {p:.3f}, recall {r:.3f}, F1 {f:.3f} ({len(test)} pairs)")
    strict = min((t for t in candidates if scores(tune, t)[0] >= 0.8), default=None)
    if strict is not None:
        p, r, f = scores(test, strict)
        print(
            f"test at {strict} (lowest threshold with train+val precision ≥ 0.8): precision {p:.3f}, "
            f"recall {r:.3f}, F1 {f:.3f}"
        )


if __name__ == "__main__":
    main()
