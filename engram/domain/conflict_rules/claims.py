"""Exclusive predicates: claims that take one value at a time ("lives in", "works at", "reports to",
"prefers", "'s favourite …", defaults), and the contradiction of two values in the same slot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from engram.domain.conflict_rules.places import narrows
from engram.domain.conflict_rules.texts import Text, Token
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import is_content, is_negation, stem
from engram.domain.conflict_rules.work import MAX_CLAIMS, Work

_PRONOUNS = {
    "i": "i",
    "me": "i",
    "my": "i",
    "mine": "i",
    "i'm": "i",
    "i've": "i",
    "we": "we",
    "us": "we",
    "our": "we",
    "ours": "we",
    "we're": "we",
    "we've": "we",
    "you": "you",
    "your": "you",
    "yours": "you",
    "you're": "you",
    "he": "he",
    "him": "he",
    "his": "he",
    "he's": "he",
    "she": "she",
    "her": "she",
    "hers": "she",
    "she's": "she",
    "they": "they",
    "them": "they",
    "their": "they",
    "theirs": "they",
    "they're": "they",
    "it": "it",
    "its": "it",
    "it's": "it",
}
# before a predicate these make the claim past, future or wished for, not a present fact
_HEDGES = frozenset(
    {
        "used",
        "will",
        "would",
        "might",
        "may",
        "could",
        "should",
        "shall",
        "want",
        "wants",
        "wanted",
        "plan",
        "plans",
        "planned",
        "planning",
        "hope",
        "hopes",
        "going",
        "wish",
        "wishes",
        "if",
        "whether",
        "formerly",
        "previously",
        "once",
        "until",
        "unless",
    }
)
_ARTICLES = frozenset({"a", "an", "the"})
_OBJECT_ENDS = frozenset(
    {
        "over",
        "than",
        "to",
        "rather",
        "instead",
        "versus",
        "vs",
        "because",
        "since",
        "and",
        "or",
        "as",
        "which",
        "who",
        "where",
        "that",
        "so",
        "until",
        "after",
        "before",
        "from",
        "but",
    }
)
_QUALIFIERS = frozenset({"for", "when", "while", "during", "on", "if", "unless", "except", "in", "at"})
_COPULAS = frozenset({"is", "are"})


@dataclass(frozen=True)
class _Predicate:
    name: str  # as in the rule id
    family: str  # predicates that fill one slot: "works at" and "works for"
    words: tuple[frozenset[str], ...]  # the phrase, one set of accepted forms per word
    scoped: bool = False  # "prefers X for Y": what follows "for", "when", … is part of the slot
    passive: bool = False  # "is owned by": only after a form of "be" ("a shop run by Ana" is no claim)
    similar_only: bool = False  # a claim only when the two texts are similar (the verb has other uses)
    staff: bool = False  # only after "on the" ("is on the staff of"; not "the staff of the school includes …")


_PREDICATES = (
    # where someone or something is, said with any of these verbs: "Marco lives in Turin" / "Marco is based in
    # Milan" are one slot
    _Predicate("lives in", "location", (frozenset({"lives", "live"}), frozenset({"in"}))),
    _Predicate("resides in", "location", (frozenset({"resides", "reside"}), frozenset({"in"}))),
    _Predicate("is based in", "location", (frozenset({"based"}), frozenset({"in"}))),
    _Predicate("is located in", "location", (frozenset({"located"}), frozenset({"in"}))),
    _Predicate("is headquartered in", "location", (frozenset({"headquartered"}), frozenset({"in"}))),
    # "moved to" names a place or a tool ("CI moved to GitHub Actions"): a claim only between similar texts
    _Predicate("moved to", "location", (frozenset({"moved"}), frozenset({"to"})), similar_only=True),
    _Predicate("grew up in", "origin", (frozenset({"grew"}), frozenset({"up"}), frozenset({"in"}))),
    _Predicate("was raised in", "origin", (frozenset({"raised"}), frozenset({"in"})), passive=True),
    _Predicate(
        "was brought up in", "origin", (frozenset({"brought"}), frozenset({"up"}), frozenset({"in"})), passive=True
    ),
    _Predicate("works at", "employer", (frozenset({"works", "work"}), frozenset({"at"}))),
    _Predicate("works for", "employer", (frozenset({"works", "work"}), frozenset({"for"}))),
    _Predicate("teaches at", "employer", (frozenset({"teaches", "teach"}), frozenset({"at"}))),
    # "is on the staff of": one's employer, said as membership of its staff
    _Predicate("is on the staff of", "employer", (frozenset({"staff"}), frozenset({"of"})), staff=True),
    _Predicate("reports to", "manager", (frozenset({"reports", "report"}), frozenset({"to"}))),
    _Predicate("prefers", "preference", (frozenset({"prefers", "prefer"}),), scoped=True),
    # one relation, several verbs: "is owned by" / "belongs to", "is run by" / "is managed by" / "is led by"
    _Predicate("is owned by", "owner", (frozenset({"owned"}), frozenset({"by"})), passive=True),
    _Predicate("belongs to", "owner", (frozenset({"belongs", "belong"}), frozenset({"to"}))),
    _Predicate("is run by", "lead", (frozenset({"run"}), frozenset({"by"})), passive=True),
    _Predicate("is managed by", "lead", (frozenset({"managed"}), frozenset({"by"})), passive=True),
    _Predicate("is led by", "lead", (frozenset({"led"}), frozenset({"by"})), passive=True),
    _Predicate("is maintained by", "maintainer", (frozenset({"maintained"}), frozenset({"by"})), passive=True),
    _Predicate(
        "is looked after by",
        "maintainer",
        (frozenset({"looked"}), frozenset({"after"}), frozenset({"by"})),
        passive=True,
    ),
    _Predicate("is employed by", "employer", (frozenset({"employed"}), frozenset({"by"})), passive=True),
)
# the same relations said actively, the holder first: "Carla manages the warehouse" is "the warehouse is
# managed by Carla"
_ACTIVE = {
    "owns": "owner",
    "manages": "lead",
    "manage": "lead",
    "leads": "lead",
    "lead": "lead",
    "maintains": "maintainer",
    "maintain": "maintainer",
}
# "Leo's manager is Victor" is "Leo reports to Victor"; "the app's owner is Dana", "its maintainer is Sam"
_ROLES = {
    "manager": "manager",
    "boss": "manager",
    "owner": "owner",
    "owners": "owner",
    "lead": "lead",
    "maintainer": "maintainer",
    "maintainers": "maintainer",
    "employer": "employer",
}
# words before "manager" that keep it the one reported to: "line manager", "direct manager"
_ROLE_KINDS = frozenset({"line", "direct", "reporting"})
_POSSESSIVE = frozenset({"my", "our", "your", "his", "her", "their", "its", "to"})
_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "gets", "get", "got"})
_NOT_OBJECTS = frozenset(
    {"to", "in", "on", "at", "from", "into", "up", "down", "out", "off", "with", "for", "by", "through", "over"}
)


# a token that may start a claim: the finders then scan its clause, and the work is charged for the clause
_TRIGGERS = (
    frozenset(form for p in _PREDICATES for form in p.words[0])
    | {
        "favourite",
        "favorite",
        "default",
        "defaults",
        "use",
        "uses",
    }
    | frozenset(_ACTIVE)
    | frozenset(_ROLES)
)
# the predicates a token may start, in ``_PREDICATES`` order: ``_phrase_claim`` tries only these
_STARTED_BY = {form: tuple(p for p in _PREDICATES if form in p.words[0]) for p in _PREDICATES for form in p.words[0]}


@dataclass(frozen=True)
class _Claim:
    predicate: str
    slot: tuple[str, str, frozenset[str], frozenset[str]]  # family, key, subject, qualifier
    label: str  # subject and predicate as written: "Alice lives in", "default database"
    value: frozenset[str]
    value_text: str


def exclusive_predicate(old: Text, new: Text, similar: bool, work: Work) -> Verdict | None:
    """The same subject, predicate (and qualifier, for preferences) with values neither of which contains the
    other: "lives in Paris" / "lives in Berlin", but not "lives in Paris" / "lives in central Paris". Not tried
    when either text makes more than ``MAX_CLAIMS`` claims."""
    old_claims, new_claims = _claims(old, work, similar), _claims(new, work, similar)
    if old_claims is None or new_claims is None:
        work.skip(f"a text makes more than {MAX_CLAIMS} exclusive claims: exclusive_predicate not tried")
        return None
    by_slot: defaultdict[tuple[str, str, frozenset[str], frozenset[str]], list[_Claim]] = defaultdict(list)
    for b in new_claims:
        by_slot[b.slot].append(b)
    for a in old_claims:
        rivals = by_slot.get(a.slot, [])
        work.charge(1 + len(rivals))
        if not rivals or any(a.value <= b.value or b.value <= a.value or _narrows(a, b, new) for b in rivals):
            continue
        b = rivals[0]
        return Verdict(
            "contradiction",
            f"exclusive_predicate:{b.predicate}",
            0.85 if similar else 0.7,
            f'{b.label}: "{a.value_text}" in the existing memory, "{b.value_text}" in the new one.',
        )
    return None


def _narrows(a: _Claim, b: _Claim, new: Text) -> bool:
    """The new value sits inside the old one, which the new text names right after it: "based in Germany" /
    "based in Berlin, Germany" or "… Berlin in Germany". A place made more precise, not another place."""
    wider, narrower = a.value_text.lower(), b.value_text.lower()
    if a.slot[0] in ("location", "origin") and narrows(a.value_text, b.value_text):
        return True  # "lives in Norway" / "lives in Bergen"
    return any(f"{narrower}{link}{wider}" in new.normalised for link in (" ", " in ", " near "))


def _claims(text: Text, work: Work, similar: bool = True) -> list[_Claim] | None:
    """The text's claims, or None when it makes more than ``MAX_CLAIMS``; those of ``similar_only`` predicates
    only when ``similar``."""
    found: list[_Claim] = []
    for clause in text.clauses:
        if clause.negation is not None:
            continue  # "Alice doesn't live in Paris" holds no value; the negation rule looks at it
        tokens = clause.tokens
        for i in range(len(tokens)):
            if tokens[i].lower not in _TRIGGERS:  # every finder starts at a trigger
                work.charge(1)
                continue
            work.charge(len(tokens))
            for claim in (
                _phrase_claim(tokens, i, similar),
                _favourite_claim(tokens, i),
                _default_claim(tokens, i),
                _active_claim(tokens, i),
                _role_claim(tokens, i),
            ):
                if claim is not None:
                    found.append(claim)
                    if len(found) > MAX_CLAIMS:
                        return None
    return found


def _phrase_claim(tokens: Sequence[Token], i: int, similar: bool = True) -> _Claim | None:
    """ "Alice lives in Paris", "I prefer tabs over spaces", "Bob reports to Carol"."""
    for predicate in _STARTED_BY.get(tokens[i].lower, ()):
        if predicate.similar_only and not similar:
            continue
        end = i + len(predicate.words)
        phrase = tokens[i:end]
        if len(phrase) < len(predicate.words) or any(
            t.lower not in forms for t, forms in zip(phrase, predicate.words, strict=True)
        ):
            continue
        if predicate.passive and (i == 0 or tokens[i - 1].lower not in _BE):
            return None
        if predicate.staff and [t.lower for t in tokens[max(0, i - 2) : i]] != ["on", "the"]:
            return None
        subject = _subject(tokens[:i])
        value = _object(tokens[end:], scoped=predicate.scoped)
        if subject is None or value is None:
            return None
        stems = frozenset(_PRONOUNS.get(t.lower) or stem(t.lower) for t in subject)
        first = next(j for j, t in enumerate(tokens) if t is subject[0])
        return _claim(predicate.name, predicate.family, "", stems, value, _text(tokens[first:end]))
    return None


def _active_claim(tokens: Sequence[Token], i: int) -> _Claim | None:
    """ "Carla manages the warehouse", "Ingrid leads the security audit": who holds what, read as the passive
    ("the warehouse is managed by Carla"). Not when a preposition follows ("manages to", "leads to")."""
    family = _ACTIVE.get(tokens[i].lower)
    after = tokens[i + 1 :]
    if family is None or i == 0 or not after or after[0].lower in _NOT_OBJECTS:
        return None
    if tokens[i - 1].lower in _POSSESSIVE or tokens[i - 1].lower.endswith("'s"):
        return None  # "your lead", "the team's lead": a noun after a possessive, not a verb
    holder = _subject(tokens[:i])
    held = _object(after, scoped=False)
    if holder is None or held is None:
        return None
    stems, held_text, _ = held
    value = frozenset(_PRONOUNS.get(t.lower) or stem(t.lower) for t in holder)
    label = f"who {tokens[i].lower} {held_text}"
    return _claim(tokens[i].lower, family, "", stems, (value, _text(holder), frozenset()), label)


def _role_claim(tokens: Sequence[Token], i: int) -> _Claim | None:
    """ "Leo's manager is Victor", "the dashboard's owner is the data team", "my boss is Ana"."""
    family = _ROLES.get(tokens[i].lower)
    if family is None or i == 0 or _hedged(tokens[:i]) or i + 1 >= len(tokens) or tokens[i + 1].lower not in _COPULAS:
        return None
    owner = tokens[i - 1]
    if owner.lower in _ROLE_KINDS and family == "manager" and i >= 2:
        owner = tokens[i - 2]  # "Leo's line manager is Victor": the manager Leo reports to
    if owner.lower in _PRONOUNS:
        subject = frozenset({_PRONOUNS[owner.lower]})
    elif owner.lower.endswith("'s") or owner.lower.endswith("s'"):
        subject = frozenset({stem(owner.lower)})
    else:
        return None
    value = _object(tokens[i + 2 :], scoped=False)
    return _claim(f"'s {tokens[i].lower}", family, "", subject, value, _text([owner, tokens[i]]))


def _favourite_claim(tokens: Sequence[Token], i: int) -> _Claim | None:
    """ "Alice's favourite colour is blue", "my favourite editor is Vim"."""
    if tokens[i].lower not in ("favourite", "favorite") or i == 0 or _hedged(tokens[:i]):
        return None
    owner = tokens[i - 1]
    if owner.lower in _PRONOUNS:
        subject = frozenset({_PRONOUNS[owner.lower]})
    elif owner.lower.endswith("'s"):
        subject = frozenset({stem(owner.lower)})
    else:
        return None
    copula = next((j for j in range(i + 1, len(tokens)) if tokens[j].lower in _COPULAS), None)
    value = _object(tokens[copula + 1 :], scoped=False) if copula is not None else None
    if copula is None or value is None:
        return None
    what = tokens[i + 1 : copula]
    return _claim("'s favourite", "favourite", _key(what), subject, value, _text([owner, tokens[i], *what]))


def _default_claim(tokens: Sequence[Token], i: int) -> _Claim | None:
    """ "the default database is Postgres", "we use Postgres as the default database", "the CLI defaults to
    JSON". Who sets the default ("we", "our") is not part of the slot: the caller compares one scope; a named
    owner ("Acme's default branch") is."""
    word, after = tokens[i].lower, tokens[i + 1 :]
    if word not in ("default", "defaults", "use", "uses") or _hedged(tokens[:i]):
        return None
    owner = _owner(tokens[:i])
    if word in ("default", "defaults") and after and after[0].lower == "to":
        value = _object(after[1:], scoped=False)
        return _claim("defaults to", "default", "", owner, value, _text([*tokens[:i], *tokens[i : i + 2]]))
    if word == "default":
        copula = next((j for j, t in enumerate(after) if t.lower in _COPULAS), None)
        if copula is None or not _key(after[:copula]):
            return None
        value = _object(after[copula + 1 :], scoped=False)
        return _claim(
            "default is",
            "default",
            _key(after[:copula]),
            owner,
            value,
            _text([*tokens[:i], tokens[i], *after[:copula]]),
        )
    if word in ("use", "uses"):
        as_at = next((j for j, t in enumerate(after) if t.lower == "as"), None)
        rest = list(after[as_at + 1 :]) if as_at is not None else []
        while rest and rest[0].lower in _ARTICLES | {"our", "its", "my", "their", "your"}:
            rest = rest[1:]
        if as_at is None or not rest or rest[0].lower != "default":
            return None
        what = list(_until_end(rest[1:]))
        value = _object(after[:as_at], scoped=False)
        return _claim("uses as default", "default", _key(what), owner, value, _text(["default", *what]))
    return None


def _claim(
    predicate: str,
    family: str,
    key: str,
    subject: frozenset[str],
    value: tuple[frozenset[str], str, frozenset[str]] | None,
    label: str,
) -> _Claim | None:
    if value is None:
        return None
    stems, text, qualifier = value
    return _Claim(predicate, (family, key, subject, qualifier), label.strip(), stems, text)


def _hedged(before: Sequence[Token]) -> bool:
    """Negated, past, future or wished for: "doesn't live in", "used to work at", "will prefer"."""
    return any(is_negation(t.lower) or t.lower in _HEDGES or t.lower.endswith(("'ll", "'d")) for t in before)


def _subject(before: Sequence[Token]) -> list[Token] | None:
    """The words naming who a claim is about ("Alice", "I", "the platform team"), or None when the clause
    hedges or does not say."""
    if _hedged(before):
        return None
    kept = [t for t in before if t.quantity is None and (t.lower in _PRONOUNS or is_content(t.lower))]
    return kept or None


def _owner(before: Sequence[Token]) -> frozenset[str]:
    """Who owns a default, pronouns left out: "Acme's default branch" → {acme}; "our default branch" → {}."""
    return frozenset(stem(t.lower) for t in before if t.quantity is None and is_content(t.lower))


def _object(after: Sequence[Token], *, scoped: bool) -> tuple[frozenset[str], str, frozenset[str]] | None:
    """The value a predicate gives (up to the end of its phrase) and, for a scoped predicate, its qualifier:
    "prefers tabs over spaces" → tabs; "prefers Python for scripting" → Python, qualified by scripting."""
    tokens = list(after)
    if tokens and tokens[0].lower == "to":
        tokens = tokens[1:]  # "prefers to work remotely"
    value: list[Token] = []
    qualifier: list[Token] = []
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


def _text(tokens: Iterable[Token | str]) -> str:
    return " ".join(t if isinstance(t, str) else t.text for t in tokens)


def _key(tokens: Iterable[Token]) -> str:
    return " ".join(sorted(c for t in tokens if (c := t.content) is not None))


def _until_end(tokens: Iterable[Token]) -> Iterator[Token]:
    for token in tokens:
        if token.lower in _OBJECT_ENDS or token.lower in _QUALIFIERS:
            return
        yield token
