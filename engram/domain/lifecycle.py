"""The review lifecycle: which action moves an item from which state to which, and who may take it.

    proposed ──activate──▶ active ──dispute──▶ disputed ──activate──▶ active
        │                    │                    └──reject──▶ rejected
        ├──reject──▶ rejected └──archive──▶ archived ──reactivate──▶ active
        └──withdraw (its author)──▶ archived

        proposed ──dispute──▶ disputed;  rejected ──reactivate──▶ proposed

A *reviewer* holds the review scope (admin implies it) and is not an agent. A reviewer, or a caller with the
write scope and a writing role in the item's workspace (agents included), may dispute; an author may withdraw
its own proposal; activating, rejecting, archiving and reactivating need a reviewer, except that a non-agent
author may archive its own item.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from engram.domain.keys import allows
from engram.domain.models import CallerContext, MemoryItem
from engram.domain.values import LIVE_REVIEW_STATUSES, PrincipalType, ReviewAction
from engram.errors import Conflict, PermissionDenied, ValidationFailed

ACTIONS = tuple(ReviewAction)
LIVE_STATES = LIVE_REVIEW_STATUSES  # review states of a memory still in play


def not_live(item: MemoryItem, now: datetime) -> str | None:
    """Why ``item`` may not be changed as a live memory (superseded, patched): ``invalidated``, ``expired`` or
    its review status; None when it is live."""
    expired = item.expires_at is not None and item.expires_at <= now
    if item.invalidated_at is not None:
        return "invalidated"
    if expired:
        return "expired"
    if item.superseded_by is not None or item.review_status not in LIVE_STATES:
        return str(item.review_status)
    return None


class Who(Enum):
    REVIEWER = "reviewer"
    WRITER = "writer"  # a reviewer, or the write scope with a writing role in the item's workspace (agents too)
    AUTHOR = "author"
    REVIEWER_OR_HUMAN_AUTHOR = "reviewer_or_human_author"


@dataclass(frozen=True)
class Transition:
    from_state: str
    action: str
    to_state: str
    who: Who


TRANSITIONS: tuple[Transition, ...] = (
    Transition("proposed", "activate", "active", Who.REVIEWER),
    Transition("disputed", "activate", "active", Who.REVIEWER),
    Transition("active", "dispute", "disputed", Who.WRITER),
    Transition("proposed", "dispute", "disputed", Who.WRITER),
    Transition("proposed", "reject", "rejected", Who.REVIEWER),
    Transition("disputed", "reject", "rejected", Who.REVIEWER),
    Transition("active", "archive", "archived", Who.REVIEWER_OR_HUMAN_AUTHOR),
    Transition("disputed", "archive", "archived", Who.REVIEWER_OR_HUMAN_AUTHOR),
    Transition("archived", "reactivate", "active", Who.REVIEWER),
    Transition("rejected", "reactivate", "proposed", Who.REVIEWER),
    Transition("proposed", "withdraw", "archived", Who.AUTHOR),
)


def is_reviewer(ctx: CallerContext) -> bool:
    return ctx.principal_type != PrincipalType.AGENT and allows(ctx.scopes, "review")


def decide(ctx: CallerContext, state: str, action: str, author_id: str, *, writes_here: bool) -> Transition:
    """The transition ``ctx`` may take, or the refusal: 422 unknown action, 409 not from this state,
    403 not for this caller. ``writes_here``: the caller holds a writing role in the item's workspace."""
    if action not in ACTIONS:
        raise ValidationFailed(f"action must be one of {', '.join(ACTIONS)}; got {action!r}", field="action")
    transition = next((t for t in TRANSITIONS if t.from_state == state and t.action == action), None)
    if transition is None:
        allowed = sorted(t.action for t in TRANSITIONS if t.from_state == state)
        raise Conflict(
            f"cannot {action} an item that is {state}; allowed: {', '.join(allowed) or 'none'}",
            field="action",
            code="invalid_transition",
        )
    is_author = ctx.principal_id == author_id
    permitted = {
        Who.REVIEWER: is_reviewer(ctx),
        Who.WRITER: is_reviewer(ctx) or allows(ctx.scopes, "write"),
        Who.AUTHOR: is_author,
        Who.REVIEWER_OR_HUMAN_AUTHOR: is_reviewer(ctx) or (is_author and ctx.principal_type != PrincipalType.AGENT),
    }[transition.who]
    if not permitted:
        raise PermissionDenied(_why(transition.who, action), code="review_not_allowed")
    if transition.who is Who.WRITER and not (writes_here or is_reviewer(ctx)):
        raise PermissionDenied(
            f"to {action} an item needs a writing role in its workspace, or a reviewer",
            code="workspace_read_only",
        )
    return transition


def may_verify(ctx: CallerContext) -> None:
    if not is_reviewer(ctx):
        raise PermissionDenied("verifying needs the review scope and a non-agent principal", code="review_not_allowed")


def may_invalidate(ctx: CallerContext, author_id: str) -> None:
    """The item's author, or a reviewer."""
    if ctx.principal_id != author_id and not is_reviewer(ctx):
        raise PermissionDenied(
            "invalidating another's item needs the review scope and a non-agent principal", code="review_not_allowed"
        )


def may_delete(ctx: CallerContext, author_id: str) -> None:
    """Moving an item to the trash: its author, or a reviewer."""
    if ctx.principal_id != author_id and not is_reviewer(ctx):
        raise PermissionDenied(
            "deleting another's item needs the review scope and a non-agent principal", code="review_not_allowed"
        )


def may_restore(ctx: CallerContext, author_id: str, deleted_by: str | None) -> None:
    """Taking an item out of the trash: its author, whoever deleted it, or a reviewer."""
    if ctx.principal_id not in (author_id, deleted_by) and not is_reviewer(ctx):
        raise PermissionDenied(
            "restoring another's item needs the review scope and a non-agent principal", code="review_not_allowed"
        )


def _why(who: Who, action: str) -> str:
    return {
        Who.REVIEWER: f"to {action} needs the review scope and a non-agent principal",
        Who.WRITER: f"to {action} needs the write scope",
        Who.AUTHOR: f"only the item's author may {action} it",
        Who.REVIEWER_OR_HUMAN_AUTHOR: f"to {action} needs a reviewer, or the item's non-agent author",
    }[who]
