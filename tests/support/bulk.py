"""Writing memories straight into the database (COPY) for tests that need a store larger than the API would
write in the time a test has; bench/latency.py's bulk loader writes its rows the same way."""

from __future__ import annotations

from engram.domain.content import content_hash

ITEM_COLUMNS = (
    "tenant_id",
    "id",
    "workspace_id",
    "principal_id",
    "content",
    "content_hash",
    "kind",
    "importance",
    "review_status",
    "authority",
    "source_type",
    "source_trust",
)
"""The columns of ``memory_items`` a bulk-written memory sets; the rest take their defaults."""

ACTIVE_FACT = ("fact", 0.5, "active", 50, "explicit", 1.0)
"""The last six of ``ITEM_COLUMNS`` for an active fact written by its author: kind, importance, review status,
authority, source type and source trust."""


def fact_row(
    tenant_id: object, item_id: object, workspace_id: object, principal_id: object, content: str
) -> tuple[object, ...]:
    """The ``ITEM_COLUMNS`` of an active fact with this content, for ``copy_records_to_table``."""
    return (tenant_id, item_id, workspace_id, principal_id, content, content_hash(content), *ACTIVE_FACT)
