"""Placement: tenant-configured rules, each a wing, an optional room and phrases; the first rule with a
phrase in the content (case-insensitive, whole words) places the memory.

A tenant's rules are bounded when they are set (``parse_placement_rules``): at most ``MAX_PLACEMENT_RULES``
rules, ``MAX_RULE_PHRASES`` phrases in one rule, ``MAX_PLACEMENT_PHRASES`` phrases in all and
``MAX_PHRASE_LENGTH`` characters a phrase. Their patterns are compiled once per distinct rule set and kept in a
small LRU cache (``compiled``), so classifying under the same configuration again compiles nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engram.domain.classification.cues import words
from engram.domain.validation import MAX_LABEL_LENGTH
from engram.errors import ValidationFailed

MAX_PLACEMENT_RULES = 200
MAX_RULE_PHRASES = 100
MAX_PLACEMENT_PHRASES = 200
MAX_PHRASE_LENGTH = MAX_LABEL_LENGTH
COMPILED_RULE_SETS = 128  # distinct rule sets whose patterns stay compiled (least recently used dropped)

# The only characters outside ASCII that a case-insensitive pattern of ASCII letters matches: İ, ı, ſ and the
# Kelvin sign. ``_fold`` maps them onto the ASCII letter (and drops the dot İ lowers to), so an ASCII phrase
# whose words are not all in the folded text cannot match it, and its pattern need not run.
_FOLD = str.maketrans({"ı": "i", "ſ": "s", "\u0307": None})


@dataclass(frozen=True)
class PlacementRule:
    wing: str
    room: str | None
    any_of: tuple[str, ...]


@dataclass(frozen=True)
class _Phrase:
    index: int  # of its rule
    rule: PlacementRule
    phrase: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...] | None  # its words, lower-case, when the phrase is ASCII


@lru_cache(maxsize=COMPILED_RULE_SETS)
def compiled(rules: tuple[PlacementRule, ...]) -> tuple[_Phrase, ...]:
    """Every phrase of ``rules``, in order, with its pattern. Cached by the rules' content: equal rule sets
    (one tenant's configuration read again, or two tenants with the same rules) share one compilation."""
    return tuple(
        _Phrase(
            index,
            rule,
            phrase,
            re.compile(words(phrase), re.IGNORECASE),
            tuple(phrase.lower().split()) if phrase.isascii() else None,
        )
        for index, rule in enumerate(rules)
        for phrase in rule.any_of
        if phrase.strip()
    )


def place(text: str, rules: Sequence[PlacementRule]) -> tuple[PlacementRule | None, list[str]]:
    folded: str | None = None
    for candidate in compiled(tuple(rules)):
        if candidate.needles is not None:
            folded = text.lower().translate(_FOLD) if folded is None else folded
            if not all(needle in folded for needle in candidate.needles):
                continue
        if candidate.pattern.search(text):
            rule = candidate.rule
            where = rule.wing if rule.room is None else f"{rule.wing}/{rule.room}"
            return rule, [f"placement rule {candidate.index} ({where}) matched '{candidate.phrase}'"]
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
    rules = [_parse_rule(index, entry) for index, entry in enumerate(raw)]
    phrases = sum(len(rule.any_of) for rule in rules)
    if phrases > MAX_PLACEMENT_PHRASES:
        raise ValidationFailed(
            f"placement_rules hold at most {MAX_PLACEMENT_PHRASES} any_of phrases in all, got {phrases}",
            field="placement_rules",
        )
    return rules


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
    if len(phrases) > MAX_RULE_PHRASES:
        raise fail(f"any_of holds at most {MAX_RULE_PHRASES} phrases, got {len(phrases)}")
    clean: list[str] = []
    for phrase in phrases:
        if not isinstance(phrase, str) or not phrase.strip() or len(phrase) > MAX_PHRASE_LENGTH:
            raise fail(f"each any_of phrase must be a string of 1–{MAX_PHRASE_LENGTH} characters; got {phrase!r}")
        if " ".join(phrase.split()) not in clean:
            clean.append(" ".join(phrase.split()))
    return PlacementRule(wing=wing, room=room, any_of=tuple(clean))


def _label(value: object, name: str, fail: Callable[[str], ValidationFailed]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_LABEL_LENGTH:
        raise fail(f"{name} must be a string of 1–{MAX_LABEL_LENGTH} characters; got {value!r}")
    return value.strip()
