"""Constraint violations as the errors they mean, so nothing above the repositories sees an asyncpg exception
for an expected outcome:

- a foreign-key violation while attaching a row to an item (a vector, a stage, an audit row, a receipt) means
  the item was deleted meanwhile: ``NotFound`` (code ``gone``), which a pipeline consumer acknowledges as
  handled (``engram/events/consumer.py``);
- a unique violation means the name or row is taken: ``Conflict``.

Either one aborts the caller's transaction, as the violation itself would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg

from engram.errors import Conflict, NotFound


@contextmanager
def item_must_exist(item_id: object) -> Iterator[None]:
    """Inside: a write that references item ``item_id``; a foreign-key violation becomes ``NotFound``."""
    try:
        yield
    except asyncpg.ForeignKeyViolationError as exc:
        raise NotFound(f"item {item_id} no longer exists", code="gone") from exc


@contextmanager
def unique(detail: str, *, field: str | None = None, code: str = "conflict") -> Iterator[None]:
    """Inside: an insert or update that a unique constraint may refuse; that refusal becomes ``Conflict``."""
    try:
        yield
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(detail, field=field, code=code) from exc
