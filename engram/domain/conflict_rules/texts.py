"""A text as the rules see it: clauses of tokens (words and quantities), each quantity anchored to the
nearest content word of its clause, each clause with its negation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from engram.domain.conflict_rules.quantities import RATED_KINDS, Quantity, find_quantities, per, period_of
from engram.domain.conflict_rules.words import is_cessation, is_content, is_negation, stem

_CURRENT = frozenset({"now", "nowadays", "lately", "today", "actually", "apparently", "currently", "down"})
_CLAUSE_WORDS = frozenset({"but", "whereas", "however", "although", "though"})
_GIVE = frozenset({"give", "gives", "gave", "giving", "given"})
_COME = frozenset({"come", "comes", "came", "coming"})
_STEP = frozenset({"step", "steps", "stepped", "stepping"})
_OPENING = re.compile(r"[.!?:][\s\"'“(]+(?=[^\W_])")
_FIRST_WORD = re.compile(r"[\s\"'“(]*(?=[^\W_])")
_ABBREVIATIONS = frozenset({"dr", "mr", "mrs", "ms", "st", "prof", "mt", "jr", "sr", "vs", "no"})
_TITLES = _ABBREVIATIONS - {"no", "jr", "sr"}  # written before a name
# a word, or a code of words and a number joined by hyphens ("us-east-1", "gpt-4o", "europe-west4"), or a break
_WORD_OR_BREAK = re.compile(
    r"(?P<brk>[.;!?]+(?=\s|$)|,(?=\s|$)|[()\[\]\n]|\s[-–—]+\s)|(?P<word>[^\W\d_]+(?:-[^\W\d_]+)*-[^\W_]*\d[^\W_]*|[^\W_]+(?:'[^\W_]+)*)"
)


@dataclass(frozen=True)
class Token:
    text: str  # as written
    lower: str
    quantity: Quantity | None = None
    opens: bool = False  # the first word of the text or of a sentence ("…. Then", "Name: Sure"): its capital is no name

    @property
    def content(self) -> str | None:
        """What the token contributes to the meaning: a stem, a value, or nothing (a stopword)."""
        if self.quantity is not None:
            return self.quantity.token
        return stem(self.lower) if is_content(self.lower) else None


@dataclass(frozen=True)
class Clause:
    tokens: tuple[Token, ...]
    negation: str | None  # the first negating word, if any

    @cached_property
    def content(self) -> frozenset[str]:
        return frozenset(c for t in self.tokens if (c := t.content) is not None)

    @cached_property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


@dataclass(frozen=True)
class Text:
    clauses: tuple[Clause, ...]
    normalised: str

    @cached_property
    def tokens(self) -> tuple[Token, ...]:
        return tuple(t for clause in self.clauses for t in clause.tokens)

    @cached_property
    def quantities(self) -> list[Quantity]:
        return [t.quantity for t in self.tokens if t.quantity is not None]

    @cached_property
    def words(self) -> frozenset[str]:
        """Content stems outside the values."""
        return frozenset(c for t in self.tokens if t.quantity is None and (c := t.content) is not None)

    @cached_property
    def content(self) -> frozenset[str]:
        return frozenset(c for clause in self.clauses for c in clause.content)

    @cached_property
    def gist(self) -> frozenset[str]:
        """``words`` without the ones that only say a value is current or went down ("now", "these days",
        "down to"): what two texts with one number each must share to be about one thing."""
        out = set()
        for clause in self.clauses:
            tokens = clause.tokens
            for i, t in enumerate(tokens):
                if (
                    t.quantity is not None
                    or t.lower in _CURRENT
                    or (t.lower == "days" and i and tokens[i - 1].lower == "these")
                ):
                    continue
                if (c := t.content) is not None:
                    out.add(c)
        return frozenset(out)

    @cached_property
    def names(self) -> frozenset[str]:
        """Capitalised words (Alice, Postgres, Acme): different names on both sides mean different subjects."""
        return frozenset(
            t.lower.split("'")[0]
            for t in self.tokens
            if t.quantity is None and t.text[:1].isupper() and is_content(t.lower)
        )

    @cached_property
    def negated(self) -> bool:
        return any(clause.negation for clause in self.clauses)


@lru_cache(maxsize=32)  # at most 32 texts of MAX_ANALYSED_CHARS: a few MB
def analyse(text: str) -> Text:
    """The text's clauses and tokens. Kept for the last texts read (a ``Text`` never changes): the conflicts
    consumer judges a new memory against each of its neighbours, and a neighbour against the memories after it."""
    text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'")
    pieces: list[Token | None] = []  # None marks a clause break
    pos = 0
    openings = _openings(text)
    for start, end, quantity in find_quantities(text):
        pieces.extend(_words(text[pos:start], pos, openings))
        pieces.append(Token(quantity.text, quantity.text.lower(), quantity))
        pos = end
    pieces.extend(_words(text[pos:], pos, openings))
    clauses: list[Clause] = []
    current: list[Token] = []
    for piece in [*pieces, None]:
        if piece is not None:
            current.append(piece)
        elif current:
            clauses.append(_clause(current))
            current = []
    normalised = " ".join(t.lower for clause in clauses for t in clause.tokens)
    return Text(tuple(clauses), normalised)


def analyse_head(text: str, limit: int) -> Text:
    """The whole clauses of the first ``limit`` characters of ``text`` (cut at a space, the clause the cut falls
    in left out), for a text too long to analyse whole."""
    if len(text) <= limit:
        return analyse(text)
    head = text[:limit]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    read = analyse(head[:space] if space > 0 else head)
    clauses = read.clauses[:-1]
    return Text(clauses, " ".join(t.lower for clause in clauses for t in clause.tokens))


def _openings(text: str) -> frozenset[int]:
    """Where the words that open a sentence start: the text's first word, a word after a full stop, "!", "?" or
    a colon ("Joanna: Sure thing"), but not after an abbreviation such as "Dr." or "St."."""
    first = _FIRST_WORD.match(text)
    found = {first.end()} if first else set()
    for m in _OPENING.finditer(text):
        before = text[max(0, m.start() - 5) : m.start()].split()[-1:]  # an abbreviation is short
        if text[m.start()] == "." and before and before[0].lower().lstrip("(") in _ABBREVIATIONS:
            continue
        found.add(m.end())
    return frozenset(found)


def _words(segment: str, offset: int = 0, openings: frozenset[int] = frozenset()) -> Iterator[Token | None]:
    previous: Token | None = None
    for match in _WORD_OR_BREAK.finditer(segment):
        word = match["word"]
        if match["brk"] == "." and previous is not None and previous.lower in _TITLES:
            continue  # "Dr. Sato", "Mr. Haines": the full stop of a title ends no clause
        if word is None or word.lower() in _CLAUSE_WORDS:
            if previous is not None:
                yield previous
            previous = None
            yield None
            continue
        token = Token(word, word.lower(), opens=offset + match.start() in openings)
        if previous is not None and (
            (token.lower == "up" and previous.lower in _GIVE)
            or (token.lower == "down" and previous.lower in _STEP)
            or (token.lower == "off" and previous.lower in _COME)
        ):
            # "gave up", "stepped down", "came off" (a medicine, braces): a cessation, as "quit"
            token = Token(f"{previous.text} {token.text}", "quit", opens=previous.opens)
            previous = None
        if previous is not None:
            yield previous
        previous = token
    if previous is not None:
        yield previous


def _clause(tokens: Sequence[Token]) -> Clause:
    """A clause with each quantity's anchor set: the nearest content word before it, else after it (one pass
    each way, so a long clause of numbers costs no more than its length)."""
    words = [t.quantity is None and is_content(t.lower) for t in tokens]
    before: list[int | None] = []
    last: int | None = None
    for i in range(len(tokens)):
        before.append(last)
        last = i if words[i] else last
    after: list[int | None] = [None] * len(tokens)
    last = None
    for i in reversed(range(len(tokens))):
        after[i] = last
        last = i if words[i] else last
    anchored = []
    for i, token in enumerate(tokens):
        near_at = before[i] if before[i] is not None else after[i]
        if token.quantity is not None and near_at is not None:
            near = tokens[near_at]
            quantity = replace(token.quantity, anchor=stem(near.lower), anchor_text=near.text)
            token = replace(token, quantity=quantity)
        anchored.append(token)
    anchored = _rated(anchored)
    negating = [t for t in tokens if t.quantity is None and is_negation(t.lower)]
    if any(is_cessation(t.lower) for t in negating) and not all(is_cessation(t.lower) for t in negating):
        negating = []  # "I won't quit", "never stopped": a cessation denied affirms
    negation = negating[0].text if negating else None
    return Clause(tuple(anchored), negation)


def _rated(tokens: list[Token]) -> list[Token]:
    """A clause with one period word ("our monthly bill is $8k", "20 mg of it daily") makes its amounts, measures
    and counts without a period rates of that period, as "$8k a month" and "20 mg a day" are."""
    periods = {p for t in tokens if (p := period_of(t.lower)) is not None}
    if len(periods) != 1:
        return tokens
    period = periods.pop()
    return [
        replace(t, quantity=per(t.quantity, period))
        if t.quantity is not None and "/" not in t.quantity.dimension and t.quantity.kind in RATED_KINDS
        else t
        for t in tokens
    ]


def different_names(old: Text, new: Text) -> bool:
    return bool(old.names - new.names) and bool(new.names - old.names)


_NUMERONYM = re.compile(r"([a-z])(\d{1,2})([a-z])")


def align_abbreviations(old: Text, new: Text) -> tuple[Text, Text]:
    """Both texts with the abbreviations of one read as the words they abbreviate in the other: "DB" /
    "database", "appt" / "appointment", "k8s" / "Kubernetes", "QBR" / "quarterly business review",
    "Postgres" / "PostgreSQL". An abbreviation is a word of one text, missing from the other, that is an
    initialism of consecutive words of the other, a numeronym, a prefix of one of its words, or the first
    letter and some of the letters of one (in order, with the last letter or written in capitals); a word of
    the other text that is itself in the first does not count, and an abbreviation that could stand for two
    words is left alone."""
    return _expand(old, new), _expand(new, old)


def _expand(text: Text, other: Text) -> Text:
    mine = {t.lower for t in text.tokens}
    theirs = [t for t in other.tokens if t.quantity is None and is_content(t.lower) and t.lower not in mine]
    if not theirs:
        return text
    lowers = {t.lower for t in other.tokens}
    changed = False
    clauses = []
    for clause in text.clauses:
        tokens: list[Token] = []
        for token in clause.tokens:
            expansion = None
            if token.quantity is None and is_content(token.lower) and token.lower not in lowers:
                expansion = _abbreviated(token, theirs, other)
            if expansion:
                changed = True
                tokens.extend(replace(t, opens=token.opens and i == 0) for i, t in enumerate(expansion))
            else:
                tokens.append(token)
        clauses.append(_clause(tokens) if tokens != list(clause.tokens) else clause)
    if not changed:
        return text
    return Text(tuple(clauses), " ".join(t.lower for clause in clauses for t in clause.tokens))


def _abbreviated(token: Token, candidates: Sequence[Token], other: Text) -> list[Token] | None:
    short = token.lower.split("'")[0]
    if len(short) < 2 or not short.isalnum():
        return None
    capitals = token.text.isupper() and len(token.text) > 1
    letters = short
    if _PLURAL_CAPITALS.fullmatch(token.text):
        capitals, letters = True, short[:-1]  # "HCAs": the plural of an initialism
    elif _SMALL_WORD_INSIDE.fullmatch(token.text):
        capitals = True  # "DoP": "director of programmes", the small word's initial in lower case
    # in a text written in lower case an initialism is too: "hgv" / "heavy goods vehicle" (three letters at least)
    spelled = capitals or (token.text.islower() and len(letters) >= 3)
    initialism = _initialism(letters, other) if spelled and letters.isalpha() and 2 <= len(letters) <= 5 else None
    if initialism:
        return initialism
    found = {t.lower: t for t in candidates if _abbreviates(short, t.lower.split("'")[0], capitals)}
    return [next(iter(found.values()))] if len(found) == 1 else None


_PLURAL_CAPITALS = re.compile(r"[A-Z]{2,5}s")
_SMALL_WORD_INSIDE = re.compile(r"[A-Z][a-z][A-Z]{1,3}")


def _initialism(short: str, other: Text) -> list[Token] | None:
    """Consecutive content words of ``other`` whose initials spell ``short`` ("QBR" / "quarterly business
    review"), else consecutive words with a small word among them whose initials do, when at least two are
    content words ("PTO" / "paid time off", "POS" / "point of sale")."""
    for clause in other.clauses:
        words = [t for t in clause.tokens if t.quantity is None and is_content(t.lower)]
        for i in range(len(words) - len(short) + 1):
            run = words[i : i + len(short)]
            if "".join(t.lower[0] for t in run) == short:
                return run
    for clause in other.clauses:
        tokens = list(clause.tokens)
        for i in range(len(tokens) - len(short) + 1):
            run = tokens[i : i + len(short)]
            if any(t.quantity is not None or not t.lower.isalpha() for t in run):
                continue
            if "".join(t.lower[0] for t in run) == short and sum(is_content(t.lower) for t in run) >= 2:
                return run if is_content(run[0].lower) else None
    return None


def _abbreviates(short: str, word: str, capitals: bool) -> bool:
    if len(word) < len(short) + 2 or short[0] != word[0] or not word.isalpha():
        return False
    numeronym = _NUMERONYM.fullmatch(short)
    if numeronym:
        return word[-1] == numeronym[3] and len(word) == int(numeronym[2]) + 2
    if not short.isalpha():
        return False
    if word.startswith(short):
        return len(short) >= 3
    if not (capitals or short[-1] == word[-1] or (len(short) == 2 and len(word) >= 6)) or len(short) > 5:
        return False  # two letters of a long word need no capitals: "db" / "database", "pg" / "Postgres"
    rest = iter(word[1:])
    return all(c in rest for c in short[1:])
