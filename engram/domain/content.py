"""Canonical content (what two memories must share to be "the same memory") and the text indexed and embedded
for a memory beside its content."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime

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


def date_words(at: datetime | None) -> str:
    """A date as the words people search with: "8 May 2023 (Monday)"; empty when there is no date."""
    if at is None:
        return ""
    at = at.astimezone(UTC)
    return f"{at.day} {at:%B %Y} ({at:%A})"


def index_context(subject: str | None, valid_from: datetime | None) -> str:
    """What is indexed beside the content so it can be found by it: the date the claim holds from and the
    subject (its separators as spaces)."""
    parts = [date_words(valid_from), re.sub(r"[._:/-]+", " ", subject or "").strip()]
    return " ".join(p for p in parts if p)


def passage(content: str, valid_from: datetime | None) -> str:
    """The text embedded for a memory: its date first when it has one, then the content."""
    when = date_words(valid_from)
    return f"{when}: {content}" if when else content
