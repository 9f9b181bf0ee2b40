"""Properties of the domain rules over generated inputs (hypothesis): the review lifecycle table, recall
budgets, authority, and the secret guard's redaction round trip."""

from __future__ import annotations

import string
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.domain.authority import Authority, default_source_type, derive_authority, source_trust
from engram.domain.budget import MAX_ITEM_BUDGET, Budgets, estimate_tokens, pack_explained
from engram.domain.keys import SCOPES, allows
from engram.domain.lifecycle import ACTIONS, TRANSITIONS, Who, decide, is_reviewer
from engram.domain.models import CallerContext, RankedItem
from engram.domain.secrets import find_secrets, redact
from engram.domain.values import PrincipalType, ReviewAction, SourceType
from engram.errors import Conflict, EngramError, PermissionDenied, ValidationFailed
from tests.unit.test_domain import make_item

checked = settings(database=None, deadline=None, max_examples=100)  # no example database left in the tree

STATES = sorted({t.from_state for t in TRANSITIONS} | {t.to_state for t in TRANSITIONS})
AUTHOR = str(uuid.uuid4())


@st.composite
def callers(draw: st.DrawFn) -> CallerContext:
    return CallerContext(
        tenant_id=str(uuid.uuid4()),
        principal_id=draw(st.sampled_from([AUTHOR, str(uuid.uuid4())])),
        principal_type=draw(st.sampled_from(list(PrincipalType))),
        scopes=frozenset(draw(st.sets(st.sampled_from(SCOPES)))),
    )


def _outcome(ctx: CallerContext, state: str, action: str, writes_here: bool = True) -> str | type[EngramError]:
    """``writes_here``: the caller holds a writing role in the item's workspace."""
    try:
        return decide(ctx, state, action, AUTHOR, writes_here=writes_here).to_state
    except EngramError as exc:
        return type(exc)


# -- the lifecycle table ------------------------------------------------------------------------------------


@checked
@given(ctx=callers(), state=st.sampled_from(STATES), action=st.sampled_from(ACTIONS), writes_here=st.booleans())
def test_a_decision_is_the_tables_row_or_a_refusal_that_says_why(
    ctx: CallerContext, state: str, action: str, writes_here: bool
) -> None:
    row = next((t for t in TRANSITIONS if (t.from_state, t.action) == (state, action)), None)
    outcome = _outcome(ctx, state, action, writes_here)
    if row is None:
        assert outcome is Conflict  # no such move from this state, whoever asks
    else:
        assert outcome in (row.to_state, PermissionDenied)


@checked
@given(ctx=callers(), state=st.sampled_from(STATES), action=st.text(max_size=12))
def test_an_unknown_action_is_invalid_in_every_state(ctx: CallerContext, state: str, action: str) -> None:
    if action not in ACTIONS:
        assert _outcome(ctx, state, action) is ValidationFailed


@checked
@given(ctx=callers(), state=st.sampled_from(STATES), action=st.sampled_from(ACTIONS), writes_here=st.booleans())
def test_an_agent_never_takes_a_reviewers_step(ctx: CallerContext, state: str, action: str, writes_here: bool) -> None:
    row = next((t for t in TRANSITIONS if (t.from_state, t.action) == (state, action)), None)
    if ctx.principal_type == PrincipalType.AGENT and row is not None and row.who is Who.REVIEWER:
        assert _outcome(ctx, state, action, writes_here) is PermissionDenied


@checked
@given(
    ctx=callers(),
    extra=st.sampled_from(SCOPES),
    state=st.sampled_from(STATES),
    action=st.sampled_from(ACTIONS),
    writes_here=st.booleans(),
)
def test_more_scopes_never_take_a_permission_away(
    ctx: CallerContext, extra: str, state: str, action: str, writes_here: bool
) -> None:
    wider = CallerContext(ctx.tenant_id, ctx.principal_id, ctx.principal_type, ctx.scopes | {extra})
    if isinstance(_outcome(ctx, state, action, writes_here), str):
        assert _outcome(wider, state, action, writes_here) == _outcome(ctx, state, action, writes_here)


@checked
@given(ctx=callers(), state=st.sampled_from(STATES), action=st.sampled_from(ACTIONS))
def test_a_writing_role_never_takes_a_permission_away(ctx: CallerContext, state: str, action: str) -> None:
    if isinstance(_outcome(ctx, state, action, writes_here=False), str):
        assert _outcome(ctx, state, action, writes_here=True) == _outcome(ctx, state, action, writes_here=False)


@checked
@given(ctx=callers())
def test_a_reviewer_who_may_write_can_reach_every_state_from_a_proposal(ctx: CallerContext) -> None:
    if not (is_reviewer(ctx) and allows(ctx.scopes, "write")):  # disputing needs the write scope
        return
    reached, todo = {"proposed"}, ["proposed"]
    while todo:
        state = todo.pop()
        for action in ReviewAction:
            outcome = _outcome(ctx, state, action)
            if isinstance(outcome, str) and outcome not in reached:
                reached.add(outcome)
                todo.append(outcome)
    assert reached == set(STATES)


