"""Context passages (docs/adr/0009-context-passages.md): a memory of a session is embedded for search together with
the memory before it in its session, and keeps the vector of its own text for what compares its meaning (real
PostgreSQL and model)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import asyncpg
import numpy as np
import pytest

from engram.config import Settings
from engram.db import embeddings, identity, stages
from engram.db.pool import tenant_tx
from engram.domain.content import passage
from engram.domain.models import CallerContext
from engram.domain.patching import PatchValues
from engram.domain.values import PipelineStage
from engram.embeddings.provider import EmbeddingProvider
from engram.errors import Unavailable
from services.classifier.service import ClassifierService
from services.conflicts.service import ConflictsService
from services.embedder.service import EmbedderService
from services.ingest.patch import PatchService
from services.ingest.service import IngestService, RememberCommand
from services.ingest.trash import TrashService
from tests.support.keys import principal_with_key
from tests.support.outbox import deliver, outbox_events

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
BEFORE = "I went hiking in the mountains near Denver last weekend with my sister."
TURN = "The new office coffee machine makes a terrible espresso, we should return it."


async def _remember(
    app_pool: asyncpg.Pool, settings: Settings, who: CallerContext, content: str, **fields: object
) -> str:
    command = RememberCommand(content=content, valid_from=WHEN, **fields)  # type: ignore[arg-type]
    return str((await IngestService(app_pool, settings).remember(who, command)).item.id)


async def _embed(owner_pool: asyncpg.Pool, service: EmbedderService, *item_ids: str) -> None:
    assert await deliver(owner_pool, service.handle, types=["memory.created"], subjects=item_ids) == {}


async def _two_turns(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
    session: str,
) -> tuple[str, str, EmbedderService]:
    """Two turns of ``session``, BEFORE then TURN, embedded (the second with the first), and the embedder."""
    first = await _remember(app_pool, settings, tenant, BEFORE, source_session=session)
    second = await _remember(app_pool, settings, tenant, TURN, source_session=session)
    service = EmbedderService(app_pool, settings, embedder)
    await _embed(owner_pool, service, first, second)
    return first, second, service


async def _rows(owner_pool: asyncpg.Pool, item_id: str) -> dict[str, tuple[np.ndarray, str | None]]:
    """The item's stored vectors by profile, each with the predecessor it was built with."""
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT profile, embedding, context_item_id FROM memory_embeddings WHERE item_id = $1", item_id
        )
    return {
        r["profile"]: (
            np.asarray(r["embedding"].to_numpy(), dtype=np.float32),
            None if r["context_item_id"] is None else str(r["context_item_id"]),
        )
        for r in rows
    }


async def _writes(owner_pool: asyncpg.Pool, *item_ids: str) -> tuple[dict[tuple[str, str], datetime], int]:
    """When each vector of the items was written, and how many memory.embedded events name them."""
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT item_id, profile, created_at FROM memory_embeddings WHERE item_id = ANY($1::uuid[])", item_ids
        )
        events = await conn.fetchval(
            "SELECT count(*) FROM outbox WHERE envelope->>'type' = 'engram.memory.embedded'"
            " AND envelope->>'subject' = ANY($1::text[])",
            item_ids,
        )
    return {(str(r["item_id"]), r["profile"]): r["created_at"] for r in rows}, events


async def _one(embedder: EmbeddingProvider, text: str) -> np.ndarray:
    return (await embedder.embed_passages([passage(text, WHEN)]))[0]


async def _colleague(app_pool: asyncpg.Pool, tenant: CallerContext, name: str) -> CallerContext:
    principal, _ = await principal_with_key(app_pool, tenant.tenant_id, name)
    return dataclasses.replace(tenant, principal_id=principal)


