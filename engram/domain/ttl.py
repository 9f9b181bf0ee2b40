"""Time to live: when a memory expires if the writer did not say.

A kind × importance matrix gives the default lifetime in days: observations and diary entries fade, summaries
last longer, decisions, doctrine, invariants, preferences, procedures and facts never expire by default. The
importance band picks the column: ``low`` below 0.4, ``medium`` from 0.4 to below 0.8. From 0.8 up an item is
*protected*, like a pinned item or one tagged ``permanent``: it never expires, and asking for an expiry on it is
refused rather than silently dropped. A tenant overrides any cell in its configuration (``ttl_days``); a cell
of ``null`` means "never".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from engram.errors import ValidationFailed

BANDS = ("low", "medium")
PROTECTED_IMPORTANCE = 0.8
PERMANENT_TAG = "permanent"
MAX_DAYS = 36_500

Matrix = Mapping[str, Mapping[str, int | None]]

DEFAULT_TTL_DAYS: Matrix = {
    "observation": {"low": 30, "medium": 90},
    "diary_entry": {"low": 90, "medium": 365},
    "summary": {"low": 180, "medium": 730},
}


def band(importance: float) -> str | None:
    """The matrix column for ``importance``; None when the importance alone protects the item."""
    if importance >= PROTECTED_IMPORTANCE:
        return None
    return "low" if importance < 0.4 else "medium"


def protection(pinned: bool, importance: float, tags: Sequence[str]) -> str | None:
    """Why an item may never expire, or None when it may."""
    if pinned:
        return "pinned"
    if importance >= PROTECTED_IMPORTANCE:
        return f"importance ≥ {PROTECTED_IMPORTANCE}"
    if PERMANENT_TAG in tags:
        return f"tagged {PERMANENT_TAG}"
    return None


def overlay(base: Matrix | None, patch: Matrix | None) -> dict[str, dict[str, int | None]]:
    """``base`` with the cells of ``patch`` laid over it (the other cells kept): the default matrix under a
    tenant's overrides, or a tenant's overrides under a change to them."""
    result = {kind: dict(cells) for kind, cells in (base or {}).items()}
    for kind, cells in (patch or {}).items():
        result.setdefault(kind, {}).update(cells)
    return result


def expiry(
    *,
    kind: str,
    importance: float,
    pinned: bool,
    tags: Sequence[str],
    requested: datetime | None,
    now: datetime,
    overrides: Matrix | None = None,
) -> datetime | None:
    """``expires_at`` for a new item: the requested time, or the matrix default, or None (never)."""
    protected = protection(pinned, importance, tags)
    if requested is not None:
        if protected:
            raise ValidationFailed(
                f"this memory is protected from expiry ({protected}); drop expires_at or the protection",
                field="expires_at",
            )
        if requested <= now:
            raise ValidationFailed("expires_at must be in the future", field="expires_at")
        return requested
    column = band(importance)
    if protected or column is None:
        return None
    days = overlay(DEFAULT_TTL_DAYS, overrides).get(kind, {}).get(column)
    return now + timedelta(days=days) if days else None


def parse_overrides(raw: Any) -> dict[str, dict[str, int | None]]:
    """Validate a tenant's ``ttl_days``: {kind: {low|medium: days (1–36500) or null}}."""
    if not isinstance(raw, dict):
        raise ValidationFailed("ttl_days maps a kind to {low, medium: days or null}", field="ttl_days")
    parsed: dict[str, dict[str, int | None]] = {}
    for kind, cells in raw.items():
        if not isinstance(cells, dict) or not cells:
            raise ValidationFailed(f"ttl_days.{kind} must be an object with low and/or medium", field="ttl_days")
        for column, days in cells.items():
            if column not in BANDS:
                raise ValidationFailed(
                    f"ttl_days.{kind}.{column}: bands are {', '.join(BANDS)} (importance ≥ "
                    f"{PROTECTED_IMPORTANCE} never expires)",
                    field="ttl_days",
                )
            if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS):
                raise ValidationFailed(
                    f"ttl_days.{kind}.{column} must be 1–{MAX_DAYS} days or null (never)", field="ttl_days"
                )
        parsed[str(kind)] = {str(column): days for column, days in cells.items()}
    return parsed


def observation_expiry(
    *, tags: Sequence[str], requested: datetime | None, now: datetime, hours: int
) -> datetime | None:
    """``expires_at`` for an observation: the requested time (in the future), else ``hours`` from now; never for
    one tagged ``permanent``, which refuses a requested expiry like any protected memory."""
    if PERMANENT_TAG in tags:
        if requested is not None:
            raise ValidationFailed(
                f"this memory is protected from expiry (tagged {PERMANENT_TAG}); drop expires_at or the tag",
                field="expires_at",
            )
        return None
    if requested is not None:
        if requested <= now:
            raise ValidationFailed("expires_at must be in the future", field="expires_at")
        return requested
    return now + timedelta(hours=hours)
