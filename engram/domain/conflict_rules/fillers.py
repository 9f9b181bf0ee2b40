"""``filled_slot``: two texts that each fill one named slot with a name, whatever verb or form they use.

A short text states one value of one thing when it ends in a name (a capitalised run, or a code such as
"us-central1") introduced by a copula, a colon, "called" / "named", or a preposition ("on", "at", "in", "by",
"with", "to" …): "Our CRM is HubSpot." / "CRM: Salesforce.", "The repo is hosted on GitLab." / "The repo lives
on Bitbucket.", "Our bookkeeper is Margaret Lowe." / "Bookkeeping is done by Dev Patel." The words before it
are the slot: its subject (what the value is of) and, between the subject and the marker, the verb ("is
hosted", "lives", "is done"). Two texts fill the same slot when

- their subjects are the same words, one of them allowed one more word (a role word dropped: "Max's football
  coach" / "Max's coach"), a word matching another that it starts ("bookkeeper" / "bookkeeping");
- the subject names a thing, not only a person or place by name: "The repo", "Our CRM". A subject that is only
  a name ("Hiro", "Alice") holds many relations, so there the verb and the marker must be the same too
  ("Hiro was raised in Osaka" / "… in Sapporo"; not "Alice lives with Bob" / "Alice works with Carol");
- the markers agree: the same preposition, or one side a copula or colon, which names the slot's value
  whatever the other side's verb ("The website runs on WordPress" / "The website was designed by Pentagram"
  are two slots: "on" against "by").

A thing's place said in common words counts as a value too when it ends the text after "in", "at", "under",
"inside" or "behind" and opens with a determiner or an owner ("The passports are in the top drawer" /
"Passports are kept in the safe", "at Ines's flat" / "at the library cafe"): then both texts must place a
thing (not a person by name), after prepositions of place, with the same verb if both have one ("I drink
coffee in …" / "I drink tea in …" are other things), and a time ("in the morning") is no place.

Then two names that share no word and that neither text holds elsewhere are two values of one slot: a
contradiction. Not when the new text adds or only considers ("also", "might"), when either text negates, when
one text puts the claim at another time ("used to", "next", "last", "was" or "will" before anything but a
participle: "Alice was in Paris" speaks of the past, "was raised in" does not), when one value is a wide place
and the other may lie inside it ("Portugal" / "Braga"), or when a text holds more than one sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from engram.domain.conflict_rules.places import narrows
from engram.domain.conflict_rules.texts import Text, Token
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import is_content, stem
from engram.domain.conflict_rules.work import Work
from engram.domain.content import preview

_COPULAS = frozenset({"is", "are", "was", "were", "be", "called", "named", "'s"})
_MARKERS = frozenset({"on", "at", "in", "by", "with", "to", "through", "via", "into", "onto", "from"})
_DETERMINERS = frozenset({"a", "an", "the", "my", "our", "his", "her", "their", "your", "its", "this", "that"})
_LINKS = frozenset({"of", "the", "and", "de", "da", "van", "von"})
_FILLERS = frozenset(
    {"now", "nowadays", "today", "currently", "actually", "apparently", "lately", "these", "days", "think", "guess"}
)
_ADDING = frozenset({"also", "too", "another", "additional", "added", "second", "extra", "both", "plus", "well"})
_HEDGING = frozenset(
    {"might", "may", "could", "maybe", "perhaps", "considering", "evaluating", "thinking", "planning", "if", "hope"}
)
_OTHER_TIME = frozenset({"used", "next", "last", "ago", "previously", "formerly", "soon", "until", "going", "would"})
_AUXILIARIES = frozenset({"was", "were", "will"})
_CALENDAR = frozenset(  # days and months are dates, compared by the numbers rule
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays january february march april may june july august september october november december".split()
)
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir"})
_OWNERS = frozenset({"my", "his", "her", "our", "their", "your"})
_HAVE = frozenset({"has", "have", "had"})
_TAKE = frozenset({"took", "taken", "takes"})
_LONGEST_NAME = 3  # words of a person's name that opens a text
_APPOSITION = 2  # lower-case words between an owner and a name: "his old flatmate Connor"
# nouns that name a slot, not a thing: "Team offsite location: Seville" is the offsite's place
_SLOT_NOUNS = frozenset({"location", "place", "venue", "address", "name", "provider", "vendor", "tool", "platform"})
_CODE_LETTERS = 4  # letters a code with digits needs to be a value rather than an identifier
_PLACE_WORDS = frozenset({"in", "at", "under", "inside", "behind"})
_TIMES = frozenset(
    "morning mornings afternoon afternoons evening evenings night nights day days week weeks weekend weekends "
    "month months year years summer winter spring autumn fall moment meantime future past end start beginning "
    "time times".split()
)
_LONGEST_PLACE = 5  # content words of a place said in common words
_MOST_WORDS = 12  # content words of a text beyond which it says more than one slot's value
_PREFIX = 5  # letters a word must share with a longer one it starts to be read as the same word


@dataclass(frozen=True)
class _Filled:
    subject: tuple[str, ...]  # stems of what the value is of
    subject_written: str  # its words as written, for the reason
    head: str  # its last word before the verb: the thing itself ("coach" of "Max's football coach")
    owned: frozenset[str]  # its words right after a possessive ("sister" of "Alice's sister")
    purpose: bool  # the subject is all after the value: "We moved to Bitwarden for passwords"
    verb: tuple[str, ...]  # stems between the subject and the marker
    marker: str  # "=" after a copula, ":" after a colon, else the preposition
    value: tuple[Token, ...]
    named_subject: bool  # the subject is only names (a person, a place)
    phrase: bool = False  # the value is a place said in common words ("in the top drawer")

    @property
    def written(self) -> str:
        return " ".join(t.text for t in self.value)

    @property
    def value_stems(self) -> frozenset[str]:
        return frozenset(stem(t.lower) for t in self.value if t.lower not in _LINKS and t.lower not in _TITLES)


def filled_slot(old: Text, new: Text, work: Work) -> Verdict | None:
    """Each text fills one slot with a name, the slots are one, the names are two (see the module docstring)."""
    work.charge(len(old.tokens) + len(new.tokens))
    if old.negated or new.negated:
        return None
    old_lowers, new_lowers = {t.lower for t in old.tokens}, {t.lower for t in new.tokens}
    if (new_lowers - old_lowers) & (_ADDING | _HEDGING):
        return None
    if (old_lowers ^ new_lowers) & _OTHER_TIME or _another_time(old) != _another_time(new):
        return None  # "Alice used to live in Berlin", "Alice was in Paris": another time
    was, now = _filled(old, new), _filled(new, old)
    if was is None or now is None:
        return None
    if was.value_stems & now.value_stems or was.value_stems & new.content or now.value_stems & old.content:
        return None  # the same name, or one text holds both
    if narrows(was.written, now.written):
        return None  # "Portugal" / "Braga", "Italy" / "a villa near Florence": perhaps inside the other
    if was.phrase or now.phrase:
        if was.named_subject or now.named_subject or not {was.marker, now.marker} <= _PLACE_WORDS:
            return None  # a thing's place said in common words, on both sides, after a preposition of place
        if was.verb and now.verb and not _same_words(was.verb, now.verb):
            return None  # "I drink coffee in …" / "I drink tea in …": other things placed
    if not _same_subject(was, now):
        return None
    if was.phrase or now.phrase:
        pass
    elif was.named_subject or now.named_subject:
        if ":" in (was.marker, now.marker):
            return None  # "Caroline: Hey Mel!": a speaker and what they said, not a slot
        if was.marker != now.marker or not _same_words(was.verb, now.verb):
            return None  # "Alice lives with Bob" / "Alice works with Carol": two relations of a person
    elif was.marker != now.marker and not {"=", ":"} & {was.marker, now.marker}:
        return None  # "runs on WordPress" / "was designed by Pentagram": two slots of one thing
    slot = was.subject_written
    return Verdict(
        "contradiction",
        "filled_slot",
        0.8,
        f'{preview(slot, 60)}: "{was.written}" in the existing memory, "{now.written}" in the new one.',
    )


def _another_time(text: Text) -> bool:
    """An auxiliary of another time ("was", "were", "will") before anything but a participle or "be": "Alice
    was in Paris" is the past, "Hiro was raised in Osaka" and "will be held in Porto" are not."""
    tokens = text.tokens
    for i, token in enumerate(tokens):
        if token.lower not in _AUXILIARIES:
            continue
        after = tokens[i + 1].lower if i + 1 < len(tokens) else ""
        if after == "be" or (is_content(after) and stem(after) != after) or after.endswith(("t", "n")):
            continue  # "was raised", "was rebuilt", "was born", "will be held"
        return True
    return False


