"""Dates named in a recall query: "on 13 October 2023", "October 13, 2023", "in May 2023", "during 2022".

A query that names a date asks about what held then; recall can favour memories whose ``valid_from`` falls
in that period. Only explicit calendar dates are read — relative ones ("last week") need a reference time
the query does not carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {name: n for n, name in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                              "august", "september", "october", "november", "december"), start=1)}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_YEAR_ALONE = re.compile(rf"\b(?:in|during|throughout|of|from)\s+{_YEAR}\b", re.IGNORECASE)  # not "port 2049"
REPORTED_WITHIN = timedelta(days=7)  # what happened in a period is often written down up to a week later


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime  # exclusive
    text: str  # as the query wrote it

    def covers(self, at: datetime | None) -> bool:
        """Whether ``at`` is in the period, or within ``REPORTED_WITHIN`` after it."""
        return at is not None and self.start <= at < self.end + REPORTED_WITHIN


def named_period(query: str) -> Period | None:
    """The most precise calendar period the query names (a day, else a month, else a year), or None."""
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        match = pattern.search(query)
        if match:
            groups = dict(zip(order, match.groups(), strict=True))
            try:
                start = datetime(int(groups["y"]), MONTHS[groups["m"].lower()], int(groups["d"]), tzinfo=UTC)
            except ValueError:  # "31 February 2023"
                continue
            return Period(start, start + timedelta(days=1), match.group(0))
    match = _MONTH_YEAR.search(query)
    if match:
        month, year = MONTHS[match.group(1).lower()], int(match.group(2))
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return Period(start, end, match.group(0))
    match = _YEAR_ALONE.search(query)
    if match:
        year = int(match.group(1))
        return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), match.group(1))
    return None
