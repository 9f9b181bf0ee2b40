"""The value sets of engram/domain/values.py agree with the CHECK constraints of a migrated database: every
column the schema restricts to a list of values has its set, with the same values."""

from __future__ import annotations

import re
from enum import Enum

import asyncpg

from engram.domain.authority import Authority
from engram.domain.values import (
    BUILT_IN_KINDS,
    ConflictStatus,
    ConflictType,
    EdgeType,
    FeedbackVerdict,
    PrincipalType,
    Resolution,
    Retention,
    ReviewStatus,
    StageStatus,
    TrashReason,
    Visibility,
    WorkspaceRole,
)

CHECKED: dict[tuple[str, str], type[Enum]] = {
    ("principals", "type"): PrincipalType,
    ("workspace_members", "role"): WorkspaceRole,
    ("memory_items", "visibility"): Visibility,
    ("memory_items", "review_status"): ReviewStatus,
    ("memory_items", "authority"): Authority,
    ("memory_items", "retention"): Retention,
    ("memory_edges", "type"): EdgeType,
    ("conflicts", "type"): ConflictType,
    ("conflicts", "status"): ConflictStatus,
    ("conflicts", "resolution"): Resolution,
    ("item_stages", "status"): StageStatus,
    ("feedback_events", "verdict"): FeedbackVerdict,
    ("trash", "reason"): TrashReason,
}


async def _value_lists(owner_pool: asyncpg.Pool) -> dict[tuple[str, str], set[str]]:
    """Each single-column CHECK of the form ``column IN (…)`` (``= ANY (ARRAY[…])`` once stored)."""
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            """SELECT c.conrelid::regclass::text AS tbl, a.attname AS col, pg_get_constraintdef(c.oid) AS def
               FROM pg_constraint c
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
               WHERE c.contype = 'c' AND cardinality(c.conkey) = 1 AND c.connamespace = 'public'::regnamespace"""
        )
    found: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        listing = re.search(r"= ANY \(\(?ARRAY\[(.*?)\]", row["def"])
        if listing:
            found[(row["tbl"], row["col"])] = {v.strip().split("::")[0].strip("'") for v in listing.group(1).split(",")}
    return found


async def test_every_value_list_in_the_schema_is_a_value_set_with_the_same_values(owner_pool: asyncpg.Pool) -> None:
    found = await _value_lists(owner_pool)
    assert set(found) == set(CHECKED)  # a new CHECK list needs its set in engram/domain/values.py
    for column, values in CHECKED.items():
        assert found[column] == {str(v.value) for v in values}, column


async def test_the_built_in_kinds_are_the_kinds_every_tenant_is_given(owner_pool: asyncpg.Pool) -> None:
    rows = await owner_pool.fetch("SELECT name FROM memory_kinds WHERE tenant_id IS NULL")
    assert {r["name"] for r in rows} == BUILT_IN_KINDS
