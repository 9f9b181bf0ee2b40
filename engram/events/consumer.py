"""The consumer foundation every pipeline service uses (faststream on JetStream).

A consumer is a durable pull subscription on one event type across all tenants. Messages arrive in batches, as
soon as there is one (a long poll: ``LongPollBatchSubscriber``); the handler applies each event's effect in a
transaction (recording the event in the inbox there, so redelivery changes nothing; the pipeline's consumers share
one among a batch's events of a tenant, ``engram.pipeline.batches``) and only then is the message acknowledged. What
a failure does depends on the error (``engram.errors``):

- ``NotFound``: what the event names is gone (an item deleted while its event was in flight). That is an
  expected outcome, not a failure: logged at info and acknowledged.
- a retryable error (``is_retryable``: ``Unavailable``, ``RateLimited``, and anything not an Engram error):
  redelivered with back-off; after ``max_deliver`` attempts it goes to the dead-letter stream, its
  ``on_dead`` hook runs, and the consumer keeps going.
- any other Engram error (``ValidationFailed``, ``Conflict``, …): retrying cannot help, so it goes to the
  dead letter at once (after the ``on_dead`` hook).

An undecodable message goes straight to the dead letter.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from faststream import AckPolicy, Context
from faststream.nats import ConsumerConfig, JStream, NatsBroker, PullSub
from faststream.nats.message import NatsBatchMessage
from faststream.nats.subscriber.usecases.stream_pull_subscriber import BatchPullStreamSubscriber
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.api import StatusCode as NatsStatus
from nats.js.errors import APIError, NotFoundError
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from engram.config import Settings
from engram.domain.values import EventType
from engram.errors import NotFound, is_retryable
from engram.events.envelope import Event, filter_for, filters_only
from engram.events.stream import deadletter_stream, deadletter_subject
from engram.telemetry import tracing
from engram.telemetry.metrics import CONSUMED, DEAD_LETTERED, REDELIVERED

log = logging.getLogger(__name__)

# Handles a batch of decoded events; returns the ones that failed, each with its error.
BatchHandler = Callable[[list[Event]], Awaitable[dict[str, Exception]]]
DeadHandler = Callable[[Event, Exception], Awaitable[None]]


@dataclass(frozen=True)
class ConsumerSpec:
    name: str  # the durable consumer name, e.g. "embedder"
    event: EventType  # what it consumes, e.g. EventType.MEMORY_CREATED
    batch_size: int = 32
    max_deliver: int = 5
    ack_wait_s: float = 30.0
    # How long one pull request waits at NATS while nothing is pending. A message that arrives meanwhile is handed
    # over at once with whatever else is pending (``LongPollBatchSubscriber``): this bounds the idle polling (one
    # request per durable per idle_wait_s), not the delivery latency.
    idle_wait_s: float = 5.0


def patch_nats_fetch_timeout() -> None:
    """Make ``PullSubscription.fetch`` time out with ``nats.errors.TimeoutError`` only.

    nats-py 2.16 raises the builtin ``TimeoutError`` when a fetch's deadline runs out between its requests;
    faststream 0.7.8's pull loop catches only the nats subclass, so the exception kills its fetch task.
    faststream restarts the task, but a message already handed to the dead fetch then waits out the
    consumer's ack_wait (measured here: 1 of 400 messages delivered 30 s late). Idempotent.
    """
    from nats.errors import TimeoutError as NatsTimeoutError
    from nats.js.client import JetStreamContext

    pull = JetStreamContext.PullSubscription
    if getattr(pull.fetch, "_engram_patched", False):
        return
    original = pull.fetch

    @functools.wraps(original)
    async def fetch(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await original(self, *args, **kwargs)
        except NatsTimeoutError:
            raise
        except TimeoutError as exc:
            raise NatsTimeoutError from exc

    fetch._engram_patched = True  # type: ignore[attr-defined]
    pull.fetch = fetch  # type: ignore[method-assign]


RECONNECT_PAUSE_S = 0.1  # after a connection error, before the next request
EARLY_END_PAUSE_S = 0.05  # after a request that ended early with nothing, before the next (no busy loop)
LATE_GRACE_S = 1.0  # the client outwaits the server's expiry by this, so the expiry status reaches the request
TOP_UP_S = 0.01  # after a first message, how long the rest of what the server sends at once may take to arrive


class LongPollBatchSubscriber(BatchPullStreamSubscriber):
    """faststream's batch pull subscriber with another fetch loop: one long poll per batch.

    faststream 0.7.8 keeps fetching until the batch is full or its ``PullSub.timeout`` has run out, so a lone
    message waits out the rest of that window, and an idle durable asks NATS again every window (every 0.1 s with
    the window a lone message can afford). This loop sends one pull request at a time (``long_poll_fetch``): NATS
    answers it as soon as it has any message, with all it has pending up to the batch, and ends it with a
    status, or with a timeout status once ``PullSub.timeout`` has passed. A lone message is delivered as it
    arrives, a backlog in batches of up to ``batch_size``, and an idle durable costs one request every
    ``PullSub.timeout``.

    Messages fetched once the subscriber is stopping are handed back (nak, no delay) rather than left to the
    ack wait, so a replica or a restart takes them at once.
    """

    __slots__ = ()

    async def _consume_pull(self) -> None:
        assert self.subscription, "the subscription is created before its fetch loop"
        subscription = self.subscription
        batch_size = self.pull_sub.batch_size
        wait = self.pull_sub.timeout or 5.0
        while self.running:
            started = time.monotonic()
            try:
                messages = await long_poll_fetch(subscription, batch_size, wait)
            except (NatsError, APIError) as exc:  # unacknowledged messages are redelivered
                log.debug("pull request failed (%r); asking again", exc)
                await asyncio.sleep(RECONNECT_PAUSE_S)
                continue
            if not messages:
                if time.monotonic() - started < wait / 2:  # ended early (a stale status, a conflict): no spin
                    await asyncio.sleep(EARLY_END_PAUSE_S)
                continue
            if not self.running:
                await _hand_back(messages)
                return
            await self.consume(messages)


async def long_poll_fetch(subscription: JetStreamContext.PullSubscription, batch: int, wait_s: float) -> list[Msg]:
    """One pull request for up to ``batch`` messages that NATS holds for up to ``wait_s`` while nothing is
    pending (``no_wait`` with ``expires``: answered as soon as there is any message, then ended with a status).
    Returns what arrived: the messages NATS sent at once, or nothing when the request ended without any.

    nats-py's ``fetch`` sends the same request, but its client deadline ends a hair before the server's
    expiry: an expiry status that arrives after a fetch gave up is taken by the next fetch as its answer, and
    that fetch then sends a lingering request (no ``no_wait``) whose first message it keeps until the batch is
    full or the rest of the wait has passed. Here the client outwaits the server (``LATE_GRACE_S``) and no
    request lingers: any status ends a request and the loop sends the next, so a stale status costs one
    request, never a delay. Uses nats-py's pull subscription's inbox and subject."""
    sub = subscription._sub
    request = {"batch": batch, "expires": int(wait_s * 1_000_000_000), "no_wait": True}
    await subscription._nc.publish(subscription._nms, json.dumps(request).encode(), subscription._deliver)
    deadline = time.monotonic() + wait_s + LATE_GRACE_S
    messages: list[Msg] = []
    while len(messages) < batch:
        timeout = TOP_UP_S if messages else deadline - time.monotonic()
        if timeout <= 0:
            break
        try:
            msg = await sub.next_msg(timeout=timeout)
        except NatsTimeoutError:
            break
        status = JetStreamContext.is_status_msg(msg)
        if not status:
            messages.append(msg)
        elif status == NatsStatus.CONTROL_MESSAGE:  # a heartbeat
            continue
        elif status in (NatsStatus.NO_MESSAGES, NatsStatus.REQUEST_TIMEOUT, NatsStatus.CONFLICT) or messages:
            break  # this request (or an earlier one) is over
        else:
            raise APIError.from_msg(msg)
    return messages


async def _hand_back(messages: list[Msg]) -> None:
    for raw in messages:
        try:
            await raw.nak()
        except Exception as exc:  # the connection is going too: the ack wait redelivers it
            log.debug("could not hand back %s: %r", raw.subject, exc)


def long_poll(subscriber: object) -> LongPollBatchSubscriber:
    """Give a faststream batch pull subscriber (``broker.subscriber(..., pull_sub=PullSub(batch=True))``) the
    long-poll fetch loop of ``LongPollBatchSubscriber``; its ``PullSub.timeout`` becomes the idle wait."""
    if type(subscriber) is not BatchPullStreamSubscriber:  # a faststream upgrade that moved it must fail loudly
        raise TypeError(f"not faststream's batch pull subscriber: {type(subscriber).__qualname__}")
    subscriber.__class__ = LongPollBatchSubscriber
    return subscriber  # type: ignore[return-value]


class Drain:
    """Counts batches in flight; once started, new batches are handed back (nak, no delay) unprocessed."""

    def __init__(self) -> None:
        self.draining = False
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def start(self) -> None:
        self.draining = True

    def enter(self) -> None:
        self._inflight += 1
        self._idle.clear()

    def leave(self) -> None:
        self._inflight -= 1
        if self._inflight == 0:
            self._idle.set()

    async def wait(self, timeout_s: float) -> bool:
        """True when nothing is in flight (within ``timeout_s``)."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True


