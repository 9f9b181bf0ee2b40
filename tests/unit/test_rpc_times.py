"""Times at the gRPC edges: the two ends of datetime's range, which asyncpg writes as PostgreSQL's -infinity and
infinity and reads back as naive ``datetime.min``/``max``, and Timestamps beyond that range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf import timestamp_pb2

from engram.errors import ValidationFailed
from engram.rpc.convert import from_timestamp, in_range, timestamp
from engram.v1 import recall_pb2


def test_a_row_holding_minus_infinity_or_infinity_still_converts_as_the_ends_in_utc() -> None:
    """Before, the naive ``datetime.min`` was taken as local time: ValueError "year 0 is out of range"."""
    assert timestamp(datetime.min) == timestamp(datetime.min.replace(tzinfo=UTC))
    assert timestamp(datetime.max) == timestamp(datetime.max.replace(tzinfo=UTC))


def test_only_times_strictly_inside_the_years_1_to_9999_in_utc_are_in_range() -> None:
    assert in_range(datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=UTC)) and in_range(datetime(2026, 12, 3, tzinfo=UTC))
    assert not in_range(datetime(1, 1, 1, tzinfo=UTC)) and not in_range(datetime.max.replace(tzinfo=UTC))
    assert not in_range(datetime(1, 1, 1, 3, tzinfo=timezone(timedelta(hours=5))))  # before year 1 in UTC
    assert not in_range(datetime(9999, 12, 31, 23, tzinfo=timezone(-timedelta(hours=5))))  # after 9999


@pytest.mark.parametrize("seconds", [2**40, -(2**40), -62135596800])
def test_a_timestamp_outside_the_range_is_refused_naming_its_field(seconds: int) -> None:
    request = recall_pb2.ListItemsRequest(created_after=timestamp_pb2.Timestamp(seconds=seconds))
    with pytest.raises(ValidationFailed) as refused:
        from_timestamp(request, "created_after")
    assert refused.value.field == "created_after"
    inside = recall_pb2.ListItemsRequest(created_after=timestamp_pb2.Timestamp(seconds=seconds // 2**20))
    assert from_timestamp(inside, "created_after") is not None
