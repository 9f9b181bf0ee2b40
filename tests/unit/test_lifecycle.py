"""The review transition table, exhaustively: every (state, action, caller kind) combination."""

from __future__ import annotations

import itertools

import pytest

from engram.domain.lifecycle import ACTIONS, TRANSITIONS, decide, may_delete, may_invalidate, may_restore, may_verify
from engram.domain.models import CallerContext
from engram.errors import Conflict, PermissionDenied, ValidationFailed

STATES = ("proposed", "active", "disputed", "rejected", "superseded", "archived")
AUTHOR = "author-id"
CALLERS = {
    "human reviewer": CallerContext("t", "reviewer-id", "user", frozenset({"read", "write", "review"})),
    "admin": CallerContext("t", "admin-id", "admin", frozenset({"admin"})),
    "agent with review scope": CallerContext("t", "agent-id", "agent", frozenset({"read", "write", "review"})),
    "human writer": CallerContext("t", "writer-id", "user", frozenset({"read", "write"})),
    "agent author": CallerContext("t", AUTHOR, "agent", frozenset({"read", "write"})),
    "human author": CallerContext("t", AUTHOR, "user", frozenset({"read", "write"})),
    "reader": CallerContext("t", "reader-id", "user", frozenset({"read"})),
}
# (from, action) → (to, callers allowed)
EXPECTED = {
    ("proposed", "activate"): ("active", {"human reviewer", "admin"}),
    ("disputed", "activate"): ("active", {"human reviewer", "admin"}),
    ("active", "dispute"): (
        "disputed",
        {"human reviewer", "admin", "agent with review scope", "human writer", "agent author", "human author"},
    ),
    ("proposed", "dispute"): (
        "disputed",
        {"human reviewer", "admin", "agent with review scope", "human writer", "agent author", "human author"},
    ),
    ("proposed", "reject"): ("rejected", {"human reviewer", "admin"}),
    ("disputed", "reject"): ("rejected", {"human reviewer", "admin"}),
    ("active", "archive"): ("archived", {"human reviewer", "admin", "human author"}),
    ("disputed", "archive"): ("archived", {"human reviewer", "admin", "human author"}),
    ("archived", "reactivate"): ("active", {"human reviewer", "admin"}),
    ("rejected", "reactivate"): ("proposed", {"human reviewer", "admin"}),
    ("proposed", "withdraw"): ("archived", {"agent author", "human author"}),
}


def test_the_table_is_exactly_the_expected_one() -> None:
    assert {(t.from_state, t.action): t.to_state for t in TRANSITIONS} == {k: v[0] for k, v in EXPECTED.items()}


@pytest.mark.parametrize(("state", "action", "caller"), list(itertools.product(STATES, ACTIONS, CALLERS)))
def test_every_combination(state: str, action: str, caller: str) -> None:
    ctx = CALLERS[caller]
    expected = EXPECTED.get((state, action))
    if expected is None:
        with pytest.raises(Conflict) as refused:
            decide(ctx, state, action, AUTHOR, writes_here=True)
        assert refused.value.code == "invalid_transition"
    elif caller in expected[1]:
        assert decide(ctx, state, action, AUTHOR, writes_here=True).to_state == expected[0]
    else:
        with pytest.raises(PermissionDenied) as refused:
            decide(ctx, state, action, AUTHOR, writes_here=True)
        assert refused.value.code == "review_not_allowed"


@pytest.mark.parametrize("caller", list(CALLERS))
def test_disputing_needs_a_writing_role_in_the_workspace_or_a_reviewer(caller: str) -> None:
    """Reading an item and holding ``write`` is not enough to dispute it: without a writing role in its
    workspace only a reviewer may."""
    ctx = CALLERS[caller]
    for state in ("active", "proposed"):
        if caller in ("human reviewer", "admin"):
            assert decide(ctx, state, "dispute", AUTHOR, writes_here=False).to_state == "disputed"
            continue
        with pytest.raises(PermissionDenied) as refused:
            decide(ctx, state, "dispute", AUTHOR, writes_here=False)
        expected = "review_not_allowed" if caller == "reader" else "workspace_read_only"
        assert refused.value.code == expected


def test_unknown_action_names_the_field() -> None:
    with pytest.raises(ValidationFailed) as refused:
        decide(CALLERS["admin"], "active", "promote", AUTHOR, writes_here=True)
    assert refused.value.field == "action"


def test_only_human_reviewers_verify() -> None:
    may_verify(CALLERS["human reviewer"])
    may_verify(CALLERS["admin"])
    for name in ("agent with review scope", "human writer", "reader"):
        with pytest.raises(PermissionDenied):
            may_verify(CALLERS[name])


DELETERS = {"human reviewer", "admin", "agent author", "human author"}


@pytest.mark.parametrize("caller", list(CALLERS))
def test_who_may_invalidate_and_delete(caller: str) -> None:
    for rule in (may_invalidate, may_delete):
        if caller in DELETERS:
            rule(CALLERS[caller], AUTHOR)
        else:
            with pytest.raises(PermissionDenied):
                rule(CALLERS[caller], AUTHOR)


@pytest.mark.parametrize(
    ("caller", "deleted_by", "allowed"),
    [
        ("human reviewer", "someone", True),
        ("admin", None, True),
        ("agent author", None, True),
        ("human writer", "writer-id", True),
        ("human writer", "someone", False),
        ("human writer", None, False),
        ("agent with review scope", "someone", False),
        ("reader", "someone", False),
    ],
)
def test_who_may_restore(caller: str, deleted_by: str | None, allowed: bool) -> None:
    if allowed:
        may_restore(CALLERS[caller], AUTHOR, deleted_by)
    else:
        with pytest.raises(PermissionDenied):
            may_restore(CALLERS[caller], AUTHOR, deleted_by)