def one_at_a_time(handle_one: Callable[[Event], Awaitable[None]]) -> BatchHandler:
    """A batch handler applying ``handle_one`` to each event in turn; an event that raises is reported as
    failed (and redelivered) without holding up the others."""

    async def handle(events: list[Event]) -> dict[str, Exception]:
        failures: dict[str, Exception] = {}
        for event in events:
            try:
                with tracing.within(event.traceparent):  # its work nests under the event's consumer span
                    await handle_one(event)
            except Exception as exc:
                failures[event.id] = exc
        return failures

    return handle


def retry_delay(attempt: int) -> float:
    """Back-off before redelivery: 0.5 s, 1 s, 2 s, … capped at 30 s."""
    return float(min(0.5 * 2 ** max(attempt - 1, 0), 30.0))


async def retarget(js: JetStreamContext, settings: Settings, spec: ConsumerSpec) -> bool:
    """Move an existing durable ``spec.name`` that filters another event type onto ``spec.event`` (a consumer that
    now takes a later event of the pipeline, e.g. the classifier from memory.created to memory.embedded).

    A durable that exists is used as it is by the subscription, whatever subject it was asked for, so without this
    the old filter would stay. The durable is recreated with the new filter, starting just after its old
    acknowledgement floor: every event it had not acknowledged is followed by its item's later event there, so no
    item is left behind; items already handled may be delivered again, which the consumer must take as handled.
    Returns whether it moved the durable."""
    wanted = filter_for(settings.events_subject_prefix, spec.event)
    try:
        info = await js.consumer_info(settings.events_stream, spec.name)
    except NotFoundError:
        return False
    config = info.config
    if filters_only(config.filter_subject, config.filter_subjects, wanted):
        return False
    start = (info.ack_floor.stream_seq if info.ack_floor else 0) + 1
    await js.delete_consumer(settings.events_stream, spec.name)
    moved = config.evolve(
        filter_subject=wanted,
        filter_subjects=None,
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
        opt_start_seq=start,
        opt_start_time=None,
    )
    await js.add_consumer(settings.events_stream, config=moved)
    log.warning(
        "durable %s moved from %s to %s, from stream sequence %d",
        spec.name,
        config.filter_subject or config.filter_subjects,
        wanted,
        start,
    )
    return True


