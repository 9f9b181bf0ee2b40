"""Slots: two texts that say the same thing about the same subject except for one value, and texts that say a
value was replaced by another.

- ``changed_value``: once the words both texts share (the frame: subject and attribute) are set aside, each
  text has one run of other words left, in the same place of the frame, and the runs read as values (names,
  numbers, dates, days, colours), or the new text says it changed ("now", "moved", "switched", …). "Leo's swim
  coach is Marta" / "Leo's swim coach is Dan", "Payments go through Stripe" / "Payments go through Adyen now".
  Two runs ("Leo's swim lessons are on Tuesdays" / "Leo's piano lessons are on Thursdays") are two slots
  changed at once: another fact, not a contradiction. A run at the very start is the subject ("Emma's recital
  is on March 14" / "The launch is on March 14"): other things, not other values.
- ``replaced``: the new text says the existing one's value gave way to another ("moved CI from Jenkins to
  GitHub Actions", "replaced Auth0 with Keycloak", "swapped RabbitMQ for NATS", "Y instead of X").
- ``opposite_value``: the texts are the same (word for word, or reordered with one plain word more or less)
  but for one word swapped for its opposite ("the flag is on" / "the flag is off", "Feature flag X is enabled
  in production" / "X flag: disabled in prod").
- ``swapped_name``: each text names one thing the other does not (a capitalised run inside a sentence, not the
  subject), and the rest says the same job reworded or reordered ("We host the site on Netlify" / "The site is
  hosted on Vercel"); not when either text speaks of another time ("used to", "will") or of another thing of
  the same owner ("Alice's sister"), when a name is a list ("Carol and Seoul"), or when the texts also differ
  in a number or code (then they speak of other things).

A wide place against a narrower one ("in Europe" / "in Frankfurt", ``places.py``), a month against a date in
it and a value within a bound ("less than £40" / "£35", ``bounds.py``) are not other values.

None of them fires when the new text adds rather than replaces ("also", "too", "as well", "another") or only
plans or wonders ("might", "considering"), or when either text negates (the negation rule's business).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from engram.domain.conflict_rules.bounds import within_bound
from engram.domain.conflict_rules.places import narrows
from engram.domain.conflict_rules.quantities import Quantity, same_value
from engram.domain.conflict_rules.texts import Text, Token
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import in_past_period, is_content, stem
from engram.domain.conflict_rules.work import MAX_QUANTITIES, Work
from engram.domain.content import preview

# words that say nothing about the value, only that it is current: left out of the comparison
_FILLERS = frozenset(
    {"now", "actually", "nowadays", "lately", "anymore", "today", "apparently", "think", "guess", "believe", "reckon"}
)
# in the new text only, these say the value changed
_CHANGE_CUES = frozenset(
    {
        "now",
        "moved",
        "switched",
        "changed",
        "replaced",
        "instead",
        "anymore",
        "actually",
        "nowadays",
        "became",
        "migrated",
        "swapped",
        "turned",
        "new",
        "currently",
        "latest",
    }
)
# in the new text only, these add a second value or only consider one
_ADDING = frozenset({"also", "too", "another", "additional", "added", "second", "extra", "both", "plus", "well"})
_HEDGING = frozenset(
    {"might", "may", "could", "maybe", "perhaps", "considering", "evaluating", "thinking", "planning", "if", "hope"}
)
# a place said only as near another: what lies near it is no other value
_NEAR = frozenset({"near", "nearby", "around", "outside", "close", "by", "just", "to"})
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "half quarter dozen noon midnight first second third fourth fifth sixth seventh eighth ninth tenth".split()
)
_ORDINALS = frozenset("first second third fourth fifth sixth seventh eighth ninth tenth".split())
_PERIOD_CODE = re.compile(r"(?:q[1-4]|h[12]|fy\d{2,4})")  # quarters, halves, fiscal years: "Q3", "H2", "FY26"
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays weekend weekends weekday weekdays january february march april may june july august "
    "september october november december".split()
)
_COLOURS = frozenset(
    "red green blue yellow orange purple black white grey gray silver gold pink brown amber violet".split()
)
_OPPOSITES = (
    ("on", "off"),
    ("enabled", "disabled"),
    ("open", "closed"),
    ("true", "false"),
    ("yes", "no"),
    ("allowed", "forbidden"),
    ("public", "private"),
    ("mandatory", "optional"),
    ("required", "optional"),
    ("up", "down"),
)
_OPPOSITE = {a: b for a, b in _OPPOSITES} | {b: a for a, b in _OPPOSITES}
_UN_STEM = 4  # letters a word needs for "un" + it to be its opposite ("paid" / "unpaid"; not "der" / "under")


def _opposed(x: str, y: str) -> bool:
    """Two words of opposite sense: a listed pair ("on" / "off", "public" / "private") or a word and itself with
    "un-" ("paid" / "unpaid", "locked" / "unlocked")."""
    if _OPPOSITE.get(x) == y:
        return True
    short, long = sorted((x, y), key=len)
    return len(short) >= _UN_STEM and long == f"un{short}"


_COPULAS = frozenset({"is", "are", "was", "were", "i'm", "we're", "they're", "he's", "she's", "it's"})
_DETERMINERS = frozenset({"a", "an", "the", "my", "our", "his", "her", "their", "your", "its"})
_PLACING = frozenset({"in", "at", "on", "with", "by", "to"})
_REPLACING = frozenset({"replaced", "swapped", "traded", "substituted", "ditched", "dumped"})
_MOVING = frozenset({"moved", "switched", "migrated", "changed", "went", "shifted", "transitioned", "ported"})
_AWAY = ("from", "off")
_LONGEST_RUN = 6  # words of a run before any quantity of the same value is set aside (three are kept)
_PHRASE_ENDS = frozenset(
    {"for", "as", "in", "on", "at", "with", "by", "to", "from", "and", "or", "but", "because", "since", "last"}
)


@dataclass(frozen=True)
class _Word:
    stem: str
    token: Token
    lowercase_text: bool = False  # the text it comes from has no capital at all (chat style)


def _words(text: Text) -> list[_Word]:
    """The text's content words in order, fillers left out ("these days" too)."""
    out: list[_Word] = []
    lowercase = not any(t.text[:1].isupper() for t in text.tokens)
    for clause in text.clauses:
        tokens = clause.tokens
        for i, token in enumerate(tokens):
            if token.lower in _FILLERS or (token.lower == "days" and i and tokens[i - 1].lower == "these"):
                continue
            content = token.content
            if content is not None:
                out.append(_Word(content, token, lowercase))
    return out


