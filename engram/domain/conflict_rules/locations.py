"""Where a thing is kept, meets or is held: two texts that put the same thing in two places.

``moved_place``: each text ends its one clause with a place ("in St Jude's church hall", "at the Corn Exchange",
"out of the students' union building", "next to the paddock"), and, the place and the verbs of where something is
aside ("meets", "is held", "is kept", "lives", "sits", "is based"), what one text says the place is of, the other
says too: "The stamp club meets in St Jude's church hall." / "The stamp club meets in the Red Lion's back room.",
"The opening gala is at the Regent Cinema." / "The opening gala will be at the Corn Exchange.". The two places
share no word.

Left alone: a place said more precisely ("in Europe" / "in Frankfurt", ``places.py``) or with a word of the other
("the town hall" / "the town hall's back room"); a second place in one text that the other does not name ("at a
hotel in Bath" / "at the Royal Crescent": perhaps the hotel's street); a thing said of something else ("Leo's swim
lessons" / "Leo's piano lessons"); a visit, a one-off, an addition or a plan ("is visiting", "this week", "also",
"might"); a past state; a negation (the negation rule's business); and a phrase that is no place ("in charge", "at
7pm", "in May", "on Tuesdays").
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.domain.conflict_rules.places import narrows
from engram.domain.conflict_rules.texts import Text, Token
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import in_past_period, speaks_of_the_past, stem

# one-word and two-word prepositions of place ("on" has too many other senses: "on Tuesdays", "on the team")
_AT = frozenset({"in", "at", "inside", "behind", "beside", "opposite", "under", "within", "above", "below", "beneath"})
_AT_TWO = frozenset({("next", "to"), ("out", "of"), ("outside", "of"), ("in", "front")})
# verbs that say where, not what: left out of what the place is of
_WHERE_VERBS = frozenset(
    stem(w)
    for w in (
        "meet meets meeting met held hold holds based located situated sit sits sitting live lives living kept keep "
        "keeps stored store stores housed house houses run runs running take takes taking place places happen "
        "happens happening gather gathers hosted host hosts stay stays found"
    ).split()
)
# words that are no place after "in" or "at": "in charge", "at risk", "in the morning", "at the weekend"
_NO_PLACE = frozenset(
    stem(w)
    for w in (
        "charge use stock progress person time order touch favour favor part line mind advance general total "
        "particular future past risk least most first last end start beginning middle morning afternoon evening "
        "night weekend weekends week month year spring summer autumn winter holiday holidays moment case "
        "addition fact theory practice short pieces full detail bulk town city area somewhere abroad nearby "
        "january february march april may june july august september october november december monday tuesday "
        "wednesday thursday friday saturday sunday weekday weekdays"
    ).split()
)
# in the new text, words that add, plan, visit or bound in time rather than move
_NOT_A_MOVE = frozenset(
    """also too another additional extra second both well might may could maybe perhaps considering planning
    thinking visiting visit visits trip travelling traveling temporarily temporary while during until today
    tonight tomorrow this occasionally sometimes usually except unless""".split()
)
_SKIPPED = frozenset({"the", "a", "an", "my", "our", "his", "her", "their", "your", "its", "own"})
# words after a place that say when, not where
_WHEN = frozenset({"now", "overnight", "these", "days", "nowadays", "currently", "today", "anymore"})
_MAX_WORDS = 16


def moved_place(old: Text, new: Text) -> Verdict | None:
    """A contradiction when the two texts put one thing in two places (see the module docstring), else None."""
    if old.negated or new.negated or len(old.tokens) > _MAX_WORDS or len(new.tokens) > _MAX_WORDS:
        return None
    if len(old.clauses) != 1 or len(new.clauses) != 1:
        return None
    if {t.lower for t in new.tokens} & _NOT_A_MOVE or _in_the_past(old) or _in_the_past(new):
        return None
    was, now = _place(old.clauses[0].tokens), _place(new.clauses[0].tokens)
    if was is None or now is None:
        return None
    (was_at, was_words), (now_at, now_words) = was, now
    if _places(old.clauses[0].tokens) & _places(new.clauses[0].tokens):
        return None  # a place both texts name: "at Acme" / "at Acme in London", made precise
    if narrows(_text(was_words), _text(now_words)):
        return None
    old_rest, new_rest = old.clauses[0].tokens[:was_at], new.clauses[0].tokens[:now_at]
    old_of, new_of = _what(old_rest), _what(new_rest)
    if len(old_of & new_of) < 2 or not (old_of <= new_of or new_of <= old_of):
        return None  # not one thing: "Leo's swim lessons" / "Leo's piano lessons"
    if _owned_extra(old_rest, new_of) or _owned_extra(new_rest, old_of):
        return None  # "Hana works at …" / "Hana's husband works at …": another one's place
    if not _other_places_shared(old_rest, new) or not _other_places_shared(new_rest, old):
        return None  # "at a hotel in Bath" / "at the Royal Crescent": perhaps a street of the same city
    before, after = _text(was_words), _text(now_words)
    return Verdict(
        "contradiction",
        "moved_place",
        0.8,
        f'where: "{before}" in the existing memory, "{after}" in the new one.',
    )


def _place(tokens: Sequence[Token]) -> tuple[int, list[Token]] | None:
    """Where the clause's last phrase of place starts and its words (determiners aside), when it ends the clause
    and names a place: no value (a time, a date), a content word that is no time or state."""
    for i in range(len(tokens) - 2, -1, -1):
        word = tokens[i].lower
        two = (word, tokens[i + 1].lower) if i + 1 < len(tokens) else None
        if two in _AT_TWO:
            start = i + 2
        elif word in _AT and not (i and (tokens[i - 1].lower, word) in _AT_TWO):
            start = i + 1
        else:
            continue
        words = [t for t in tokens[start:] if t.lower not in _SKIPPED]
        while words and words[-1].lower in _WHEN:
            words.pop()  # "at the Eastgate depot overnight", "in strongroom 3 these days"
        if not words or any(t.quantity is not None and t.quantity.kind != "number" for t in words):
            return None  # a time, a date, a measure: no place ("strongroom 3" is one)
        if any(stem(t.lower) in _NO_PLACE for t in words) or not _stems(words):
            return None
        return i, words
    return None


def _places(tokens: Sequence[Token]) -> set[str]:
    """The content stems of every phrase of place in the clause, each up to the next one."""
    found: set[str] = set()
    inside = False
    for i, token in enumerate(tokens):
        two = (token.lower, tokens[i + 1].lower) if i + 1 < len(tokens) else None
        if token.lower in _AT or two in _AT_TWO:
            inside = True
        elif inside and token.content is not None:
            found.add(token.content)
    return found


def _stems(tokens: Sequence[Token]) -> set[str]:
    return {c for t in tokens if (c := t.content) is not None}


def _what(tokens: Sequence[Token]) -> set[str]:
    """What the place is of: the content stems before it, the verbs of where aside."""
    return {c for t in tokens if (c := t.content) is not None and c not in _WHERE_VERBS}


_OWNERS = frozenset({"my", "our", "his", "her", "their", "your", "its"})


def _owned_extra(rest: Sequence[Token], other_of: set[str]) -> bool:
    """A word of ``rest`` the other text lacks right after a possessive ("Hana's husband", "my sister"): the
    place of another person or thing of the same owner."""
    for i in range(1, len(rest)):
        before, token = rest[i - 1], rest[i]
        owned = before.lower.endswith("'s") or before.lower in _OWNERS
        if owned and token.content is not None and token.content not in other_of and token.content not in _WHERE_VERBS:
            return True
    return False


def _other_places_shared(rest: Sequence[Token], other: Text) -> bool:
    """Each earlier phrase of place in ``rest`` names only what ``other`` names too ("The spare eyepieces at
    Kielder" against "Kielder Observatory's spare eyepieces")."""
    for i, token in enumerate(rest):
        if token.lower not in _AT:
            continue
        following = next((t for t in rest[i + 1 :] if t.lower not in _SKIPPED), None)
        if following is not None and following.content is not None and following.content not in other.words:
            return False
    return True


def _in_the_past(text: Text) -> bool:
    """A past period ("in the 90s", "back in 2019") or a claim that held once ("used to", "formerly")."""
    return in_past_period(text.normalised) or speaks_of_the_past(text.normalised)


def _text(tokens: Sequence[Token]) -> str:
    return " ".join(t.text for t in tokens).strip(".,;:!?")
