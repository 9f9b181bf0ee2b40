"""Traces end to end, exported to memory: one remember through the gateway is one trace from the HTTP request
through gRPC, the database, the outbox relay's publish and the embedder's and classifier's processing; one
recall has a span per ranking stage; no span carries the memory's content, the query or the API key."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence

import asyncpg
import httpx
import nats
import pytest
import pytest_asyncio
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from engram.config import Settings
from engram.domain.keys import parse_key
from engram.domain.models import CallerContext
from engram.domain.values import EventType
from engram.embeddings.provider import EmbeddingProvider
from engram.events.consumer import ConsumerSpec
from engram.events.relay import OutboxRelay
from engram.events.stream import deadletter_stream, ensure_streams
from engram.events.worker import Subscription, run_worker
from engram.telemetry import tracing
from services.classifier.service import ClassifierService
from services.embedder.service import EmbedderService
from tests.support.keys import KeyMaker
from tests.support.waiting import eventually

CANARY = "Zorblax-canary-7731 keeps the quarterly budget spreadsheet in the blue cabinet."
QUERY = "where does Zorblax-canary-7731 keep the quarterly budget spreadsheet"


@pytest.fixture(scope="session")
def span_exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def spans(span_exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    """Tracing on for this test (set up before the servers and the gateway it is listed before)."""
    assert tracing.configure_tracing("tests", exporter=span_exporter)
    span_exporter.clear()
    yield span_exporter
    tracing.disable_tracing()
    span_exporter.clear()


@pytest_asyncio.fixture
async def consumers(servers: Settings, embedder: EmbeddingProvider) -> AsyncIterator[Settings]:
    """The embedder and the classifier as their processes run them (``run_worker``), on this event loop."""
    settings = servers.model_copy(update={"worker_nice": 0})

    async def embedder_subs(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = EmbedderService(pool, settings, embedder)
        return [Subscription(ConsumerSpec(name="embedder", event=EventType.MEMORY_CREATED), service.handle)]

    async def classifier_subs(pool: asyncpg.Pool) -> Sequence[Subscription]:
        service = ClassifierService(pool, settings, None)
        return [Subscription(ConsumerSpec(name="classifier", event=EventType.MEMORY_CREATED), service.handle)]

    stop = asyncio.Event()
    workers = [
        asyncio.create_task(run_worker("embedder", settings, stop, embedder_subs)),
        asyncio.create_task(run_worker("classifier", settings, stop, classifier_subs)),
    ]
    try:
        yield settings
    finally:
        stop.set()
        await asyncio.gather(*workers)
        assert settings.nats_url
        nc = await nats.connect(settings.nats_url)
        js = nc.jetstream()
        for stream in (settings.events_stream, deadletter_stream(settings)):
            with contextlib.suppress(Exception):
                await js.delete_stream(stream)
        await nc.close()


async def relay_once(app_pool: asyncpg.Pool, settings: Settings) -> int:
    assert settings.nats_url
    nc = await nats.connect(settings.nats_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings)
        return await OutboxRelay(app_pool, js, settings.events_subject_prefix).publish_pending()
    finally:
        await nc.close()


def by_kind(found: Sequence[ReadableSpan], kind: SpanKind, name: str) -> ReadableSpan:
    matching = [s for s in found if s.kind == kind and s.name == name]
    assert len(matching) == 1, f"{name!r} ({kind}): {len(matching)} spans among {sorted(s.name for s in found)}"
    return matching[0]


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def ancestors(span: ReadableSpan, trace: dict[int, ReadableSpan]) -> list[str]:
    """The names of ``span``'s ancestors within ``trace``, nearest first."""
    names = []
    current = parent_id(span)
    while current is not None and current in trace:
        names.append(trace[current].name)
        current = parent_id(trace[current])
    return names


def every_string(span: ReadableSpan) -> Iterator[str]:
    """The span's name and every attribute value of it, its events and its links, as strings."""
    yield span.name
    attribute_sets = [span.attributes or {}, span.resource.attributes]
    attribute_sets += [event.attributes or {} for event in span.events]
    attribute_sets += [link.attributes or {} for link in span.links]
    for attributes in attribute_sets:
        for value in attributes.values():
            yield str(value)