def _run(words: list[_Word], frame: set[str]) -> tuple[int, int] | None:
    """Where the words outside ``frame`` lie, as (start, end) in ``words``, when they form one run."""
    at = [i for i, w in enumerate(words) if w.stem not in frame]
    if not at or at[-1] - at[0] + 1 != len(at):
        return None
    return at[0], at[-1] + 1


def _value_like(word: _Word) -> bool:
    token = word.token
    return (
        token.quantity is not None
        or token.lower in _NUMBER_WORDS
        or token.lower in _CALENDAR
        or token.lower in _COLOURS
        or _PERIOD_CODE.fullmatch(token.lower) is not None
        or ("-" in token.text and any(c.isdigit() for c in token.text))  # a code: "us-east-1", "gpt-4o"
        or _password_like(token.text)
        or (token.text[:1].isupper() and not token.opens and not any(c.isdigit() for c in token.text))
        or _DIGITS_THEN_NAME.fullmatch(token.text) is not None  # a name opening with digits: "1Password"
    )


_DIGITS_THEN_NAME = re.compile(r"\d+[A-Z][a-z]{4,}")  # not a unit glued to its number: "1Gbps"
_WORD_THEN_DIGITS = re.compile(r"[^\W\d_]{3,}\d+")


def _password_like(text: str) -> bool:
    """A word run into digits ("tulip42", "maple17"): a password or a code, not a word. Short identifiers
    ("S3", "EC2") are names of things, not values, and neither are ids of mixed letters and digits ("efdbd13e",
    "0387eea8"): they name which thing, so two of them are two things, not two values of one."""
    return _WORD_THEN_DIGITS.fullmatch(text) is not None


def _unmatched(run: Sequence[_Word], other: Sequence[_Word]) -> list[_Word]:
    """The words of ``run`` but a quantity of the same value as one of ``other``."""
    theirs = [q for w in other if (q := w.token.quantity) is not None]
    return [w for w in run if w.token.quantity is None or not any(same_value(w.token.quantity, q) for q in theirs)]


