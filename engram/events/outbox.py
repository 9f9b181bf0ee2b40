"""The outbox writer a service announces its changes through: it knows the service's subject prefix, so the
code that makes a change hands it an event and a connection, nothing else."""

from __future__ import annotations

import asyncpg

from engram.db import outbox as rows
from engram.events.envelope import Event, subject_for


class Outbox:
    """Queues events under one subject prefix, in the caller's transaction (the relay publishes them)."""

    def __init__(self, subject_prefix: str) -> None:
        self.subject_prefix = subject_prefix

    async def add(self, conn: asyncpg.Connection, event: Event) -> None:
        await rows.add(
            conn, tenant_id=event.tenant_id, event_id=event.id, subject=self.subject(event), envelope=event.to_json()
        )

    def subject(self, event: Event) -> str:
        """The NATS subject ``event`` is published under."""
        return subject_for(self.subject_prefix, event.tenant_id, event.entity_action)
