"""``moved_place`` (engram/domain/conflict_rules/locations.py): two texts that put one thing in two places, said with
other verbs of where ("meets in", "is held at", "is kept in", "lives in", "runs out of"), and the look-alikes it
must leave alone. Written for the rule (2026-12-03, night, from the place misses of bench/data/conflicts batch 10);
the pairs are not those of bench/data/conflicts."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import judge
from engram.domain.conflict_rules.locations import moved_place
from engram.domain.conflict_rules.texts import analyse

SIMILAR = 0.9

MOVED = [
    (
        "The sailing club's kayaks are stored behind the clubhouse.",
        "the sailing club's kayaks live in the boat shed now",
    ),
    (
        "The beekeeping association meets in the village hall.",
        "Beekeeping association meetings are held in the back room of the Fox.",
    ),
    ("The radio station's studio runs out of a shipping container.", "The radio station's studio is above the bakery."),
    (
        "The pharmacy's controlled drugs cabinet sits in the back room.",
        "The controlled drugs cabinet at the pharmacy is now in the manager's office.",
    ),
    ("Our print shop's guillotine is in the finishing room.", "the print shop guillotine sits beside the loading door"),
]

LEFT_ALONE = [
    # a place said more precisely: inside the wider one, or with a word of it
    ("Our servers are in Europe.", "Our servers are in Frankfurt."),
    ("The choir rehearses in the church hall.", "The choir rehearses in the church hall's side room."),
    # another thing of the same subject or owner
    ("Leo's swim lessons are at the leisure centre.", "Leo's piano lessons are at the music school."),
    ("Hana works at the library.", "Hana's husband works at the hospital."),
    ("The stout is aged in rum barrels.", "The stout is brewed in Leeds."),
    # an addition, a visit, a one-off
    ("The book club meets in the library.", "The book club also meets in the pub."),
    ("Alice lives in Lisbon.", "Alice is visiting the Algarve this week."),
    # no place: a state, a time, a month
    ("The printer is in the office.", "The printer is in use."),
    ("The spring fair runs in April.", "The spring fair runs at the showground."),
    # a past place next to the present one
    ("In the 1990s the club met in the town hall.", "The club meets in the old school now."),
]


@pytest.mark.parametrize(("existing", "new"), MOVED)
def test_one_thing_in_two_places_is_a_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is not None and (verdict.label, verdict.rule) == ("contradiction", "moved_place"), verdict
    assert verdict.explanation.startswith('where: "')


@pytest.mark.parametrize(("existing", "new"), LEFT_ALONE)
def test_the_look_alike_is_no_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is None or verdict.label != "contradiction", verdict


def test_a_second_place_the_other_text_does_not_name_is_left_alone() -> None:
    """Perhaps where the first place is: the rule declines (the slot rules, which read "a hotel in Bath" as one
    value, are another matter)."""
    assert (
        moved_place(analyse("The team offsite is at a hotel in Bath."), analyse("The team offsite is at The Circus."))
        is None
    )
    assert moved_place(analyse("The team offsite is in Bath."), analyse("The team offsite is in Wells.")) is not None


def test_below_the_floor_the_rule_is_not_tried() -> None:
    existing, new = MOVED[0]
    verdict = judge(existing, new, 0.5)
    assert verdict is None or verdict.rule != "moved_place"