def register_consumer(
    broker: NatsBroker,
    settings: Settings,
    spec: ConsumerSpec,
    handle: BatchHandler,
    on_dead: DeadHandler | None = None,
    drain: Drain | None = None,
) -> None:
    """Subscribe ``handle`` as the durable consumer ``spec.name``."""
    patch_nats_fetch_timeout()
    drain = drain or Drain()
    subject = filter_for(settings.events_subject_prefix, spec.event)

    async def dead_letter(raw: Msg, reason: str) -> None:
        headers = {"Engram-Dead-Reason": reason[:500], "Engram-Original-Subject": raw.subject}
        await broker.publish(
            raw.data, deadletter_subject(settings, spec.name), headers=headers, stream=deadletter_stream(settings)
        )  # a JetStream publish: acknowledged before term
        DEAD_LETTERED.labels(spec.name).inc()
        await raw.term()

    subscriber = long_poll(
        broker.subscriber(
            subject,
            stream=JStream(settings.events_stream, declare=False),
            durable=spec.name,
            config=ConsumerConfig(max_deliver=spec.max_deliver + 1, ack_wait=spec.ack_wait_s),
            pull_sub=PullSub(batch_size=spec.batch_size, timeout=spec.idle_wait_s, batch=True),
            ack_policy=AckPolicy.MANUAL,
        )
    )

    @subscriber
    async def on_batch(message: NatsBatchMessage = Context("message")) -> None:  # noqa: B008
        if drain.draining:  # shutting down: another replica (or this one, restarted) takes them
            for raw in message.raw_message:
                await raw.nak()
            return
        drain.enter()
        try:
            await _handle_batch(message)
        finally:
            drain.leave()

    async def _handle_batch(message: NatsBatchMessage) -> None:
        deliveries: list[tuple[Msg, Event]] = []
        for raw in message.raw_message:
            if raw.metadata.num_delivered > 1:
                REDELIVERED.labels(spec.name).inc()
            try:
                deliveries.append((raw, Event.decode(raw.data)))
            except ValueError as exc:
                log.error("%s: undecodable message on %s goes to the dead letter: %s", spec.name, raw.subject, exc)
                CONSUMED.labels(spec.name, "poison").inc()
                await dead_letter(raw, f"undecodable: {exc}")
        if not deliveries:
            return
        spans = _ConsumerSpans(spec.name, settings.events_subject_prefix)
        deliveries = [(raw, spans.start(raw, event)) for raw, event in deliveries]
        try:
            await _settle(deliveries, spans)
        finally:
            spans.end_all()

    async def _settle(deliveries: list[tuple[Msg, Event]], spans: _ConsumerSpans) -> None:
        try:
            failures = await handle([event for _, event in deliveries])
        except Exception as exc:  # the whole batch failed: every event is retried
            log.exception("%s: batch handler failed", spec.name)
            failures = {event.id: exc for _, event in deliveries}
        for raw, event in deliveries:
            error = failures.get(event.id)
            spans.outcome(event, error)
            if error is None:
                await raw.ack()
                CONSUMED.labels(spec.name, "ok").inc()
                continue
            attempt = raw.metadata.num_delivered
            if isinstance(error, NotFound):
                log.info("%s: event %s names something that no longer exists; handled: %s", spec.name, event.id, error)
                await raw.ack()
                CONSUMED.labels(spec.name, "gone").inc()
                continue
            retryable = is_retryable(error)
            if attempt >= spec.max_deliver or not retryable:
                if retryable:
                    log.error("%s: event %s failed %d times, dead-lettered: %r", spec.name, event.id, attempt, error)
                else:
                    log.error(
                        "%s: event %s failed and retrying cannot help, dead-lettered: %r", spec.name, event.id, error
                    )
                CONSUMED.labels(spec.name, "dead").inc()
                if on_dead is not None:
                    try:
                        await on_dead(event, error)
                    except Exception:
                        log.exception("%s: on_dead hook failed for %s", spec.name, event.id)
                await dead_letter(raw, repr(error))
            else:
                log.warning("%s: event %s failed (attempt %d), retrying: %r", spec.name, event.id, attempt, error)
                CONSUMED.labels(spec.name, "retry").inc()
                await raw.nak(delay=retry_delay(attempt))