def _filled(text: Text, other: Text) -> _Filled | None:
    """The text's one slot and its value, or None when it is not one short statement ending in a name. A
    capitalised first word is a name unless ``other`` holds it in lower case ("Bookkeeping is done by …" /
    "Our bookkeeper is …")."""
    if len(text.clauses) != 1:
        return None
    tokens = text.clauses[0].tokens
    if sum(1 for t in tokens if t.content is not None) > _MOST_WORDS:
        return None
    taken = _taken_over(tokens)
    if taken is not None:
        return taken
    lowercase = not any(t.text[:1].isupper() for t in tokens)
    found, phrase = _value(tokens, lowercase), False
    if found is None:
        found, phrase = _place_phrase(tokens), True
    if found is None:
        return None
    start, end, marker_at = found
    marker = ":" if marker_at is None else "=" if tokens[marker_at].lower in _COPULAS else tokens[marker_at].lower
    before = tokens[: marker_at if marker_at is not None else start]
    after = tokens[end:]
    copula = next((i for i, t in enumerate(before) if t.lower in _COPULAS), None)
    if copula is not None:
        subject, verb = before[:copula], before[copula + 1 :]
    elif marker not in ("=", ":") and _verb_last(before):
        subject, verb = before[:-1], before[-1:]  # "The repo lives on …": the word before the marker
    else:
        subject, verb = before, ()
    subject_stems = _stems(subject) + _stems(after)
    if not subject_stems:
        return None
    written_lower = {stem(t.lower) for t in other.tokens if t.text[:1].islower()}
    named = all(
        t.text[:1].isupper()
        and not t.text.isupper()  # "CRM", "CFO": an acronym of a thing, not a person's name
        and not (t.opens and any(_same_word(stem(t.lower), o) for o in written_lower))
        for t in (*subject, *after)
        if t.content is not None and t.lower not in _FILLERS
    )
    head = (_stems(subject) or subject_stems)[-1]
    owned = frozenset(
        c
        for before_it, t in pairwise(tokens)
        if before_it.lower.endswith(("'s", "s'")) and (c := t.content) is not None
    )
    purpose = not _stems(subject)
    written = " ".join(t.text for t in (*subject, *after) if t.content is not None and t.lower not in _FILLERS)
    return _Filled(
        tuple(subject_stems),
        written,
        head,
        owned,
        purpose,
        tuple(_stems(verb)),
        marker,
        tuple(tokens[start:end]),
        named,
        phrase,
    )