async def test_a_turn_after_another_of_its_session_is_searched_with_it_and_keeps_its_own_vector(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first, second, _ = await _two_turns(app_pool, owner_pool, settings, tenant, embedder, "chat-1")
    profile = settings.embedding_profile
    assert set(await _rows(owner_pool, first)) == {profile}  # the first turn of its session: its own text
    assert (await _rows(owner_pool, first))[profile][1] is None
    rows = await _rows(owner_pool, second)
    assert set(rows) == {profile, embeddings.content_profile(profile)}
    searched, context = rows[profile]
    assert context == first
    assert float(searched @ await _one(embedder, BEFORE + "\n" + TURN)) >= 0.999
    own, none = rows[embeddings.content_profile(profile)]
    assert none is None and float(own @ await _one(embedder, TURN)) >= 0.999
    async with tenant_tx(app_pool, tenant.tenant_id) as conn:
        read = await embeddings.content_vectors(conn, [first, second], profile)
    assert float(read[second] @ own) >= 0.999  # what the memory says by itself
    assert float(read[first] @ (await _rows(owner_pool, first))[profile][0]) >= 0.999


async def test_only_an_earlier_turn_of_the_same_author_workspace_and_session_readable_as_widely_is_a_predecessor(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    colleague = await _colleague(app_pool, tenant, "colleague")
    elsewhere = await identity.create_workspace(app_pool, tenant.tenant_id, "elsewhere")
    await identity.add_member(app_pool, tenant.tenant_id, elsewhere, tenant.principal_id, "member")
    first = await _remember(app_pool, settings, tenant, BEFORE, source_session="chat-2")
    by_another = await _remember(app_pool, settings, colleague, TURN, source_session="chat-2")
    in_another_workspace = await _remember(
        app_pool, settings, tenant, "Which espresso beans do you buy?", source_session="chat-2", workspace_id=elsewhere
    )
    private = await _remember(
        app_pool,
        settings,
        tenant,
        "My doctor says I should drink less coffee.",
        source_session="chat-3",
        visibility="private",
    )
    wider = await _remember(app_pool, settings, tenant, TURN, source_session="chat-3", visibility="workspace")
    no_session = await _remember(app_pool, settings, tenant, "The espresso machine is on the third floor.")
    service = EmbedderService(app_pool, settings, embedder)
    await _embed(owner_pool, service, first, by_another, in_another_workspace, private, wider, no_session)
    for item_id in (first, by_another, in_another_workspace, private, wider, no_session):
        rows = await _rows(owner_pool, item_id)
        assert list(rows) == [settings.embedding_profile], item_id
        assert rows[settings.embedding_profile][1] is None
    assert float((await _rows(owner_pool, wider))[settings.embedding_profile][0] @ await _one(embedder, TURN)) >= 0.999
    # a private turn after a workspace one of its author's session is read by fewer: it may take that one's text
    narrower = await _remember(
        app_pool, settings, tenant, "I only drink decaf after noon.", source_session="chat-3", visibility="private"
    )
    await _embed(owner_pool, service, narrower)
    assert (await _rows(owner_pool, narrower))[settings.embedding_profile][1] == wider


async def test_with_the_setting_off_each_memory_has_one_vector_of_its_own_text(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    off = settings.model_copy(update={"context_passages": False})
    first = await _remember(app_pool, off, tenant, BEFORE, source_session="chat-4")
    second = await _remember(app_pool, off, tenant, TURN, source_session="chat-4")
    await _embed(owner_pool, EmbedderService(app_pool, off, embedder), first, second)
    rows = await _rows(owner_pool, second)
    assert list(rows) == [off.embedding_profile] and rows[off.embedding_profile][1] is None
    assert float(rows[off.embedding_profile][0] @ await _one(embedder, TURN)) >= 0.999


@pytest.mark.parametrize("checked", ["paraphrase", "turn"])
async def test_a_paraphrase_of_a_turn_in_the_middle_of_a_session_is_its_duplicate_by_what_the_turn_says(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
    checked: str,
) -> None:
    """Checked on the paraphrase's event, the turn is a neighbour; on the turn's, the probe."""
    hike = (
        "Yesterday my sister and I hiked for six hours in the Rocky Mountains near Denver; we saw elk, a frozen lake, "
        "and a family of marmots, and we ate sandwiches at the top of the pass before the storm came in."
    )
    first = await _remember(app_pool, settings, tenant, hike, source_session="chat-5", kind="fact")
    turn = "The team deploys the billing service every Thursday afternoon."
    middle = await _remember(app_pool, settings, tenant, turn, source_session="chat-5", kind="fact")
    colleague = await _colleague(app_pool, tenant, "colleague")
    paraphrase = await _remember(
        app_pool, settings, colleague, "Every Thursday afternoon, the team deploys the billing service.", kind="fact"
    )
    await _embed(owner_pool, EmbedderService(app_pool, settings, embedder), first, middle, paraphrase)
    rows = await _rows(owner_pool, middle)
    assert rows[settings.embedding_profile][1] == first
    own = rows[embeddings.content_profile(settings.embedding_profile)][0]
    probe = (await _rows(owner_pool, paraphrase))[settings.embedding_profile][0]
    # the searched vector carries the hike: by it the pair is further apart than by their own texts
    assert float(rows[settings.embedding_profile][0] @ probe) < 0.9 < 0.97 <= float(own @ probe)
    conflicts = ConflictsService(app_pool, settings, None)
    subject = paraphrase if checked == "paraphrase" else middle
    assert await deliver(owner_pool, conflicts.handle, types=["memory.embedded"], subjects=[subject]) == {}
    async with owner_pool.acquire() as conn:  # the older of the two is the existing memory
        found = await conn.fetchrow(
            "SELECT type, score FROM conflicts WHERE item_a = $1 AND item_b = $2", middle, paraphrase
        )
    assert found is not None and found["type"] == "duplicate"
    # same content words (verdict 0.9) at the similarity of the two texts, not of the turn with the hike
    assert abs(found["score"] - 0.9 * float(own @ probe)) < 0.01


async def test_deleting_a_predecessor_embeds_its_successor_again_and_redelivery_changes_nothing(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first = await _remember(app_pool, settings, tenant, "Which espresso beans do you buy?", source_session="chat-8")
    second = await _remember(app_pool, settings, tenant, BEFORE, source_session="chat-8")
    third = await _remember(app_pool, settings, tenant, TURN, source_session="chat-8")
    service = EmbedderService(app_pool, settings, embedder)
    await _embed(owner_pool, service, first, second, third)
    profile = settings.embedding_profile
    assert (await _rows(owner_pool, third))[profile][1] == second
    await TrashService(app_pool, settings).delete(tenant, second, "")
    assert await deliver(owner_pool, service.recheck, types=["memory.deleted"], subjects=[second]) == {}
    rows = await _rows(owner_pool, third)
    searched, context = rows[profile]
    assert context == first  # the latest live turn before it now
    assert float(searched @ await _one(embedder, BEFORE + "\n" + TURN)) < 0.99  # the deleted text is gone from it
    assert float(searched @ await _one(embedder, "Which espresso beans do you buy?\n" + TURN)) >= 0.999
    assert float(rows[embeddings.content_profile(profile)][0] @ await _one(embedder, TURN)) >= 0.999
    async with owner_pool.acquire() as conn:
        written = await conn.fetchval("SELECT created_at FROM memory_embeddings WHERE item_id = $1", third)
    # delivered again: handled, nothing written
    assert await deliver(owner_pool, service.recheck, types=["memory.deleted"], subjects=[second]) == {}
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT created_at FROM memory_embeddings WHERE item_id = $1", third) == written
    # the first turn deleted too: the third is embedded alone, with one row
    await TrashService(app_pool, settings).delete(tenant, first, "")
    assert await deliver(owner_pool, service.recheck, types=["memory.deleted"], subjects=[first]) == {}
    rows = await _rows(owner_pool, third)
    assert list(rows) == [profile] and rows[profile][1] is None
    assert float(rows[profile][0] @ await _one(embedder, TURN)) >= 0.999


async def test_a_predecessor_made_private_is_no_longer_in_a_workspace_turn_after_it(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first, second, service = await _two_turns(app_pool, owner_pool, settings, tenant, embedder, "chat-9")
    assert (await _rows(owner_pool, second))[settings.embedding_profile][1] == first
    values = PatchValues(tags=[], importance=0.5, pinned=False, visibility="private", subject=None, valid_to=None)
    await PatchService(app_pool, settings).patch(tenant, first, ["visibility"], values)
    assert await deliver(owner_pool, service.recheck, types=["memory.updated"], subjects=[first]) == {}
    rows = await _rows(owner_pool, second)
    assert list(rows) == [settings.embedding_profile] and rows[settings.embedding_profile][1] is None
    assert float(rows[settings.embedding_profile][0] @ await _one(embedder, TURN)) >= 0.999


async def test_a_predecessor_made_readable_again_is_embedded_again_into_the_turn_after_it(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first, second, service = await _two_turns(app_pool, owner_pool, settings, tenant, embedder, "chat-9w")
    async with owner_pool.acquire() as conn:
        widest = await conn.fetchval("SELECT visibility FROM memory_items WHERE id = $1", first)
    assert widest != "private"
    patch = PatchService(app_pool, settings)
    for visibility in ("private", widest):
        values = PatchValues(tags=[], importance=0.5, pinned=False, visibility=visibility, subject=None, valid_to=None)
        await patch.patch(tenant, first, ["visibility"], values)
        assert await deliver(owner_pool, service.recheck, types=["memory.updated"], subjects=[first]) == {}
        if visibility == "private":
            assert list(await _rows(owner_pool, second)) == [settings.embedding_profile]  # embedded by itself
    rows = await _rows(owner_pool, second)  # as wide as before: the first turn precedes the second again
    assert set(rows) == {settings.embedding_profile, embeddings.content_profile(settings.embedding_profile)}
    searched, context = rows[settings.embedding_profile]
    assert context == first
    assert float(searched @ await _one(embedder, BEFORE + "\n" + TURN)) >= 0.999
    written = await _writes(owner_pool, first, second)
    assert await deliver(owner_pool, service.recheck, types=["memory.updated"], subjects=[first]) == {}
    assert await _writes(owner_pool, first, second) == written  # redelivered: nothing written again


async def test_a_predecessor_made_private_while_its_successor_is_embedded_is_not_stored_with_it(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The race of ADR 0009: the successor's vectors were built with its predecessor, then the predecessor's
    visibility patch committed before they were stored — its text must not go into a vector readers of the
    successor search by."""
    first = await _remember(app_pool, settings, tenant, BEFORE, source_session="chat-12")
    second = await _remember(app_pool, settings, tenant, TURN, source_session="chat-12")
    service = EmbedderService(app_pool, settings, embedder)
    await _embed(owner_pool, service, first)
    joined, own = await _one(embedder, BEFORE + "\n" + TURN), await _one(embedder, TURN)
    values = PatchValues(tags=[], importance=0.5, pinned=False, visibility="private", subject=None, valid_to=None)
    await PatchService(app_pool, settings).patch(tenant, first, ["visibility"], values)
    profile = settings.embedding_profile
    async with tenant_tx(app_pool, str(tenant.tenant_id)) as conn:
        assert not await embeddings.store_if_item(conn, str(tenant.tenant_id), second, profile, joined, own, first)
    assert await _rows(owner_pool, second) == {}
    await _embed(owner_pool, service, second)  # chosen again: none qualifies now
    rows = await _rows(owner_pool, second)
    assert list(rows) == [profile] and rows[profile][1] is None


async def test_a_predecessor_held_by_a_successors_store_cannot_change_visibility_until_it_commits(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The other order: the store comes first and holds the predecessor, so the patch (and the event that
    embeds the successor again) comes after the successor's vectors are committed."""
    first = await _remember(app_pool, settings, tenant, BEFORE, source_session="chat-13")
    second = await _remember(app_pool, settings, tenant, TURN, source_session="chat-13")
    joined, own = await _one(embedder, BEFORE + "\n" + TURN), await _one(embedder, TURN)
    profile = settings.embedding_profile
    async with tenant_tx(app_pool, str(tenant.tenant_id)) as conn:
        assert await embeddings.store_if_item(conn, str(tenant.tenant_id), second, profile, joined, own, first)
        async with owner_pool.acquire() as other:
            await other.execute("SET lock_timeout = '300ms'")
            with pytest.raises(asyncpg.LockNotAvailableError):
                await other.execute("UPDATE memory_items SET visibility = 'private' WHERE id = $1", first)
            # the successor itself is held by a key-share lock only: its own updates are not held back
            await other.execute("UPDATE memory_items SET importance = importance WHERE id = $1", second)
    assert (await _rows(owner_pool, second))[profile][1] == first


async def test_a_restored_turn_keeps_both_vectors_while_its_predecessor_lives_and_is_embedded_again_when_not(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first, second, service = await _two_turns(app_pool, owner_pool, settings, tenant, embedder, "chat-10")
    before = await _rows(owner_pool, second)
    trash = TrashService(app_pool, settings)
    await trash.restore(tenant, await trash.delete(tenant, second, ""))
    after = await _rows(owner_pool, second)
    assert {p: c for p, (_, c) in after.items()} == {p: c for p, (_, c) in before.items()}
    assert after[settings.embedding_profile][1] == first
    # deleted, then its predecessor deleted (nothing of it to embed again meanwhile): restored without vectors
    entry = await trash.delete(tenant, second, "")
    await trash.delete(tenant, first, "")
    await trash.restore(tenant, entry)
    assert await _rows(owner_pool, second) == {}
    assert await deliver(owner_pool, service.handle, types=["memory.restored"], subjects=[second]) == {}
    rows = await _rows(owner_pool, second)
    assert list(rows) == [settings.embedding_profile] and rows[settings.embedding_profile][1] is None


async def test_a_restored_predecessor_is_embedded_again_into_its_old_successor_and_redelivery_changes_nothing(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first, second, service = await _two_turns(app_pool, owner_pool, settings, tenant, embedder, "chat-14")
    profile = settings.embedding_profile
    assert (await _rows(owner_pool, second))[profile][1] == first
    trash = TrashService(app_pool, settings)
    entry = await trash.delete(tenant, first, "")
    assert await deliver(owner_pool, service.recheck, types=["memory.deleted"], subjects=[first]) == {}
    rows = await _rows(owner_pool, second)
    assert list(rows) == [profile] and rows[profile][1] is None  # embedded alone while its predecessor is deleted
    await trash.restore(tenant, entry)
    assert list(await _rows(owner_pool, first)) == [profile]  # the restored turn came back with its vector
    # the restored event, as the embedder_restored durable hands it over
    assert await deliver(owner_pool, service.handle, types=["memory.restored"], subjects=[first]) == {}
    rows = await _rows(owner_pool, second)
    assert set(rows) == {profile, embeddings.content_profile(profile)}
    searched, context = rows[profile]
    assert context == first
    assert float(searched @ await _one(embedder, BEFORE + "\n" + TURN)) >= 0.999
    assert float(rows[embeddings.content_profile(profile)][0] @ await _one(embedder, TURN)) >= 0.999
    written = await _writes(owner_pool, first, second)
    assert written[1] == 2  # the first embeddings' only: embedding a memory again writes no memory.embedded
    # delivered again: handled, nothing written
    assert await deliver(owner_pool, service.handle, types=["memory.restored"], subjects=[first]) == {}
    assert await _writes(owner_pool, first, second) == written
    # given up on: the restored memory has its vector, so what failed was its successors, not its embedding stage
    (restored,) = await outbox_events(owner_pool, types=["memory.restored"], subjects=[first])
    await service.mark_failed(restored, Unavailable("the successors could not be embedded again"))
    async with tenant_tx(app_pool, str(tenant.tenant_id)) as conn:
        assert await stages.is_done(conn, first, PipelineStage.EMBEDDING)


async def test_a_restored_turn_in_the_middle_of_a_session_is_embedded_again_only_into_the_turn_right_after_it(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    texts = ["Which espresso beans do you buy?", BEFORE, TURN, "I only drink decaf after noon."]
    turns = [await _remember(app_pool, settings, tenant, text, source_session="chat-15") for text in texts]
    service = EmbedderService(app_pool, settings, embedder)
    await _embed(owner_pool, service, *turns)
    profile = settings.embedding_profile
    trash = TrashService(app_pool, settings)
    entry = await trash.delete(tenant, turns[1], "")
    assert await deliver(owner_pool, service.recheck, types=["memory.deleted"], subjects=[turns[1]]) == {}
    assert (await _rows(owner_pool, turns[2]))[profile][1] == turns[0]
    last = await _writes(owner_pool, turns[3])
    await trash.restore(tenant, entry)
    assert await deliver(owner_pool, service.handle, types=["memory.restored"], subjects=[turns[1]]) == {}
    searched, context = (await _rows(owner_pool, turns[2]))[profile]
    assert context == turns[1]
    assert float(searched @ await _one(embedder, BEFORE + "\n" + TURN)) >= 0.999
    # the restored turn qualifies for the last one too, but the turn between them is its predecessor: untouched
    assert await _writes(owner_pool, turns[3]) == last
    assert (await _rows(owner_pool, turns[3]))[profile][1] == turns[2]


async def test_the_classifier_reads_what_the_turn_says_by_itself(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    first = await _remember(app_pool, settings, tenant, BEFORE, source_session="chat-11")
    turn = "I really prefer tea over coffee in the mornings."
    second = await _remember(app_pool, settings, tenant, turn, source_session="chat-11")
    colleague = await _colleague(app_pool, tenant, "colleague")
    alone = await _remember(app_pool, settings, colleague, turn)
    await _embed(owner_pool, EmbedderService(app_pool, settings, embedder), first, second, alone)
    classifier = ClassifierService(app_pool, settings)
    assert await deliver(owner_pool, classifier.handle, types=["memory.embedded"], subjects=[second, alone]) == {}
    async with owner_pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT item_id, output FROM classification_receipts WHERE item_id = ANY($1::uuid[])", [second, alone]
        )
    outputs = {str(r["item_id"]): r["output"] for r in rows}
    assert outputs[second] == outputs[alone]  # the same text, whatever came before it


async def test_a_duplicate_ranked_low_by_its_searched_vector_is_still_among_the_neighbours(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    """The index ranks by the searched vectors: five memories nearer the paraphrase by those than the mid-session
    turn (0.96–0.99 against 0.86, carrying the hike) once filled the five neighbours and hid the turn (0.998 by its
    own text); the index is now read four times deeper and the nearest by their own texts kept."""
    hike = (
        "Yesterday my sister and I hiked for six hours in the Rocky Mountains near Denver; we saw elk, a frozen lake, "
        "and a family of marmots, and we ate sandwiches at the top of the pass before the storm came in."
    )
    first = await _remember(app_pool, settings, tenant, hike, source_session="chat-6", kind="fact")
    turn = "The team deploys the billing service every Thursday afternoon."
    middle = await _remember(app_pool, settings, tenant, turn, source_session="chat-6", kind="fact")
    colleague = await _colleague(app_pool, tenant, "colleague")
    nearer = [
        "The billing service is deployed by the platform team.",
        "The team deploys the invoicing service every Thursday afternoon.",
        "Billing service deploys happen on Thursday afternoons after the standup.",
        "Our team ships the billing service each Thursday.",
        "The team deploys the search service every Thursday afternoon.",
    ]
    others = [await _remember(app_pool, settings, colleague, text, kind="fact") for text in nearer]
    paraphrase = await _remember(
        app_pool, settings, colleague, "Every Thursday afternoon, the team deploys the billing service.", kind="fact"
    )
    await _embed(owner_pool, EmbedderService(app_pool, settings, embedder), first, middle, *others, paraphrase)
    probe = (await _rows(owner_pool, paraphrase))[settings.embedding_profile][0]
    searched = float((await _rows(owner_pool, middle))[settings.embedding_profile][0] @ probe)
    nearer_by_search = [float((await _rows(owner_pool, o))[settings.embedding_profile][0] @ probe) for o in others]
    assert min(nearer_by_search) > searched, (nearer_by_search, searched)
    conflicts = ConflictsService(app_pool, settings, None)
    assert await deliver(owner_pool, conflicts.handle, types=["memory.embedded"], subjects=[paraphrase]) == {}
    async with owner_pool.acquire() as conn:
        found = await conn.fetchval("SELECT type FROM conflicts WHERE item_a = $1 AND item_b = $2", middle, paraphrase)
    assert found == "duplicate"