class _ConsumerSpans:
    """With tracing on, one consumer span per message of a batch: the child of the relay's publish span (the
    message's ``traceparent`` header, else the CloudEvent's), linked to faststream's span for the whole batch.
    The event handed to the handler carries the span as its ``traceparent``, so what the handler does and
    writes (``one_at_a_time``, the events it emits) belongs to the same trace. Off: does nothing."""

    def __init__(self, consumer: str, prefix: str) -> None:
        self._consumer = consumer
        self._prefix = prefix
        self._spans: dict[str, Span] = {}

    def start(self, raw: Msg, event: Event) -> Event:
        if not tracing.enabled():
            return event
        batch = trace.get_current_span().get_span_context()
        template = f"{self._prefix}.*.{event.entity_action}"
        attributes: dict[str, AttributeValue] = {
            "messaging.system": "nats",
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.destination.name": raw.subject,
            "messaging.destination.template": template,
            "messaging.destination.subscription.name": self._consumer,
            "messaging.consumer.group.name": self._consumer,
            "messaging.message.id": event.id,
            "messaging.message.body.size": len(raw.data),
            "engram.delivery.attempt": raw.metadata.num_delivered or 1,
        }
        span = tracing.tracer().start_span(
            f"{self._consumer} process",
            context=tracing.context_from(raw.headers, event.traceparent),
            kind=SpanKind.CONSUMER,
            attributes=attributes,
            links=[Link(batch)] if batch.is_valid else [],
        )
        self._spans[event.id] = span
        return replace(event, traceparent=tracing.traceparent_of(span))

    def outcome(self, event: Event, error: Exception | None) -> None:
        span = self._spans.get(event.id)
        if span is None:
            return
        if error is None or isinstance(error, NotFound):
            span.set_attribute("engram.consumer.outcome", "ok" if error is None else "gone")
            return
        span.set_attribute("engram.consumer.outcome", "failed")
        span.set_attribute("error.type", type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR, type(error).__qualname__))

    def end_all(self) -> None:
        for span in self._spans.values():
            span.end()