async def test_one_remember_is_one_trace_and_recall_has_its_stages(
    spans: InMemorySpanExporter,
    gateway: httpx.AsyncClient,
    consumers: Settings,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    tenant: CallerContext,
    make_key: KeyMaker,
) -> None:
    key = await make_key(tenant)
    gateway.headers["authorization"] = key
    created = await gateway.post("/v1/remember", json={"content": CANARY, "kind": "fact"})
    assert created.status_code == 201, created.text
    item_id = created.json()["id"]
    assert await relay_once(app_pool, consumers) == 1

    def processed() -> bool:
        names = {s.name for s in spans.get_finished_spans()}
        return {"embedder process", "classifier process"} <= names

    await eventually(processed, timeout=60, message="the embedder and the classifier never processed the event")

    finished = spans.get_finished_spans()
    http = by_kind(finished, SpanKind.SERVER, "POST /v1/remember")
    assert http.parent is None and (http.attributes or {}).get("http.route") == "/v1/remember"
    trace_id = http.context.trace_id
    trace = {s.context.span_id: s for s in finished if s.context.trace_id == trace_id}
    in_trace = list(trace.values())
    client = by_kind(in_trace, SpanKind.CLIENT, "/engram.v1.IngestService/Remember")
    server = by_kind(in_trace, SpanKind.SERVER, "/engram.v1.IngestService/Remember")
    publish = by_kind(in_trace, SpanKind.PRODUCER, f"publish {consumers.events_subject_prefix}.*.memory.created")
    embedded = by_kind(in_trace, SpanKind.CONSUMER, "embedder process")
    classified = by_kind(in_trace, SpanKind.CONSUMER, "classifier process")
    assert (client.attributes or {}).get("rpc.system") == "grpc"
    assert parent_id(server) == client.context.span_id and http.name in ancestors(client, trace)
    # the database work of the remember, under ingest's server span
    inserts = [s for s in in_trace if (s.attributes or {}).get("db.system") == "postgresql"]
    assert any(server.name in ancestors(s, trace) for s in inserts), "no database span under ingest"
    # the relay publishes in the trace of the request that wrote the row; the consumers process under it
    assert parent_id(publish) == server.context.span_id
    assert (publish.attributes or {}).get("messaging.message.id")
    for consumer in (embedded, classified):
        assert parent_id(consumer) == publish.context.span_id
        assert (consumer.attributes or {}).get("engram.consumer.outcome") == "ok"
    # the classifier's own database work nests under its consumer span
    assert any(classified.name in ancestors(s, trace) for s in inserts), "no database span under the classifier"
    # one trace: every span of it descends from the request's span
    assert all(s is http or http.name in ancestors(s, trace) for s in in_trace)
    # faststream's span for each consumed batch links to the message's publish span
    batch_links = [s for s in finished if s.kind == SpanKind.CONSUMER and s.context.trace_id != trace_id and s.links]
    assert any(link.context.span_id == publish.context.span_id for s in batch_links for link in s.links)

    async def searchable() -> bool:
        async with owner_pool.acquire() as conn:
            return bool(await conn.fetchval("SELECT count(*) FROM memory_embeddings WHERE item_id = $1::uuid", item_id))

    await eventually(searchable, timeout=30, message="the memory was never embedded")
    spans.clear()
    recalled = await gateway.post("/v1/recall", json={"query": QUERY})
    assert recalled.status_code == 200, recalled.text
    assert item_id in recalled.text
    finished = spans.get_finished_spans()
    http = by_kind(finished, SpanKind.SERVER, "POST /v1/recall")
    trace = {s.context.span_id: s for s in finished if s.context.trace_id == http.context.trace_id}
    server = by_kind(list(trace.values()), SpanKind.SERVER, "/engram.v1.RecallService/Recall")
    stages = {s.name: s for s in trace.values() if (s.attributes or {}).get("engram.operation") == "recall"}
    expected = {"embed_query", "keyword_sql", "semantic_sql", "fuse", "widen", "graph_expansion"}
    assert {f"recall {stage}" for stage in expected} <= set(stages)
    assert all(server.name in ancestors(s, trace) for s in stages.values())
    assert "recall widen" in ancestors(stages["recall graph_expansion"], trace)

    # nothing the caller said, nor the key, in any span of either request
    parsed = parse_key(key.removeprefix("Bearer "))
    assert parsed is not None
    leaks = [
        (s.name, value)
        for s in [*spans.get_finished_spans(), *in_trace]
        for value in every_string(s)
        if "Zorblax" in value or "cabinet" in value or "spreadsheet" in value or parsed[1] in value
    ]
    assert not leaks
