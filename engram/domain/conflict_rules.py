"""Conflict rules: label a new memory against a near live one as duplicate, refinement or contradiction.

The conflicts consumer hands over two texts of the same kind and scope with their cosine similarity. ``judge``
tries these rules in order; the first that fires gives the verdict:

1. ``same_text`` — equal once case, spacing and punctuation are normalised: duplicate, at any similarity.
2. ``exclusive_predicate:<predicate>`` — the same subject holds two different values of a predicate that takes
   one value at a time (lives in, works at / for, is based / located in, reports to, prefers, uses … as
   default, 's favourite …): contradiction. Fires at any similarity, since "Alice lives in Paris" and "Alice
   lives in Berlin" may embed far apart. Below ``floor`` no other rule is tried.
3. ``negation`` — a negated clause of one text ("not", "never", "no longer", "isn't", …) states a claim that
   a clause of the other affirms: contradiction.
4. ``numbers_differ:<kind>`` — the same slot (same kind of quantity, next to the same word) carries another
   number, date, version, amount of money or measure: contradiction.
5. ``same_words`` (same content words and values) or ``near_identical`` (similarity ≥ 0.97, same values, same
   polarity): duplicate.
6. ``containment`` — the new text keeps the existing one's claim (most of its content words, all its values)
   and adds detail: refinement.

Anything else is None: unrelated, or compatible. ``outcome`` turns a verdict into an action by authority, and
``parse_llm_verdict`` reads an LLM judge's answer, refusing anything malformed.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from engram.domain.content import preview

LABELS = ("duplicate", "refinement", "contradiction")
ACTIONS = ("supersede", "propose", "flag", "dispute_new", "dispute_existing", "none")
DEFAULT_FLOOR = 0.80
NEAR_IDENTICAL = 0.97
CONTAINMENT = 0.8  # share of the existing memory's content words a refinement keeps
NEGATION_COVER = 0.8  # share of a negated clause's words the other text must affirm
SAME_SUBJECT = 0.6  # word overlap two texts need before their numbers are compared
LLM_RULE = "llm_judge"
EXPLANATION_LIMIT = 300


@dataclass(frozen=True)
class Verdict:
    label: str  # duplicate | refinement | contradiction
    rule: str  # stable rule id: "negation", "numbers_differ:date", "exclusive_predicate:lives in", …
    score: float  # 0..1 confidence of the rule
    explanation: str  # one sentence for humans, quoting what differs


@dataclass(frozen=True)
class Outcome:
    action: str  # one of ACTIONS
    opens_conflict: bool
    reason: str


def judge(existing: str, new: str, similarity: float, *, floor: float = DEFAULT_FLOOR) -> Verdict | None:
    """The label of ``new`` against the live ``existing`` memory, or None when they neither repeat, refine nor
    contradict each other."""
    old, fresh = _analyse(existing), _analyse(new)
    if not old.normalised or not fresh.normalised:
        return None
    if old.normalised == fresh.normalised:
        return Verdict("duplicate", "same_text", 1.0, "The texts are the same once case, spacing and punctuation "
                                                      "are normalised.")
    similar = math.isfinite(similarity) and similarity >= floor
    verdict = _exclusive_predicate(old, fresh, similar)
    if verdict is not None or not similar:
        return verdict
    return (_negation(old, fresh) or _numbers_differ(old, fresh) or _same_words(old, fresh)
            or _near_identical(old, fresh, similarity) or _containment(old, fresh))


def outcome(verdict: Verdict, existing_authority: int, new_authority: int) -> Outcome:
    """What the conflicts consumer does with a verdict. Authority decides; nothing is ever replaced silently.

    - duplicate → ``none``: reported and counted; neither memory changes, whatever the authorities.
    - refinement, new authority ≥ existing → ``supersede``: the rule of DESIGN §5, a memory may supersede
      another of lower or equal authority.
    - refinement, new authority < existing → ``propose``: the new memory stays (or becomes) a proposal flagged
      as overlapping the existing one; the stronger memory is untouched until a reviewer decides.
    - contradiction → a conflict is opened and the weaker side is marked disputed: ``dispute_new`` when the new
      authority is lower, ``dispute_existing`` when it is higher. At equal authority it is ``dispute_new``: the
      incumbent keeps its place until a reviewer decides, so a newcomer cannot unseat a peer just by arriving.
    - any other label → ``flag``: a verdict this table does not know authorizes no change; it is only shown to
      a reviewer.
    """
    existing_authority, new_authority = int(existing_authority), int(new_authority)
    versus = f"(authority {new_authority} new vs {existing_authority} existing)"
    if verdict.label == "duplicate":
        return Outcome("none", False, f"duplicate {versus}: reported and counted, nothing changes")
    if verdict.label == "refinement":
        if new_authority >= existing_authority:
            return Outcome("supersede", False, f"refinement {versus}: the new memory supersedes the existing one")
        return Outcome("propose", False, f"refinement {versus}: the new memory is a proposal flagged as overlapping")
    if verdict.label == "contradiction":
        if new_authority > existing_authority:
            return Outcome("dispute_existing", True, f"contradiction {versus}: the existing memory is disputed")
        if new_authority < existing_authority:
            return Outcome("dispute_new", True, f"contradiction {versus}: the new memory is disputed")
        return Outcome("dispute_new", True, f"contradiction {versus}: the incumbent keeps its place, the new memory "
                                            "is disputed until a reviewer decides")
    return Outcome("flag", False, f"unknown label {verdict.label!r}: shown to a reviewer, nothing changes")


# --- the LLM judge ---------------------------------------------------------------------------------------------

LLM_JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [*LABELS, "none"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "explanation": {"type": "string", "maxLength": EXPLANATION_LIMIT},
    },
    "required": ["label", "confidence", "explanation"],
    "additionalProperties": False,
}


def parse_llm_verdict(raw: str) -> Verdict | None:
    """The verdict in an LLM judge's answer, or None for label "none" and for anything that does not match
    ``LLM_JUDGE_SCHEMA`` exactly: invalid output never changes anything."""
    if not isinstance(raw, str):
        return None
    try:
        answer = json.loads(raw, object_pairs_hook=_refuse_repeated_keys)
    except (ValueError, RecursionError):
        return None
    if not isinstance(answer, dict) or set(answer) != set(LLM_JUDGE_SCHEMA["required"]):
        return None
    label, confidence, explanation = answer["label"], answer["confidence"], answer["explanation"]
    if label not in LABELS or not isinstance(explanation, str) or len(explanation) > EXPLANATION_LIMIT:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence):
        return None
    if not 0.0 <= confidence <= 1.0:
        return None
    return Verdict(label, LLM_RULE, float(confidence), explanation.strip())


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("repeated key")
    return dict(pairs)


# --- words -----------------------------------------------------------------------------------------------------

_STOPWORDS = frozenset("""
a an the this that these those i me my mine we us our ours you your yours he him his she her hers it its they them
their theirs is are was were be been being am do does did doing have has had having will would shall should can
could may might must of in on at to for from by with about as into onto over under than then so and or but if also
just very really quite now currently still already always usually often sometimes there here what which who whom
whose when where why how all any each every some such only own same other more most much many few per via up out off
again once both either since until after before during while set raised lowered increased decreased reduced changed
bumped updated moved configured around approximately roughly exactly nearly almost longer anymore i'm we're they're
you're he's she's it's that's there's i've we've they've let's
""".split())
_NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot",
                        "without"})
_PRONOUNS = {"i": "i", "me": "i", "my": "i", "mine": "i", "i'm": "i", "i've": "i",
             "we": "we", "us": "we", "our": "we", "ours": "we", "we're": "we", "we've": "we",
             "you": "you", "your": "you", "yours": "you", "you're": "you",
             "he": "he", "him": "he", "his": "he", "he's": "he", "she": "she", "her": "she", "hers": "she",
             "she's": "she", "they": "they", "them": "they", "their": "they", "theirs": "they", "they're": "they",
             "it": "it", "its": "it", "it's": "it"}
# before a predicate these make the claim past, future or wished for, not a present fact
_HEDGES = frozenset({"used", "will", "would", "might", "may", "could", "should", "shall", "want", "wants", "wanted",
                     "plan", "plans", "planned", "planning", "hope", "hopes", "going", "wish", "wishes", "if",
                     "whether", "formerly", "previously", "once", "until", "unless"})
_CLAUSE_WORDS = frozenset({"but", "whereas", "however", "although", "though"})
_ARTICLES = frozenset({"a", "an", "the"})
_WORD_OR_BREAK = re.compile(r"(?P<brk>[.;!?]+(?=\s|$)|,(?=\s|$)|[()\[\]\n]|\s[-–—]+\s)|(?P<word>[^\W_]+(?:'[^\W_]+)*)")


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't")


def _stem(word: str) -> str:
    """A crude stem, enough to see "uses", "use" and "used" (or "services" and "service") as one word."""
    word = word.split("'")[0]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 2 else word


def _is_content(word: str) -> bool:
    return word not in _STOPWORDS and not _is_negation(word) and word.split("'")[0] not in _STOPWORDS


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared share of the smaller set; 1.0 when either is empty (nothing to disagree on)."""
    return len(a & b) / min(len(a), len(b)) if a and b else 1.0


