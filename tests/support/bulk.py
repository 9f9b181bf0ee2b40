"""Writing memories straight into the database (COPY) for tests that need a store larger than the API would
write in the time a test has."""

from __future__ import annotations

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
