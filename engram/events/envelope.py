"""The CloudEvents 1.0 JSON envelope every Engram event travels in. Events carry ids and metadata, never
memory content: a subscriber reads content through the API with its own credentials."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SOURCE = "engram"
SPEC_VERSION = "1.0"


@dataclass(frozen=True)
class Event:
    type: str  # engram.<entity>.<action>
    tenant_id: str
    subject: str  # the item (or conflict) id
    data: dict[str, Any]
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    traceparent: str = ""
    source: str = SOURCE

    @property
    def entity_action(self) -> str:
        """``memory.created`` for type ``engram.memory.created``."""
        return self.type.removeprefix("engram.")

    def to_json(self) -> dict[str, Any]:
        envelope: dict[str, Any] = {
            "specversion": SPEC_VERSION,
            "id": self.id,
            "source": self.source,
            "type": self.type,
            "subject": self.subject,
            "time": self.time,
            "datacontenttype": "application/json",
            "tenantid": self.tenant_id,
            "data": self.data,
        }
        if self.traceparent:
            envelope["traceparent"] = self.traceparent
        return envelope

    def encode(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes | str | dict[str, Any]) -> Event:
        body = raw if isinstance(raw, dict) else json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError(f"not an Engram CloudEvent (a JSON {type(body).__name__}, not an object)")
        missing = [k for k in ("id", "type", "tenantid", "subject", "data") if k not in body]
        if not missing and not isinstance(body["data"], dict):
            missing = ["data (an object)"]
        if missing or body.get("specversion") != SPEC_VERSION:
            raise ValueError(f"not an Engram CloudEvent (missing {missing or 'specversion 1.0'})")
        return cls(
            type=body["type"],
            tenant_id=body["tenantid"],
            subject=body["subject"],
            data=body["data"],
            id=body["id"],
            time=body.get("time", ""),
            traceparent=body.get("traceparent", ""),
            source=body.get("source", SOURCE),
        )


def subject_for(prefix: str, tenant_id: str, entity_action: str) -> str:
    """``engram.events.<tenant_id>.memory.created``."""
    return f"{prefix}.{tenant_id}.{entity_action}"


def filter_for(prefix: str, entity_action: str) -> str:
    """The subject filter that matches one event type across every tenant."""
    return f"{prefix}.*.{entity_action}"


def filters_only(filter_subject: str | None, filter_subjects: list[str] | None, wanted: str) -> bool:
    """Whether a consumer with these filters takes exactly the subjects of ``wanted`` (a ``filter_for``)."""
    return filter_subject == wanted and not filter_subjects