def _taken_over(tokens: Sequence[Token]) -> _Filled | None:
    """A name that took a thing over fills its slot: "Jorge has taken over the support inbox", "Isla took over
    running the Thursday meetup" say who the inbox's or the meetup's person is now, as "… is answered by Dana"
    said before."""
    n = 0
    while n < min(len(tokens), _LONGEST_NAME) and tokens[n].text[:1].isupper() and tokens[n].content is not None:
        n += 1
    k = n + (n < len(tokens) and tokens[n].lower in _HAVE)
    if n == 0 or k + 1 >= len(tokens) or tokens[k].lower not in _TAKE or tokens[k + 1].lower != "over":
        return None
    rest = list(tokens[k + 2 :])
    if rest and rest[0].content is not None and rest[0].lower.endswith("ing"):
        rest = rest[1:]  # "took over running the meetup"
    while rest and rest[0].lower in _DETERMINERS:
        rest = rest[1:]
    subject = _stems(rest)
    if (
        not subject
        or any(t.quantity is not None for t in rest)
        or len(subject) != len([t for t in rest if t.content is not None])
    ):
        return None
    written = " ".join(t.text for t in rest if t.content is not None)
    return _Filled(tuple(subject), written, subject[-1], frozenset(), False, (), "=", tuple(tokens[:n]), False)


def _verb_last(before: Sequence[Token]) -> bool:
    """The last word before the marker is a verb: a content word in a verb's form ("lives", "hosted") after the
    subject's last word, not after a determiner ("The repo lives on", not "We host the website on")."""
    return (
        len(before) >= 2
        and before[-1].content is not None
        and before[-1].lower.endswith(("s", "ed"))  # "lives", "runs", "hosted"; not "the spare charger"
        and not before[-1].lower.endswith("ss")
        and before[-2].lower not in _DETERMINERS
        and before[-2].lower not in _MARKERS
        and before[-2].content is not None
    )


def _value(tokens: Sequence[Token], lowercase: bool) -> tuple[int, int, int | None] | None:
    """(start, end, the marker's position or None for a colon) of the last name in ``tokens`` that a marker
    introduces. In a text all in lower case, the words after a colon are the value ("monitoring: better
    stack")."""
    best: tuple[int, int, int | None] | None = None
    i = 0
    while i < len(tokens):
        if not _namelike(tokens, i, lowercase):
            i += 1
            continue
        start = i
        while i < len(tokens) and (
            _namelike(tokens, i, lowercase)
            or (tokens[i].lower in _LINKS and i + 1 < len(tokens) and _namelike(tokens, i + 1, lowercase))
        ):
            i += 1
        if tokens[start].opens:
            best = (start, i, None)  # after a colon: "Team offsite location: Seville"
            continue
        j = _before_apposition(tokens, start)
        while j >= 0 and tokens[j].lower in _DETERMINERS:
            j -= 1
        if j >= 0 and (tokens[j].lower in _COPULAS or tokens[j].lower in _MARKERS):
            best = (start, i, j)
    if best is None:
        return None
    rest = [t for t in tokens[best[1] :] if t.content is not None and t.lower not in _FILLERS]
    if any(t.text[:1].isupper() or t.quantity is not None for t in rest):
        return None  # another name or number after it: more than one value
    return best


