"""Phrasings the conflict rules read since batch 5 of bench/data/conflicts became tuning data (2026-12-03): a
name after an apposition of kin or role ("is her cousin Priya"), a person who took a thing over, an agent noun
for a passive's doer ("owner" of "is owned by"), per-minute abbreviations ("bpm"), an initialism over a small
word ("work from home"), "came off" and "lapsed" as a state ended, and when that happened left out of the
subject's overlap; with the look-alikes each must leave alone. The pairs are not those of bench/data/conflicts."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import judge

SIMILAR = 0.9

CONTRADICTIONS = [
    # (existing, new, rule)
    ("Maya's bridesmaid is her cousin Priya.", "Maya's bridesmaid will be her old roommate Kezia.", "filled_slot"),
    ("The Friday standup is run by Omar.", "Lotte has taken over the Friday standup.", "filled_slot"),
    ("The book club is hosted by Wen.", "Tariq took over running the book club.", "filled_slot"),
    ("The launch checklist is owned by Farah.", "launch checklist owner: Dmitri", "filled_slot"),
    ("The treadmill motor spins at 3000 revolutions per minute.", "treadmill motor: 3500 rpm", "numbers_differ"),
    ("The WFH allowance is 2 days a week.", "work from home allowance: 3 days a week", "numbers_differ"),
    ("Grandma takes warfarin every evening.", "Grandma came off warfarin in March.", "negation"),
    ("My gym membership is active.", "My gym membership lapsed in June.", "negation"),
    ("Theo wears a retainer.", "Theo's retainer came off last month.", "negation"),
]

LOOK_ALIKES = [
    # another thing taken over: not the standup's person
    ("The Friday standup is run by Omar.", "Lotte has taken over the bakery on Mill Lane."),
    # a name after an apposition, but of another slot of the same owner
    ("Maya's bridesmaid is her cousin Priya.", "Maya's florist is her neighbour Kezia."),
    # an agent noun of another verb: who designed it is not who owns it
    ("The launch checklist is owned by Farah.", "launch checklist designer: Dmitri"),
    # a state still held, with a time word: nothing ended
    ("Theo wears a retainer.", "Theo has worn a retainer since last month."),
    # two chat turns sharing little but a time word: "haven't" ends no state
    (
        "Haven't played it yet, but I hear it's awesome. Have you ever done any programming?",
        "I've been playing for a month now, it's been tough but fun.",
    ),
    # the same rate said both ways
    ("The treadmill motor spins at 3000 revolutions per minute.", "treadmill motor: 3000 rpm"),
]


@pytest.mark.parametrize(("existing", "new", "rule"), CONTRADICTIONS)
def test_the_phrasing_is_read_as_a_contradiction(existing: str, new: str, rule: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is not None and verdict.label == "contradiction", verdict
    assert verdict.rule.split(":")[0] == rule


@pytest.mark.parametrize(("existing", "new"), LOOK_ALIKES)
def test_the_look_alike_is_no_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is None or verdict.label != "contradiction", verdict