_SEASONS = {
    "spring": {3, 4, 5},
    "summer": {6, 7, 8},
    "autumn": {9, 10, 11},
    "fall": {9, 10, 11},
    "winter": {12, 1, 2},
    "q1": {1, 2, 3},
    "q2": {4, 5, 6},
    "q3": {7, 8, 9},
    "q4": {10, 11, 12},
    "h1": {1, 2, 3, 4, 5, 6},
    "h2": {7, 8, 9, 10, 11, 12},
}
_MONTH_NAMES = "january february march april may june july august september october november december".split()


def _within(wide: Sequence[_Word], narrow: Sequence[_Word]) -> bool:
    """``wide`` is one season, quarter, half or month and ``narrow`` a month or date in it ("in March" / "on
    March 14")."""
    if len(wide) != 1:
        return False
    word = wide[0].token.lower
    if word in _MONTH_NAMES:
        period = {_MONTH_NAMES.index(word) + 1}
        narrow = [w for w in narrow if w.token.lower != word]  # "March" / "March 14": the date holds the month
    elif word in _SEASONS:
        period = _SEASONS[word]
    else:
        return False
    months = set()
    for w in narrow:
        q = w.token.quantity
        if q is not None and q.dimension == "date" and len(q.key) > 1 and q.key[1] is not None:
            months.add(int(q.key[1]))
        elif w.token.lower in _MONTH_NAMES:
            months.add(_MONTH_NAMES.index(w.token.lower) + 1)
    return bool(months) and months <= period


def _quantity_pairs(was: Sequence[_Word], now: Sequence[_Word]) -> list[tuple[Quantity, Quantity]]:
    xs = [q for w in was if (q := w.token.quantity) is not None]
    return [(x, y) for x in xs for w in now if (y := w.token.quantity) is not None]


def _other_units(was: Sequence[_Word], now: Sequence[_Word]) -> bool:
    """Both runs are quantities of one kind in different units or periods."""
    quantities = [w.token.quantity for w in (*was, *now)]
    if any(q is None for q in quantities):
        return False
    kinds = {q.kind for q in quantities if q is not None}
    dimensions = {q.dimension for q in quantities if q is not None}
    return len(kinds) == 1 and len(dimensions) > 1


def _other_kinds(was: Sequence[_Word], now: Sequence[_Word]) -> bool:
    """Both runs hold measured quantities, and of no kind in common (a temperature / a year): not one slot."""
    kinds = [{q.kind for w in run if (q := w.token.quantity) is not None} for run in (was, now)]
    return all(kinds) and "number" not in kinds[0] | kinds[1] and not kinds[0] & kinds[1]


def _values(run: Sequence[_Word], other: Sequence[_Word]) -> int:
    """How many words of ``run`` read as values; a capitalised first word of a text counts when the other run
    is all values ("Mei is on call" / "… is Ravi")."""
    named = bool(other) and all(_value_like(w) for w in other)
    return sum(1 for w in run if _value_like(w) or (named and _unwritten_name(w)))


def _unwritten_name(word: _Word) -> bool:
    """A word that may be a name whose capital the writing does not show: the first word of a sentence, or a
    lower-case word of a text written all in lower case ("jon is based in vancouver")."""
    token = word.token
    return (token.opens and token.text[:1].isupper()) or (word.lowercase_text and token.quantity is None)


def _after_copula(text: Text, word: _Word) -> bool:
    """The word comes right after "is", "are" or a colon ("Release manager for 3.2: Lena"), determiners aside."""
    for clause in text.clauses:
        tokens = clause.tokens
        for i, token in enumerate(tokens):
            if token is not word.token:
                continue
            j = i - 1
            while j >= 0 and tokens[j].lower in _DETERMINERS:
                j -= 1
            if j >= 1 and tokens[j].lower in _PLACING:
                j -= 1  # "is in Lisbon", "is with Aetna"
            return j >= 0 and tokens[j].lower in _COPULAS
    return False


def _lowers(text: Text) -> set[str]:
    return {t.lower for t in text.tokens}