# --- quantities ------------------------------------------------------------------------------------------------

_Key = tuple[float | None, ...]


@dataclass(frozen=True)
class _Quantity:
    dimension: str  # "duration", "size", "date", "clock", "percent", "money:usd/month", "count:servic", "number", …
    key: _Key  # comparable value: seconds, bytes, (year, month, day) with None as "any", version parts
    text: str  # as written
    anchor: str = ""  # stem of the nearest content word of its clause: with the dimension, the slot it fills
    anchor_text: str = ""  # that word as written

    @property
    def kind(self) -> str:
        return self.dimension.split("/")[0].split(":")[0]

    @property
    def token(self) -> str:
        return f"{self.dimension}={self.key}"


def _same_value(a: _Quantity, b: _Quantity) -> bool:
    if a.dimension != b.dimension or len(a.key) != len(b.key):
        return False
    return all(x is None or y is None or math.isclose(x, y, rel_tol=1e-9) for x, y in zip(a.key, b.key, strict=True))




def _unit_table(*rows: tuple[str, str, float]) -> dict[str, tuple[str, float]]:
    """Unit word → (dimension, factor to the dimension's base unit: seconds, bytes, grams, metres, …)."""
    return {name: (dimension, factor) for names, dimension, factor in rows for name in names.split()}


