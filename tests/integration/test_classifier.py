"""The classifier consumer and POST /v1/classify: rules always, a model when configured (against a local
OpenAI-compatible stub, so the real client runs), receipts, narrowing, idempotent redelivery."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any
from uuid import uuid4

import asyncpg
import httpx
import numpy as np
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.db import embeddings
from engram.domain.classification import Classification, PlacementRule
from engram.domain.classification import classify as classify_by_rules
from engram.domain.classification.placement import compiled
from engram.domain.models import CallerContext
from engram.domain.values import BUILT_IN_KINDS, EventType
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.llm import JsonChat
from engram.pipeline import classify as pipeline_classify
from engram.pipeline import kind_model
from engram.telemetry.metrics import KIND_VECTORS
from services.classifier.service import CONSUMER, ClassifierService
from services.embedder.service import EmbedderService
from tests.support.gateway import Headers, read_item, remember
from tests.support.llm_stub import ERROR, TIMEOUT, running_stub
from tests.support.outbox import deliver, outbox_envelopes, outbox_events

STEPS = "Clone the repo, run the setup script, then start the dev server."
DAY = "2023-05-08T13:56:00Z"


class Classify:
    """The embedder, then the classifier consumer on the memory.embedded events of the given memories, each in one
    batch, as the relay would deliver them; every event must be handled."""

    def __init__(
        self, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider
    ) -> None:
        self.app_pool = app_pool
        self.owner_pool = owner_pool
        self.service = ClassifierService(app_pool, settings)
        self.embedder = EmbedderService(app_pool, settings, embedder)

    async def __call__(self, *item_ids: str, settings: Settings | None = None) -> list[Event]:
        """The events handled; ``settings`` runs a consumer of other settings instead of this one."""
        service = self.service if settings is None else ClassifierService(self.app_pool, settings)
        await self.embed(*item_ids)
        events = await outbox_events(self.owner_pool, types=["memory.embedded"], subjects=item_ids)
        assert len(events) == len(item_ids) and await service.handle(events) == {}
        return events

    async def embed(self, *item_ids: str) -> None:
        created = await outbox_events(self.owner_pool, types=["memory.created"], subjects=item_ids)
        assert await self.embedder.handle(created) == {}


@pytest_asyncio.fixture
async def classify(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider
) -> Classify:
    return Classify(app_pool, owner_pool, settings, embedder)


async def _receipts(owner_pool: asyncpg.Pool, item_id: str) -> list[dict[str, Any]]:
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT classifier, fallback_reason, output, applied FROM classification_receipts "
            "WHERE item_id = $1 ORDER BY id",
            item_id,
        )
    return [{**dict(r), "output": json.loads(r["output"]), "applied": json.loads(r["applied"])} for r in rows]


async def test_rules_classify_and_apply_only_what_they_may(
    gateway: httpx.AsyncClient, who: Headers, classify: Classify, owner_pool: asyncpg.Pool
) -> None:
    placed = await gateway.patch(
        "/v1/admin/tenant-config",
        json={"placement_rules": [{"wing": "engineering", "room": "databases", "any_of": ["postgres", "ledger"]}]},
        headers=who,
    )
    assert placed.status_code == 200
    decided = await remember(gateway, who, "We decided to move the ledger to Postgres 16.")
    chosen = await remember(gateway, who, "We decided to keep the old dashboard.", kind="fact")
    personal = await remember(gateway, who, "Dana's phone number is +44 20 7946 0958.", visibility="tenant")
    chatter = await remember(gateway, who, "ok thanks!")
    events = await classify(decided, chosen, personal, chatter)
    assert await classify.service.handle(events) == {}  # redelivered: nothing changes twice

    item = await read_item(gateway, who, decided)
    assert item["kind"] == "decision" and item["kind_explicit"] is False
    assert (item["wing"], item["room"]) == ("engineering", "databases")
    assert item["retention"] == "retain" and 0 < item["taxonomy_confidence"] <= 0.95 and item["classified_at"]
    assert (await read_item(gateway, who, chosen))["kind"] == "fact"  # the writer's choice
    receipts = await _receipts(owner_pool, chosen)
    assert len(receipts) == 1 and "the writer chose the kind" in receipts[0]["output"]["notes"][0]
    narrowed = await read_item(gateway, who, personal)
    assert narrowed["visibility"] == "private" and narrowed["sensitivity"] == "personal"
    noise = await read_item(gateway, who, chatter)
    assert noise["retention"] == "noise" and noise["retention_confidence"] <= 0.95

    receipt = (await _receipts(owner_pool, decided))[0]
    assert receipt["classifier"] == "rules" and receipt["fallback_reason"] is None
    assert receipt["applied"]["kind"] == ["fact", "decision"]
    trail = (await gateway.get(f"/v1/items/{decided}/events", headers=who)).json()["events"]
    assert trail[-1]["action"] == "classified" and trail[-1]["new"]["kind"] == "decision"
    stages = (await gateway.get(f"/v1/items/{decided}/status", headers=who)).json()["stages"]
    assert {s["name"]: s["status"] for s in stages}["classification"] == "done"
    classified = await outbox_envelopes(owner_pool, types=["memory.classified"], subjects=[decided, personal])
    async with owner_pool.acquire() as conn:
        inbox = await conn.fetchval(
            "SELECT count(*) FROM consumer_inbox WHERE consumer = $1 AND event_id = ANY($2)",
            CONSUMER,
            [e.id for e in events],
        )
    assert len(classified) == 2 and inbox == 4
    data = {e["subject"]: e["data"] for e in classified}
    assert data[decided]["changed"] == [
        "kind",
        "retention",
        "retention_confidence",
        "room",
        "sensitivity",
        "taxonomy_confidence",
        "wing",
    ]
    assert data[personal]["visibility"] == "private" and "content" not in data[personal]


async def test_a_configured_model_is_used_and_any_bad_answer_falls_back_to_the_rules(
    gateway: httpx.AsyncClient, who: Headers, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings
) -> None:
    good = {
        "kind": "procedure",
        "retention": "retain",
        "sensitivity": "normal",
        "wing": "ops",
        "room": None,
        "taxonomy_confidence": 0.99,
        "retention_confidence": 0.8,
    }
    async with running_stub() as stub:
        llm = JsonChat(stub.base_url, "stub-model", "k", timeout_s=0.5)
        service = ClassifierService(app_pool, settings, llm)
        cases = [
            (good, "llm:stub-model", None),
            ("this is not json", "rules", "model unavailable"),
            ({**good, "extra": 1}, "rules", "invalid answer"),
            ({**good, "kind": "gossip"}, "rules", "invalid"),
            ({**good, "taxonomy_confidence": 1.5}, "rules", "invalid answer"),
            (TIMEOUT, "rules", "unavailable"),
            (ERROR, "rules", "unavailable"),
            ({**good, "sensitivity": "normal"}, "llm:stub-model", None),
        ]
        ids = [await remember(gateway, who, f"Restart the worker pool, case {n}.") for n in range(len(cases) - 1)]
        ids.append(await remember(gateway, who, "Email dana@example.com to restart the worker pool."))
        for item_id, (answer, classifier, fallback) in zip(ids, cases, strict=True):
            stub.answers.append(answer)
            assert await deliver(owner_pool, service.handle, types=["memory.created"], subjects=[item_id]) == {}
            receipt = (await _receipts(owner_pool, item_id))[0]
            assert receipt["classifier"] == classifier, (answer, receipt)
            assert (receipt["fallback_reason"] is None) if fallback is None else fallback in receipt["fallback_reason"]
        await llm.close()
    model_said = await read_item(gateway, who, ids[0])
    assert model_said["kind"] == "procedure" and model_said["wing"] == "ops"
    assert model_said["taxonomy_confidence"] == 0.95  # clamped: never certain
    personal = await read_item(gateway, who, ids[-1])
    assert personal["sensitivity"] == "personal"  # the model said normal; it may not lower what the rules found
    request = stub.requests[0]
    assert request["response_format"]["json_schema"]["strict"] is True
    assert "procedure" in request["response_format"]["json_schema"]["schema"]["properties"]["kind"]["enum"]


async def test_classify_suggests_without_writing(
    gateway: httpx.AsyncClient, who: Headers, tenant: CallerContext, owner_pool: asyncpg.Pool
) -> None:
    async with owner_pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1", tenant.tenant_id)
    answer = await gateway.post("/v1/classify", json={"content": "I prefer dark mode in every editor."}, headers=who)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["kind"] == "preference" and body["classifier"] == "rules" and body["fallback_reason"] is None
    assert any("prefer" in r for r in body["reasons"])
    assert (await gateway.post("/v1/classify", json={"content": "thanks"}, headers=who)).json()["retention"] == "noise"
    refused = await gateway.post("/v1/classify", json={"content": ""}, headers=who)
    assert refused.status_code == 422 and refused.json()["field"] == "content"
    async with owner_pool.acquire() as conn:
        after = await conn.fetchval("SELECT count(*) FROM memory_items WHERE tenant_id = $1", tenant.tenant_id)
    assert after == before
    bad_rules = await gateway.patch("/v1/admin/tenant-config", json={"placement_rules": [{"room": "x"}]}, headers=who)
    assert bad_rules.status_code == 422 and bad_rules.json()["field"] == "placement_rules"


async def test_a_model_never_sees_a_credential(
    tenant: CallerContext, app_pool: asyncpg.Pool, settings: Settings
) -> None:
    from services.ingest.service import IngestService

    secret = "AKIA" + "Q7W3" * 4
    async with running_stub() as stub:
        stub.default = {
            "kind": "fact",
            "retention": "retain",
            "sensitivity": "normal",
            "wing": None,
            "room": None,
            "taxonomy_confidence": 0.5,
            "retention_confidence": 0.5,
        }
        llm = JsonChat(stub.base_url, "stub-model", "k", timeout_s=1)
        ctx = CallerContext(tenant.tenant_id, str(uuid4()), "user", frozenset({"read"}))
        result, fallback = await IngestService(app_pool, settings, llm).classify(ctx, f"The deploy key is {secret}.")
        await llm.close()
    assert fallback is None and result.sensitivity == "secret"  # the rules saw it; the model's "normal" cannot lower it
    sent = json.dumps(stub.requests)
    assert secret not in sent and "[REDACTED:aws_access_key]" in sent


def _phrases(count: int, length: int, start: int = 0) -> list[str]:
    """``count`` distinct phrases of exactly ``length`` characters (words that never occur in test content)."""
    return [
        (f"zq{n:05d}x " * (length // 9 + 1))[:length].strip().ljust(length, "q") for n in range(start, start + count)
    ]


async def test_placement_rules_beyond_the_caps_are_refused_and_nothing_is_written(
    gateway: httpx.AsyncClient, who: Headers
) -> None:
    kept = [{"wing": "engineering", "any_of": ["postgres"]}]
    assert (
        await gateway.patch("/v1/admin/tenant-config", json={"placement_rules": kept}, headers=who)
    ).status_code == 200
    before = (await gateway.get("/v1/admin/tenant-config", headers=who)).json()
    too_many = [{"wing": f"w{i}", "any_of": _phrases(100, 20, start=100 * i)} for i in range(3)]  # 300 in all
    too_long = [{"wing": "w", "any_of": ["p" * 201]}]
    too_big = [{"wing": f"{i:03d}" + "w" * 197, "room": "r" * 200, "any_of": [f"phrase {i}"]} for i in range(200)]
    for rules, message in (
        (too_many, "at most 200 any_of phrases in all, got 300"),
        (too_long, "each any_of phrase must be a string of 1–200 characters"),
        (too_big, "bytes of JSON; at most 65,536"),
    ):
        refused = await gateway.patch("/v1/admin/tenant-config", json={"placement_rules": rules}, headers=who)
        assert refused.status_code == 422, refused.text
        problem = refused.json()
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert (problem["code"], problem["field"]) == ("validation_failed", "placement_rules")
        assert message in problem["detail"]
    after = (await gateway.get("/v1/admin/tenant-config", headers=who)).json()
    assert after == before and after["config"]["placement_rules"] == [{**kept[0], "room": None}]


async def test_placement_rules_at_the_caps_compile_once_and_run_off_the_event_loop(
    gateway: httpx.AsyncClient, who: Headers, monkeypatch: pytest.MonkeyPatch
) -> None:
    at_cap = [
        {"wing": "noise", "any_of": _phrases(100, 200)},
        {"wing": "engineering", "room": "databases", "any_of": [*_phrases(99, 200, start=100), "postgres"]},
    ]
    saved = await gateway.patch("/v1/admin/tenant-config", json={"placement_rules": at_cap}, headers=who)
    assert saved.status_code == 200, saved.text
    threads: list[int] = []

    def spy(content: str, rules: Sequence[PlacementRule], **kind_model: Any) -> Classification:
        threads.append(threading.get_ident())
        return classify_by_rules(content, rules, **kind_model)

    monkeypatch.setattr(pipeline_classify, "classify_by_rules", spy)
    before = compiled.cache_info()
    for _ in range(3):
        answer = await gateway.post("/v1/classify", json={"content": "The ledger moved to Postgres."}, headers=who)
        assert answer.status_code == 200, answer.text
        assert (answer.json()["wing"], answer.json()["room"]) == ("engineering", "databases")
    after = compiled.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)  # compiled once, then reused
    assert len(threads) == 3 and threading.get_ident() not in threads  # never on the event loop's thread


async def test_natural_phrasing_gets_its_kind_from_the_local_model_with_nearest_examples(
    gateway: httpx.AsyncClient, who: Headers, classify: Classify, owner_pool: asyncpg.Pool
) -> None:
    steps = await remember(gateway, who, STEPS)
    hello = await remember(gateway, who, "hey, how's it going?")
    await classify(steps, hello)

    item = await read_item(gateway, who, steps)
    assert item["kind"] == "procedure" and item["retention"] == "retain"
    receipt = (await _receipts(owner_pool, steps))[0]
    assert receipt["classifier"] == "rules" and receipt["applied"]["kind"] == ["fact", "procedure"]
    assert receipt["output"]["reasons"][0].startswith("kind model: procedure ")
    assert any(r.startswith("nearest examples: '") for r in receipt["output"]["reasons"])
    assert (await read_item(gateway, who, hello))["retention"] == "noise"

    answer = await gateway.post("/v1/classify", json={"content": "Dark mode for everything, please"}, headers=who)
    assert answer.status_code == 200 and answer.json()["kind"] == "preference"


async def test_without_the_local_model_the_cue_phrases_decide_as_before(
    gateway: httpx.AsyncClient, who: Headers, classify: Classify, owner_pool: asyncpg.Pool, settings: Settings
) -> None:
    steps = await remember(gateway, who, STEPS)
    await classify(steps, settings=settings.model_copy(update={"classifier_local_model": False}))
    receipt = (await _receipts(owner_pool, steps))[0]
    assert receipt["output"]["kind"] == "fact" and receipt["output"]["reasons"][0] == "no kind cue; default fact"
    assert not any(r.startswith("nearest examples") for r in receipt["output"]["reasons"])


BATCH = [
    STEPS,
    "hey, how's it going?",
    "Honestly I'd go for the quieter hotel even if it's further out.",
    "We decided to keep the old dashboard.",
    "Card numbers are never written to logs.",
]


class ModelCalls:
    """The texts of each call of the classifier's own model (``kind_model.embed_many``), which still runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        embed_many = kind_model.embed_many

        def counted(texts: Sequence[str]) -> list[Any]:
            self.calls.append(len(texts))
            return embed_many(texts)

        monkeypatch.setattr(kind_model, "embed_many", counted)