# -- budgets --------------------------------------------------------------------------------------------------

contents = st.text(alphabet=string.ascii_letters + " éß€😀", min_size=1, max_size=300)


@checked
@given(
    texts=st.lists(contents, max_size=40),
    items=st.integers(1, MAX_ITEM_BUDGET),
    bytes_=st.integers(1, 4000),
    tokens=st.integers(1, 1000),
)
def test_packing_keeps_rank_order_and_every_budget(texts: list[str], items: int, bytes_: int, tokens: int) -> None:
    ranked = [RankedItem(make_item(text), 1.0 - n / 100, "hybrid") for n, text in enumerate(texts)]
    kept, cut = pack_explained(ranked, Budgets(items, bytes_, tokens))
    assert len(kept) + len(cut) == len(ranked)
    assert [r for r in ranked if r in kept] == kept  # rank order, nothing invented
    assert len(kept) <= items
    assert sum(len(r.item.content.encode()) for r in kept) <= bytes_
    assert sum(estimate_tokens(r.item.content) for r in kept) <= tokens
    if ranked and len(ranked[0].item.content.encode()) <= bytes_ and estimate_tokens(ranked[0].item.content) <= tokens:
        assert kept[:1] == ranked[:1]  # the best candidate is kept whenever it fits on its own


@checked
@given(value=st.integers(-10, 10_000), field=st.sampled_from(["item_budget", "byte_budget", "token_budget"]))
def test_a_budget_out_of_range_is_refused_naming_its_field(value: int, field: str) -> None:
    args = {"item_budget": None, "byte_budget": None, "token_budget": None} | {field: value}
    ceiling = MAX_ITEM_BUDGET if field == "item_budget" else None
    in_range = value >= 1 and (ceiling is None or value <= ceiling)
    try:
        budgets = Budgets.from_request(args["item_budget"], args["byte_budget"], args["token_budget"])
    except ValidationFailed as exc:
        assert not in_range and exc.field == field
    else:
        assert in_range and value in (budgets.items, budgets.bytes, budgets.tokens)


# -- authority ------------------------------------------------------------------------------------------------


@checked
@given(source=st.sampled_from(list(SourceType)), principal=st.sampled_from(list(PrincipalType)), trusted=st.booleans())
def test_a_source_claims_at_most_what_its_principal_may(source: str, principal: str, trusted: bool) -> None:
    authority = derive_authority(source, principal, trusted=trusted)
    ceiling = derive_authority(default_source_type(principal), principal, trusted=trusted)
    assert authority <= ceiling
    if principal == PrincipalType.AGENT:
        assert authority <= Authority.TRUSTED_AGENT
    if source == SourceType.INFERRED:
        assert authority == Authority.INFERRED
    assert 0 < source_trust(authority) <= 1.0


def test_source_trust_orders_like_authority() -> None:
    ordered = sorted(Authority)
    assert [source_trust(a) for a in ordered] == sorted(source_trust(a) for a in ordered)
    assert len({source_trust(a) for a in ordered}) == len(ordered)


# -- secret redaction round trip ------------------------------------------------------------------------------

_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "_-"


def _token(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size)


secrets_ = st.one_of(
    st.builds(lambda body: "AKIA" + body, _token(string.ascii_uppercase + string.digits, 16)),
    st.builds(lambda body: "ghp_" + body, _token(_ALNUM, 36)),
    st.builds(lambda a, b: f"eng_{a}_{b}", _token("0123456789abcdef", 16), _token(_URLSAFE, 43)),
    st.builds(lambda body: "sk-ant-" + body, _token(_URLSAFE, 24)),
    st.builds(lambda body: "sk-proj-" + body + "a1", _token(_URLSAFE, 24)),
    st.builds(lambda body: "xoxb-1" + body, _token(_ALNUM, 12)),
    st.builds(lambda a, b, c: f"eyJ{a}.{b}.{c}", _token(_URLSAFE, 12), _token(_URLSAFE, 12), _token(_URLSAFE, 12)),
)
# prose: lower-case words, no digits, no assignment or URL punctuation: nothing in it looks like a credential
prose = st.lists(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=9), min_size=1, max_size=12).map(
    " ".join
)


@checked
@given(before=prose, secret=secrets_, after=prose)
def test_redaction_removes_the_secret_and_keeps_the_prose(before: str, secret: str, after: str) -> None:
    text = f"{before} {secret} {after}"
    findings = find_secrets(text)
    assert findings, text
    redacted = redact(text, findings)
    assert secret not in redacted
    assert redacted.startswith(before + " ") and redacted.endswith(" " + after)
    assert "[REDACTED:" in redacted
    assert find_secrets(redacted) == []  # redacted text scans clean: a second pass changes nothing
    assert redact(redacted, find_secrets(redacted)) == redacted


@checked
@given(text=prose)
def test_prose_without_secrets_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text, []) == text
