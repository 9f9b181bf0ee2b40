"""Placement: tenant-configured rules, each a wing, an optional room and phrases; the first rule with a
phrase in the content (case-insensitive, whole words) places the memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engram.domain.classification.cues import words
from engram.domain.validation import MAX_LABEL_LENGTH
from engram.errors import ValidationFailed

MAX_PLACEMENT_RULES = 200
MAX_PLACEMENT_PHRASES = 100


@dataclass(frozen=True)
class PlacementRule:
    wing: str
    room: str | None
    any_of: tuple[str, ...]


def place(text: str, rules: Sequence[PlacementRule]) -> tuple[PlacementRule | None, list[str]]:
    for index, rule in enumerate(rules):
        for phrase in rule.any_of:
            if phrase.strip() and re.search(words(phrase), text, re.IGNORECASE):
                where = rule.wing if rule.room is None else f"{rule.wing}/{rule.room}"
                return rule, [f"placement rule {index} ({where}) matched '{phrase}'"]
    return None, []


def parse_placement_rules(raw: object) -> list[PlacementRule]:
    """Tenant config → rules. ``raw`` is a list of ``{"wing": str, "room": str?, "any_of": [str, …]}``; ``None``
    means no rules. Wing, room and phrases are trimmed; each failure names the rule (by index) and what broke."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValidationFailed("placement_rules must be a list of rules", field="placement_rules")
    if len(raw) > MAX_PLACEMENT_RULES:
        raise ValidationFailed(
            f"at most {MAX_PLACEMENT_RULES} placement rules, got {len(raw)}", field="placement_rules"
        )
    return [_parse_rule(index, entry) for index, entry in enumerate(raw)]


def _parse_rule(index: int, entry: object) -> PlacementRule:
    def fail(problem: str) -> ValidationFailed:
        return ValidationFailed(f"placement_rules[{index}]: {problem}", field="placement_rules")

    if not isinstance(entry, dict):
        raise fail("must be an object with wing, room and any_of")
    unknown = sorted(str(key) for key in entry if key not in ("wing", "room", "any_of"))
    if unknown:
        raise fail(f"unknown keys {unknown}; allowed: wing, room, any_of")
    wing = _label(entry.get("wing"), "wing", fail)
    if wing is None:
        raise fail("wing is required")
    room = _label(entry.get("room"), "room", fail)
    phrases = entry.get("any_of")
    if not isinstance(phrases, list) or not phrases:
        raise fail("any_of must be a non-empty list of phrases")
    if len(phrases) > MAX_PLACEMENT_PHRASES:
        raise fail(f"any_of holds at most {MAX_PLACEMENT_PHRASES} phrases")
    clean: list[str] = []
    for phrase in phrases:
        if not isinstance(phrase, str) or not phrase.strip() or len(phrase) > MAX_LABEL_LENGTH:
            raise fail(f"each any_of phrase must be a string of 1–{MAX_LABEL_LENGTH} characters; got {phrase!r}")
        if " ".join(phrase.split()) not in clean:
            clean.append(" ".join(phrase.split()))
    return PlacementRule(wing=wing, room=room, any_of=tuple(clean))


def _label(value: object, name: str, fail: Callable[[str], ValidationFailed]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_LABEL_LENGTH:
        raise fail(f"{name} must be a string of 1–{MAX_LABEL_LENGTH} characters; got {value!r}")
    return value.strip()
