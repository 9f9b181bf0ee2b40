"""One rule for every time the REST API takes (and so the SDK and the MCP tools, which send through it): a time
without a timezone offset is refused naming the field. Before, `valid_from`, `valid_to`, `expires_at`, `as_of` and
the bulk filter's `created_*` read it in the gateway host's local time, so what was stored depended on TZ."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from services.gateway.problems import validation_body
from services.gateway.schemas import (
    NEEDS_OFFSET,
    BulkBody,
    ObserveBody,
    PatchBody,
    RecallBody,
    RememberBody,
    SearchBody,
)

# (body model, the body's other fields, the time field)
TIME_FIELDS: list[tuple[type[BaseModel], dict[str, object], str]] = [
    (RememberBody, {"content": "ab"}, "valid_from"),
    (RememberBody, {"content": "ab"}, "valid_to"),
    (RememberBody, {"content": "ab"}, "expires_at"),
    (ObserveBody, {"content": "ab"}, "expires_at"),
    (PatchBody, {}, "valid_to"),
    (RecallBody, {"query": "ab"}, "as_of"),
    (RecallBody, {"query": "ab"}, "time_start"),
    (RecallBody, {"query": "ab"}, "time_end"),
    (SearchBody, {"query": "ab"}, "as_of"),
    (SearchBody, {"query": "ab"}, "time_start"),
]


def _bulk(field: str, value: object) -> dict[str, object]:
    return {"action": "archive", "filter": {field: value}}


@pytest.mark.parametrize(("model", "rest", "field"), TIME_FIELDS)
@pytest.mark.parametrize("naive", ["2026-03-01T09:30:00", "2026-03-01 09:30", "2026-03-01"])
def test_a_time_without_an_offset_is_refused_naming_the_field_and_the_rule(
    model: type[BaseModel], rest: dict[str, object], field: str, naive: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate({**rest, field: naive})
    problem = validation_body(refused.value.errors())
    assert problem["field"] == field and problem["detail"] == f"{field}: {NEEDS_OFFSET}", problem
    assert problem["errors"][0]["rule"] == "timezone_aware"


@pytest.mark.parametrize("field", ["created_before", "created_after"])
def test_the_bulk_filter_refuses_a_time_without_an_offset_too(field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        BulkBody.model_validate(_bulk(field, "2026-03-01T09:30:00"))
    problem = validation_body(refused.value.errors())
    assert problem["field"] == f"filter.{field}" and NEEDS_OFFSET in problem["detail"], problem


@pytest.mark.parametrize(
    ("sent", "instant"),
    [
        ("2026-03-01T09:30:00Z", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
        ("2026-03-01T09:30:00+01:00", datetime(2026, 3, 1, 8, 30, tzinfo=UTC)),
        ("2026-03-01T09:30:00-05:30", datetime(2026, 3, 1, 15, 0, tzinfo=UTC)),
        (1772357400, datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),  # a number is Unix seconds, UTC
    ],
)
@pytest.mark.parametrize(("model", "rest", "field"), TIME_FIELDS)
def test_a_time_with_an_offset_is_taken_as_that_instant(
    model: type[BaseModel], rest: dict[str, object], field: str, sent: object, instant: datetime
) -> None:
    assert getattr(model.model_validate({**rest, field: sent}), field) == instant
    assert BulkBody.model_validate(_bulk("created_after", sent)).filter.created_after == instant
