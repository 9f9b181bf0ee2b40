"""The conflicts consumer after embedding, and the reviewer's decisions through REST (real model, database)."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.db import identity
from engram.domain import conflict_rules
from engram.embeddings.provider import EmbeddingProvider
from engram.llm import JsonChat
from services.conflicts.service import ConflictsService
from services.embedder.service import EmbedderService
from tests.support.gateway import Headers, read_item, recall, remember
from tests.support.keys import principal_with_key
from tests.support.llm_stub import running_stub
from tests.support.outbox import deliver, outbox_envelopes
from tests.support.tenants import create_tenant


@pytest_asyncio.fixture
async def people(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, Any]:
    base = await create_tenant(owner_pool)
    people: dict[str, Any] = {"tenant_id": base.tenant_id}
    for name, kind, scopes in (
        ("user", "user", ["read", "write"]),
        ("reviewer", "user", ["read", "write", "review"]),
        ("agent", "agent", ["read", "write", "review"]),
        ("colleague", "user", ["read", "write"]),
    ):
        _, people[name] = await principal_with_key(app_pool, base.tenant_id, name, kind, scopes)
    return people


@dataclass(frozen=True)
class Workspace:
    """A tenant's "ops" workspace with its one member, the author, and a reader of the tenant outside it."""

    id: str
    author: Headers
    reader: Headers


