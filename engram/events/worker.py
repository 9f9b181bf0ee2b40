"""A consumer process: its pool, broker and durable consumers, lag metrics, and a graceful drain.

Every pipeline service (embedder, classifier, conflicts, promotion) is one ``run_worker`` call with its own
subscriptions. On SIGTERM the worker stops taking batches, lets the ones in flight finish and acknowledge
(waiting at most ``DRAIN_TIMEOUT_S``; anything cut short is redelivered, the inbox makes that harmless), then
closes the broker and the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from nats.js import JetStreamContext

from engram.config import Settings
from engram.db.pool import service_pool
from engram.events import connection
from engram.events.consumer import BatchHandler, ConsumerSpec, DeadHandler, Drain, register_consumer, retarget
from engram.events.stream import ensure_streams
from engram.telemetry import tracing
from engram.telemetry.metrics import CONSUMER_LAG
from engram.telemetry.probes import Probes, ProbeServer

log = logging.getLogger(__name__)

DRAIN_TIMEOUT_S = 10.0
LAG_INTERVAL_S = 5.0


@dataclass(frozen=True)
class Subscription:
    spec: ConsumerSpec
    handle: BatchHandler
    on_dead: DeadHandler | None = None


Build = Callable[[asyncpg.Pool], Awaitable[Sequence[Subscription]]]
Background = Callable[[asyncpg.Pool, asyncio.Event], Coroutine[Any, Any, None]]


async def run_worker(
    name: str, settings: Settings, stop: asyncio.Event, build: Build, background: Background | None = None
) -> None:
    """Serve ``build``'s subscriptions (and an optional ``background`` task) until ``stop`` is set."""
    settings.require_for(name)
    if settings.worker_nice:  # the pipeline is asynchronous: on shared cores, acks and recalls go first
        log.info("%s runs at niceness %d", name, os.nice(settings.worker_nice))
    async with ProbeServer(settings.metrics_port, settings.metrics_host) as probes:
        await _serve(name, settings, stop, build, background, probes)


async def _serve(
    name: str,
    settings: Settings,
    stop: asyncio.Event,
    build: Build,
    background: Background | None,
    probes: Probes,
) -> None:
    pool = await service_pool(settings)
    nc = await connection.connect(settings, max_reconnect_attempts=-1, reconnect_time_wait=1, connect_timeout=5)
    probes.add_check("nats", lambda: None if nc.is_connected else "NATS connection lost (reconnecting)")
    broker = connection.broker(
        settings,
        max_reconnect_attempts=-1,
        reconnect_time_wait=1,
        logger=logging.getLogger("faststream"),
        middlewares=broker_middlewares(),
    )
    drain = Drain()
    tasks: list[asyncio.Task[None]] = []
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings)
        subscriptions = await build(pool)
        for sub in subscriptions:
            await retarget(js, settings, sub.spec)  # a durable an upgrade moved to another event type
            register_consumer(broker, settings, sub.spec, sub.handle, on_dead=sub.on_dead, drain=drain)
        await broker.start()
        tasks.append(asyncio.create_task(_report_lag(js, settings, [s.spec.name for s in subscriptions], stop)))
        if background is not None:
            tasks.append(asyncio.create_task(background(pool, stop)))
        log.info("%s consuming %s", name, ", ".join(f"{s.spec.event} as {s.spec.name}" for s in subscriptions))
        probes.serving()
        await stop.wait()
    finally:
        probes.serving(False)
        drain.start()
        if not await drain.wait(DRAIN_TIMEOUT_S):
            log.warning("%s: batches still running after %.0fs; they will be redelivered", name, DRAIN_TIMEOUT_S)
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await broker.stop()
        await nc.close()
        await pool.close()


async def _report_lag(js: JetStreamContext, settings: Settings, durables: list[str], stop: asyncio.Event) -> None:
    """Keep ``engram_consumer_pending`` current: messages the stream holds that a consumer has not yet had."""
    while not stop.is_set():
        for durable in durables:
            try:
                info = await js.consumer_info(settings.events_stream, durable)
                CONSUMER_LAG.labels(durable).set(info.num_pending or 0)
            except Exception as exc:  # a metric must never take the worker down
                log.debug("consumer_info(%s) failed: %r", durable, exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), LAG_INTERVAL_S)


def broker_middlewares() -> list[Any]:
    """faststream's OpenTelemetry middleware when tracing is on: a span per batch (linked to each message's
    publish span) and per dead-letter publish; the per-message spans are ``register_consumer``'s."""
    if not tracing.enabled():
        return []
    from faststream.nats.opentelemetry import NatsTelemetryMiddleware

    return [NatsTelemetryMiddleware(include_messages_counters=False)]