_UNITS = _unit_table(
    ("ms msec msecs millisecond milliseconds", "duration", 0.001),
    ("s sec secs second seconds", "duration", 1.0),
    ("m min mins minute minutes", "duration", 60.0),
    ("h hr hrs hour hours", "duration", 3600.0),
    ("d day days", "duration", 86_400.0),
    ("wk wks week weeks", "duration", 604_800.0),
    ("month months", "duration", 2_592_000.0),
    ("y yr yrs year years", "duration", 31_536_000.0),
    ("b byte bytes", "size", 1.0), ("kb", "size", 1e3), ("mb", "size", 1e6), ("gb", "size", 1e9),
    ("tb", "size", 1e12), ("kib", "size", 2.0**10), ("mib", "size", 2.0**20), ("gib", "size", 2.0**30),
    ("tib", "size", 2.0**40),
    ("% percent pct", "percent", 1.0),
    ("usd dollar dollars bucks", "money:usd", 1.0), ("eur euro euros", "money:eur", 1.0),
    ("gbp pound pounds", "money:gbp", 1.0),
    ("mg", "mass", 0.001), ("g gram grams", "mass", 1.0), ("kg kilogram kilograms", "mass", 1000.0),
    ("lb lbs", "mass", 453.592),
    ("mm", "length", 0.001), ("cm", "length", 0.01), ("meter meters metre metres", "length", 1.0),
    ("km kilometer kilometers kilometre kilometres", "length", 1000.0), ("mi mile miles", "length", 1609.344),
    ("degree degrees", "degrees", 1.0),
)
_PERIODS = {1.0: "second", 60.0: "minute", 3600.0: "hour", 86_400.0: "day", 604_800.0: "week",
            2_592_000.0: "month", 31_536_000.0: "year"}
_CURRENCIES = {"$": "usd", "€": "eur", "£": "gbp"}
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "million": 1e6, "mn": 1e6, "bn": 1e9, "billion": 1e9}
_MONEY_MULTIPLIERS = {"m": 1e6, "b": 1e9}
_NUMBER_WORDS = {word: float(n) for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "ninety": 90.0,
                      "hundred": 100.0})
_MONTHS = {name: n for n, names in enumerate((
    "jan january", "feb february", "mar march", "apr april", "may", "jun june", "jul july", "aug august",
    "sep sept september", "oct october", "nov november", "dec december"), start=1) for name in names.split()}
_NOT_NOUNS = frozenset({"last", "next", "ago", "old", "new", "times"}) | frozenset(_MONTHS)

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_ISO_DATE = re.compile(r"(?<![\w.])(?P<year>\d{4})[-/](?P<mon>\d{1,2})[-/](?P<day>\d{1,2})(?![\w-])")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{{4}})\b)?", re.I)
_DAY_MONTH = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b(?:,?\s+(?P<year>\d{{4}})\b)?",
                        re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(?P<year>\d{{4}})\b", re.I)
_CLOCK = re.compile(r"(?<![\w.:])(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))?\s*(?P<half>[ap]\.?m\.?)?(?![\w:])", re.I)
_VERSION = re.compile(r"(?<![\w.])(?:v(?P<short>\d+(?:\.\d+)?)|v?(?P<long>\d+(?:\.\d+){2,}))(?![\w]|\.\d)", re.I)
_MONEY = re.compile(rf"(?<![\w.])(?P<cur>[$€£])\s?{_NUM}(?P<suffix>[^\W\d_]*)")
_WORD_NUMBER = re.compile(r"\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")(?:\s*-\s*|\s+)(?P<unit>[^\W\d_]+)", re.I)
_NUMBER = re.compile(rf"(?<![\w.$€£:/#])(?<!\w-){_NUM}(?P<suffix>[^\W\d_]+|%)?")
_NEXT_WORD = re.compile(r"[ \t]*(?:-[ \t]*)?(%|[^\W\d_]+)")
_RATE = re.compile(r"[ \t]*(?:/|per[ \t]+|an?[ \t]+)[ \t]*([^\W\d_]+)", re.I)

