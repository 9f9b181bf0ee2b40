"""Phrasings the conflict rules read since batch 11 of bench/data/conflicts became tuning data (2026-12-03, night):
a job someone "has taken over", two numbered things ("Bay 3" / "Bay 4"), a price said of what it is for, a double
negative ("won't … without"), a place said only as near another, a starting price ("from £20"), and power in watts
or horsepower; with the look-alikes each must leave alone. The pairs are not those of bench/data/conflicts."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import judge, judge_with_learned

SIMILAR = 0.9

CONTRADICTIONS = [
    # (existing, new, rule)
    ("Ines runs the bakery's dispatch desk.", "Callum has taken over the bakery's dispatch desk.", "taken_over"),
    ("The studio's amp is rated at 50 watts.", "the studio amp puts out 100 W", "numbers_differ"),
    (
        "The rescue Land Rover has a 90 hp engine.",
        "The rescue Land Rover's engine makes 120 horsepower.",
        "numbers_differ",
    ),
    # controls of the look-alikes below: the same shapes, one claim
    ("The archive's maps are kept in Room 12.", "The archive's maps are kept in Room 14.", "numbers_differ"),
    ("The tailor charges £25 for a hem.", "The tailor charges £30 for a hem now.", "numbers_differ"),
    (
        "The fire station releases the engine with one driver.",
        "The fire station won't release the engine with one driver.",
        "negation",
    ),
    (
        "The language school's fee went up from £20 an hour.",
        "The language school now costs £32 an hour.",
        "numbers_differ",
    ),
]

LOOK_ALIKES = [
    # a cover, another job, the same doer
    ("Ines runs the bakery's dispatch desk.", "Callum has taken over the dispatch desk while Ines is on leave."),
    ("Ines runs the bakery's dispatch desk.", "Callum has taken over the bakery's delivery vans."),
    ("Ines runs the bakery's dispatch desk.", "Ines has taken over the bakery's dispatch desk."),
    # two numbered things
    ("Bay 3 at the bus depot holds the electric buses.", "Bay 4 at the bus depot holds the minibuses."),
    # a price of another service
    ("The tailor charges £25 for a hem.", "The tailor charges £60 for a zip replacement."),
    # a requirement said twice: "won't … without" affirms it
    (
        "The fire station won't release the engine without a second driver.",
        "A second driver is required before the engine leaves the fire station.",
    ),
    # near a place, then where exactly
    ("The rowing club is near Henley.", "The rowing club is at Remenham, just outside Henley."),
    # a starting price and one price above it
    ("The language school charges from £20 an hour.", "A one-to-one lesson at the language school costs £32 an hour."),
    # one power in two units
    ("The studio's amp is rated at 0.5 kW.", "the studio amp puts out 500 watts"),
]


@pytest.mark.parametrize(("existing", "new", "rule"), CONTRADICTIONS)
def test_the_phrasing_is_read_as_a_contradiction(existing: str, new: str, rule: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is not None and verdict.label == "contradiction", verdict
    assert verdict.rule.split(":")[0] == rule


@pytest.mark.parametrize(("existing", "new"), LOOK_ALIKES)
def test_the_look_alike_is_no_contradiction(existing: str, new: str) -> None:
    for verdict in (judge(existing, new, SIMILAR), judge_with_learned(existing, new, SIMILAR)):
        assert verdict is None or verdict.label != "contradiction", verdict


def test_a_handover_names_who_had_the_job() -> None:
    verdict = judge(
        "Leah manages the climbing wall's front desk.", "Sam has taken over the climbing wall's front desk.", SIMILAR
    )
    assert verdict is not None and verdict.rule == "taken_over"
    assert verdict.explanation == 'who: "Leah" in the existing memory; "Sam" has taken it over in the new one.'
