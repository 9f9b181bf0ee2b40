"""A claim's validity interval [valid_from, valid_to) against a time range [start, end] that a read asks for.
A missing bound on either side is open-ended. The SQL twin of ``overlaps`` is ``overlaps`` in
``engram/db/search.py``."""

from __future__ import annotations

from datetime import datetime

from engram.errors import ValidationFailed


def check_range(start: datetime | None, end: datetime | None, end_field: str) -> None:
    """A range whose end is before its start is refused, naming the end's field."""
    if start is not None and end is not None and end < start:
        raise ValidationFailed(f"{end_field} must not be before the start of the range", field=end_field)


def overlaps(
    valid_from: datetime | None, valid_to: datetime | None, start: datetime | None, end: datetime | None
) -> bool:
    """Whether the claim was valid at some time in [start, end]."""
    began_in_time = valid_from is None or end is None or valid_from <= end
    lasted_long_enough = valid_to is None or start is None or valid_to > start
    return began_in_time and lasted_long_enough