_Span = tuple[int, int, _Quantity]


def _find_quantities(text: str) -> list[_Span]:
    """Every number, date, time, version, amount or measure in ``text``, as non-overlapping spans; the more
    specific reading of a stretch of text wins ("2026-03-01" is a date, not three numbers)."""
    claimed: list[_Span] = []
    taken = bytearray(len(text))
    for finder in (_iso_dates, _month_dates, _clock_times, _versions, _money, _word_numbers, _numbers):
        for start, end, quantity in finder(text):
            if not any(taken[start:end]):
                claimed.append((start, end, quantity))
                taken[start:end] = b"\x01" * (end - start)
    return sorted(claimed, key=lambda span: span[0])


def _date(text: str, start: int, end: int, year: str | None, month: int, day: str | None) -> Iterator[_Span]:
    if 1 <= month <= 12 and (day is None or 1 <= int(day) <= 31):
        key = (float(year) if year else None, float(month), float(day) if day else None)
        yield start, end, _Quantity("date", key, text[start:end])


def _iso_dates(text: str) -> Iterator[_Span]:
    for m in _ISO_DATE.finditer(text):
        yield from _date(text, m.start(), m.end(), m["year"], int(m["mon"]), m["day"])


def _month_dates(text: str) -> Iterator[_Span]:
    for pattern in (_MONTH_DAY, _DAY_MONTH, _MONTH_YEAR):
        for m in pattern.finditer(text):
            if m["month"] == "may":
                continue  # "these 2 may differ": the verb, not the month
            day = m.groupdict().get("day")
            yield from _date(text, m.start(), m.end(), m["year"], _MONTHS[m["month"].lower()], day)


def _clock_times(text: str) -> Iterator[_Span]:
    for m in _CLOCK.finditer(text):
        if m["minute"] is None and m["half"] is None:
            continue  # a bare number, not a time of day
        hour, minute = int(m["hour"]), int(m["minute"] or 0)
        if m["half"]:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if m["half"].lower().startswith("p") else 0)
        if hour <= 23:
            yield m.start(), m.end(), _Quantity("clock", (float(hour * 60 + minute),), m[0])


def _versions(text: str) -> Iterator[_Span]:
    for m in _VERSION.finditer(text):
        parts = (m["short"] or m["long"]).split(".")
        yield m.start(), m.end(), _Quantity("number", tuple(float(p) for p in parts), m[0])


def _money(text: str) -> Iterator[_Span]:
    for m in _MONEY.finditer(text):
        dimension = f"money:{_CURRENCIES[m['cur']]}"
        found = _measure(text, m.start(), m.end("num"), m["num"], m["suffix"], money=dimension)
        if found:
            yield found


def _word_numbers(text: str) -> Iterator[_Span]:
    for m in _WORD_NUMBER.finditer(text):
        if m["unit"].lower() in _UNITS:
            found = _measure(text, m.start(), m.end("word"), str(_NUMBER_WORDS[m["word"].lower()]), "")
            if found:
                yield found


def _numbers(text: str) -> Iterator[_Span]:
    for m in _NUMBER.finditer(text):
        if text[m.end():m.end() + 1].isalnum() or text[m.end():m.end() + 1] == "_":
            continue  # part of an identifier such as 2x3
        suffix, end = m["suffix"] or "", m.end("num")
        if suffix.lower() in ("st", "nd", "rd", "th"):
            suffix, end = "", m.end()  # an ordinal: "the 3rd floor"
        found = _measure(text, m.start(), end, m["num"], suffix)
        if found:
            yield found


def _measure(text: str, start: int, end: int, number: str, suffix: str, money: str = "") -> _Span | None:
    """Read what follows ``number`` (which ends at ``end``): a multiplier (k, million), a unit (seconds, GB, %) or
    a counted noun ("3 services"), then a rate ("per month"). ``suffix`` is glued to the number ("30s", "10k")."""
    raw_number = number.replace(",", "")
    value = float(raw_number)
    attached = bool(suffix)
    word, after = (suffix, end + len(suffix)) if suffix else _next_word(text, end)
    factor = 1.0
    multiplier = _multiplier(word, money=bool(money))
    if multiplier:
        factor, end = multiplier, after
        word, after = _next_word(text, end)
        attached = False
    if money:
        dimension = money
    elif word.lower() in _UNITS:
        dimension, unit = _UNITS[word.lower()]
        factor, end = factor * unit, after
    elif attached:
        return None  # an identifier such as 2FA or 4xx
    elif "." not in raw_number and _is_counted(word):
        dimension, end = f"count:{_stem(word.lower())}", after
    elif factor == 1.0 and raw_number.isdigit() and number == raw_number and 1900 <= value <= 2199:
        return start, end, _Quantity("date", (value, None, None), text[start:end])
    else:
        parts = raw_number.split(".") if factor == 1.0 else [str(value * factor)]
        return start, end, _Quantity("number", tuple(float(p) for p in parts), text[start:end])
    rate = _RATE.match(text, end)
    if rate and _UNITS.get(rate[1].lower(), ("", 0.0))[0] == "duration":
        dimension += "/" + _PERIODS.get(_UNITS[rate[1].lower()][1], rate[1].lower())
        end = rate.end()
    return start, end, _Quantity(dimension, (value * factor,), text[start:end])


