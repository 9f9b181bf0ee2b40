"""``engram events tail``: follow the event stream with an ephemeral ordered consumer, one CloudEvent per line.

The consumer lives in the server's memory only and goes away when the command stops: nothing is acknowledged,
no position is kept, and Engram's own durable consumers are untouched. It starts at the next event, or at a
point in time (``--since``), and filters on the event types asked for, on the server.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import nats
import nats.errors
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from engram.domain.validation import is_uuid
from engram.errors import Unavailable, ValidationFailed

DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
TYPE = re.compile(r"^[a-z_]+\.[a-z_]+$")
POLL_S = 0.5
RECONNECTS = 3  # 2 s apart (nats-py also retries the first connect this often): a brief NATS restart goes unnoticed


def since_time(value: str, now: datetime | None = None) -> datetime:
    """``--since``: a duration back from now (``90s``, ``10m``, ``2h``, ``7d``) or an ISO 8601 time with offset."""
    match = DURATION.match(value.strip())
    if match:
        return (now or datetime.now(UTC)) - timedelta(seconds=float(match[1]) * UNITS[match[2]])
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise ValidationFailed(
            f"--since must be a duration (30s, 10m, 2h, 7d) or an ISO 8601 time with an offset; got {value!r}",
            field="since",
        )
    return when


def subjects(prefix: str, types: list[str], tenant: str | None) -> list[str]:
    """The subjects to filter on: ``<prefix>.<tenant or *>.<entity>.<action>`` per type, or every event."""
    if tenant is not None and not is_uuid(tenant):
        raise ValidationFailed("--tenant must be a tenant id (a UUID)", field="tenant")
    scope = f"{prefix}.{tenant or '*'}"
    names = [t.strip().removeprefix("engram.") for t in types if t.strip()]
    for name in names:
        if not TYPE.match(name):
            raise ValidationFailed(
                f"--types takes event types such as memory.created or engram.conflict.detected; got {name!r}",
                field="types",
            )
    return [f"{scope}.{name}" for name in dict.fromkeys(names)] or [f"{scope}.>"]


async def tail(
    nats_url: str,
    stream: str,
    filters: list[str],
    since: datetime | None,
    emit: Callable[[str], None],
    ready: Callable[[], None],
    count: int | None = None,
    identity: dict[str, Any] | None = None,
) -> int:
    """Print (through ``emit``) each matching event as one line of JSON until SIGINT/SIGTERM, or ``count``
    events; ``ready`` is called once the consumer exists. ``identity`` is the ``nats.connect`` credentials
    (``engram.events.connection.credentials``). Answers how many events were printed."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    async def quiet(_: Exception) -> None:  # nats-py logs each failed attempt with a traceback otherwise
        return None

    try:
        nc = await nats.connect(
            nats_url, connect_timeout=5, max_reconnect_attempts=RECONNECTS, error_cb=quiet, **(identity or {})
        )
    except Exception as exc:  # refused, timed out, bad credentials: say where and why, without a traceback
        raise Unavailable(f"NATS at {nats_url} is unreachable: {type(exc).__name__}: {exc}") from exc
    printed = 0
    try:
        config = ConsumerConfig(
            deliver_policy=DeliverPolicy.BY_START_TIME if since else DeliverPolicy.NEW,
            opt_start_time=since,
            filter_subjects=filters if len(filters) > 1 else None,
        )
        try:
            sub = await nc.jetstream().subscribe(filters[0], stream=stream, config=config, ordered_consumer=True)
        except NotFoundError as exc:
            raise Unavailable(f"no stream {stream} on {nats_url}: has Engram's ingest started?") from exc
        ready()
        while not stop.is_set() and (count is None or printed < count):
            try:
                message = await sub.next_msg(timeout=POLL_S)
            except nats.errors.TimeoutError:  # nothing new: look at the stop flag again
                continue
            except nats.errors.ConnectionClosedError as exc:  # reconnecting gave up
                raise Unavailable(f"lost the connection to NATS at {nats_url}") from exc
            try:
                event = json.loads(message.data)
            except ValueError:
                event = {"undecodable": message.data.decode(errors="replace"), "subject": message.subject}
            emit(json.dumps(event, sort_keys=True))
            printed += 1
        await sub.unsubscribe()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await nc.close()
    return printed