async def _stored_vector(owner_pool: asyncpg.Pool, item_id: str, settings: Settings) -> np.ndarray:
    async with owner_pool.acquire() as conn:
        vector = await embeddings.vector(conn, item_id, settings.embedding_profile)
    assert vector is not None
    return vector


async def _assert_receipts_as_alone(owner_pool: asyncpg.Pool, ids: list[str], vectors: list[np.ndarray | None]) -> None:
    """Each item's receipt is what classifying it alone with that vector (None: embedded here) gives."""
    kinds = sorted(BUILT_IN_KINDS)
    for item_id, vector in zip(ids, vectors, strict=True):
        [receipt] = await _receipts(owner_pool, item_id)
        async with owner_pool.acquire() as conn:
            content = await conn.fetchval("SELECT content FROM memory_items WHERE id = $1", item_id)
        alone = pipeline_classify.classify_locally(content, (), kinds, local=True, vector=vector)
        output = receipt["output"]
        assert (output["kind"], output["taxonomy_confidence"], output["retention"]) == (
            alone.kind,
            alone.taxonomy_confidence,
            alone.retention,
        ), content
        assert output["reasons"] == list(alone.reasons)


async def test_the_stored_vector_is_read_and_the_model_is_not_called(
    gateway: httpx.AsyncClient,
    who: Headers,
    classify: Classify,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = [await remember(gateway, who, content) for content in BATCH]
    dated = await remember(gateway, who, "Went for a 10k run along the canal before work.", valid_from=DAY)
    stored_before = KIND_VECTORS.labels("stored")._value.get()
    model = ModelCalls(monkeypatch)
    await classify(*ids, dated)
    assert model.calls == []  # every vector was the embedder's
    assert KIND_VECTORS.labels("stored")._value.get() - stored_before == len(ids) + 1

    vectors = [await _stored_vector(owner_pool, i, settings) for i in [*ids, dated]]
    await _assert_receipts_as_alone(owner_pool, [*ids, dated], list(vectors))
    kinds = {(await _receipts(owner_pool, i))[0]["output"]["kind"] for i in [*ids, dated]}
    assert kinds >= {"procedure", "preference", "diary_entry"}
    undated = kind_model.embed_many([BATCH[0]])[0]  # an undated memory's stored vector is its text's
    assert float(undated @ vectors[0]) > 0.999


async def test_without_a_usable_stored_vector_the_batch_is_embedded_in_one_model_call(
    gateway: httpx.AsyncClient,
    who: Headers,
    classify: Classify,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = [await remember(gateway, who, content) for content in BATCH]
    other = settings.model_copy(update={"embedding_model": "some-other-e5"})  # stored under another profile
    model = ModelCalls(monkeypatch)
    await classify(*ids[:2], settings=other)
    await classify(*ids[2:3], settings=settings.model_copy(update={"embedding_provider": "openai"}))
    assert model.calls == [2, 1]
    # no vector yet (an event handed over before the embedder stored one): embedded here, with the others read
    await classify.embed(ids[3])
    events = await outbox_events(owner_pool, types=["memory.embedded"], subjects=[ids[3]])
    events += await outbox_events(owner_pool, types=["memory.created"], subjects=[ids[4]])
    assert await classify.service.handle(events) == {}
    assert model.calls == [2, 1, 1]
    await _assert_receipts_as_alone(
        owner_pool, ids, [None, None, None, await _stored_vector(owner_pool, ids[3], settings), None]
    )


async def test_an_item_already_classified_is_not_classified_again(
    gateway: httpx.AsyncClient,
    who: Headers,
    classify: Classify,
    owner_pool: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps = await remember(gateway, who, STEPS)
    [first] = await classify(steps)
    # what a restored item embedded again announces, or an event delivered again after an upgrade
    again = Event(
        type=EventType.MEMORY_EMBEDDED.cloud_type, tenant_id=first.tenant_id, subject=steps, data=dict(first.data)
    )
    model = ModelCalls(monkeypatch)
    assert await classify.service.handle([again, again]) == {}
    assert model.calls == [] and len(await _receipts(owner_pool, steps)) == 1
    assert len(await outbox_envelopes(owner_pool, types=["memory.classified"], subjects=[steps])) == 1
    async with owner_pool.acquire() as conn:
        handled = await conn.fetchval(
            "SELECT count(*) FROM consumer_inbox WHERE consumer = $1 AND event_id = $2", CONSUMER, again.id
        )
    assert handled == 1