def _next_word(text: str, pos: int) -> tuple[str, int]:
    match = _NEXT_WORD.match(text, pos)
    return (match[1], match.end()) if match else ("", pos)


def _multiplier(word: str, *, money: bool) -> float:
    if word == "M" or word.lower() in ("million", "mn"):
        return 1e6
    if money and word.lower() in _MONEY_MULTIPLIERS:
        return _MONEY_MULTIPLIERS[word.lower()]
    return _MULTIPLIERS.get(word.lower(), 0.0)


def _is_counted(word: str) -> bool:
    lower = word.lower()
    return len(lower) > 1 and lower.isalpha() and _is_content(lower) and lower not in _NOT_NOUNS


# --- texts -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    text: str  # as written
    lower: str
    quantity: _Quantity | None = None

    @property
    def content(self) -> str | None:
        """What the token contributes to the meaning: a stem, a value, or nothing (a stopword)."""
        if self.quantity is not None:
            return self.quantity.token
        return _stem(self.lower) if _is_content(self.lower) else None


@dataclass(frozen=True)
class _Clause:
    tokens: tuple[_Token, ...]
    negation: str | None  # the first negating word, if any

    @cached_property
    def content(self) -> frozenset[str]:
        return frozenset(c for t in self.tokens if (c := t.content) is not None)

    @cached_property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


@dataclass(frozen=True)
class _Text:
    clauses: tuple[_Clause, ...]
    normalised: str

    @cached_property
    def tokens(self) -> tuple[_Token, ...]:
        return tuple(t for clause in self.clauses for t in clause.tokens)

    @cached_property
    def quantities(self) -> list[_Quantity]:
        return [t.quantity for t in self.tokens if t.quantity is not None]

    @cached_property
    def words(self) -> frozenset[str]:
        """Content stems outside the values."""
        return frozenset(c for t in self.tokens if t.quantity is None and (c := t.content) is not None)

    @cached_property
    def content(self) -> frozenset[str]:
        return frozenset(c for clause in self.clauses for c in clause.content)

    @cached_property
    def names(self) -> frozenset[str]:
        """Capitalised words (Alice, Postgres, Acme): different names on both sides mean different subjects."""
        return frozenset(t.lower.split("'")[0] for t in self.tokens
                         if t.quantity is None and t.text[:1].isupper() and _is_content(t.lower))

    @cached_property
    def negated(self) -> bool:
        return any(clause.negation for clause in self.clauses)


def _analyse(text: str) -> _Text:
    text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'")
    pieces: list[_Token | None] = []  # None marks a clause break
    pos = 0
    for start, end, quantity in _find_quantities(text):
        pieces.extend(_words(text[pos:start]))
        pieces.append(_Token(quantity.text, quantity.text.lower(), quantity))
        pos = end
    pieces.extend(_words(text[pos:]))
    clauses: list[_Clause] = []
    current: list[_Token] = []
    for piece in [*pieces, None]:
        if piece is not None:
            current.append(piece)
        elif current:
            clauses.append(_clause(current))
            current = []
    normalised = " ".join(t.lower for clause in clauses for t in clause.tokens)
    return _Text(tuple(clauses), normalised)


def _words(segment: str) -> Iterator[_Token | None]:
    for match in _WORD_OR_BREAK.finditer(segment):
        word = match["word"]
        if word is None or word.lower() in _CLAUSE_WORDS:
            yield None
        else:
            yield _Token(word, word.lower())


def _clause(tokens: Sequence[_Token]) -> _Clause:
    """A clause with each quantity's anchor set: the nearest content word before it, else after it."""
    anchored = []
    for i, token in enumerate(tokens):
        if token.quantity is not None:
            neighbours = [*reversed(tokens[:i]), *tokens[i + 1:]]
            near = next((t for t in neighbours if t.quantity is None and _is_content(t.lower)), None)
            if near is not None:
                quantity = replace(token.quantity, anchor=_stem(near.lower), anchor_text=near.text)
                token = replace(token, quantity=quantity)
        anchored.append(token)
    negation = next((t.text for t in tokens if t.quantity is None and _is_negation(t.lower)), None)
    return _Clause(tuple(anchored), negation)


