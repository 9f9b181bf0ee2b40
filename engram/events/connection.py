"""How every Engram process connects to NATS: the URL and the credentials the settings give.

One identity per process: a user and password (``ENGRAM_NATS_USER``/``ENGRAM_NATS_PASSWORD``), a ``.creds`` file
(``ENGRAM_NATS_CREDS``: a user JWT and its nkey seed, for operator/account set-ups) or an nkey seed file
(``ENGRAM_NATS_NKEY_SEED``); none of them: credentials only if the URL carries them (``nats://user:pw@host``).
Each service gets its own identity so the server can limit what it may publish and subscribe to
(docs/security.md, "Service to service").
"""

from __future__ import annotations

import contextlib
from typing import Any

from faststream.nats import NatsBroker
from faststream.nats.security import NatsCredentials, NatsNKey, NatsSecurity, NatsUserPassword
from nats.aio.client import Client

from engram.config import Settings


def credentials(settings: Settings) -> dict[str, Any]:
    """The ``nats.connect`` keyword arguments of the configured identity (empty when none is)."""
    if settings.nats_user:
        return {"user": settings.nats_user, "password": settings.nats_password or ""}
    if settings.nats_creds is not None:
        return {"user_credentials": str(settings.nats_creds)}
    if settings.nats_nkey_seed is not None:
        return {"nkeys_seed": str(settings.nats_nkey_seed)}
    return {}


def broker_security(settings: Settings) -> NatsSecurity | None:
    """The same identity for a faststream broker."""
    if settings.nats_user:
        return NatsUserPassword(settings.nats_user, settings.nats_password or "")
    if settings.nats_creds is not None:
        return NatsCredentials.from_file(settings.nats_creds)
    if settings.nats_nkey_seed is not None:
        return NatsNKey.from_file(settings.nats_nkey_seed)
    return None


async def connect(settings: Settings, **options: Any) -> Client:
    """A NATS connection to ``settings.nats_url`` as the configured identity; ``options`` are nats-py's. A
    refused attempt (no server, wrong credentials) closes what it opened, so retrying callers leak nothing."""
    if not settings.nats_url:
        raise ValueError("no NATS URL: set ENGRAM_NATS_URL")
    client = Client()
    try:
        await client.connect(settings.nats_url, **credentials(settings), **options)
    except BaseException:
        with contextlib.suppress(Exception):
            await client.close()
        raise
    return client


def broker(settings: Settings, **options: Any) -> NatsBroker:
    """A faststream broker on ``settings.nats_url`` as the configured identity; ``options`` are faststream's."""
    return NatsBroker(settings.nats_url or "", security=broker_security(settings), **options)