@pytest_asyncio.fixture
async def ops(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> Workspace:
    base = await create_tenant(owner_pool)
    workspace = await identity.create_workspace(app_pool, base.tenant_id, "ops")
    author, author_headers = await principal_with_key(app_pool, base.tenant_id, "author")
    await identity.add_member(app_pool, base.tenant_id, workspace, author, "member")
    _, reader_headers = await principal_with_key(app_pool, base.tenant_id, "reader")
    return Workspace(workspace, author_headers, reader_headers)


class Pipeline:
    """Embed, then check for conflicts, exactly as the two consumers would on the relayed events."""

    def __init__(
        self,
        owner_pool: asyncpg.Pool,
        app_pool: asyncpg.Pool,
        settings: Settings,
        embedder: EmbeddingProvider,
        llm: JsonChat | None = None,
    ) -> None:
        self.owner_pool = owner_pool
        self.embed = EmbedderService(app_pool, settings, embedder)
        self.conflicts = ConflictsService(app_pool, settings, llm)

    async def run(self, *item_ids: str) -> None:
        assert await deliver(self.owner_pool, self.embed.handle, types=["memory.created"], subjects=item_ids) == {}
        assert await deliver(self.owner_pool, self.conflicts.handle, types=["memory.embedded"], subjects=item_ids) == {}


@pytest_asyncio.fixture
async def pipeline(
    owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider
) -> Pipeline:
    return Pipeline(owner_pool, app_pool, settings, embedder)


async def _conflict_check(gateway: httpx.AsyncClient, who: Headers, item_id: str) -> dict[str, Any]:
    """The conflict_check stage of the memory's pipeline status."""
    stages = (await gateway.get(f"/v1/items/{item_id}/status", headers=who)).json()["stages"]
    return next(s for s in stages if s["name"] == "conflict_check")  # type: ignore[no-any-return]


async def _check_detail(gateway: httpx.AsyncClient, who: Headers, item_id: str) -> str:
    return str((await _conflict_check(gateway, who, item_id))["detail"])


async def _conflicts(gateway: httpx.AsyncClient, who: Headers, **params: str) -> list[dict[str, Any]]:
    response = await gateway.get("/v1/conflicts", params=params, headers=who)
    assert response.status_code == 200, response.text
    return response.json()["items"]  # type: ignore[no-any-return]


async def test_a_weaker_contradiction_is_disputed_and_a_reviewer_keeps_the_existing(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline, owner_pool: asyncpg.Pool
) -> None:
    user, agent, reviewer = people["user"], people["agent"], people["reviewer"]
    strong = await remember(gateway, user, "The API gateway timeout is 30 seconds.")
    weak = await remember(gateway, agent, "The API gateway timeout is 60 seconds.", source_type="inferred")
    await pipeline.run(strong, weak)
    assert (await read_item(gateway, user, weak))["review_status"] == "disputed"
    assert (await read_item(gateway, user, strong))["review_status"] == "active"
    [changed] = await outbox_envelopes(owner_pool, types=["memory.review_changed"], subjects=[weak, strong])
    assert (changed["subject"], changed["data"]["to"]) == (weak, "disputed")
    [conflict] = await _conflicts(gateway, user, item_id=strong)
    assert conflict["type"] == "contradiction" and conflict["status"] == "open"
    assert (conflict["existing_item_id"], conflict["new_item_id"]) == (strong, weak)
    assert conflict["detector"].startswith("rules:numbers_differ") and "30" in conflict["explanation"]
    check = await _conflict_check(gateway, user, weak)
    assert check["status"] == "done" and "contradiction" in check["detail"]
    hits = await recall(gateway, user, "API gateway timeout")
    assert hits[0]["item"]["id"] == strong
    assert any(r.startswith("open conflict with") for r in hits[0]["reasons"])

    await deliver(
        pipeline.owner_pool, pipeline.conflicts.handle, types=["memory.embedded"], subjects=[weak]
    )  # redelivered
    assert len(await _conflicts(gateway, user, item_id=strong, status="")) == 1

    for who, status, code in ((agent, 403, "review_not_allowed"), (user, 403, "insufficient_scope")):
        refused = await gateway.post(
            f"/v1/conflicts/{conflict['id']}/resolve", json={"resolution": "accept_new"}, headers=who
        )
        assert refused.status_code == status and refused.json()["code"] == code
    decided = await gateway.post(
        f"/v1/conflicts/{conflict['id']}/resolve",
        json={"resolution": "keep_existing", "reason": "checked the config"},
        headers=reviewer,
    )
    assert decided.status_code == 200, decided.text
    body = decided.json()
    assert body["conflict"]["status"] == "resolved" and body["conflict"]["resolution"] == "keep_existing"
    assert body["new"]["review_status"] == "rejected" and body["existing"]["review_status"] == "active"
    again = await gateway.post(
        f"/v1/conflicts/{conflict['id']}/resolve", json={"resolution": "keep_existing"}, headers=reviewer
    )
    assert again.status_code == 409 and again.json()["code"] == "already_resolved"
    assert await _conflicts(gateway, user, item_id=strong) == []
    assert len(await outbox_envelopes(owner_pool, types=["conflict.resolved"], subjects=[conflict["id"]])) == 1


async def test_outcomes_follow_authority(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user, agent = people["user"], people["agent"]
    # a stronger contradiction disputes the existing memory
    old = await remember(gateway, agent, "Alice lives in Paris.", source_type="inferred")
    new = await remember(gateway, user, "Alice lives in Berlin.")
    await pipeline.run(old, new)
    assert (await read_item(gateway, user, old))["review_status"] == "disputed"
    assert (await read_item(gateway, user, new))["review_status"] == "active"
    # an equal-authority refinement is suggested to a reviewer: nothing is superseded automatically
    base = await remember(gateway, user, "We deploy on Tuesdays.")
    detail = await remember(gateway, user, "We deploy on Tuesdays after the standup, with two approvals.")
    await pipeline.run(base, detail)
    assert (await read_item(gateway, user, base))["superseded_by"] is None
    assert (await read_item(gateway, user, detail))["review_status"] == "active"
    [suggested] = await _conflicts(gateway, user, item_id=detail)
    assert suggested["type"] == "refinement" and suggested["existing_item_id"] == base
    # a weaker refinement becomes a proposal with an open refinement conflict
    rule = await remember(gateway, user, "Backups run nightly.")
    more = await remember(
        gateway, agent, "Backups run nightly and are kept for 30 days in cold storage.", source_type="inferred"
    )
    await pipeline.run(rule, more)
    assert (await read_item(gateway, user, more))["review_status"] == "proposed"
    assert (await read_item(gateway, user, rule))["superseded_by"] is None
    [refinement] = await _conflicts(gateway, user, item_id=more)
    assert refinement["type"] == "refinement"
    # a duplicate is recorded and changes neither memory
    lone = await remember(gateway, user, "The office plants are watered on Fridays.")
    twin = await remember(gateway, people["colleague"], "The office plants are watered on Fridays.")
    await pipeline.run(lone, twin)
    [duplicate] = await _conflicts(gateway, user, item_id=lone, status="")
    assert duplicate["type"] == "duplicate" and duplicate["new_item_id"] == twin
    assert [(await read_item(gateway, user, i))["review_status"] for i in (lone, twin)] == ["active", "active"]


async def test_private_memories_of_others_are_not_compared(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    mine = await remember(gateway, people["colleague"], "The build cache lives on disk B.", visibility="private")
    theirs = await remember(gateway, people["user"], "The build cache lives on disk C.")
    await pipeline.run(mine, theirs)
    assert (await read_item(gateway, people["user"], theirs))["review_status"] == "active"
    assert (await read_item(gateway, people["colleague"], mine))["review_status"] == "active"
    assert await _conflicts(gateway, people["colleague"], item_id=mine, status="") == []


async def test_reviewer_decisions_accept_keep_both_and_merge(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user, agent, reviewer = people["user"], people["agent"], people["reviewer"]
    pairs = {}
    for name, (a, b) in {
        "accept": ("The cluster has 12 nodes.", "The cluster has 16 nodes."),
        "both": ("The release branch is cut on day 3.", "The release branch is cut on day 5."),
        "merge": ("The SLA is 99.9 percent.", "The SLA is 99.5 percent."),
    }.items():
        first = await remember(gateway, user, a)
        second = await remember(gateway, agent, b, source_type="inferred")
        await pipeline.run(first, second)
        [conflict] = await _conflicts(gateway, user, item_id=second)
        pairs[name] = (first, second, conflict["id"])

    first, second, conflict_id = pairs["accept"]
    body = (
        await gateway.post(f"/v1/conflicts/{conflict_id}/resolve", json={"resolution": "accept_new"}, headers=reviewer)
    ).json()
    assert body["existing"]["superseded_by"] == second and body["new"]["review_status"] == "active"
    first, second, conflict_id = pairs["both"]
    body = (
        await gateway.post(f"/v1/conflicts/{conflict_id}/resolve", json={"resolution": "keep_both"}, headers=reviewer)
    ).json()
    assert (body["existing"]["review_status"], body["new"]["review_status"]) == ("active", "active")
    first, second, conflict_id = pairs["merge"]
    missing = await gateway.post(f"/v1/conflicts/{conflict_id}/resolve", json={"resolution": "merge"}, headers=reviewer)
    assert missing.status_code == 422 and missing.json()["field"] == "content"
    body = (
        await gateway.post(
            f"/v1/conflicts/{conflict_id}/resolve",
            json={"resolution": "merge", "content": "The SLA is 99.9 percent for paid plans, 99.5 for free."},
            headers=reviewer,
        )
    ).json()
    merged = body["merged"]["id"]
    assert body["existing"]["superseded_by"] == merged and body["new"]["superseded_by"] == merged
    assert body["merged"]["authority"] == 50 and body["conflict"]["resolution"] == "merge"
    assert (
        await gateway.post("/v1/conflicts/not-a-uuid/resolve", json={"resolution": "keep_both"}, headers=reviewer)
    ).status_code == 404


async def test_a_configured_judge_labels_what_the_rules_leave_and_bad_answers_change_nothing(
    gateway: httpx.AsyncClient,
    people: dict[str, Any],
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    user, agent = people["user"], people["agent"]
    async with running_stub() as stub:
        llm = JsonChat(stub.base_url, "judge-model", "k", timeout_s=1)
        # the learned judge off: this is what the model judge labels where the rules leave a pair (the learned judge,
        # with its nearest labelled changes, itself flags "platform team" → "data team" below, at 0.73)
        rules_only = settings.model_copy(update={"conflict_learned_judge": False})
        judged = Pipeline(owner_pool, app_pool, rules_only, embedder, llm)
        # "is responsible for" is no relation the rules read ("owns" is, since 2026-12-02): the judge decides
        stub.answers.append({"label": "none", "confidence": 0.9, "explanation": "unrelated"})  # parsed, no change
        stub.default = "definitely contradicts"  # not JSON: refused
        a = await remember(gateway, user, "The payments team is responsible for the ledger service.")
        b = await remember(
            gateway, agent, "The platform team is responsible for the ledger service.", source_type="inferred"
        )
        await judged.run(a, b)
        assert await _conflicts(gateway, user, item_id=a, status="") == []
        stub.answers.append({"label": "contradiction", "confidence": 0.8, "explanation": "two owners"})
        c = await remember(
            gateway, agent, "The data team is responsible for the ledger service.", source_type="inferred"
        )
        await judged.run(c)
        await llm.close()
    found = await _conflicts(gateway, user, item_id=c)
    assert len(found) == 1 and found[0]["detector"] == "llm:judge-model" and found[0]["explanation"] == "two owners"
    # the judge's one contradiction is between the two inferred memories: neither is weaker, so the conflict waits
    # for a reviewer and both stay active
    assert (found[0]["existing_item_id"], found[0]["new_item_id"]) == (b, c)
    assert [(await read_item(gateway, user, i))["review_status"] for i in (b, c)] == ["active", "active"]


async def test_episodic_memories_are_not_compared(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user = people["user"]
    noon = await remember(gateway, user, "Saw 120 errors on the checkout page at noon.", kind="observation")
    later = await remember(gateway, user, "Saw 480 errors on the checkout page at noon.", kind="observation")
    await pipeline.run(noon, later)
    assert [(await read_item(gateway, user, i))["review_status"] for i in (noon, later)] == ["active", "active"]
    assert await _conflicts(gateway, user, item_id=noon, status="") == []
    assert await _check_detail(gateway, user, later) == "observation is episodic: not compared"


async def test_a_contradiction_between_two_kinds_opens_a_conflict(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user, agent = people["user"], people["agent"]
    # a fact contradicted by a weaker decision: the decision is disputed, as it would be between two facts
    fact = await remember(gateway, user, "The API gateway timeout is 30 seconds.", kind="fact")
    decision = await remember(
        gateway, agent, "The API gateway timeout is 60 seconds.", kind="decision", source_type="inferred"
    )
    await pipeline.run(fact, decision)
    [conflict] = await _conflicts(gateway, user, item_id=fact)
    assert conflict["type"] == "contradiction" and (conflict["existing_item_id"], conflict["new_item_id"]) == (
        fact,
        decision,
    )
    assert (await read_item(gateway, user, decision))["review_status"] == "disputed"
    assert (await read_item(gateway, user, fact))["review_status"] == "active"
    # a stronger fact contradicting a preference disputes the preference: authority decides, not the kind
    liked = await remember(gateway, agent, "Alice lives in Paris.", kind="preference", source_type="inferred")
    lives = await remember(gateway, user, "Alice lives in Berlin.", kind="fact")
    await pipeline.run(liked, lives)
    [other] = await _conflicts(gateway, user, item_id=lives)
    assert other["type"] == "contradiction" and other["detector"].startswith("rules:")
    assert (await read_item(gateway, user, liked))["review_status"] == "disputed"
    assert "contradiction" in await _check_detail(gateway, user, lives)


async def test_an_episodic_memory_is_no_neighbour_of_a_fact_it_contradicts(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user = people["user"]
    seen = await remember(gateway, user, "The API gateway timeout is 60 seconds.", kind="observation")
    fact = await remember(gateway, user, "The API gateway timeout is 30 seconds.", kind="fact")
    later = await remember(gateway, user, "The API gateway timeout is 90 seconds.", kind="diary_entry")
    await pipeline.run(seen, fact, later)
    assert await _conflicts(gateway, user, status="") == []
    assert [(await read_item(gateway, user, i))["review_status"] for i in (seen, fact, later)] == ["active"] * 3
    assert await _check_detail(gateway, user, fact) == "0 near memories compared: no conflict"
    assert await _check_detail(gateway, user, later) == "diary_entry is episodic: not compared"


async def test_accepting_a_new_memory_that_is_gone_is_refused(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user, agent, reviewer = people["user"], people["agent"], people["reviewer"]
    strong = await remember(gateway, user, "The staging database has 64 GB of memory.")
    weak = await remember(gateway, agent, "The staging database has 32 GB of memory.", source_type="inferred")
    await pipeline.run(strong, weak)
    [conflict] = await _conflicts(gateway, user, item_id=weak)
    assert (
        await gateway.post(f"/v1/items/{weak}/invalidate", json={"reason": "wrong host"}, headers=agent)
    ).status_code == 200
    refused = await gateway.post(
        f"/v1/conflicts/{conflict['id']}/resolve", json={"resolution": "accept_new"}, headers=reviewer
    )
    assert refused.status_code == 409 and refused.json()["code"] == "not_live"
    assert (await read_item(gateway, user, strong))["superseded_by"] is None
    assert (
        await gateway.post("/v1/conflicts/nope/resolve", json={"resolution": "keep_both"}, headers=reviewer)
    ).json()["detail"] == "no conflict nope"


async def test_the_rules_run_off_the_event_loop_and_a_pair_past_their_bounds_is_named(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, agent = people["user"], people["agent"]
    threads: list[int] = []
    real_judge = conflict_rules.judge_with_learned  # the rules, then the learned judge: what the consumer calls

    def spy(*args: Any, **kwargs: Any) -> conflict_rules.Verdict | None:
        threads.append(threading.get_ident())
        return real_judge(*args, **kwargs)

    monkeypatch.setattr(conflict_rules, "judge_with_learned", spy)
    strong = await remember(gateway, user, "The API gateway timeout is 30 seconds.")
    weak = await remember(gateway, agent, "The API gateway timeout is 60 seconds.", source_type="inferred")
    await pipeline.run(strong, weak)
    assert (await read_item(gateway, user, weak))["review_status"] == "disputed"  # the rules still decide
    assert threads and threading.get_ident() not in threads  # never on the consumer's event loop

    ports = [8000 + i for i in range(150)]
    listed = await remember(gateway, user, "The open ports are " + " ".join(map(str, ports)) + ".")
    changed = await remember(gateway, user, "The open ports are " + " ".join(map(str, [*ports[:-1], 9999])) + ".")
    await pipeline.run(listed, changed)
    assert await _conflicts(gateway, user, item_id=changed, status="") == []
    detail = await _check_detail(gateway, user, changed)
    assert "no conflict; rules bounded on 1 pair (a text holds more than 100 quantities" in detail


async def test_a_reader_of_one_side_learns_nothing_of_the_side_it_cannot_read(
    gateway: httpx.AsyncClient, ops: Workspace, pipeline: Pipeline
) -> None:
    """The conflict outcomes on a readable memory (its audit reasons, its successor, its stage details) name
    neither the words nor the id of the author's private memory on the other side; the recall count is the
    author's and the workspace writers' to see."""
    author, reader = ops.author, ops.reader
    shared = {"workspace_id": ops.id, "visibility": "tenant"}
    hidden_fields = {"workspace_id": ops.id, "visibility": "private"}
    disputed = await remember(gateway, author, "Alice lives in Paris.", source_type="inferred", **shared)
    rival = await remember(gateway, author, "Alice lives in Berlin.", **hidden_fields)
    replaced = await remember(gateway, author, "We deploy on Tuesdays.", **shared)
    refined = await remember(  # the conflicts consumer supersedes nothing itself: the author does
        gateway,
        author,
        "We deploy on Tuesdays after the standup, with two approvals.",
        supersedes=[replaced],
        **hidden_fields,
    )
    await pipeline.run(disputed, rival, replaced, refined)

    async def seen(viewer: Headers, item_id: str) -> tuple[dict[str, Any], str]:
        item = await gateway.get(f"/v1/items/{item_id}", headers=viewer)
        events = await gateway.get(f"/v1/items/{item_id}/events", headers=viewer)
        status = await gateway.get(f"/v1/items/{item_id}/status", headers=viewer)
        assert {item.status_code, events.status_code, status.status_code} == {200}
        return item.json(), json.dumps([events.json(), status.json()])

    # populated: the author sees the outcomes and what they point at
    item, trail = await seen(author, disputed)
    assert item["review_status"] == "disputed" and rival in trail and isinstance(item["recall_count"], int)
    item, trail = await seen(author, replaced)
    assert item["superseded_by"] == refined and refined in trail
    # the reader reads both public sides, and nothing of the private ones
    assert (await gateway.get(f"/v1/items/{rival}", headers=reader)).status_code == 404
    for item_id, hidden, words in ((disputed, rival, ("Berlin",)), (replaced, refined, ("standup", "approvals"))):
        item, trail = await seen(reader, item_id)
        shown = json.dumps(item) + trail
        assert hidden not in shown, item_id
        for word in words:
            assert word not in shown, (item_id, word)
        assert item["superseded_by"] is None and item["recall_count"] is None
    history = await gateway.post(
        "/v1/recall",
        json={"mode": "keyword", "query": "deploy Tuesdays", "include_superseded": True},
        headers=reader,
    )
    [hit] = [h for h in history.json()["items"] if h["item"]["id"] == replaced]
    assert "history: superseded by a memory you cannot see" in hit["reasons"]
    assert refined not in json.dumps(history.json())
    listed = await gateway.get("/v1/items", params={"include_superseded": "true"}, headers=reader)
    [row] = [i for i in listed.json()["items"] if i["id"] == replaced]
    assert row["superseded_by"] is None and row["recall_count"] is None
    assert refined not in listed.text and rival not in listed.text


THURSDAYS = "The team deploys the billing service every Thursday afternoon."
NINETY_DAYS = "The billing service keeps its logs for ninety days."


async def test_a_paraphrase_takes_one_recall_slot_held_by_the_stronger_which_names_the_other(
    gateway: httpx.AsyncClient,
    people: dict[str, Any],
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    """Duplicates are the rules'; the learned judge, on, leaves the other fact of the same service alone."""
    pipeline = Pipeline(owner_pool, app_pool, settings, embedder)
    user, agent = people["user"], people["agent"]
    strong = await remember(gateway, user, THURSDAYS)
    weak = await remember(
        gateway, agent, "Every Thursday afternoon, the team deploys the billing service.", source_type="inferred"
    )
    other = await remember(gateway, user, NINETY_DAYS)
    await pipeline.run(strong, weak, other)

    [recorded] = await _conflicts(gateway, user, item_id=weak)
    assert recorded["type"] == "duplicate" and (recorded["existing_item_id"], recorded["new_item_id"]) == (strong, weak)
    assert f"duplicate with {strong} (record)" in await _check_detail(gateway, user, weak)
    [event] = await outbox_envelopes(owner_pool, types=["conflict.detected"], subjects=[recorded["id"]])
    assert event["data"]["type"] == "duplicate"
    assert [(await read_item(gateway, user, i))["review_status"] for i in (strong, weak)] == ["active", "active"]

    hits = await recall(gateway, user, "billing service")
    shown = [h["item"]["id"] for h in hits]
    assert weak not in shown and shown.count(strong) == 1
    assert other in shown  # a different fact keeps its own slot
    [kept] = [h for h in hits if h["item"]["id"] == strong]
    assert f"duplicate of {weak}, shown once: this is the stronger" in kept["reasons"]
    assert not any(r.startswith("open conflict") for r in kept["reasons"])  # a duplicate is no disagreement


async def test_another_fact_of_the_same_service_is_no_contradiction(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    """Its ten nearest labelled changes are "no longer" contradictions that drop an "every …" phrase; they count
    only as far as the two texts speak of one thing (2 of 6 content stems shared: learned.one_thing)."""
    user = people["user"]
    first, second = await remember(gateway, user, THURSDAYS), await remember(gateway, user, NINETY_DAYS)
    await pipeline.run(first, second)
    assert await _conflicts(gateway, user, item_id=second, status="") == []


async def test_turns_of_one_session_neither_contradict_nor_replace_each_other(
    gateway: httpx.AsyncClient, people: dict[str, Any], pipeline: Pipeline
) -> None:
    user = people["user"]
    chat = {"source_session": "chat-1"}
    said = await remember(gateway, user, "Alice lives in Paris.", **chat)
    later = await remember(gateway, user, "Alice lives in Berlin.", **chat)
    short = await remember(gateway, user, "We deploy on Tuesdays.", **chat)
    longer = await remember(gateway, user, "We deploy on Tuesdays after the standup, with two approvals.", **chat)
    await pipeline.run(said, later, short, longer)
    for item_id in (said, later, short, longer):
        item = await read_item(gateway, user, item_id)
        assert (item["review_status"], item["superseded_by"]) == ("active", None)
        assert await _conflicts(gateway, user, item_id=item_id, status="") == []
    assert f"contradiction with {said} (none: same session)" in await _check_detail(gateway, user, later)

    # positive control: the same kinds of pairs from two sessions are handled as before
    first, second = {"source_session": "chat-2"}, {"source_session": "chat-3"}
    rome = await remember(gateway, user, "Bob lives in Rome.", **first)
    oslo = await remember(gateway, user, "Bob lives in Oslo.", **second)
    await pipeline.run(rome, oslo)
    [contradiction] = await _conflicts(gateway, user, item_id=oslo)
    assert contradiction["type"] == "contradiction"
    assert f"contradiction with {rome} (record)" in await _check_detail(gateway, user, oslo)  # peers: none disputed
    backups = await remember(gateway, user, "Backups run nightly.", **first)
    kept = await remember(gateway, user, "Backups run nightly and are kept in cold storage for a month.", **second)
    await pipeline.run(backups, kept)
    [refinement] = await _conflicts(gateway, user, item_id=kept)
    assert refinement["type"] == "refinement"
    assert (await read_item(gateway, user, backups))["superseded_by"] is None


async def test_a_duplicate_the_reader_cannot_see_is_not_named(
    gateway: httpx.AsyncClient, ops: Workspace, pipeline: Pipeline
) -> None:
    author, reader = ops.author, ops.reader
    shared = await remember(
        gateway, author, "The ledger service rotates its keys every quarter.", workspace_id=ops.id, visibility="tenant"
    )
    hidden = await remember(
        gateway,
        author,
        "Every quarter, the ledger service rotates its keys.",
        workspace_id=ops.id,
        visibility="private",
    )
    await pipeline.run(shared, hidden)

    # the author reads both: one slot, held by the newer of two equals, naming the other
    [hit] = [h for h in await recall(gateway, author, "ledger keys quarter") if h["item"]["id"] in (shared, hidden)]
    assert hit["item"]["id"] == hidden
    assert f"duplicate of {shared}, shown once: this is the stronger" in hit["reasons"]
    # the reader gets the memory it may read, told there is a duplicate, never which
    answer = await gateway.post("/v1/recall", json={"mode": "keyword", "query": "ledger keys quarter"}, headers=reader)
    [seen] = [h for h in answer.json()["items"] if h["item"]["id"] == shared]
    assert "duplicate of a memory you cannot see" in seen["reasons"]
    assert hidden not in answer.text
    assert hidden not in await _check_detail(gateway, reader, shared)


async def test_a_contradiction_the_rules_miss_is_opened_by_the_learned_judge(
    gateway: httpx.AsyncClient,
    people: dict[str, Any],
    ops: Workspace,
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    """A pair of bench/data/conflicts the rules see no replacement in (docs/adr/0008-learned-contradiction-judge.md):
    the learned judge opens the contradiction conflict, explained (the nearest labelled changes among its reasons,
    read from both memories' own vectors); turned off, the rules alone open none."""
    existing, new = "Monitoring is done with Nagios.", "Nagios was retired; monitoring is Prometheus now."
    assert conflict_rules.judge(existing, new, 0.87, floor=settings.conflict_similarity_floor) is None
    user = people["user"]
    old = await remember(gateway, user, existing)
    fresh = await remember(gateway, user, new)
    await Pipeline(owner_pool, app_pool, settings, embedder).run(old, fresh)
    [conflict] = await _conflicts(gateway, user, item_id=fresh)
    assert (conflict["type"], conflict["detector"], conflict["rule"]) == ("contradiction", "learned", "learned_judge")
    assert re.match(r"learned judge [01]\.\d\d \(threshold 0\.\d\d\): ", conflict["explanation"])  # 1.00 since λ 1
    assert "'now', 'retired' only in the new memory" in conflict["explanation"]
    # the consumer hands over both memories' own vectors: the judge read its nearest labelled changes, and names them
    assert (
        "; nearest labelled changes: " in conflict["explanation"]
        and " of 10 contradictions (" in conflict["explanation"]
    )
    # one author, one authority: neither memory is weaker, so neither is disputed. Both stay in recall with the
    # open conflict named and its lower trust until a reviewer decides (the judge's false alarms, 10-14% of what it
    # flags on a new writer's pairs, used to hide the memory just written)
    assert [(await read_item(gateway, user, i))["review_status"] for i in (old, fresh)] == ["active", "active"]
    # a subscriber sees the conflict detected and no review change of either memory
    [event] = await outbox_envelopes(owner_pool, types=["conflict.detected"], subjects=[conflict["id"]])
    assert event["data"]["type"] == "contradiction"
    assert await outbox_envelopes(owner_pool, types=["memory.review_changed"], subjects=[old, fresh]) == []
    hits = {h["item"]["id"]: h["reasons"] for h in await recall(gateway, user, "monitoring Nagios Prometheus")}
    assert set(hits) == {old, fresh}
    assert f"open conflict with {old} (trust ×0.75)" in hits[fresh]
    assert f"open conflict with {fresh} (trust ×0.75)" in hits[old]

    off = settings.model_copy(update={"conflict_learned_judge": False})
    old = await remember(gateway, ops.author, existing)
    fresh = await remember(gateway, ops.author, new)
    await Pipeline(owner_pool, app_pool, off, embedder).run(old, fresh)
    assert (await _check_detail(gateway, ops.author, fresh)).startswith("1 near memory compared: no conflict")
    assert await _conflicts(gateway, ops.author, item_id=fresh, status="") == []