def _different_names(old: _Text, new: _Text) -> bool:
    return bool(old.names - new.names) and bool(new.names - old.names)


# --- the rules -------------------------------------------------------------------------------------------------

def _negation(old: _Text, new: _Text) -> Verdict | None:
    """One text negates, in one clause, a claim that the other affirms in one of its clauses."""
    if _different_names(old, new):
        return None
    for negating, affirming, who in ((new, old, "new"), (old, new, "existing")):
        affirmed = [clause for clause in affirming.clauses if clause.negation is None]
        where: defaultdict[str, list[int]] = defaultdict(list)  # content word → affirmative clauses holding it
        for index, clause in enumerate(affirmed):
            for word in clause.content:
                where[word].append(index)
        for clause in negating.clauses:
            claim = clause.content
            if clause.negation is None or not claim:
                continue
            hits = Counter(index for word in claim for index in where.get(word, ()))
            best = max(hits, key=hits.__getitem__, default=None)
            if best is not None and hits[best] / len(claim) >= NEGATION_COVER:
                covered = hits[best] / len(claim)
                return Verdict("contradiction", "negation", round(0.75 + 0.2 * covered, 2),
                               f'The {who} memory negates ("{clause.negation}") what the other states: '
                               f'"{preview(affirmed[best].text, 80)}".')
    return None


def _numbers_differ(old: _Text, new: _Text) -> Verdict | None:
    """A slot both texts fill holds different values on each side (and neither side also keeps the other's).
    Two quantities share a slot when they have the same dimension and either the same anchor word or that
    dimension occurs once on each side ("costs $20" / "is $25")."""
    if _different_names(old, new) or _overlap(old.words, new.words) < SAME_SUBJECT:
        return None
    old_rivals, new_rivals = _rivals(old.quantities, new.quantities), _rivals(new.quantities, old.quantities)
    changed = {id(b) for b in new.quantities if _changed(b, new_rivals(b))}
    for a in old.quantities:
        rivals = old_rivals(a)
        if not _changed(a, rivals):
            continue
        b = next((b for b in rivals if id(b) in changed), None)
        if b is not None:
            slot = a.anchor_text or b.anchor_text or a.kind
            return Verdict("contradiction", f"numbers_differ:{a.kind}", 0.9,
                           f'{slot}: "{a.text}" in the existing memory, "{b.text}" in the new one.')
    return None


def _rivals(mine: list[_Quantity], theirs: list[_Quantity]) -> Callable[[_Quantity], list[_Quantity]]:
    """For a quantity of ``mine``, the quantities of ``theirs`` in the same slot."""
    by_slot: defaultdict[tuple[str, str], list[_Quantity]] = defaultdict(list)
    by_dimension: defaultdict[str, list[_Quantity]] = defaultdict(list)
    for q in theirs:
        by_slot[(q.dimension, q.anchor)].append(q)
        by_dimension[q.dimension].append(q)
    mine_count = Counter(q.dimension for q in mine)

    def rivals(q: _Quantity) -> list[_Quantity]:
        same_dimension = by_dimension.get(q.dimension, [])
        if mine_count[q.dimension] == 1 and len(same_dimension) == 1:
            return same_dimension
        return by_slot.get((q.dimension, q.anchor), [])
    return rivals


def _changed(q: _Quantity, rivals: list[_Quantity]) -> bool:
    return bool(rivals) and not any(_same_value(q, r) for r in rivals)


def _same_quantities(old: _Text, new: _Text) -> bool:
    def covered(xs: list[_Quantity], ys: list[_Quantity]) -> bool:
        return all(any(_same_value(x, y) for y in ys) for x in xs)
    return covered(old.quantities, new.quantities) and covered(new.quantities, old.quantities)


def _same_words(old: _Text, new: _Text) -> Verdict | None:
    if old.content and old.content == new.content and old.negated == new.negated:
        return Verdict("duplicate", "same_words", 0.9, "Same content words and values, worded or ordered "
                                                       "differently.")
    return None


def _near_identical(old: _Text, new: _Text, similarity: float) -> Verdict | None:
    if similarity >= NEAR_IDENTICAL and old.negated == new.negated and _same_quantities(old, new):
        return Verdict("duplicate", "near_identical", round(min(similarity, 1.0), 3),
                       f"Similarity {similarity:.2f} with the same values and polarity.")
    return None


def _containment(old: _Text, new: _Text) -> Verdict | None:
    """The new text keeps most of the existing one's content words and all its values, and adds some."""
    if not old.content or old.negated != new.negated or _different_names(old, new):
        return None
    kept, added = old.content & new.content, new.content - old.content
    share = len(kept) / len(old.content)
    if share < CONTAINMENT or not added or len(new.normalised) <= len(old.normalised):
        return None
    if not all(any(_same_value(q, r) for r in new.quantities) for q in old.quantities):
        return None
    detail = list(dict.fromkeys(t.text for t in new.tokens if t.content in added))
    return Verdict("refinement", "containment", round(share, 2),
                   f'The new memory keeps {len(kept)} of the existing one\'s {len(old.content)} content words and '
                   f'adds "{preview(" ".join(detail), 80)}".')


