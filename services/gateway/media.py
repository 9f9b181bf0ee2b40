"""Request bodies are JSON. FastAPI parses a body as JSON only under a JSON media type and otherwise hands the
raw bytes to validation, which then names no field usefully; here such a body is refused with 415 naming the
media type to send, before authentication (as a body that is not valid JSON is)."""

from __future__ import annotations

import email.message
import functools
import json
import re
from collections.abc import Callable
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException

from engram.errors import ValidationFailed
from engram.rpc.nul import NO_NUL, NUL

JSON = "application/json"
_HIGH = rb"\\u[dD][89abAB][0-9a-fA-F]{2}"
_LOW = rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
LONE_SURROGATE_ESCAPE = re.compile(_HIGH + rb"(?!" + _LOW + rb")|(?<![^\\]" + _HIGH + rb")" + _LOW)
"""What may be the JSON escape of a lone UTF-16 surrogate: a high half not followed by a low one, or a low half not
right after a high escape that no backslash precedes. An escaped pair (``json.dumps(ensure_ascii=True)`` writes
every emoji so) is one character and does not match; an escaped backslash before a ``u`` may match, and only
costs the parse that finds nothing."""
NO_SURROGATE = "{where} must not contain a lone UTF-16 surrogate (U+D800–U+DFFF): it is no Unicode character"


@functools.lru_cache(maxsize=64)
def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters aside (FastAPI's own rule). Parsed
    once per distinct header value (clients send one or two)."""
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


async def json_bodies(request: Request) -> None:
    """The first check of ``auth.caller``, the app-wide dependency: a route that takes a body gets a non-empty
    one as JSON or refuses it (415, which ``problems`` answers as ``unsupported_media_type``). An empty body
    passes, for validation to report as missing. Every body the gateway reads is JSON (it has no form routes).
    A NUL character (U+0000) in a query parameter or anywhere in the body is refused naming where it is:
    PostgreSQL's text cannot hold it. So is a lone surrogate escape (``"\\ud800"``), which no UTF-8 text
    (protobuf's, PostgreSQL's) can hold."""
    if request.scope.get("query_string"):  # most requests have no query string: no QueryParams to build
        _refuse_nul_in_query(request)
    if getattr(request.scope.get("route"), "body_field", None) is None or not await request.body():
        return
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        sent = f"it was sent as {content_type}" if content_type else "it was sent without a Content-Type"
        raise HTTPException(415, f"the body must be JSON, sent with Content-Type: {JSON}; {sent}")
    body = await request.body()
    # JSON writes a NUL only as \u0000 (its escapes are lower-case) and a surrogate only as an escape (raw, it is
    # no UTF-8): a look at the bytes before parsing again, only when one may be there
    nul, surrogate = b"\\u0000" in body, LONE_SURROGATE_ESCAPE.search(body) is not None
    if not (nul or surrogate):
        return
    try:
        parsed = json.loads(body)
    except ValueError:
        return  # not JSON: validation answers it
    for present, wrong, rule in ((nul, _has_nul, NO_NUL), (surrogate, _has_surrogate, NO_SURROGATE)):
        where = _string_at(parsed, "", wrong) if present else None
        if where is not None:
            # a key holding the surrogate is named escaped: the answer itself must be UTF-8
            where = where.encode("utf-8", "backslashreplace").decode("utf-8") or "body"
            raise ValidationFailed(rule.format(where=where), field=where)


def _refuse_nul_in_query(request: Request) -> None:
    for name, value in request.query_params.multi_items():
        if NUL in value or NUL in name:
            raise ValidationFailed(NO_NUL.format(where=name), field=name)


def _has_nul(text: str) -> bool:
    return NUL in text


def _has_surrogate(text: str) -> bool:
    """A lone surrogate: json.loads joins an escaped pair into one character and keeps a lone half as it is,
    which is the only thing that fails encoding as UTF-8 (looked for in C, not character by character)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _string_at(value: Any, path: str, wrong: Callable[[str], bool]) -> str | None:
    """The dotted path of the first string (value or key) of a parsed JSON value that is ``wrong``, else None."""
    if isinstance(value, str):
        return path if wrong(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if wrong(str(key)):
                return inner
            found = _string_at(item, inner, wrong)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _string_at(item, f"{path}[{i}]", wrong)
            if found is not None:
                return found
    return None