def _before_apposition(tokens: Sequence[Token], start: int) -> int:
    """The position before a name's apposition of kin or role after an owner ("is his brother Liam", "will be
    her old flatmate Connor"): up to ``_APPOSITION`` lower-case words after "my", "his", "her", "our", "their"
    or "your"; else the position just before the name."""
    j = start - 1
    k = j
    while k >= 0 and start - 1 - k < _APPOSITION and tokens[k].content is not None and tokens[k].text.islower():
        k -= 1
        if k >= 0 and k < j and tokens[k].lower in _OWNERS:
            return k
    return j


def _place_phrase(tokens: Sequence[Token]) -> tuple[int, int, int] | None:
    """(start, end, the preposition's position) of a place said in common words that ends the text: "in the
    top drawer of the desk", "under the blue flowerpot", "at the library cafe". It opens with a determiner or
    an owner ("at Ines's flat") and holds no number."""
    for k in range(1, len(tokens) - 1):
        if tokens[k].lower not in _PLACE_WORDS:
            continue
        rest = tokens[k + 1 :]
        while rest and rest[-1].lower in _FILLERS:
            rest = rest[:-1]
        opening = rest[0] if rest else None
        if opening is None or not (opening.lower in _DETERMINERS or opening.lower.endswith("'s")):
            continue
        words = [t for t in rest if t.content is not None]
        if any(t.lower in _TIMES for t in rest):
            return None  # "in the morning", "at the weekend": a time, not a place
        if not words or len(words) > _LONGEST_PLACE or any(t.quantity is not None for t in rest):
            return None
        return k + 1, k + 1 + len(rest), k
    return None


def _namelike(tokens: Sequence[Token], i: int, lowercase: bool) -> bool:
    token = tokens[i]
    if token.quantity is not None or not is_content(token.lower) or token.lower in _FILLERS | _CALENDAR:
        return False
    if token.opens:
        return i > 0  # the first word of the text is its subject; one after a colon opens a value
    if lowercase:
        return any(t.opens for t in tokens[1:i])  # chat style: the words after a colon
    text = token.text
    has_digit = any(c.isdigit() for c in text)
    # a code of a word and digits ("1Password", "us-central1") is a value; a short identifier ("S3", "EC2")
    # names which thing
    return (text[:1].isupper() and not has_digit) or (has_digit and sum(c.isalpha() for c in text) >= _CODE_LETTERS)


def _stems(tokens: Sequence[Token]) -> list[str]:
    return [c for t in tokens if t.quantity is None and t.lower not in _FILLERS and (c := t.content) is not None]


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= _PREFIX and long.startswith(short)


def _same_words(a: Sequence[str], b: Sequence[str]) -> bool:
    return len(a) == len(b) and all(any(_same_word(x, y) for y in b) for x in a)


def _same_subject(a: _Filled, b: _Filled) -> bool:
    """Every word of one subject is in the other, which may hold one word more: a role word dropped ("Max's
    football coach" / "Max's coach"), not another thing ("Alice" / "Alice's sister", its head; "My parents" /
    "My parents' dog"), unless the shorter one is a purpose ("for passwords" / "Our password manager")."""
    short, long = sorted((a, b), key=lambda f: len(f.subject))
    if not short.subject or len(long.subject) - len(short.subject) > 1:
        return False
    if not all(any(_same_word(x, y) for y in long.subject) for x in short.subject):
        return False
    extra = [x for x in long.subject if not any(_same_word(x, y) for y in short.subject)]
    if len(extra) > len(long.subject) - len(short.subject):
        return False
    return all(
        x != long.head or x in _SLOT_NOUNS or (short.purpose and x not in long.owned) or _agent_of(x, short.verb)
        for x in extra
    )


def _agent_of(word: str, verb: Sequence[str]) -> bool:
    """``word`` names who does ``verb`` ("owner" of "is owned by", "organiser" of "is organised by"): "Q3 board
    deck owner: Pieter" fills the slot of "The Q3 board deck is owned by Ngozi"."""
    return any(len(v) >= 3 and word.startswith(v) and len(word) - len(v) <= 3 for v in verb)
