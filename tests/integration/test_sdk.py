"""The Python SDK (``engram_client``) against the real gateway (over ingest and recall, on the real database):
every operation answers its typed model, cursor iteration walks more than one page, a 429 is retried after
its Retry-After, and each problem code family is raised as its error class. The sync client is exercised
against a running ``engram up`` stack in tests/e2e/test_sdk_cli.py.

Routes of issue #15 that may not be on this branch yet (list, stats, patch, observe, batch, Idempotency-Key)
are tested when the gateway has them and skipped, saying so, when it does not."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from functools import cache

import asyncpg
import httpx
import pytest
import pytest_asyncio
from engram_client import (
    NO_RETRIES,
    AsyncEngramClient,
    Conflict,
    ConnectionFailed,
    Forbidden,
    NotFound,
    RateLimited,
    RetryPolicy,
    Unauthorized,
    ValidationFailed,
)
from engram_client import models as m

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.domain.models import CallerContext
from engram.runtime.ports import free_port
from services.gateway.app import create_app
from tests.support.keys import KeyMaker
from tests.support.tenants import create_tenant


@cache
def _routes() -> frozenset[tuple[str, str]]:
    paths = create_app(Settings()).openapi()["paths"]
    return frozenset((method.upper(), path) for path, ops in paths.items() for method in ops)


def needs(method: str, path: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        (method, path) not in _routes(), reason=f"{method} {path} (issue #15) is not on this branch's gateway yet"
    )


def _client(
    gateway: httpx.AsyncClient,
    key: str,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> AsyncEngramClient:
    """The SDK's async client sending through the gateway fixture's httpx client, with ``key``."""
    return AsyncEngramClient(api_key=key.removeprefix("Bearer "), http_client=gateway, retry=retry, sleep=sleep)


@pytest_asyncio.fixture
async def engram(gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext) -> AsyncEngramClient:
    """A user of a fresh tenant with the read, write and review scopes."""
    return _client(gateway, await make_key(tenant, ["read", "write", "review"]))


async def test_memory_operations_answer_their_models(engram: AsyncEngramClient) -> None:
    stored = await engram.remember("The staging database is restored every Sunday night.", tags=["ops"])
    assert isinstance(stored, m.Remembered) and stored.status == "created" and stored.item.tags == ["ops"]
    again = await engram.remember("The staging database is restored every Sunday night.")
    assert (again.status, again.id) == ("deduplicated", stored.id)

    item = await engram.get(stored.id)
    assert isinstance(item, m.Item) and item.content.startswith("The staging database")
    status = await engram.status(stored.id)
    assert status.id == stored.id and {s.name for s in status.stages} >= {"embedding"}
    trail = await engram.events(stored.id)
    assert [e.action for e in trail.events] == ["created"]
    readiness = await engram.promotion_readiness(stored.id)
    assert readiness.id == stored.id and readiness.ready is False  # active, not a proposal

    recalled = await engram.recall("staging database Sunday", mode="keyword")
    assert recalled.items[0].item.id == stored.id and recalled.recall_id
    found = await engram.search("restored Sunday", mode="keyword", limit=5)
    assert [hit.item.id for hit in found.items] == [stored.id]
    classified = await engram.classify("We decided to move the ledger to Postgres 16.")
    assert classified.kind == "decision" and classified.classifier == "rules"
    verdict = await engram.feedback(stored.id, "useful", recall_id=recalled.recall_id)
    assert verdict.verdict == "useful" and verdict.importance > item.importance

    other = await engram.remember("Staging restores take about forty minutes.")
    edge = await engram.link(other.id, stored.id, "references")
    assert (edge.src_id, edge.dst_id) == (other.id, stored.id)
    assert [e.id for e in (await engram.edges(stored.id)).items] == [edge.id]
    await engram.unlink(edge.id)
    assert (await engram.edges(stored.id)).items == []

    replaced = await engram.supersede(other.id, "Staging restores take about an hour.")
    assert replaced.status == "superseded" and replaced.superseded == [other.id]
    assert (await engram.get(other.id)).superseded_by == replaced.id

    proposal = await engram.remember("Every service exposes /ready.", kind="doctrine")
    assert proposal.review_status == "proposed"
    activated = await engram.review(proposal.id, "activate", reason="agreed in the design review")
    assert activated.review_status == "active"
    verified = await engram.verify(proposal.id)
    assert verified.human_verified is True
    invalidated = await engram.invalidate(replaced.id, "the restore job moved to Saturdays")
    assert invalidated.invalidated_at is not None

    deleted = await engram.delete(stored.id, reason="tidying up")
    assert deleted.item_id == stored.id
    assert [e.item_id for e in (await engram.trash()).items] == [stored.id]
    restored = await engram.restore(deleted.trash_id)
    assert restored.id == stored.id

    dry = await engram.bulk("archive", {"tags": ["ops"]})
    assert dry.dry_run is True and dry.affected == [stored.id]
    expiring = await engram.expiry_candidates(within_days=3650, limit=10)
    assert isinstance(expiring, m.Items)


async def test_conflicts_are_listed_and_resolved(engram: AsyncEngramClient) -> None:
    holder = await engram.remember("Bob prefers black coffee.", kind="preference", subject="bob.drink")
    rival = await engram.remember(
        "Bob prefers green tea.", kind="preference", subject="bob.drink", source_type="inferred"
    )
    assert rival.review_status == "proposed"
    [conflict] = (await engram.conflicts(item_id=holder.id)).items
    assert (conflict.existing_item_id, conflict.new_item_id, conflict.status) == (holder.id, rival.id, "open")
    assert [c.id async for c in engram.iter_conflicts(status="")] == [conflict.id]
    decided = await engram.resolve_conflict(conflict.id, "keep_existing", reason="asked Bob")
    assert decided.conflict.resolution == "keep_existing" and decided.new.review_status == "rejected"
    with pytest.raises(Conflict) as again:
        await engram.resolve_conflict(conflict.id, "keep_existing")
    assert again.value.code == "already_resolved" and again.value.status == 409


async def test_cursor_iteration_walks_every_page(engram: AsyncEngramClient) -> None:
    ids = [(await engram.remember(f"Throwaway note number {n} about paging.")).id for n in range(5)]
    trash_ids = [(await engram.delete(item_id)).trash_id for item_id in ids]
    first = await engram.trash(limit=2)
    assert len(first.items) == 2 and first.next_cursor  # positive control: more than one page
    walked = [entry.id async for entry in engram.iter_trash(page_size=2)]
    assert sorted(walked) == sorted(trash_ids) and len(walked) == len(set(walked))


async def test_problem_codes_raise_their_error_classes(
    engram: AsyncEngramClient, gateway: httpx.AsyncClient, make_key: KeyMaker, tenant: CallerContext
) -> None:
    stored = await engram.remember("The VPN endpoint is vpn.example.org.")

    with pytest.raises(NotFound) as missing:
        await engram.get(str(uuid.uuid4()))
    assert (missing.value.status, missing.value.code) == (404, "not_found")

    with pytest.raises(ValidationFailed) as invalid:
        await engram.remember("Importance out of range.", importance=3.0)
    assert (invalid.value.code, invalid.value.field) == ("validation_failed", "importance")
    with pytest.raises(ValidationFailed) as schema:
        await engram.remember("A body the schema refuses.", tags="not-a-list")  # type: ignore[typeddict-item]
    assert schema.value.field == "tags" and schema.value.errors[0]["rule"] == "list_type"

    await engram.invalidate(stored.id, "moved")
    with pytest.raises(Conflict) as twice:
        await engram.invalidate(stored.id, "moved again")
    assert (twice.value.status, twice.value.code) == (409, "already_invalidated")

    reader = _client(gateway, await make_key(tenant, ["read"]))
    assert (await reader.get(stored.id)).id == stored.id  # positive control: the key works for reading
    with pytest.raises(Forbidden) as scope:
        await reader.remember("A reader cannot write.")
    assert (scope.value.status, scope.value.code) == (403, "insufficient_scope")

    with pytest.raises(Unauthorized) as anonymous:
        await _client(gateway, "eng_nope_nope").get(stored.id)
    assert anonymous.value.code == "unauthenticated"


async def test_a_429_is_retried_after_retry_after(
    gateway: httpx.AsyncClient, make_key: KeyMaker, owner_pool: asyncpg.Pool
) -> None:
    """With a recall limit of 60 a minute (a burst of 60, then one a second), classify calls soon answer
    429 with Retry-After; the client waits at least that long, sends the call again, and answers it."""
    caller = await create_tenant(owner_pool)
    admin = _client(gateway, await make_key(caller, ["admin"]))
    await admin.admin_patch_tenant_config(rate_limits={"recall": 60})
    key = await make_key(caller, ["read"])

    strict = _client(gateway, key, retry=NO_RETRIES)
    with pytest.raises(RateLimited) as limited:
        for _ in range(200):
            await strict.classify("Deploys happen on Tuesdays.")
    assert limited.value.status == 429 and limited.value.retry_after is not None and limited.value.retry_after >= 1

    answers: list[tuple[int, str | None]] = []
    waits: list[float] = []

    async def seen(response: httpx.Response) -> None:
        answers.append((response.status_code, response.headers.get("retry-after")))

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    gateway.event_hooks = {"request": [], "response": [seen]}
    patient = _client(gateway, key, retry=RetryPolicy(max_attempts=3, max_wait_s=10), sleep=sleep)
    for _ in range(10):  # the bucket refills one token a second: a call soon meets an empty one
        answers.clear()
        result = await patient.classify("Deploys happen on Tuesdays.")
        if len(answers) > 1:
            break
    assert result.kind and answers[-1][0] == 200
    assert answers[0][0] == 429 and answers[0][1] is not None
    assert len(waits) == len(answers) - 1 and waits[0] >= float(answers[0][1])


async def test_connection_errors_are_retried_then_raised() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    nobody = AsyncEngramClient(
        f"http://127.0.0.1:{free_port()}", "eng_x_y", retry=RetryPolicy(max_attempts=3, backoff_s=0.01), sleep=sleep
    )
    async with nobody:
        with pytest.raises(ConnectionFailed) as failed:
            await nobody.get(str(uuid.uuid4()))
    assert failed.value.status is None and isinstance(failed.value.__cause__, httpx.ConnectError)
    assert len(waits) == 2  # three tries


async def test_admin_operations(gateway: httpx.AsyncClient, make_key: KeyMaker) -> None:
    platform = CallerContext(DEFAULT_TENANT_ID, DEFAULT_ADMIN_ID, "admin")  # the seeded platform administrator
    admin = _client(gateway, await make_key(platform, ["admin"]))
    tenant_id = (await admin.admin_create_tenant(f"sdk-{uuid.uuid4().hex[:8]}")).id
    workspace = (await admin.admin_create_workspace("research", tenant_id=tenant_id)).id
    principal = (await admin.admin_create_principal("indexer", "agent", tenant_id=tenant_id)).id
    member = await admin.admin_add_member(workspace, principal, "viewer", tenant_id=tenant_id)
    assert (member.workspace_id, member.role) == (workspace, "viewer")
    issued = await admin.admin_create_api_key(principal, scopes=["read"], label="sdk", tenant_id=tenant_id)
    assert issued.key.startswith("eng_") and issued.scopes == ["read"]
    assert [k.id for k in (await admin.admin_api_keys(tenant_id=tenant_id)).items] == [issued.id]
    await admin.admin_revoke_api_key(issued.id, tenant_id=tenant_id)
    assert (await admin.admin_api_keys(tenant_id=tenant_id)).items[0].revoked_at is not None

    config = await admin.admin_patch_tenant_config(tenant_id=tenant_id, trash_retention_days=7)
    assert config.version == 1 and config.config["trash_retention_days"] == 7
    assert (await admin.admin_tenant_config(tenant_id=tenant_id)).version == 1

    kind = await admin.admin_create_kind("meeting_note", tenant_id=tenant_id, default_importance=0.3)
    assert kind.built_in is False and kind.default_importance == pytest.approx(0.3)
    assert (await admin.admin_patch_kind("meeting_note", tenant_id=tenant_id, enabled=False)).enabled is False
    assert "meeting_note" in {k.name for k in (await admin.admin_kinds(tenant_id=tenant_id)).items}

    promotion = await admin.admin_promote(tenant_id=tenant_id)
    assert promotion.dry_run is True and promotion.decided == 0
    tunnel = await admin.admin_add_tunnel("infra", "ops", from_room="db", tenant_id=tenant_id)
    assert (tunnel.from_wing, tunnel.from_room, tunnel.to_room) == ("infra", "db", None)
    assert [t.id for t in (await admin.admin_tunnels(tenant_id=tenant_id)).items] == [tunnel.id]
    await admin.admin_remove_tunnel(tunnel.id, tenant_id=tenant_id)
    assert (await admin.admin_tunnels(tenant_id=tenant_id)).items == []


# The routes of issue #15, from the contract; each test runs once its route is on the gateway.


@needs("GET", "/v1/items")
async def test_list_items_iterates_over_pages(engram: AsyncEngramClient) -> None:
    ids = {(await engram.remember(f"Listed note {n}.", kind="fact", tags=["listed"])).id for n in range(5)}
    page = await engram.list_items(limit=2, tag="listed")
    assert len(page.items) == 2 and page.next_cursor
    walked = [item.id async for item in engram.iter_items(page_size=2, tag="listed", kind=["fact"])]
    assert set(walked) == ids and len(walked) == len(ids)


@needs("GET", "/v1/stats")
async def test_stats(engram: AsyncEngramClient) -> None:
    await engram.remember("Counted note.", kind="fact")
    stats = await engram.stats()
    assert stats.items.total >= 1 and stats.items.by_kind.get("fact", 0) >= 1


@needs("PATCH", "/v1/items/{item_id}")
async def test_patch(engram: AsyncEngramClient) -> None:
    stored = await engram.remember("Patched note.", subject="patching")
    patched = await engram.patch(stored.id, tags=["patched"], subject=None)
    assert patched.tags == ["patched"] and patched.subject is None
    with pytest.raises(ValidationFailed) as refused:
        await engram.patch(stored.id, content="new text")  # type: ignore[call-arg]
    assert refused.value.field == "content"


async def test_a_datetime_is_sent_with_its_offset_and_a_naive_one_is_refused(engram: AsyncEngramClient) -> None:
    """The SDK sends a datetime as it is given; the API reads no time in its host's local time."""
    stored = await engram.remember(
        "Dated note.", valid_from=datetime(2026, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=1)))
    )
    assert stored.item.valid_from == "2026-03-01T08:30:00Z"
    with pytest.raises(ValidationFailed) as refused:
        await engram.recall("dated", as_of=datetime(2026, 3, 1, 9, 30))
    assert refused.value.field == "as_of" and "timezone offset" in str(refused.value)


@needs("POST", "/v1/observe")
async def test_observe(engram: AsyncEngramClient) -> None:
    observed = await engram.observe("The build took 14 minutes.", source_session="ci-42")
    assert observed.status == "created" and observed.expires_at
    assert (await engram.get(observed.id)).kind == "observation"


@needs("POST", "/v1/remember/batch")
async def test_remember_batch_and_idempotency_key(engram: AsyncEngramClient) -> None:
    batch = await engram.remember_batch([{"content": "Batched one."}, {"content": "Bad.", "importance": 3.0}])
    assert [r.status for r in batch.results] == [201, 422]
    assert batch.results[0].answer is not None and batch.results[1].error is not None
    key = f"sdk-{uuid.uuid4()}"
    first = await engram.remember("Written once.", idempotency_key=key)
    replay = await engram.remember("Written once.", idempotency_key=key)
    assert (replay.id, replay.status) == (first.id, first.status)
    with pytest.raises(Conflict) as reused:
        await engram.remember("Another body.", idempotency_key=key)
    assert reused.value.code == "idempotency_key_reused"
