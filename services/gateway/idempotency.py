"""The ``Idempotency-Key`` header of remember, remember/batch and observe, at the edge: checked, and sent to
ingest with a fingerprint of the body (ingest keeps the key with the answer, compares fingerprints on a retry,
and says when an answer is replayed)."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import Header, Response
from pydantic import BaseModel

from engram.domain.validation import validate_idempotency_key
from engram.v1 import ingest_pb2

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"

KeyHeader = Annotated[
    str | None,
    Header(
        alias=HEADER,
        description="1–200 printable ASCII characters. A retry with the same key and body answers what the first "
        "request did (header `Idempotent-Replayed: true`) and writes nothing; the same key with another body "
        "answers 409 `idempotency_key_reused`. Keys are kept ENGRAM_IDEMPOTENCY_TTL_HOURS (24).",
    ),
]
"""A route parameter typed ``KeyHeader`` is the request's ``Idempotency-Key`` (None without one)."""


def fingerprint(body: Any) -> bytes:
    """SHA-256 of the body as JSON with sorted keys: the same body gives the same fingerprint however sent."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).digest()


def idempotency(key: str | None, body: Any) -> ingest_pb2.IdempotencyKey | None:
    """What ingest needs of the header (422 ``field: Idempotency-Key`` for a malformed one). ``body`` is the
    request body as JSON-ready data, or a pydantic model, dumped as JSON only when there is a key."""
    if key is None:
        return None
    validate_idempotency_key(key)
    if isinstance(body, BaseModel):
        body = body.model_dump(mode="json")
    return ingest_pb2.IdempotencyKey(key=key, request_hash=fingerprint(body))


def mark(response: Response, replayed: bool) -> None:
    if replayed:
        response.headers[REPLAYED] = "true"
