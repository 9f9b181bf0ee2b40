"""Words: which ones carry meaning, which negate, and a crude stem to compare them by."""

from __future__ import annotations

import re

_STOPWORDS = frozenset(
    """
a an the this that these those i me my mine we us our ours you your yours he him his she her hers it its they them
their theirs is are was were be been being am do does did doing have has had having will would shall should can
could may might must of in on at to for from by with about as into onto over under than then so and or but if also
just very really quite now currently still already always usually often sometimes there here what which who whom
whose when where why how all any each every some such only own same other more most much many few per via up out off
again once both either since until after before during while set raised lowered increased decreased reduced changed
bumped updated moved configured around approximately roughly exactly nearly almost longer anymore i'm we're they're yet
you're he's she's it's that's there's i've we've they've let's
""".split()
)
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "cannot", "without"}
)
# verbs that end what the rest of their clause states: "Lucy quit the swim team" denies "Lucy is on the swim
# team" as "no longer" does ("gave up" and "came off" are read as one of them, texts.py)
_CESSATIONS = frozenset(
    {
        "quit",
        "quits",
        "stopped",
        "discontinued",
        "cancelled",
        "canceled",
        "dropped",
        "ceased",
        "removed",
        "retired",
        "scrapped",
        "abandoned",
        "lapse",  # "I let my membership lapse"
        "lapsed",
    }
)
# words that make a negation "no longer": its claim may be one word ("I'm not vegetarian anymore")
_NO_LONGER = frozenset({"longer", "anymore"})


def is_negation(word: str) -> bool:
    return word in _NEGATIONS or word in _CESSATIONS or word.endswith("n't")


def is_cessation(word: str) -> bool:
    return word in _CESSATIONS


_BACK_THEN = r"back\s+(?:in|then|when)|as\s+an?\s+(?:child|kid|boy|girl|teenager|teen|student|baby)"
# a past period: "in the 1990s", "the '80s", "back in 2019", "as a kid"; "30s" too, where two texts are compared
_PAST_PERIOD = re.compile(rf"\b(?:(?:1[89]|20)\d0s|(?:the\s+)?'?[0-9]0s|{_BACK_THEN})\b")
# a claim that held once: "I used to ski with the adult group", "Formerly the lab was in Derby", "in the '90s" (not a
# bare "30s", which may be seconds)
_ONCE = re.compile(
    rf"\b(?:(?:1[89]|20)\d0s|the\s+'?[0-9]0s|{_BACK_THEN}|used to|formerly|previously|years ago|when i was)\b"
)


def in_past_period(lowered: str) -> bool:
    """Whether the lower-cased text names a past period ("in the 1990s", "back in 2019", "as a kid")."""
    return _PAST_PERIOD.search(lowered) is not None


def speaks_of_the_past(text: str) -> bool:
    """Whether ``text`` says its claim held once: a past period, "used to", "formerly", "years ago"."""
    return _ONCE.search(text.lower()) is not None


def past_against_present(existing: str, new: str) -> bool:
    """The existing memory says what held once, and not what holds now ("I used to ski with the adult group" /
    "These days I ski with friends"); the new one does not speak of the past: it tells the present, which
    contradicts no past, whatever the value."""
    return speaks_of_the_past(existing) and not speaks_of_the_past(new) and _NOW.search(existing) is None


_NOW = re.compile(r"\b(?:now|these days|nowadays|currently|today)\b", re.IGNORECASE)


def says_no_longer(words: list[str]) -> bool:
    """ "no longer", "not … anymore", "not … any longer", "quit", "stopped": the negation ends a state."""
    return any(w in _NO_LONGER or w in _CESSATIONS for w in words)


# past forms that the suffix rules cannot undo: "sent" and "send", "led" and "leads" are one word
_IRREGULAR = {
    "sent": "send",
    "led": "lead",
    "ran": "run",
    "paid": "pay",
    "held": "hold",
    "built": "build",
    "kept": "keep",
    "made": "make",
    "went": "go",
    "gone": "go",
    "taught": "teach",
    "bought": "buy",
    "sold": "sell",
    "told": "tell",
    "spent": "spend",
    "met": "meet",
    "wrote": "write",
    "written": "write",
    "chose": "choose",
    "chosen": "choose",
    "drove": "drive",
    "driven": "drive",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
}


def stem(word: str) -> str:
    """A crude stem, enough to see "uses", "use" and "used" (or "services" and "service", "sent" and "send",
    "subscribed" and "subscription") as one word."""
    word = word.split("'")[0]
    word = _IRREGULAR.get(word, word)
    if word.endswith(("scription", "scriptions")):
        word = word[: word.index("scription")] + "scribe"  # subscription, prescription → subscribe, prescribe
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 2 else word


def is_content(word: str) -> bool:
    return word not in _STOPWORDS and not is_negation(word) and word.split("'")[0] not in _STOPWORDS


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared share of the smaller set; 1.0 when either is empty (nothing to disagree on)."""
    return len(a & b) / min(len(a), len(b)) if a and b else 1.0
