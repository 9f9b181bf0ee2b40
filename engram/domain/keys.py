"""API keys and scopes: the key format, its salted hash, and what each scope allows.

A key is ``eng_<key_id>_<secret>``: the key id finds the stored row, the secret is checked against a salted
SHA-256 with a constant-time comparison. Secrets are 256 random bits, so a slow password hash buys nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from engram.domain.values import Visibility
from engram.errors import PermissionDenied, ValidationFailed

SCOPES = ("read", "write", "review", "publish", "export", "admin")
DEFAULT_SCOPES = ("read", "write")
PREFIX = "eng"
_KEY = re.compile(r"^eng_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")


@dataclass(frozen=True)
class IssuedKey:
    key_id: str
    key: str  # shown once, never stored
    salt: bytes
    secret_hash: bytes


def issue_key() -> IssuedKey:
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    return IssuedKey(key_id, f"{PREFIX}_{key_id}_{secret}", salt, hash_secret(salt, secret))


def hash_secret(salt: bytes, secret: str) -> bytes:
    return hashlib.sha256(salt + secret.encode()).digest()


def parse_key(presented: str) -> tuple[str, str] | None:
    """(key_id, secret) of a well-formed key, else None."""
    match = _KEY.match(presented)
    return (match.group(1), match.group(2)) if match else None


def secret_matches(salt: bytes, stored_hash: bytes, secret: str) -> bool:
    return hmac.compare_digest(hash_secret(salt, secret), stored_hash)


def normalize_scopes(scopes: list[str] | None) -> list[str]:
    """Omitted → read + write; unknown scopes are refused naming the known ones."""
    if not scopes:
        return list(DEFAULT_SCOPES)
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise ValidationFailed(f"unknown scopes {unknown}; known scopes: {', '.join(SCOPES)}", field="scopes")
    return [s for s in SCOPES if s in scopes]


def allows(granted: frozenset[str], required: str) -> bool:
    """``admin`` satisfies every scope; otherwise no scope implies another."""
    return "admin" in granted or required in granted


PUBLISH = "publish"


def require_publish(granted: frozenset[str], visibility: str) -> None:
    """A ``public`` memory can reach every tenant that accepts public memories, so writing one needs the
    ``publish`` scope (``admin`` implies it); ``write`` alone is not enough."""
    if visibility == Visibility.PUBLIC and not allows(granted, PUBLISH):
        raise PermissionDenied(
            "Requires scope: publish (to write a memory with visibility public)",
            field="visibility",
            code="insufficient_scope",
        )