# --- exclusive predicates --------------------------------------------------------------------------------------

_OBJECT_ENDS = frozenset({"over", "than", "to", "rather", "instead", "versus", "vs", "because", "since", "and", "or",
                          "as", "which", "who", "where", "that", "so", "until", "after", "before", "from", "but"})
_QUALIFIERS = frozenset({"for", "when", "while", "during", "on", "if", "unless", "except", "in", "at"})
_COPULAS = frozenset({"is", "are"})


@dataclass(frozen=True)
class _Predicate:
    name: str  # as in the rule id
    family: str  # predicates that fill one slot: "works at" and "works for"
    words: tuple[frozenset[str], ...]  # the phrase, one set of accepted forms per word
    scoped: bool = False  # "prefers X for Y": what follows "for", "when", … is part of the slot


_PREDICATES = (
    _Predicate("lives in", "residence", (frozenset({"lives", "live"}), frozenset({"in"}))),
    _Predicate("works at", "employer", (frozenset({"works", "work"}), frozenset({"at"}))),
    _Predicate("works for", "employer", (frozenset({"works", "work"}), frozenset({"for"}))),
    _Predicate("is based in", "location", (frozenset({"based"}), frozenset({"in"}))),
    _Predicate("is located in", "location", (frozenset({"located"}), frozenset({"in"}))),
    _Predicate("reports to", "manager", (frozenset({"reports", "report"}), frozenset({"to"}))),
    _Predicate("prefers", "preference", (frozenset({"prefers", "prefer"}),), scoped=True),
)


@dataclass(frozen=True)
class _Claim:
    predicate: str
    slot: tuple[str, str, frozenset[str], frozenset[str]]  # family, key, subject, qualifier
    label: str  # subject and predicate as written: "Alice lives in", "default database"
    value: frozenset[str]
    value_text: str


def _exclusive_predicate(old: _Text, new: _Text, similar: bool) -> Verdict | None:
    """The same subject, predicate (and qualifier, for preferences) with values neither of which contains the
    other: "lives in Paris" / "lives in Berlin", but not "lives in Paris" / "lives in central Paris"."""
    old_claims, new_claims = _claims(old), _claims(new)
    for a in old_claims:
        rivals = [b for b in new_claims if b.slot == a.slot]
        if not rivals or any(a.value <= b.value or b.value <= a.value for b in rivals):
            continue
        b = rivals[0]
        return Verdict("contradiction", f"exclusive_predicate:{b.predicate}", 0.85 if similar else 0.7,
                       f'{b.label}: "{a.value_text}" in the existing memory, "{b.value_text}" in the new one.')
    return None


def _claims(text: _Text) -> list[_Claim]:
    found: list[_Claim] = []
    for clause in text.clauses:
        if clause.negation is not None:
            continue  # "Alice doesn't live in Paris" holds no value; the negation rule looks at it
        for i in range(len(clause.tokens)):
            for finder in (_phrase_claim, _favourite_claim, _default_claim):
                claim = finder(clause.tokens, i)
                if claim is not None:
                    found.append(claim)
    return found


def _phrase_claim(tokens: Sequence[_Token], i: int) -> _Claim | None:
    """"Alice lives in Paris", "I prefer tabs over spaces", "Bob reports to Carol"."""
    for predicate in _PREDICATES:
        end = i + len(predicate.words)
        phrase = tokens[i:end]
        if len(phrase) < len(predicate.words) or any(
                t.lower not in forms for t, forms in zip(phrase, predicate.words, strict=True)):
            continue
        subject = _subject(tokens[:i])
        value = _object(tokens[end:], scoped=predicate.scoped)
        if subject is None or value is None:
            return None
        stems = frozenset(_PRONOUNS.get(t.lower) or _stem(t.lower) for t in subject)
        first = next(j for j, t in enumerate(tokens) if t is subject[0])
        return _claim(predicate.name, predicate.family, "", stems, value, _text(tokens[first:end]))
    return None


def _favourite_claim(tokens: Sequence[_Token], i: int) -> _Claim | None:
    """"Alice's favourite colour is blue", "my favourite editor is Vim"."""
    if tokens[i].lower not in ("favourite", "favorite") or i == 0 or _hedged(tokens[:i]):
        return None
    owner = tokens[i - 1]
    if owner.lower in _PRONOUNS:
        subject = frozenset({_PRONOUNS[owner.lower]})
    elif owner.lower.endswith("'s"):
        subject = frozenset({_stem(owner.lower)})
    else:
        return None
    copula = next((j for j in range(i + 1, len(tokens)) if tokens[j].lower in _COPULAS), None)
    value = _object(tokens[copula + 1:], scoped=False) if copula is not None else None
    if copula is None or value is None:
        return None
    what = tokens[i + 1:copula]
    return _claim("'s favourite", "favourite", _key(what), subject, value, _text([owner, tokens[i], *what]))


