"""An Engram event subscriber: a durable JetStream consumer that reacts to every new memory.

    python examples/subscriber.py --nats-url nats://127.0.0.1:4222 --durable my-indexer

It pulls ``memory.created`` events (every tenant, or one with ``--tenant``), hands each to ``handle`` and
acknowledges it only once ``handle`` returned, so an event is never lost: one whose handler failed is
redelivered after a delay, up to ``MAX_DELIVER`` times. The consumer is durable: stop the process and start it
again with the same ``--durable`` name and it carries on after the last acknowledged event, with the events
published meanwhile; several processes with one durable name share the work. Delivery is at least once, so
``handle`` keys its effects on the event ``id``. Events carry ids, never content: read the memory through the
REST API (``engram_client``) with the subscriber's own key when you need its text.

See docs/events.md (Subscribing) for the envelope, the subjects and per-tenant NATS permissions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import nats
import nats.errors
from nats.js.api import AckPolicy, ConsumerConfig

Handler = Callable[[dict[str, Any]], Awaitable[None]]

MAX_DELIVER = 5
RETRY_DELAY_S = 5.0


async def handle(event: dict[str, Any]) -> None:
    """React to one ``memory.created`` event; here, print what was stored. Replace with your own effect
    (index the item, notify someone), made idempotent on ``event["id"]``."""
    data = event["data"]
    print(
        f"{event['time']} tenant {event['tenantid']}: new {data['kind']} {data['item_id']} "
        f"({data['review_status']}, {data['visibility']}) by {data['principal_id']}",
        flush=True,
    )


async def run(
    nats_url: str,
    *,
    durable: str,
    stream: str = "ENGRAM_EVENTS",
    prefix: str = "engram.events",
    tenant: str | None = None,
    inbox_prefix: str = "_INBOX",
    handler: Handler = handle,
    stop: asyncio.Event | None = None,
) -> None:
    """Consume until ``stop`` is set (or forever). ``inbox_prefix`` is where replies come back: a NATS user
    limited to one tenant may subscribe to its own prefix only (see docs/events.md)."""
    stop = stop or asyncio.Event()
    nc = await nats.connect(nats_url, inbox_prefix=inbox_prefix)
    try:
        sub = await nc.jetstream().pull_subscribe(
            f"{prefix}.{tenant or '*'}.memory.created",
            durable=durable,
            stream=stream,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=30, max_deliver=MAX_DELIVER),
        )
        while not stop.is_set():
            try:
                messages = await sub.fetch(batch=32, timeout=1)
            except (TimeoutError, nats.errors.TimeoutError):  # nothing new
                continue
            for message in messages:
                try:
                    event = json.loads(message.data)
                except ValueError:
                    await message.term()  # not an event: never redeliver it
                    continue
                try:
                    await handler(event)
                except Exception as exc:
                    print(f"event {event.get('id')} failed ({exc}); redelivered in {RETRY_DELAY_S:g} s", flush=True)
                    await message.nak(delay=RETRY_DELAY_S)
                    continue
                await message.ack_sync()  # confirmed by the server: no redelivery after a restart
    finally:
        await nc.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Print every new Engram memory as it is stored.")
    parser.add_argument("--nats-url", default=os.environ.get("ENGRAM_NATS_URL", "nats://127.0.0.1:4222"))
    parser.add_argument("--durable", default="example-subscriber", help="the consumer's name; keep it across restarts")
    parser.add_argument("--stream", default=os.environ.get("ENGRAM_EVENTS_STREAM", "ENGRAM_EVENTS"))
    parser.add_argument("--prefix", default=os.environ.get("ENGRAM_EVENTS_SUBJECT_PREFIX", "engram.events"))
    parser.add_argument("--tenant", help="only this tenant's events (its id)")
    parser.add_argument("--inbox-prefix", default="_INBOX", help="the reply subjects' prefix the NATS user may read")
    args = parser.parse_args()

    async def consume() -> None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await run(
            args.nats_url,
            durable=args.durable,
            stream=args.stream,
            prefix=args.prefix,
            tenant=args.tenant,
            inbox_prefix=args.inbox_prefix,
            stop=stop,
        )

    asyncio.run(consume())


if __name__ == "__main__":
    main()
