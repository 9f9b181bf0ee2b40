"""What the admin modules share: the name rule of request bodies, and proto times as the API writes them."""

from __future__ import annotations

from typing import Any

from pydantic import Field

Name = Field(min_length=1, max_length=200)


def time_json(message: Any, name: str) -> str | None:
    """A Timestamp field as UTC with a Z, like every other time the API returns; None when unset."""
    if not message.HasField(name):
        return None
    return str(getattr(message, name).ToDatetime().isoformat()) + "Z"
