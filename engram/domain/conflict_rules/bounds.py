"""Bounds: a value written with "under", "at least", "up to", … is a limit, and a value of the other text that
lies within it agrees with it ("The budget is under $10k" / "The budget is $8,500")."""

from __future__ import annotations

from engram.domain.conflict_rules.quantities import Quantity
from engram.domain.conflict_rules.texts import Text

# words before a value that make it a bound: below it (upper) or above it (lower)
_UPPER = (("under",), ("below",), ("less", "than"), ("fewer", "than"), ("at", "most"), ("up", "to"), ("max",))
_LOWER = (("over",), ("above",), ("more", "than"), ("at", "least"), ("upwards", "of"), ("min",), ("minimum",))


def within_bound(bound: Quantity, text: Text, value: Quantity, other: Text) -> bool:
    """``bound`` is written as a bound ("under $10k", "at least 3 nodes") and ``value`` (of ``other``), of the
    same dimension, lies within it: a value that satisfies the bound, not another value. Not when ``value`` is
    a limit itself ("The free plan allows 3 projects" / "Free plan: up to 5 projects": two limits), nor when a
    verb of change comes before "up to" ("went up to £55": the value now). "From" makes a lower bound of the text's
    only value of its kind ("charges from £8 per job"), not after a verb of change ("went up from £8"); "before"
    and "after" bound a time or a date ("arrive before 7am" / "land at about 6:15")."""
    if bound.dimension != value.dimension or len(bound.key) != 1 or len(value.key) != 1:
        return False
    if _LIMITS & set(_before(value, other)):
        return False
    limit, x = bound.key[0], value.key[0]
    if limit is None or x is None:
        return False
    before = _before(bound, text)
    if before[-2:] == ["up", "to"] and len(before) > 2 and before[-3] in _CHANGED:
        return False  # "went up to £55": the value it rose to, not a limit
    if before[-1:] in (["before"], ["after"]) and bound.kind in ("clock", "date"):
        return x <= limit if before[-1] == "before" else x >= limit  # "arrive before 7am" / "land at 6:15"
    if any(before[-len(words) :] == list(words) for words in _UPPER):
        return x <= limit
    if any(before[-len(words) :] == list(words) for words in _LOWER):
        return x >= limit
    if before[-1:] == ["from"] and not (set(before[-3:-1]) & _CHANGED_FROM) and _alone(bound, text):
        return x >= limit  # "charges from £8 per job": a starting price, not a range's end nor the value left
    return False


# words before "from" that make its value the one left behind: "went up from £8", "changed from £8"
_CHANGED_FROM = frozenset(
    {"up", "down", "went", "rose", "risen", "fell", "fallen", "changed", "moved", "increased", "decreased", "raised",
     "lowered", "cut", "dropped", "switched", "upgraded", "downgraded", "reduced", "bumped"}
)  # fmt: skip


def _alone(q: Quantity, text: Text) -> bool:
    """``q`` is its text's only value of its dimension ("from £8 to £12" is a range, whose end is another)."""
    return sum(1 for other in text.quantities if other.dimension == q.dimension) == 1


# verbs of change before "up to": "went up to", "has gone up to", "put up to" say the new value, not a bound
_CHANGED = frozenset({"went", "gone", "go", "goes", "going", "put", "puts", "moved", "moves", "come", "came", "comes"})
_LIMITS = frozenset(
    {"allow", "allows", "allowed", "limit", "limits", "limited", "cap", "caps", "capped", "max", "maximum", "quota"}
)


def _before(q: Quantity, text: Text) -> list[str]:
    """The lower-case words before ``q`` in its clause."""
    for clause in text.clauses:
        for i, token in enumerate(clause.tokens):
            if token.quantity is q:
                return [t.lower for t in clause.tokens[:i]]
    return []