# a period in the past that one text puts its claim in: "in the 1980s", "back in 2015", "as a student"
def other_period(old: Text, new: Text) -> bool:
    """One text (not both) puts its claim in a past period ("Uncle Piet lived in Rotterdam in the 1990s"): where
    or what it was then, next to what the other says of now."""
    return in_past_period(old.normalised) != in_past_period(new.normalised)


def changed_value(old: Text, new: Text, work: Work) -> Verdict | None:
    """One slot of a shared frame holds another value (see the module docstring); not when one text puts its
    claim in a past period ("Uncle Piet lived in Rotterdam in the 1990s")."""
    work.charge(len(old.tokens) + len(new.tokens))
    if old.negated or new.negated or other_period(old, new):
        return None
    if len(old.quantities) > MAX_QUANTITIES or len(new.quantities) > MAX_QUANTITIES:
        work.skip(f"a text holds more than {MAX_QUANTITIES} quantities: the rules comparing values were not tried")
        return None
    new_only = _lowers(new) - _lowers(old)
    if _ORDINALS & _lowers(old):
        new_only -= _ORDINALS  # "the third floor" / "the second floor": a rank, not a second one
    if new_only & (_ADDING | _HEDGING):
        return None
    old_words, new_words = _words(old), _words(new)
    frame = {w.stem for w in old_words} & {w.stem for w in new_words}
    old_run, new_run = _run(old_words, frame), _run(new_words, frame)
    if not frame or old_run is None or new_run is None:
        return None
    if old_run[1] - old_run[0] > _LONGEST_RUN or new_run[1] - new_run[0] > _LONGEST_RUN:
        return None
    work.charge((old_run[1] - old_run[0] + new_run[1] - new_run[0]) * (1 + len(old.quantities) + len(new.quantities)))
    was, now = _unmatched(old_words[slice(*old_run)], new_words), _unmatched(new_words[slice(*new_run)], old_words)
    if not was or not now:
        return None  # the same value written two ways ("March 3" / "2026-03-03")
    if _other_units(was, now):
        return None  # "$20 per month" / "$240 per year": the numbers rule compares units
    if _other_kinds(was, now):
        return None  # "is set to 5 °C" / "was bought in 2022": two attributes, a value each
    if _within(was, now) or _within(now, was):
        return None  # "in the spring" / "on April 12": a date inside the period, made precise
    if any(within_bound(x, old, y, new) or within_bound(y, new, x, old) for x, y in _quantity_pairs(was, now)):
        return None  # "less than £40" / "£35": a value within the bound
    if narrows(_text(was), _text(now)):
        return None  # "in Europe" / "in Frankfurt": perhaps a place inside the other, made precise
    if set(_text(was).lower().split()) <= _NEAR or set(_text(now).lower().split()) <= _NEAR:
        return None  # "near Stroud" / "at Oakridge Lynch, just outside Stroud": the place both name, made precise
    cue = bool(new_only & _CHANGE_CUES) and not _lowers(old) & _CHANGE_CUES and "for now" not in new.normalised
    old_frame = [w.stem for w in old_words if w.stem in frame]
    new_frame = [w.stem for w in new_words if w.stem in frame]
    same_place = old_frame == new_frame and old_run[0] == new_run[0]
    after_copula = _after_copula(old, was[0]) or _after_copula(new, now[0])
    # "Invoices are sent from QuickBooks" / "We send invoices from Xero now": the frame reordered around one
    # name each, and the new text says it changed
    reordered = (
        cue
        and len(frame) >= 2
        and old_run[0] > 0
        and new_run[0] > 0
        and len(was) == len(now) == 1
        and _value_like(was[0])
        and _value_like(now[0])
    )
    if not (same_place and (old_run[0] > 0 or cue)) and not (after_copula and len(frame) >= 2) and not reordered:
        return None  # the runs are not one slot of one frame, or they are the subjects
    both_after_copula = _after_copula(old, was[0]) and _after_copula(new, now[0])
    named_frame = all(_value_like(w) for w in old_words if w.stem in frame)
    if len(frame) < 2 and not (both_after_copula or (cue and not named_frame)):
        return None  # a frame of one name is a speaker ("Deborah: You got this!"), not an attribute
    if len(was) > 3 or len(now) > 3:
        return None
    was_values, now_values = _values(was, now), _values(now, was)
    others = (len(was) - was_values, len(now) - now_values)
    if was_values and now_values and sum(others) <= 1:
        pass  # names, numbers, dates: "in Lisbon" / "happening in Barcelona"
    elif cue and was_values and now_values:
        pass  # the new text says it changed: "I switched to VS Code as my editor"
    elif not (both_after_copula and len(frame) >= 2):
        return None  # "her blood type is A positive" / "… O negative": one attribute, two values
    before, after = _text(was), _text(now)
    slot = " ".join(w.token.text for w in old_words if w.stem in frame)
    return Verdict(
        "contradiction",
        "changed_value",
        0.85,
        f'{preview(slot, 60)}: "{before}" in the existing memory, "{after}" in the new one.',
    )


