"""Calendar periods named in recall queries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.domain.temporal import named_period


@pytest.mark.parametrize(("query", "start", "end", "text"), [
    ("What did she show on October 13, 2023?", (2023, 10, 13), (2023, 10, 14), "October 13, 2023"),
    ("What did Gina find on 1 February, 2023?", (2023, 2, 1), (2023, 2, 2), "1 February, 2023"),
    ("the 3rd of March 2024 meeting", (2024, 3, 3), (2024, 3, 4), "3rd of March 2024"),
    ("What did Mel paint in July 2023?", (2023, 7, 1), (2023, 8, 1), "July 2023"),
    ("deploys in December 2023", (2023, 12, 1), (2024, 1, 1), "December 2023"),
    ("How many beach trips in 2023?", (2023, 1, 1), (2024, 1, 1), "2023"),
    ("notes from 31 February 2023", (2023, 2, 1), (2023, 3, 1), "February 2023"),  # no such day: the month
])
def test_the_most_precise_period_is_read(query: str, start: tuple[int, int, int], end: tuple[int, int, int],
                                         text: str) -> None:
    period = named_period(query)
    assert period is not None
    assert (period.start, period.end, period.text) == (datetime(*start, tzinfo=UTC), datetime(*end, tzinfo=UTC), text)


@pytest.mark.parametrize("query", ["When did Melanie go camping in June?", "what happened last week", "room 2301b",
                                   "error 2003 again", "ticket 12345", ""])
def test_no_calendar_period_no_answer(query: str) -> None:
    assert named_period(query) is None


def test_a_period_covers_its_days_and_the_week_after() -> None:
    period = named_period("in July 2023")
    assert period is not None
    assert period.covers(datetime(2023, 7, 1, tzinfo=UTC)) and period.covers(datetime(2023, 8, 7, 23, tzinfo=UTC))
    assert not period.covers(datetime(2023, 6, 30, 23, tzinfo=UTC))
    assert not period.covers(datetime(2023, 8, 8, tzinfo=UTC)) and not period.covers(None)
