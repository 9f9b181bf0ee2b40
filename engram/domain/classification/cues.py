"""Cue phrases: a label, a case-insensitive whole-word pattern and how strongly it points at its answer."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

STRONG, MEDIUM, WEAK = 0.85, 0.7, 0.6


@dataclass(frozen=True)
class Cue:
    label: str
    pattern: re.Pattern[str]
    strength: float = STRONG


def words(phrase: str) -> str:
    """``phrase`` as a regex: its words separated by any whitespace, whole words at its edges."""
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    head = r"(?<!\w)" if phrase[:1].isalnum() else ""
    tail = r"(?!\w)" if phrase[-1:].isalnum() else ""
    return head + body + tail


def cue(label: str, strength: float = STRONG, pattern: str | None = None) -> Cue:
    return Cue(label, re.compile(pattern or words(label), re.IGNORECASE | re.MULTILINE), strength)


def strongest(cues: Sequence[Cue], text: str) -> Cue | None:
    return max((cue for cue in cues if cue.pattern.search(text)), key=lambda cue: cue.strength, default=None)
