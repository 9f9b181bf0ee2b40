"""Publish → handler latency of a faststream batch pull consumer on JetStream: with Engram's fetch loop (one long
poll per batch, ``engram.events.consumer.long_poll``; ``--fetch-timeout`` is then its idle wait) or faststream's
own (``--faststream-loop``: the batch stays open until the window has run out), and with or without Engram's fix
for the nats-py/faststream fetch-timeout mismatch (``patch_nats_fetch_timeout``).

    python bench/consumer_latency.py --messages 600 --fetch-timeout 5
    python bench/consumer_latency.py --messages 600 --fetch-timeout 0.1 --faststream-loop
    python bench/consumer_latency.py --messages 600 --fetch-timeout 0.1 --faststream-loop --no-patch

Messages are published one at a time at random 50–600 ms intervals to an embedded NATS server; the
handler records when each arrives and acks it. Reports p50/p95/max and how many arrived over 5 s late.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import tempfile
import time
from pathlib import Path

import nats
from faststream import AckPolicy, Context
from faststream.nats import ConsumerConfig, JStream, NatsBroker, PullSub
from faststream.nats.message import NatsBatchMessage

from engram.events.consumer import long_poll, patch_nats_fetch_timeout
from engram.runtime.nats import EmbeddedNats


async def measure(messages: int, fetch_timeout: float, ack_wait: float, faststream_loop: bool) -> list[float]:
    server = EmbeddedNats(Path(tempfile.mkdtemp(prefix="engram-bench-", dir="/tmp")) / "nats")
    url = server.start()
    try:
        nc = await nats.connect(url)
        await nc.jetstream().add_stream(name="BENCH", subjects=["bench.>"])
        broker = NatsBroker(url, logger=None)
        sent: dict[str, float] = {}
        delays: list[float] = []

        subscriber = broker.subscriber(
            "bench.x",
            stream=JStream("BENCH", declare=False),
            durable="bench",
            config=ConsumerConfig(ack_wait=ack_wait),
            ack_policy=AckPolicy.MANUAL,
            pull_sub=PullSub(batch_size=32, timeout=fetch_timeout, batch=True),
        )
        if not faststream_loop:
            subscriber = long_poll(subscriber)

        @subscriber
        async def handle(message: NatsBatchMessage = Context("message")) -> None:  # noqa: B008
            for raw in message.raw_message:
                delays.append(time.monotonic() - sent[raw.data.decode()])
                await raw.ack()

        await broker.start()
        for i in range(messages):
            await asyncio.sleep(random.uniform(0.05, 0.6))
            sent[str(i)] = time.monotonic()
            await nc.jetstream().publish("bench.x", str(i).encode())
        deadline = time.monotonic() + ack_wait + 5
        while len(delays) < messages and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        await broker.stop()
        await nc.close()
        return sorted(delays)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--fetch-timeout", type=float, default=0.1)
    parser.add_argument("--ack-wait", type=float, default=30.0)
    parser.add_argument("--no-patch", action="store_true", help="without patch_nats_fetch_timeout")
    parser.add_argument("--faststream-loop", action="store_true", help="faststream's fetch loop, not the long poll")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    if not args.no_patch:
        patch_nats_fetch_timeout()
    delays = asyncio.run(measure(args.messages, args.fetch_timeout, args.ack_wait, args.faststream_loop))
    print(
        f"loop={'faststream' if args.faststream_loop else 'long-poll'} patched={not args.no_patch} "
        f"fetch_timeout={args.fetch_timeout}s messages={args.messages} "
        f"delivered={len(delays)} p50={delays[len(delays) // 2] * 1000:.0f}ms "
        f"p95={delays[int(len(delays) * 0.95)] * 1000:.0f}ms max={delays[-1] * 1000:.0f}ms "
        f"over_5s={sum(d > 5 for d in delays)}"
    )


if __name__ == "__main__":
    main()
