"""Canonical content: what two memories must share to be "the same memory"."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def canonical_text(content: str) -> str:
    """Unicode NFC, whitespace runs collapsed to one space, trimmed, case folded."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", content)).strip().casefold()


def content_hash(content: str) -> bytes:
    """SHA-256 of the canonical text; the dedup key of ``remember``."""
    return hashlib.sha256(canonical_text(content).encode("utf-8")).digest()


def preview(content: str, limit: int = 120) -> str:
    text = _WHITESPACE.sub(" ", content).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