def _default_claim(tokens: Sequence[_Token], i: int) -> _Claim | None:
    """"the default database is Postgres", "we use Postgres as the default database", "the CLI defaults to
    JSON". Who sets the default ("we", "our") is not part of the slot: the caller compares one scope; a named
    owner ("Acme's default branch") is."""
    word, after = tokens[i].lower, tokens[i + 1:]
    if word not in ("default", "defaults", "use", "uses") or _hedged(tokens[:i]):
        return None
    owner = _owner(tokens[:i])
    if word in ("default", "defaults") and after and after[0].lower == "to":
        value = _object(after[1:], scoped=False)
        return _claim("defaults to", "default", "", owner, value, _text([*tokens[:i], *tokens[i:i + 2]]))
    if word == "default":
        copula = next((j for j, t in enumerate(after) if t.lower in _COPULAS), None)
        if copula is None or not _key(after[:copula]):
            return None
        value = _object(after[copula + 1:], scoped=False)
        return _claim("default is", "default", _key(after[:copula]), owner, value,
                      _text([*tokens[:i], tokens[i], *after[:copula]]))
    if word in ("use", "uses"):
        as_at = next((j for j, t in enumerate(after) if t.lower == "as"), None)
        rest = list(after[as_at + 1:]) if as_at is not None else []
        while rest and rest[0].lower in _ARTICLES | {"our", "its", "my", "their", "your"}:
            rest = rest[1:]
        if as_at is None or not rest or rest[0].lower != "default":
            return None
        what = list(_until_end(rest[1:]))
        value = _object(after[:as_at], scoped=False)
        return _claim("uses as default", "default", _key(what), owner, value, _text(["default", *what]))
    return None


def _claim(predicate: str, family: str, key: str, subject: frozenset[str],
           value: tuple[frozenset[str], str, frozenset[str]] | None, label: str) -> _Claim | None:
    if value is None:
        return None
    stems, text, qualifier = value
    return _Claim(predicate, (family, key, subject, qualifier), label.strip(), stems, text)


def _hedged(before: Sequence[_Token]) -> bool:
    """Negated, past, future or wished for: "doesn't live in", "used to work at", "will prefer"."""
    return any(_is_negation(t.lower) or t.lower in _HEDGES or t.lower.endswith(("'ll", "'d")) for t in before)


def _subject(before: Sequence[_Token]) -> list[_Token] | None:
    """The words naming who a claim is about ("Alice", "I", "the platform team"), or None when the clause
    hedges or does not say."""
    if _hedged(before):
        return None
    kept = [t for t in before if t.quantity is None and (t.lower in _PRONOUNS or _is_content(t.lower))]
    return kept or None


def _owner(before: Sequence[_Token]) -> frozenset[str]:
    """Who owns a default, pronouns left out: "Acme's default branch" → {acme}; "our default branch" → {}."""
    return frozenset(_stem(t.lower) for t in before if t.quantity is None and _is_content(t.lower))


def _object(after: Sequence[_Token], *, scoped: bool) -> tuple[frozenset[str], str, frozenset[str]] | None:
    """The value a predicate gives (up to the end of its phrase) and, for a scoped predicate, its qualifier:
    "prefers tabs over spaces" → tabs; "prefers Python for scripting" → Python, qualified by scripting."""
    tokens = list(after)
    if tokens and tokens[0].lower == "to":
        tokens = tokens[1:]  # "prefers to work remotely"
    value: list[_Token] = []
    qualifier: list[_Token] = []
    for token in tokens:
        if token.lower in _OBJECT_ENDS:
            break
        if token.lower in _QUALIFIERS and value:
            if not scoped:
                break
            qualifier.append(token)
        elif qualifier:
            qualifier.append(token)
        else:
            value.append(token)
    stems = frozenset(c for t in value if (c := t.content) is not None)
    if not stems:
        return None
    while value and value[0].lower in _ARTICLES:
        value = value[1:]
    return stems, _text(value), frozenset(c for t in qualifier if (c := t.content) is not None)


def _text(tokens: Iterable[_Token | str]) -> str:
    return " ".join(t if isinstance(t, str) else t.text for t in tokens)


def _key(tokens: Iterable[_Token]) -> str:
    return " ".join(sorted(c for t in tokens if (c := t.content) is not None))


def _until_end(tokens: Iterable[_Token]) -> Iterator[_Token]:
    for token in tokens:
        if token.lower in _OBJECT_ENDS or token.lower in _QUALIFIERS:
            return
        yield token
