"""Request bodies are JSON. FastAPI parses a body as JSON only under a JSON media type and otherwise hands the
raw bytes to validation, which then names no field usefully; here such a body is refused with 415 naming the
media type to send, before authentication (as a body that is not valid JSON is)."""

from __future__ import annotations

import email.message
import functools

from fastapi import Request
from starlette.exceptions import HTTPException

JSON = "application/json"


@functools.lru_cache(maxsize=64)
def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters aside (FastAPI's own rule). Parsed
    once per distinct header value (clients send one or two)."""
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


async def json_bodies(request: Request) -> None:
    """An app-wide dependency: a route that takes a body gets a non-empty one as JSON or refuses it (415, which
    ``problems`` answers as ``unsupported_media_type``). An empty body passes, for validation to report as
    missing. Every body the gateway reads is JSON (it has no form routes)."""
    if getattr(request.scope.get("route"), "body_field", None) is None or not await request.body():
        return
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        sent = f"it was sent as {content_type}" if content_type else "it was sent without a Content-Type"
        raise HTTPException(415, f"the body must be JSON, sent with Content-Type: {JSON}; {sent}")