# in one text only, these put a claim at another time than the other's
_TENSES = frozenset(
    {"used", "will", "would", "was", "were", "next", "last", "ago", "previously", "formerly", "soon", "until", "going"}
)
SWAP_SHARE = 0.6  # share of the shorter text's other words the two texts must share for a swapped name
SWAP_SHARE_CUED = 0.5  # the same when the new text says it changed


def swapped_name(old: Text, new: Text, work: Work) -> Verdict | None:
    """Each text names one thing (a run of capitalised words inside a sentence) the other does not, after its
    first word, and they otherwise say the same job in words reordered or reworded: "We host the marketing site
    on Netlify" / "The marketing site is hosted on Vercel", "Error tracking is done with Sentry" / "We use
    Rollbar for error tracking". One tool or provider for one job replaced by another. Not when the new text
    adds or only considers ("also", "might"), when either text negates, or when the name is the first word
    (the subject: "Alice lives in Lisbon" / "Bob lives in Lisbon"), nor when one text puts it in a past period
    ("as a student", "in the 1980s")."""
    work.charge(len(old.tokens) + len(new.tokens))
    if old.negated or new.negated or (_lowers(new) - _lowers(old)) & (_ADDING | _HEDGING) or other_period(old, new):
        return None
    if any(w in _TENSES or w.endswith(("'ll", "'d")) for w in _lowers(new) ^ _lowers(old)):
        return None  # "Alice lives in Paris" / "Alice used to live in Berlin": another time
    was, now = _names(old), _names(new)
    gone = [n for n in was if not set(n[0].split()) <= new.content]
    came = [n for n in now if not set(n[0].split()) <= old.content]
    if len(gone) != 1 or len(came) != 1 or gone[0][1] or came[0][1] or narrows(gone[0][2], came[0][2]):
        return None
    if " and " in gone[0][2].lower() or " and " in came[0][2].lower():
        return None  # "a note about Carol and Seoul" / "… about Hiro and Lima": a list of names, not one job's value
    if _codes(old) != _codes(new):
        return None  # "Probe 0dd2: Esther visits Lisbon" / "Probe a157: Esther visits Seoul": other things
    shared_words = old.content & new.content
    if not (gone[0][3] & shared_words and came[0][3] & shared_words):
        return None  # a name in a clause of its own ("Thanks, Deb."): not the value of the shared job
    if _owned_apart(old, new) or _owned_apart(new, old):
        return None  # "Alice lives in Lisbon" / "Alice's sister lives in Madrid": someone else's
    old_rest = {w.stem for w in _words(old)} - set(gone[0][0].split())
    new_rest = {w.stem for w in _words(new)} - set(came[0][0].split())
    shared = old_rest & new_rest
    # the new text saying it changed ("now", "switched") will do with less of the job in common
    cue = bool((_lowers(new) - _lowers(old)) & _CHANGE_CUES)
    least, share = (1, SWAP_SHARE_CUED) if cue else (2, SWAP_SHARE)
    if len(shared) < least or len(shared) / min(len(old_rest), len(new_rest)) < share:
        return None
    slot = " ".join(w.token.text for w in _words(old) if w.stem in shared)
    return Verdict(
        "contradiction",
        "swapped_name",
        0.8,
        f'{preview(slot, 60)}: "{gone[0][2]}" in the existing memory, "{came[0][2]}" in the new one.',
    )


def _codes(text: Text) -> frozenset[str]:
    """The text's words that hold a digit (numbers, ids, codes): two texts that differ in one of them speak of
    different things or values, which a swapped name alone does not explain."""
    return frozenset(t.lower for t in text.tokens if any(c.isdigit() for c in t.text))


