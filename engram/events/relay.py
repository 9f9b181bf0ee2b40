"""The outbox relay: publishes committed outbox rows to JetStream, marking them sent in the same transaction.

It wakes on LISTEN/NOTIFY and polls as a fallback; one statement claims a batch and marks it sent, the rows
are published, then the transaction commits (a failed publish rolls the mark back). A claimed row stays locked
until then and other relays skip it (SKIP LOCKED), so any number of relays can run. ``Nats-Msg-Id`` is the
event id, so a row published twice (a crash between publish and commit) is dropped by JetStream's duplicate
window. When NATS is down the rows simply wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable

import asyncpg
from nats.js import JetStreamContext
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue

from engram.db import outbox
from engram.db.pool import system_tx
from engram.events.backlog import Backlog
from engram.telemetry import tracing
from engram.telemetry.metrics import OUTBOX_FAILURES, OUTBOX_PUBLISHED

log = logging.getLogger(__name__)


class OutboxRelay:
    def __init__(
        self,
        pool: asyncpg.Pool,
        js: JetStreamContext,
        subject_prefix: str,
        *,
        batch_size: int = 200,
        poll_interval_s: float = 1.0,
        publish_timeout_s: float = 5.0,
        backlog: Backlog | None = None,
    ) -> None:
        self._pool = pool
        self._js = js
        self._subject_prefix = subject_prefix
        self._batch_size = batch_size
        self._poll_interval_s = poll_interval_s
        self._publish_timeout_s = publish_timeout_s
        self._wake = asyncio.Event()
        self._backlog = backlog or Backlog()

    async def publish_pending(self) -> int:
        """Publish one batch of unsent rows; return how many were published. The rows are claimed and marked
        sent in one statement, and the transaction commits only after every publish was acknowledged: a failed
        publish rolls the mark back. The polling itself makes no spans; each publish does, in the trace of the
        request that wrote the row (``_publish``)."""
        with tracing.quiet():
            async with system_tx(self._pool) as conn:
                rows = await outbox.claim(conn, self._subject_prefix, self._batch_size)
                if not rows:
                    return 0
                await asyncio.gather(*(self._publish(row) for row in rows))
        OUTBOX_PUBLISHED.inc(len(rows))
        return len(rows)

    async def _publish(self, row: outbox.Pending) -> None:
        """One row to JetStream. With tracing on, a producer span — the child of the span that wrote the row
        (the CloudEvent's ``traceparent``) — whose context the message headers carry (``traceparent``, and
        ``correlation_id`` so faststream links a consumer's batch span to it)."""
        headers = {"Nats-Msg-Id": row.event_id}
        if not tracing.enabled():
            await self._js.publish(row.subject, row.envelope.encode(), headers=headers, timeout=self._publish_timeout_s)
            return
        template = destination_template(self._subject_prefix, row.subject)
        attributes: dict[str, AttributeValue] = {
            "messaging.system": "nats",
            "messaging.operation.type": "send",
            "messaging.operation.name": "publish",
            "messaging.destination.name": row.subject,
            "messaging.destination.template": template,
            "messaging.message.id": row.event_id,
            "messaging.message.body.size": len(row.envelope.encode()),
        }
        parent = tracing.context_from(traceparent=_traceparent(row.envelope))
        with tracing.span(f"publish {template}", attributes, kind=SpanKind.PRODUCER, parent=parent):
            headers["correlation_id"] = row.event_id
            tracing.inject(headers)
            await self._js.publish(row.subject, row.envelope.encode(), headers=headers, timeout=self._publish_timeout_s)

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until ``stop`` is set. Failures back off and retry; nothing is dropped."""
        listener = await self._pool.acquire()
        await listener.add_listener(outbox.NOTIFY_CHANNEL, self._on_notify)
        backoff = 0.0
        try:
            while not stop.is_set():
                # cleared before looking, so a NOTIFY that lands while we publish is not lost
                self._wake.clear()
                try:
                    published = await self.publish_pending()
                    backoff = 0.0
                except Exception as exc:  # NATS or Postgres away: keep the rows, retry later
                    OUTBOX_FAILURES.inc()
                    backoff = min(max(backoff * 2, 0.2), 10.0)
                    log.warning("outbox publish failed, retrying in %.1fs: %r", backoff, exc)
                    await self._report_backlog()
                    await _first_of(stop.wait(), within_s=backoff)
                    continue
                await self._report_backlog()
                if published >= self._batch_size:
                    continue
                await _first_of(stop.wait(), self._wake.wait(), within_s=self._poll_interval_s)
        finally:
            with contextlib.suppress(Exception):
                await listener.remove_listener(outbox.NOTIFY_CHANNEL, self._on_notify)
            await self._pool.release(listener)

    def _on_notify(self, *_: object) -> None:
        self._wake.set()

    async def _report_backlog(self) -> None:
        """Refresh the backlog figure and gauges, at most once per ``Backlog.interval_s`` (a busy relay goes idle
        after nearly every NOTIFY, and the count need not cost a query each time): after every round, a full
        one included, so a draining backlog lets ``Remember`` in again before it is quite empty."""
        await self._backlog.refresh(self._pool)


async def _first_of(*aws: Awaitable[object], within_s: float) -> None:
    """Return when any of ``aws`` finishes or ``within_s`` passes, whichever is first."""
    tasks = [asyncio.ensure_future(aw) for aw in aws]
    try:
        await asyncio.wait(tasks, timeout=within_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def destination_template(prefix: str, subject: str) -> str:
    """``engram.events.*.memory.created`` for ``engram.events.<tenant>.memory.created`` (span names and
    attributes name the event type, never a tenant)."""
    _tenant, _, entity_action = subject.removeprefix(prefix + ".").partition(".")
    return f"{prefix}.*.{entity_action}"


def _traceparent(envelope: str) -> str:
    try:
        value = json.loads(envelope).get("traceparent", "")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""
