"""Request bodies are JSON. FastAPI parses a body as JSON only under a JSON media type and otherwise hands the
raw bytes to validation, which then names no field usefully; here such a body is refused with 415 naming the
media type to send, before authentication (as a body that is not valid JSON is)."""

from __future__ import annotations

import email.message
import functools
import json
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException

from engram.errors import ValidationFailed
from engram.rpc.nul import NO_NUL, NUL

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
    missing. Every body the gateway reads is JSON (it has no form routes). A NUL character (U+0000) in a query
    parameter or anywhere in the body is refused naming where it is: PostgreSQL's text cannot hold it."""
    for name, value in request.query_params.multi_items():
        if NUL in value or NUL in name:
            raise ValidationFailed(NO_NUL.format(where=name), field=name)
    if getattr(request.scope.get("route"), "body_field", None) is None or not await request.body():
        return
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        sent = f"it was sent as {content_type}" if content_type else "it was sent without a Content-Type"
        raise HTTPException(415, f"the body must be JSON, sent with Content-Type: {JSON}; {sent}")
    body = await request.body()
    if b"\\u0000" in body:  # the only way JSON writes a NUL (its escapes are lower-case); a look before parsing again
        try:
            where = _nul_at(json.loads(body), "")
        except ValueError:
            return  # not JSON: validation answers it
        if where is not None:
            raise ValidationFailed(NO_NUL.format(where=where or "body"), field=where or "body")


def _nul_at(value: Any, path: str) -> str | None:
    """The dotted path of the first string (value or key) holding a NUL in a parsed JSON value, else None."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return inner
            found = _nul_at(item, inner)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_at(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None
