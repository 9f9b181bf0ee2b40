"""The consumers' fetch loop (``LongPollBatchSubscriber``) on a real NATS: a lone message is handed over as it
arrives however long the idle wait, an idle durable asks NATS once per wait, a backlog comes in batches, and a
consumer stopped while its request waits at NATS loses nothing and delivers nothing twice."""

from __future__ import annotations

import asyncio
import json
import time

import nats
import pytest
from faststream.nats import NatsBroker
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from engram.config import Settings
from engram.domain.values import EventType
from engram.events.consumer import BatchHandler, ConsumerSpec, register_consumer
from engram.events.envelope import Event, subject_for
from tests.support.waiting import eventually

TENANT = "00000000-0000-4000-8000-0000000000aa"


def _event(n: int) -> Event:
    return Event(type=EventType.MEMORY_CREATED.cloud_type, tenant_id=TENANT, subject=f"item-{n}", data={"n": n})


async def _publish(js: JetStreamContext, settings: Settings, event: Event) -> float:
    await js.publish(subject_for(settings.events_subject_prefix, TENANT, EventType.MEMORY_CREATED), event.encode())
    return time.monotonic()


class Recorder:
    """A batch handler that records each batch and when each event arrived."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.arrived: dict[str, float] = {}

    async def __call__(self, events: list[Event]) -> dict[str, Exception]:
        self.batches.append([e.subject for e in events])
        for event in events:
            self.arrived.setdefault(event.subject, time.monotonic())
        return {}

    @property
    def delivered(self) -> list[str]:
        return [subject for batch in self.batches for subject in batch]


async def _consuming(settings: Settings, spec: ConsumerSpec, handle: BatchHandler) -> NatsBroker:
    broker = NatsBroker(settings.nats_url)
    register_consumer(broker, settings, spec, handle)
    await broker.start()
    return broker


async def _pull_requests(settings: Settings, durable: str) -> tuple[nats.NATS, list[Msg]]:
    """Every pull request NATS receives for ``durable`` from now on (a second connection listening in)."""
    nc = await nats.connect(settings.nats_url)
    seen: list[Msg] = []

    async def record(msg: Msg) -> None:
        seen.append(msg)

    await nc.subscribe(f"$JS.API.CONSUMER.MSG.NEXT.{settings.events_stream}.{durable}", cb=record)
    await nc.flush()
    return nc, seen


async def test_a_lone_message_after_an_idle_spell_is_handed_over_without_waiting_out_the_idle_wait(
    settings: Settings, js: JetStreamContext
) -> None:
    """faststream's own loop would keep the batch open until its window ran out (here 3 s); the long poll hands
    the message over as NATS delivers it."""
    recorder = Recorder()
    broker = await _consuming(
        settings, ConsumerSpec(name="lone", event=EventType.MEMORY_CREATED, idle_wait_s=3.0), recorder
    )
    try:
        for n in range(3):
            await asyncio.sleep(1.2)  # idle for longer than the old 0.1 s and 1 s windows
            sent = await _publish(js, settings, _event(n))
            await eventually(lambda n=n: f"item-{n}" in recorder.arrived, timeout=10, message=f"message {n}")
            assert recorder.arrived[f"item-{n}"] - sent < 1.0
        assert recorder.delivered == ["item-0", "item-1", "item-2"]
    finally:
        await broker.stop()


async def test_lone_messages_between_expired_requests_are_each_handed_over_at_once(
    settings: Settings, js: JetStreamContext
) -> None:
    """Requests expire again and again while nothing happens; a message published at any point of that cycle is
    handed over at once. (With nats-py's own fetch, an expiry status that arrived after the fetch gave up was
    taken by the next fetch as its answer, and the message after it waited out the whole idle wait.)"""
    recorder = Recorder()
    spec = ConsumerSpec(name="expiring", event=EventType.MEMORY_CREATED, idle_wait_s=0.5)
    broker = await _consuming(settings, spec, recorder)
    late: list[float] = []
    try:
        for n in range(16):
            await asyncio.sleep(0.3 + 0.17 * n % 1.1)  # across several expiries, at every point of the cycle
            sent = await _publish(js, settings, _event(n))
            await eventually(lambda n=n: f"item-{n}" in recorder.arrived, timeout=10, message=f"message {n}")
            late.append(recorder.arrived[f"item-{n}"] - sent)
        assert max(late) < 0.4, late
        assert recorder.delivered == [f"item-{n}" for n in range(16)]
    finally:
        await broker.stop()


async def test_no_request_lingers_after_an_expiry(settings: Settings, js: JetStreamContext) -> None:
    """Every pull request is a one-shot (``no_wait`` with ``expires``: answered with what there is as soon as there
    is anything). nats-py's fetch sent a lingering one (held until its batch is full) whenever it took a late
    expiry status for its answer: 12 of 79 requests in 20 s of 0.3 s waits, measured on an idle durable."""
    listener, requests = await _pull_requests(settings, "one-shot")
    spec = ConsumerSpec(name="one-shot", event=EventType.MEMORY_CREATED, idle_wait_s=0.3)
    broker = await _consuming(settings, spec, Recorder())
    try:
        await asyncio.sleep(8.0)
        bodies = [json.loads(msg.data) for msg in requests]
        assert len(bodies) >= 10
        assert all(body.get("no_wait") and body.get("expires") for body in bodies), bodies
    finally:
        await listener.close()
        await broker.stop()


async def test_an_idle_durable_asks_nats_once_per_idle_wait(settings: Settings, js: JetStreamContext) -> None:
    """With the default idle wait (5 s) an idle durable sends NATS one request in 3 s (with the old 0.1 s window
    faststream's loop sent about 30), and a message published then is still handed over at once."""
    recorder = Recorder()
    listener, requests = await _pull_requests(settings, "quiet")
    broker = await _consuming(settings, ConsumerSpec(name="quiet", event=EventType.MEMORY_CREATED), recorder)
    try:
        await asyncio.sleep(3.0)
        assert 1 <= len(requests) <= 2
        sent = await _publish(js, settings, _event(0))
        await eventually(lambda: "item-0" in recorder.arrived, timeout=10, message="the message")
        assert recorder.arrived["item-0"] - sent < 1.0
    finally:
        await listener.close()
        await broker.stop()


async def test_a_backlog_is_handed_over_in_batches_of_at_most_the_batch_size_each_message_once(
    settings: Settings, js: JetStreamContext
) -> None:
    for n in range(10):
        await _publish(js, settings, _event(n))
    recorder = Recorder()
    spec = ConsumerSpec(name="backlog", event=EventType.MEMORY_CREATED, batch_size=4, idle_wait_s=5.0)
    broker = await _consuming(settings, spec, recorder)
    try:
        await eventually(lambda: len(recorder.delivered) >= 10, timeout=10, message="the backlog delivered")
        await asyncio.sleep(0.5)
        assert sorted(recorder.delivered) == sorted(f"item-{n}" for n in range(10))
        assert all(1 <= len(batch) <= 4 for batch in recorder.batches)
        assert len(recorder.batches) <= 5  # batches, not one message at a time
    finally:
        await broker.stop()


async def test_a_consumer_stopped_while_its_request_waits_loses_nothing_and_delivers_nothing_twice(
    settings: Settings, js: JetStreamContext
) -> None:
    """The stopped consumer's request (expiring in 5 s) is still at NATS when the next message is published: the
    message must go to the consumer that takes over, at once, not to the stopped one or after the ack wait."""
    spec = ConsumerSpec(name="restarted", event=EventType.MEMORY_CREATED, idle_wait_s=5.0)
    first = Recorder()
    broker = await _consuming(settings, spec, first)
    await _publish(js, settings, _event(0))
    await eventually(lambda: "item-0" in first.arrived, timeout=10, message="the first message")
    await asyncio.sleep(0.5)  # its next request now waits at NATS
    await broker.stop()

    sent = await _publish(js, settings, _event(1))
    second = Recorder()
    broker = await _consuming(settings, spec, second)
    try:
        await eventually(lambda: "item-1" in second.arrived, timeout=10, message="the message after the restart")
        assert second.arrived["item-1"] - sent < 3.0  # the ack wait is 30 s
        await asyncio.sleep(0.5)
        assert first.delivered == ["item-0"]
        assert second.delivered == ["item-1"]
    finally:
        await broker.stop()


def test_only_faststreams_batch_pull_subscriber_takes_the_long_poll() -> None:
    from faststream.nats import PullSub

    from engram.events.consumer import long_poll

    broker = NatsBroker("nats://127.0.0.1:1")
    single = broker.subscriber("x.y", stream="S", durable="d", pull_sub=PullSub(batch_size=4, timeout=1.0))
    with pytest.raises(TypeError):
        long_poll(single)