def _owned_apart(text: Text, other: Text) -> bool:
    """A word right after a possessive ("Alice's sister", "Leo's piano lessons") that ``other`` lacks: the
    text speaks of another thing of the same owner."""
    tokens = text.tokens
    return any(
        t.lower.endswith(("'s", "s'")) and (c := after.content) is not None and c not in other.content
        for t, after in pairwise(tokens)
    )


def _names(text: Text) -> list[tuple[str, bool, str, frozenset[str]]]:
    """The text's runs of capitalised words that do not open a sentence, as (stems, first content word of the
    text, as written, content of the clause holding it). "Read the Docs" is one run; "GitHub Actions" another."""
    runs: list[tuple[str, bool, str, frozenset[str]]] = []
    first = next((t for t in text.tokens if t.content is not None), None)
    for clause in text.clauses:
        current: list[Token] = []
        for token in [*clause.tokens, None]:
            named = (
                token is not None
                and token.quantity is None
                and token.text[:1].isupper()
                and not token.opens
                and not any(c.isdigit() for c in token.text)  # identifiers ("S3", "EC2") are not values
            )
            linking = token is not None and current and token.lower in ("the", "of", "and")
            if named or linking:
                current.append(token)  # type: ignore[arg-type]
                continue
            while current and not current[-1].text[:1].isupper():
                current.pop()
            if current:
                stems = " ".join(c for t in current if (c := t.content) is not None)
                runs.append((stems, current[0] is first, " ".join(t.text for t in current), clause.content))
            current = []
    return runs


def replaced(old: Text, new: Text, work: Work) -> Verdict | None:
    """The new text says a value of the existing one was replaced by another."""
    work.charge(len(old.tokens) + len(new.tokens))
    if old.negated:
        return None
    known = {w.stem for w in _words(old)}
    for clause in new.clauses:
        tokens = clause.tokens
        found = _replacement(tokens)
        if found is None:
            continue
        gone, came = found
        gone_stems = {c for t in gone if (c := t.content) is not None}
        came_stems = {c for t in came if (c := t.content) is not None} - known
        if gone_stems and came_stems and gone_stems <= known:
            return Verdict(
                "contradiction",
                "replaced",
                0.85,
                f'The new memory says "{_tokens(gone)}" gave way to "{_tokens(came)}".',
            )
    return _moved_to(old, new, known)


_MOVED = frozenset({"moved", "switched", "migrated", "transitioned", "ported"})


def _moved_to(old: Text, new: Text, known: set[str]) -> Verdict | None:
    """ "I use Notion for my notes" / "I've moved my notes over to Obsidian": the new text moved something both
    texts name to a new name, and the one name of the existing text it no longer names is what went."""
    gone = [t for t in old.tokens if t.lower.split("'")[0] in old.names - new.names and not t.opens]
    if len({t.lower for t in gone}) != 1:
        return None
    for clause in new.clauses:
        lowers = [t.lower for t in clause.tokens]
        at = next((i for i, w in enumerate(lowers) if w in _MOVED), None)
        to = (
            next((j for j in range(at + 1, len(lowers)) if lowers[j] in ("to", "onto")), None)
            if at is not None
            else None
        )
        if at is None or to is None or "from" in lowers[at:to]:
            continue
        came = _phrase(clause.tokens[to + 1 :])
        came_stems = {c for t in came if (c := t.content) is not None} - known
        moved = {c for t in clause.tokens[at + 1 : to] if t.quantity is None and (c := t.content) is not None}
        if came_stems and moved & known and any(t.text[:1].isupper() for t in came):
            return Verdict(
                "contradiction",
                "replaced",
                0.8,
                f'The new memory moves "{_tokens([t for t in clause.tokens[at + 1 : to] if t.content])}" to '
                f'"{_tokens(came)}"; the existing one names "{gone[0].text}".',
            )
    return None


