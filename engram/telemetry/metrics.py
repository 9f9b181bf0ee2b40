"""Prometheus metrics shared by the services (one registry per process: the client's default)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram

from engram.telemetry import tracing

RPC_LATENCY = Histogram(
    "engram_rpc_duration_seconds",
    "gRPC handler latency",
    ["service", "method", "code"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
HTTP_LATENCY = Histogram(
    "engram_http_request_duration_seconds",
    "Gateway request latency",
    ["route", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
CONFLICT_OUTCOMES = Counter(
    "engram_conflict_outcomes_total", "Pairs judged by the conflicts consumer", ["label", "action"]
)
PROMOTION_OUTCOMES = Counter(
    "engram_promotion_outcomes_total", "Promotion decisions by outcome (promoted, skipped_<blocker>)", ["outcome"]
)
RECALL_TELEMETRY = Counter("engram_recall_telemetry_total", "Recall log entries by fate", ["outcome"])
RECALL_STAGE = Histogram(
    "engram_recall_stage_seconds",
    "Time spent in each stage of a recall or search (the recall process)",
    ["stage"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
)
REMEMBER_STAGE = Histogram(
    "engram_remember_stage_seconds",
    "Time spent in each stage of a remember (the ingest process)",
    ["stage"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
)
SWEPT = Counter(
    "engram_sweep_items_total",
    "Items the sweep expired to the trash, trash entries it emptied, and recall log rows, idempotency keys, "
    "published outbox rows and inbox rows it deleted",
    ["outcome"],
)
REMEMBERED = Counter("engram_remember_total", "Remember outcomes", ["status"])
OUTBOX_PUBLISHED = Counter("engram_outbox_published_total", "Outbox events published to JetStream")
OUTBOX_FAILURES = Counter("engram_outbox_publish_failures_total", "Failed outbox publish attempts")
OUTBOX_BACKLOG = Gauge("engram_outbox_backlog", "Unsent outbox rows")
OUTBOX_AGE = Gauge("engram_outbox_oldest_age_seconds", "Age of the oldest unsent outbox row")
CONSUMED = Counter("engram_consumer_messages_total", "Messages handled by a consumer", ["consumer", "outcome"])
REDELIVERED = Counter("engram_consumer_redeliveries_total", "Messages seen more than once", ["consumer"])
DEAD_LETTERED = Counter("engram_consumer_dead_letters_total", "Messages sent to the dead letter", ["consumer"])
CONSUMER_LAG = Gauge("engram_consumer_pending", "Messages not yet delivered to a consumer", ["consumer"])
EMBED_LATENCY = Histogram(
    "engram_embedding_batch_seconds",
    "Embedding latency per batch",
    ["profile"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
KIND_VECTORS = Counter(
    "engram_kind_vectors_total",
    "Vectors the classifier's kind model read, by source: the embedder's stored vector (stored) or the text "
    "embedded by the classifier itself (embedded)",
    ["source"],
)
EMBED_BATCH = Histogram("engram_embedding_batch_size", "Texts per embedding batch", buckets=(1, 2, 4, 8, 16, 32, 64))
QUERY_EMBEDDING_CACHE = Counter(
    "engram_query_embedding_cache_total",
    "Query vectors looked up in the recall process's cache, by outcome (hit, miss, evicted)",
    ["outcome"],
)
QUERY_EMBEDDING_BATCH = Histogram(
    "engram_query_embedding_batch_size",
    "Queries per model call in the recall process (more than 1 when concurrent recalls were batched)",
    buckets=(1, 2, 4, 8, 16, 32),
)
SEARCHABLE_LAG = Histogram(
    "engram_ingest_to_searchable_seconds",
    "From remember commit to embedding stored",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

RECALLS = Counter(
    "engram_recall_requests_total",
    "Recalls and searches answered, by operation (recall, search), mode, and result (hits, empty)",
    ["operation", "mode", "result"],
)
FEEDBACK = Counter("engram_feedback_total", "Feedback verdicts recorded (useful, noise)", ["verdict"])
# The inventory ingest refreshes every ENGRAM_INVENTORY_INTERVAL_S (services/ingest/inventory.py). Labels come
# from closed sets only: built-in kinds by name and every tenant-defined kind as "custom"; the review status and
# stage enums. The tenant label exists only on engram_tenant_items, and only while the deployment has at most
# ENGRAM_METRICS_TENANT_LIMIT tenants.
ITEMS = Gauge(
    "engram_items", "Stored memories (invalidated ones left out), by kind and review status", ["kind", "review_status"]
)
TENANT_ITEMS = Gauge("engram_tenant_items", "Stored memories per tenant (only while tenants are few)", ["tenant"])
PIPELINE_ITEMS = Gauge(
    "engram_pipeline_items", "Items waiting at (pending) or failed in a pipeline stage", ["stage", "status"]
)
PROPOSALS = Gauge("engram_proposals_pending", "Proposed memories awaiting review")
PROPOSAL_AGE = Gauge("engram_proposal_oldest_age_seconds", "Age of the oldest proposed memory awaiting review")
INVENTORY_AGE = Gauge("engram_inventory_timestamp_seconds", "Unix time the inventory gauges were last refreshed")


class SplitStage:
    """A stage that runs in several blocks, observed once under ``histogram{stage}`` with their total time:
    ``with split.part():`` around each block (each a span ``<operation> <stage>`` with tracing on), then
    ``split.observe()``."""

    def __init__(self, stage: str, histogram: Histogram, operation: str) -> None:
        self.stage = stage
        self.histogram = histogram
        self.operation = operation
        self.seconds = 0.0

    @contextlib.contextmanager
    def part(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            with tracing.span(
                f"{self.operation} {self.stage}", {"engram.operation": self.operation, "engram.stage": self.stage}
            ):
                yield
        finally:
            self.seconds += time.perf_counter() - started

    def observe(self) -> None:
        self.histogram.labels(self.stage).observe(self.seconds)


@contextlib.contextmanager
def timed(stage: str, histogram: Histogram = RECALL_STAGE, operation: str = "recall") -> Iterator[None]:
    """Observe how long the block takes, under ``histogram{stage}`` (recall stages by default), and with tracing
    on make the block a span ``<operation> <stage>`` (``recall embed_query``)."""
    started = time.perf_counter()
    try:
        with tracing.span(f"{operation} {stage}", {"engram.operation": operation, "engram.stage": stage}):
            yield
    finally:
        histogram.labels(stage).observe(time.perf_counter() - started)
