"""Values written the ways people write them: hedged ("around 300"), in another unit ("5 miles" / "8 km"), said
aloud ("two pound twenty", "45 per cent", "down to nine"), a month as digits ("04/2027"); and two values of two
attributes ("set to 220 °C" / "installed in 2019") that are not one slot."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import judge
from engram.domain.conflict_rules.quantities import find_quantities, same_value


def _read(text: str) -> list[tuple[str, tuple[float | None, ...], bool]]:
    return [
        (q.dimension, tuple(round(k, 3) if k else k for k in q.key), q.approximate) for *_, q in find_quantities(text)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("archive humidity is held at 55 per cent", [("percent", (55.0,), False)]),
        ("coffee at the kiosk is two pound twenty", [("money:gbp", (2.2,), False)]),
        ("a refill costs 3 dollars and 40 cents", [("money:usd", (3.4,), False)]),
        ("a coffee is two pound twenty-five", [("money:gbp", (2.25,), False)]),
        ("tickets are 5 pounds 10 kids go free", [("money:gbp", (5.0,), False), ("count:kid", (10.0,), False)]),
        ("The boiler's warranty ends 04/2027.", [("date", (2027.0, 4.0, None), False)]),
        ("The orchard covers about 1.2 hectares.", [("area", (12000.0,), True)]),
        ("The orchard is 3 acres or so.", [("area", (12140.568,), True)]),
        ("her handicap dropped to nine over the summer", [("number", (9.0,), False)]),
        ("The rowing club has around 300 members.", [("count:member", (300.0,), True)]),
    ],
)
def test_values_said_as_people_say_them_are_read(
    text: str, expected: list[tuple[str, tuple[float, ...], bool]]
) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(
    "text",
    ["we have two of them", "the rota is three weeks long", "pick-up is at 3/4 of the way", "the score was 3/2021x"],
)
def test_words_and_fractions_that_are_not_those_values_are_left_alone(text: str) -> None:
    assert not any(q.dimension in ("number", "date") and q.key[0] in (2.0, 2021.0) for *_, q in find_quantities(text))
    assert not any(q.dimension == "date" for *_, q in find_quantities(text))


def test_a_hedge_reaches_no_further_than_its_rounding_and_a_tenth() -> None:
    [(*_, around_300)] = find_quantities("around 300 members")
    [(*_, about_82)] = find_quantities("about 82 kg")
    [(*_, exact)] = find_quantities("312 members")
    assert same_value(around_300, exact)  # a quarter of its step of a hundred either side: 275 to 325
    assert not same_value(around_300, find_quantities("340 members")[0][2])
    assert not same_value(about_82, find_quantities("76 kg")[0][2])  # 82 is written to the kilo
    assert same_value(about_82, find_quantities("82.4 kg")[0][2])


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("The rowing club has around 300 members.", "The rowing club has 312 members now."),
        ("The loop trail is 5 miles long.", "The loop trail is 8 km long."),
        ("The orchard is 3 acres.", "The orchard covers about 1.2 hectares."),
        ("A coffee at the kiosk is £2.20.", "coffee at the kiosk is two pound twenty"),
        ("The bread oven is set to 220 °C.", "The bread oven was installed in 2019."),
        ("The warranty on the boiler ends 04/2027.", "The boiler's warranty runs out in April 2027."),
    ],
)
def test_one_value_written_two_ways_or_two_attributes_are_no_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, 0.92)
    assert verdict is None or verdict.label != "contradiction", verdict.explanation


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("The rowing club has around 300 members.", "The rowing club has 390 members now."),
        ("The loop trail is 5 miles long.", "The loop trail is 12 km long."),
        ("The orchard is 3 acres.", "The orchard covers 2 hectares."),
        ("A coffee at the kiosk is £2.50.", "coffee at the kiosk is two pound twenty"),
        ("The warranty on the boiler ends 04/2027.", "The boiler's warranty runs out in June 2028."),
        ("Humidity in the archive is kept at 45%.", "archive humidity is held at 55 per cent"),
        ("I weigh about 82 kg.", "I'm at 76 kg these days."),
    ],
)
def test_another_value_written_another_way_is_still_a_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, 0.92)
    assert verdict is not None and verdict.label == "contradiction", verdict