def _replacement(tokens: Sequence[Token]) -> tuple[list[Token], list[Token]] | None:
    """(what went, what came) when the clause says one replaced the other. One pass each way over the clause."""
    lowers = [t.lower for t in tokens]
    link, away, to = _next(lowers, {"with", "by", "for"}), _next(lowers, set(_AWAY)), _next(lowers, {"to", "onto"})
    for i, word in enumerate(lowers):
        if word in _REPLACING and i + 1 < len(lowers) and lowers[i + 1] == "by" and i >= 2:
            return _phrase(tokens[: i - 1]), _phrase(tokens[i + 2 :])  # "Mailchimp was replaced by Brevo"
        joint = link[i]
        if word in _REPLACING and joint is not None:
            return _phrase(tokens[i + 1 : joint]), _phrase(tokens[joint + 1 :])
        start = away[i]
        end = to[start] if start is not None else None
        if word in _MOVING and start is not None and end is not None:
            return _phrase(tokens[start + 1 : end]), _phrase(tokens[end + 1 :])
        if word == "instead" and i + 1 < len(lowers) and lowers[i + 1] == "of":
            came = next((t for t in reversed(tokens[:i]) if t.content is not None), None)
            return _phrase(tokens[i + 2 :]), [came] if came is not None else []
    return None


def _next(lowers: Sequence[str], wanted: set[str]) -> list[int | None]:
    """For each position, the next later position holding one of ``wanted``."""
    out: list[int | None] = [None] * len(lowers)
    last: int | None = None
    for i in reversed(range(len(lowers))):
        out[i] = last
        last = i if lowers[i] in wanted else last
    return out


def _phrase(tokens: Sequence[Token]) -> list[Token]:
    """The words of a value, up to the first word that ends it ("GitHub Actions for CI" → GitHub Actions)."""
    out: list[Token] = []
    for token in tokens:
        if token.lower in _PHRASE_ENDS:
            break
        if token.lower not in _DETERMINERS:
            out.append(token)
    return out


def opposite_value(old: Text, new: Text, work: Work) -> Verdict | None:
    """The same words but one swapped for its opposite ("on" / "off", "paid" / "unpaid")."""
    work.charge(len(old.tokens) + len(new.tokens))
    a = [t.lower for t in old.tokens if (t.lower not in _FILLERS and is_content(t.lower)) or t.lower in _OPPOSITE]
    b = [t.lower for t in new.tokens if (t.lower not in _FILLERS and is_content(t.lower)) or t.lower in _OPPOSITE]
    if len(a) == len(b) and len(a) >= 3:
        differ = [(x, y) for x, y in zip(a, b, strict=True) if stem(x) != stem(y)]
        if len(differ) == 1 and _opposed(*differ[0]):
            x, y = differ[0]
            return Verdict(
                "contradiction", "opposite_value", 0.85, f'"{x}" in the existing memory, "{y}" in the new one.'
            )
    return _opposite_reworded(old, new, a, b)


def _opposite_reworded(old: Text, new: Text, a: list[str], b: list[str]) -> Verdict | None:
    """The same words in another order or form, one of them dropped or added, but one swapped for its opposite:
    "Feature flag beta_search is enabled in production" / "beta_search flag: disabled in prod". The word one
    text adds must be a plain word, not a value ("The shop is open" / "The shop is closed on Sundays" narrows
    when, it does not deny)."""
    if old.negated or new.negated:
        return None
    swapped = [(x, y) for x in set(a) - set(b) for y in set(b) - set(a) if _opposed(x, y)]
    if len(swapped) != 1 or set(swapped[0]) & (set(a) & set(b)):
        return None
    x, y = swapped[0]
    rest_a, rest_b = {stem(w) for w in a if w != x}, {stem(w) for w in b if w != y}
    short, long = sorted((rest_a, rest_b), key=len)
    extra = long - short
    if len(short) < 2 or not short <= long or len(extra) > 1:
        return None
    values = {c for t in (*old.tokens, *new.tokens) if (c := t.content) is not None and _value_word(t)}
    if extra & values:
        return None
    return Verdict("contradiction", "opposite_value", 0.8, f'"{x}" in the existing memory, "{y}" in the new one.')


def _value_word(token: Token) -> bool:
    """A word that reads as a value or a name rather than a plain word."""
    return (
        token.quantity is not None
        or token.lower in _NUMBER_WORDS
        or token.lower in _CALENDAR
        or (token.text[:1].isupper() and not token.opens)
    )


def _text(words: Sequence[_Word]) -> str:
    return " ".join(w.token.text for w in words)


def _tokens(tokens: Sequence[Token]) -> str:
    return " ".join(t.text for t in tokens)
