"""Rule-based classification of a memory's content: its kind, whether it is worth keeping, how sensitive it
is and where it belongs. Pure and deterministic; every answer carries the ``reasons`` that produced it.

Kind. Each kind has cue phrases, matched case-insensitively as whole words (curly apostrophes count as
straight ones). The kind whose best cue is strongest wins; equal strengths go to the earlier kind in
``KIND_PRECEDENCE`` (invariant, decision, doctrine, preference, procedure, observation). No cue: ``fact``.

- invariant: "must never", "must always", "must not", "shall never", "invariant", "under no circumstances"
- decision: "we decided", "we've decided", "we chose", "we agreed", "agreed to", "decision:", "going with",
  "decided to"
- doctrine: "we always", "we never", "our policy", "principle:", "as a rule", "our convention"
- preference: "I prefer", "prefers", "I'd rather", "my favourite/favorite", "please always/never use",
  "I like", "I love", "I hate", "I don't like"
- procedure: "step 1", "first, … then", "to <do something>, run", a numbered list (a line ``1.`` and,
  within 20 lines, a line ``2.``), "how to"
- observation: "I noticed", "it seems", "observed", "looks like", "I saw", "apparently", "today"

Most cues are strong (0.85); medium (0.7): "must not", "going with", "decided to", "prefers", "I like",
"I love", "I hate", "I don't like", "first, … then", "how to", "looks like", "I saw", "apparently"; weak
(0.6): "today". Taxonomy confidence is the winning cue's strength, less 0.1 for each other kind that was
also cued (ambiguity), never below 0.3; the default ``fact`` gets 0.5, and 0.3 when the message is chatter.

Retention, first match wins:

- ``noise``: the *whole* message is chatter, i.e. nothing but ``CHATTER`` phrases once case, punctuation
  and emoji skin tones are ignored ("Ok, thanks!", "👍👍", "sounds good."), repeated letters collapsed
  ("okkk", "thxxx") and laughter ("hahaha", "lolol") included. The same words inside a real sentence are
  not chatter: "ok, the deploy key lives in vault" is kept. A message with no words at all is noise too.
- ``transient``: time-bound, short-lived statements ("brb", "afk", "going to lunch", "in a meeting",
  "running the tests now", "back in 5", "heading out", "currently debugging").
- ``uncertain``: hedged ("maybe", "I think", "not sure", "possibly", "might", "perhaps", "probably",
  "I guess", "I suspect", "unclear").
- ``retain``: anything else.

Retention confidence: noise 0.9, transient 0.8, uncertain 0.7, retain 0.7 with a kind cue, else 0.6.

Sensitivity: ``secret`` when the secret guard (``engram.domain.secrets``) finds a credential; ``personal``
for an e-mail address, a phone number, a street or home address, health, salary, a date of birth or a
national id number; otherwise ``normal``. Secret and personal content suggest visibility ``private``; a
suggestion can only narrow the visibility a caller asked for (``narrow_visibility``).

Placement: tenant-configured rules, each a wing, an optional room and phrases; the first rule with a
phrase in the content (case-insensitive, whole words) places the memory. Both confidences are always
clamped to [0, 0.95]: rules are never certain.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engram.domain.secrets import find_secrets
from engram.domain.validation import MAX_LABEL_LENGTH, validate_choice
from engram.domain.values import Visibility
from engram.errors import ValidationFailed

MAX_CONFIDENCE = 0.95
STRONG, MEDIUM, WEAK = 0.85, 0.7, 0.6
DEFAULT_KIND = "fact"
DEFAULT_KIND_CONFIDENCE = 0.5
NOISE_KIND_CONFIDENCE = 0.3
AMBIGUITY_PENALTY = 0.1
MIN_CUED_CONFIDENCE = 0.3
MAX_PLACEMENT_RULES = 200
MAX_PLACEMENT_PHRASES = 100


@dataclass(frozen=True)
class Classification:
    kind: str
    taxonomy_confidence: float
    retention: str
    retention_confidence: float
    sensitivity: str
    wing: str | None
    room: str | None
    suggested_visibility: str | None
    reasons: tuple[str, ...]
    classifier: str = "rules"


@dataclass(frozen=True)
class PlacementRule:
    wing: str
    room: str | None
    any_of: tuple[str, ...]


@dataclass(frozen=True)
class _Cue:
    label: str
    pattern: re.Pattern[str]
    strength: float = STRONG


def _words(phrase: str) -> str:
    """``phrase`` as a regex: its words separated by any whitespace, whole words at its edges."""
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    head = r"(?<!\w)" if phrase[:1].isalnum() else ""
    tail = r"(?!\w)" if phrase[-1:].isalnum() else ""
    return head + body + tail


def _cue(label: str, strength: float = STRONG, pattern: str | None = None) -> _Cue:
    return _Cue(label, re.compile(pattern or _words(label), re.IGNORECASE | re.MULTILINE), strength)


def _strongest(cues: Sequence[_Cue], text: str) -> _Cue | None:
    return max((cue for cue in cues if cue.pattern.search(text)), key=lambda cue: cue.strength, default=None)


# --- kind ----------------------------------------------------------------------------------------------------

KIND_CUES: dict[str, tuple[_Cue, ...]] = {
    "invariant": (
        _cue("must never"),
        _cue("must always"),
        _cue("must not", MEDIUM),
        _cue("shall never"),
        _cue("invariant", pattern=r"\binvariants?\b"),
        _cue("under no circumstances"),
    ),
    "decision": (
        _cue("we decided"),
        _cue("we've decided"),
        _cue("we have decided"),
        _cue("we chose"),
        _cue("we agreed"),
        _cue("agreed to"),
        _cue("decision:", pattern=r"\bdecision\s*:"),
        _cue("going with", MEDIUM),
        _cue("decided to", MEDIUM),
    ),
    "doctrine": (
        _cue("we always"),
        _cue("we never"),
        _cue("our policy"),
        _cue("principle:", pattern=r"\bprinciple\s*:"),
        _cue("as a rule"),
        _cue("our convention"),
    ),
    "preference": (
        _cue("I prefer"),
        _cue("prefers", MEDIUM),
        _cue("I'd rather"),
        _cue("I would rather"),
        _cue("my favourite"),
        _cue("my favorite"),
        _cue("please always use"),
        _cue("please never use"),
        _cue("I like", MEDIUM),
        _cue("I love", MEDIUM),
        _cue("I hate", MEDIUM),
        _cue("I don't like", MEDIUM),
    ),
    "procedure": (
        _cue("step 1", pattern=r"\bstep\s*(?:1|one)\b"),
        _cue("first, … then", MEDIUM, r"\bfirst\b[^.!?\n]{0,200}?\bthen\b"),
        _cue("to …, run", pattern=r"\bto\s+\w+(?:\s+[\w-]+){0,4},\s*run\b"),
        _cue("numbered list", pattern=r"^[ \t]*1[.)][ \t]+\S.*\n(?:.*\n){0,20}?[ \t]*2[.)][ \t]+\S"),
        _cue("how to", MEDIUM),
    ),
    "observation": (
        _cue("I noticed"),
        _cue("it seems"),
        _cue("observed", pattern=r"\bobserved\b"),
        _cue("looks like", MEDIUM),
        _cue("I saw", MEDIUM),
        _cue("apparently", MEDIUM),
        _cue("today", WEAK),
    ),
}
KIND_PRECEDENCE: tuple[str, ...] = tuple(KIND_CUES)


def _classify_kind(text: str, *, noise: bool) -> tuple[str, float, list[str]]:
    matched = {kind: cue for kind in KIND_PRECEDENCE if (cue := _strongest(KIND_CUES[kind], text)) is not None}
    if not matched:
        confidence = NOISE_KIND_CONFIDENCE if noise else DEFAULT_KIND_CONFIDENCE
        return DEFAULT_KIND, confidence, [f"no kind cue; default {DEFAULT_KIND}"]
    kind = max(matched, key=lambda k: (matched[k].strength, -KIND_PRECEDENCE.index(k)))
    others = [k for k in matched if k != kind]
    confidence = max(MIN_CUED_CONFIDENCE, matched[kind].strength - AMBIGUITY_PENALTY * len(others))
    reasons = [f"kind cue '{matched[kind].label}'"]
    reasons += [f"also a {k} cue '{matched[k].label}'" for k in others]
    return kind, confidence, reasons


# --- retention -----------------------------------------------------------------------------------------------

CHATTER: tuple[str, ...] = (
    "ok",
    "okay",
    "k",
    "kk",
    "alright",
    "done",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "many thanks",
    "thanks a lot",
    "thank you very much",
    "cheers",
    "lol",
    "haha",
    "sure",
    "yes",
    "yep",
    "yeah",
    "no",
    "nope",
    "cool",
    "great",
    "nice",
    "perfect",
    "+1",
    "np",
    "no problem",
    "sounds good",
    "got it",
    "will do",
    "ack",
    "noted",
    "👍",
    "👌",
    "🙏",
    "✅",
    "🙂",
    "😀",
    "😂",
    "🎉",
)
_SKIN_TONES = range(0x1F3FB, 0x1F400)
_INVISIBLE = {"\ufe0f", "\u200d"}  # emoji variation selector, zero-width joiner
_LAUGHTER = re.compile(r"(?:ha){2,}h?|(?:he){2,}|l(?:ol)+|lo+l")


def _collapse(token: str) -> str:
    """Repeated letters collapsed to one ("okkk" → "ok", "cool" → "col"), laughter to "haha"."""
    return "haha" if _LAUGHTER.fullmatch(token) else re.sub(r"(.)\1+", r"\1", token)


def _chatter_tokens(text: str) -> list[str]:
    """Lower-case words and single emoji; punctuation, variation selectors and skin tones dropped."""
    chars: list[str] = []
    for char in unicodedata.normalize("NFKC", text).casefold():
        category = unicodedata.category(char)
        if char in _INVISIBLE or ord(char) in _SKIN_TONES:
            continue
        if category.startswith("P"):
            chars.append(" ")
        elif category == "So":
            chars.append(f" {char} ")
        else:
            chars.append(char)
    return [_collapse(token) for token in "".join(chars).split()]


_CHATTER_PHRASES = sorted(
    {tuple(_collapse(word) for word in phrase.split()) for phrase in CHATTER}, key=len, reverse=True
)


def is_chatter(text: str) -> bool:
    """True when the whole message is chatter phrases and nothing else (or no words at all)."""
    tokens = _chatter_tokens(text)
    position = 0
    while position < len(tokens):
        phrase = next((p for p in _CHATTER_PHRASES if tuple(tokens[position : position + len(p)]) == p), None)
        if phrase is None:
            return False
        position += len(phrase)
    return True


_ACTIVITY = (
    r"running|deploying|building|restarting|rebooting|testing|checking|debugging|investigating|"
    r"looking\s+into|working\s+on|fixing|merging|pushing|waiting\s+(?:for|on)|updating|installing|"
    r"compiling|reviewing|rolling\s+back|migrating"
)
# "running the tests now", but not "testing is now mandatory": no copula between the activity and "now"
_NO_VERB_GAP = r"(?:(?!\b(?:is|are|was|were|has|have|will|be)\b)[^.!?\n]){0,80}?"
_NOW = r"right\s+now|now|atm|at\s+the\s+moment"
_A_MOMENT = r"a\s+(?:bit|sec|second|minute|min|few|moment)"
_AWAY_TO = r"lunch|dinner|breakfast|coffee|bed|meeting|call|gym|standup"
TRANSIENT_CUES: tuple[_Cue, ...] = (
    _cue("brb"),
    _cue("afk"),
    _cue("be right back"),
    _cue("heading out"),
    _cue("logging off"),
    _cue("signing off"),
    _cue("out of office"),
    _cue("back in …", pattern=rf"\bback\s+in\s+(?:\d+|{_A_MOMENT})\b"),
    _cue("give me a minute", pattern=rf"\bgive\s+me\s+{_A_MOMENT}\b"),
    _cue(
        "off to lunch",
        pattern=rf"\b(?:going|heading|off|popping\s+out)\s+(?:to|for)\s+(?:a\s+|the\s+)?"
        rf"(?:{_AWAY_TO})\b",
    ),
    _cue("in a meeting", pattern=r"\b(?:in|on)\s+a\s+(?:meeting|call)\b"),
    _cue("at lunch", pattern=r"\b(?:at|out\s+for)\s+lunch\b"),
    _cue("stepping out", pattern=r"\bstepping\s+(?:out|away)\b"),
    _cue("doing something now", pattern=rf"\b(?:{_ACTIVITY})\b{_NO_VERB_GAP}\b(?:{_NOW})\b"),
    _cue("currently …ing", pattern=r"\bcurrently\s+\w+ing\b"),
)
UNCERTAIN_CUES: tuple[_Cue, ...] = tuple(
    _cue(hedge)
    for hedge in (
        "maybe",
        "I think",
        "not sure",
        "possibly",
        "might",
        "perhaps",
        "probably",
        "I guess",
        "I suspect",
        "I believe",
        "unclear",
        "not certain",
        "unsure",
        "could be",
    )
)


def _classify_retention(text: str, *, noise: bool, kind_cued: bool) -> tuple[str, float, list[str]]:
    if noise:
        return "noise", 0.9, ["retention: the whole message is chatter"]
    if (cue := _strongest(TRANSIENT_CUES, text)) is not None:
        return "transient", 0.8, [f"transient cue '{cue.label}'"]
    if (cue := _strongest(UNCERTAIN_CUES, text)) is not None:
        return "uncertain", 0.7, [f"hedge '{cue.label}'"]
    return "retain", 0.7 if kind_cued else 0.6, ["retention: no chatter, transient or hedge cue"]


# --- sensitivity ---------------------------------------------------------------------------------------------

_EMAIL = r"(?<![\w.+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w:])"
_PHONE = "|".join(
    (
        r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{2,4}\)?){2,4}(?![\w-])",  # +44 20 7946 0958
        r"(?<![\w-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\w-])",  # (415) 555-2671
        r"\b(?:phone|tel|mobile|cell)(?:\s+(?:number|no\.?))?\s*[:#]?\s*\+?\d[\d ().-]{6,}\d",  # phone: 0171 4960
    )
)
_STREET = (
    r"(?-i:\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,4}"  # 221 Baker Street: case matters here
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Close)\b)"
)
_HEALTH = (
    r"\b(?:diagnos(?:ed|is|es)|allerg(?:y|ies|ic)|medications?|prescri(?:bed|ption)|illness|disease|"
    r"pregnan(?:t|cy)|therapy|therapist|anxiety|depression|diabet(?:es|ic)|cancer|surgery|chemotherapy|"
    r"disabilit(?:y|ies)|adhd|asthma|migraines?|mental\s+health|blood\s+pressure|sick\s+leave|"
    r"medical\s+(?:leave|condition|history|records?))\b"
)
_SALARY = (
    r"\b(?:salary|salaries|paycheck|payslip|pay\s+slip|pay\s+(?:rise|raise)|wages?|compensation\s+package|"
    r"annual\s+compensation|hourly\s+rate)\b|\bearns\s+[$€£]?\d"
)
_NATIONAL_ID = (
    r"\b(?:social\s+security\s+number|SSN|passport\s+number|national\s+id)\b"
    r"|(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])"
)  # 078-05-1120
PERSONAL_CUES: tuple[_Cue, ...] = (
    _cue("e-mail address", pattern=_EMAIL),
    _cue("phone number", pattern=_PHONE),
    _cue("street address", pattern=_STREET),
    _cue("home address", pattern=r"\b(?:home\s+address|my\s+address|lives\s+at)\b"),
    _cue("health", pattern=_HEALTH),
    _cue("salary", pattern=_SALARY),
    _cue("date of birth", pattern=r"\b(?:date\s+of\s+birth|DOB|born\s+on)\b"),
    _cue("national id", pattern=_NATIONAL_ID),
)


def _classify_sensitivity(text: str) -> tuple[str, list[str]]:
    secrets = find_secrets(text)
    if secrets:
        kinds = ", ".join(dict.fromkeys(finding.kind for finding in secrets))
        return "secret", [f"sensitivity: holds a secret ({kinds})"]
    personal = [cue.label for cue in PERSONAL_CUES if cue.pattern.search(text)]
    if personal:
        return "personal", [f"sensitivity: personal data ({', '.join(personal)})"]
    return "normal", []


# --- placement -----------------------------------------------------------------------------------------------


def _place(text: str, rules: Sequence[PlacementRule]) -> tuple[PlacementRule | None, list[str]]:
    for index, rule in enumerate(rules):
        for phrase in rule.any_of:
            if phrase.strip() and re.search(_words(phrase), text, re.IGNORECASE):
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


# --- the whole answer ----------------------------------------------------------------------------------------


def clamp_confidence(x: float) -> float:
    """Into [0, 0.95]; NaN counts as no confidence."""
    if math.isnan(x):
        return 0.0
    return min(max(x, 0.0), MAX_CONFIDENCE)


def narrow_visibility(current: str, suggested: str | None) -> str:
    """The narrower of the two (private < workspace < tenant < public): a suggestion never widens."""
    validate_choice(current, Visibility, "visibility")
    if suggested is None:
        return current
    validate_choice(suggested, Visibility, "suggested_visibility")
    order = list(Visibility)  # narrowest first
    return min(current, suggested, key=lambda v: order.index(Visibility(v)))


def classify(content: str, placement_rules: Sequence[PlacementRule] = ()) -> Classification:
    text = content.replace("\u2019", "'").replace("\u2018", "'")
    noise = is_chatter(text)
    kind, kind_confidence, kind_reasons = _classify_kind(text, noise=noise)
    cued = kind_reasons[0].startswith("kind cue")
    retention, retention_confidence, retention_reasons = _classify_retention(text, noise=noise, kind_cued=cued)
    sensitivity, sensitivity_reasons = _classify_sensitivity(text)
    rule, placement_reasons = _place(text, placement_rules)
    return Classification(
        kind=kind,
        taxonomy_confidence=clamp_confidence(kind_confidence),
        retention=retention,
        retention_confidence=clamp_confidence(retention_confidence),
        sensitivity=sensitivity,
        wing=rule.wing if rule else None,
        room=rule.room if rule else None,
        suggested_visibility="private" if sensitivity != "normal" else None,
        reasons=tuple(kind_reasons + retention_reasons + sensitivity_reasons + placement_reasons),
    )
