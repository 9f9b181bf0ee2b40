"""Feedback rules: how a verdict moves an item's importance, and the daily allowance per principal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram.domain.values import FeedbackVerdict

VERDICTS = ("useful", "noise")
USEFUL_STEP = 0.05
NOISE_STEP = 0.10
DEFAULT_DAILY_LIMIT = 500


def adjusted_importance(importance: float, verdict: str, previous: str | None) -> float:
    """Useful raises importance slightly, noise lowers it; repeating the current verdict changes nothing,
    and changing one's mind undoes the earlier step first."""
    if verdict == previous:
        return importance
    undo = {"useful": -USEFUL_STEP, "noise": NOISE_STEP}.get(previous or "", 0.0)
    step = USEFUL_STEP if verdict == FeedbackVerdict.USEFUL else -NOISE_STEP
    return round(min(1.0, max(0.0, importance + undo + step)), 4)


def seconds_until_allowance(oldest_in_window: datetime, now: datetime) -> float:
    """With the day's allowance used up, how long until the oldest verdict of the last 24 h ages out."""
    return max(1.0, (oldest_in_window + timedelta(days=1) - now).total_seconds())


def now() -> datetime:
    return datetime.now(UTC)
