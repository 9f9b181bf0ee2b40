"""Conflict detection after embedding: compare a new memory with the nearest live memories of its scope, of any
kind but the episodic ones (docs/adr/0007-conflicts-compared-across-kinds.md), label each pair by rules and the
learned contradiction judge beside them (``conflict_rules.judge_with_learned``, given both memories' own-text
vectors for its nearest labelled changes, docs/adr/0008-learned-contradiction-judge.md; ``conflict_learned_judge``
turns it off) (and, when configured, a
language model whose invalid answer changes nothing), and act by authority
(``engram.domain.conflict_rules.outcome``) — never a silent replacement.

Reading the neighbours and judging happen outside any transaction; the effects are applied in one transaction
with the inbox row, after re-reading both sides under lock (a pair whose state moved meanwhile is skipped).
The rules run in a worker thread (``asyncio.to_thread``), never on the event loop every tenant's events share,
each pair within the rules' bounds (``engram/domain/conflict_rules/work.py``); a pair the rules left unjudged
at a bound is named in the stage detail.

A batch's events of one tenant are checked in order, each as if alone, in fewer transactions: the reads of up to
``READ_AHEAD`` of them share one, and the events without a verdict, whose only effects are their stage and inbox
row, are recorded together at the end of the batch (``ConflictsService._check_tenant``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import conflicts, inbox, items
from engram.db.pool import tenant_tx
from engram.domain import conflict_rules, lifecycle
from engram.domain.conflict_rules import Verdict
from engram.domain.models import MemoryItem
from engram.domain.values import PipelineStage, StageStatus
from engram.events.envelope import Event
from engram.events.outbox import Outbox
from engram.llm import JsonChat, LLMUnavailable
from engram.pipeline import changes
from engram.pipeline.batches import Writes, apply_per_tenant, by_tenant
from engram.telemetry import tracing
from engram.telemetry.metrics import CONFLICT_OUTCOMES

log = logging.getLogger(__name__)

CONSUMER = "conflicts"
# Episodic memories record what happened or was seen at a moment: two of them with other numbers or values are
# two moments, not a contradiction. They are not compared.
EPISODIC_KINDS = ("observation", "diary_entry")
STAGE = PipelineStage.CONFLICT_CHECK
NEIGHBOURS = 5
# Events whose reads share a transaction: a verdict that opens a conflict throws the reads after it away.
READ_AHEAD = 8
# Candidates come from a little below the floor: the exclusive-predicate rule ("lives in", "prefers", …) fires
# at any similarity, since two values of one predicate can embed apart; every other rule needs the floor.
CANDIDATE_MARGIN = 0.05
JUDGE_PROMPT = (
    "Two memories of the same scope follow, EXISTING then NEW. Say whether NEW duplicates EXISTING, "
    "refines it (same claim, more detail), contradicts it, or none of these. Answer with a JSON object only."
)


@dataclass(frozen=True)
class Judged:
    neighbour: MemoryItem
    similarity: float
    verdict: Verdict
    detector: str


@dataclass(frozen=True)
class _Read:
    """What checking one event reads: its memory (None: gone), the vector of its own text, and the nearest live
    neighbours with their similarity and own vectors, all under the embedding ``profile``."""

    item: MemoryItem | None
    near: list[tuple[MemoryItem, float, np.ndarray]]
    vector: np.ndarray | None = None
    profile: str = ""


@dataclass
class _Judgements:
    """The verdicts on one memory and its neighbours, and what kept any pair from a full judgement."""

    judged: list[Judged] = field(default_factory=list)
    judge_unavailable: bool = False  # the model judge was wanted for a pair but could not be reached
    bounded: list[str] = field(default_factory=list)  # why the rules left a pair unjudged, one per pair


class ConflictsService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, llm: JsonChat | None = None) -> None:
        self._pool = pool
        self._settings = settings
        self._llm = llm
        self._changes = changes.Changes(Outbox(settings.events_subject_prefix))

    async def handle(self, events: list[Event]) -> dict[str, Exception]:
        """Check a batch, the events of each tenant in turn (``_check_tenant``). Returns the events that failed
        (redelivered)."""
        failures: dict[str, Exception] = {}
        for tenant_id, group in by_tenant([(event, None) for event in events]).items():
            failures |= await self._check_tenant(tenant_id, [event for event, _ in group])
        return failures

    async def _check_tenant(self, tenant_id: str, events: list[Event]) -> dict[str, Exception]:
        """Each event in order, as if alone: its memory and neighbours are read, the pairs judged, the effects
        applied. In fewer transactions: the reads of the next ``READ_AHEAD`` events share one. What an event's
        verdicts change is nothing the next ones read: a conflict row, and a status that stays live (proposed or
        disputed: still a neighbour, and still compared); what a verdict acts on is read again under a row lock
        (``_apply``), and the text, age and session a judgement reads never change. An event with no verdict
        changes nothing at all, so its stage and inbox row are written at the end of the batch, all such events
        of the tenant in one transaction (``engram.pipeline.batches``)."""
        failures: dict[str, Exception] = {}
        quiet: list[tuple[Event, tuple[int, _Judgements]]] = []
        reads: dict[str, _Read | None] = {}
        for at, event in enumerate(events):
            try:
                with tracing.within(event.traceparent):
                    if event.id not in reads:
                        reads = await self._read_from(tenant_id, events[at : at + READ_AHEAD])
                    read = reads[event.id]
                    if read is None:  # handled before
                        continue
                    found = (
                        await self._judge_all(read.item, read.vector, read.near, read.profile)
                        if read.item is not None
                        else _Judgements()
                    )
                    if not found.judged:
                        quiet.append((event, (len(read.near), found)))
                        continue
                    async with tenant_tx(self._pool, tenant_id) as conn:
                        writes = Writes()
                        if await inbox.claim(conn, CONSUMER, event.id, event.tenant_id):
                            await self._write(conn, writes, event, (len(read.near), found))
                        await writes.flush(conn)
            except Exception as exc:
                failures[event.id] = exc
        return failures | await apply_per_tenant(self._pool, CONSUMER, quiet, self._write)

    async def _read_from(self, tenant_id: str, events: list[Event]) -> dict[str, _Read | None]:
        """``_read`` of each of ``events`` in one transaction; when that fails, of the first alone (whose error
        is then the caller's)."""
        try:
            async with tenant_tx(self._pool, tenant_id) as conn:
                return {event.id: await self._read(conn, event) for event in events}
        except Exception as exc:
            if len(events) == 1:
                raise
            log.info("reading %d events failed together (%r); reading the first alone", len(events), exc)
        async with tenant_tx(self._pool, tenant_id) as conn:
            return {events[0].id: await self._read(conn, events[0])}

    async def _read(self, conn: asyncpg.Connection, event: Event) -> _Read | None:
        """The event's memory and its nearest live neighbours (none for a memory gone, not live, episodic or
        without a vector), or None when the event was handled before."""
        profile = str(event.data.get("profile") or self._settings.embedding_profile)
        dimensions = int(event.data.get("dimensions") or self._settings.embedding_dimensions)
        first = await conflicts.subject(conn, CONSUMER, event.id, event.subject, profile)
        if first.handled:
            return None
        item, vector = first.item, first.vector
        near: list[tuple[MemoryItem, float, np.ndarray]] = []
        if item is not None and vector is not None and _live(item) and item.kind not in EPISODIC_KINDS:
            near = await conflicts.nearest_live(
                conn,
                item,
                vector,
                profile,
                dimensions,
                NEIGHBOURS,
                self._settings.conflict_similarity_floor - CANDIDATE_MARGIN,
                EPISODIC_KINDS,
            )
        return _Read(item, near, vector, profile)

    async def _write(
        self, conn: asyncpg.Connection, writes: Writes, event: Event, judged: tuple[int, _Judgements]
    ) -> None:
        """In the caller's transaction, the event's inbox row recorded: the effect of each verdict, and the stage
        (queued in ``writes``)."""
        candidates, found = judged
        current = await items.get(conn, event.subject, for_update=True)
        if current is None:  # deleted meanwhile: the event is handled, there is nothing to compare
            log.info("item %s of event %s no longer exists; nothing to compare", event.subject, event.id)
            return
        notes = [await self._apply(conn, event, current, j) for j in found.judged] if _live(current) else []
        detail = (
            f"{current.kind} is episodic: not compared"
            if current.kind in EPISODIC_KINDS
            else _summary(candidates, [n for n in notes if n], found.judge_unavailable, found.bounded)
        )
        writes.stage(tenant_id=event.tenant_id, item_id=current.id, stage=STAGE, status=StageStatus.DONE, detail=detail)

    async def _judge_all(
        self,
        item: MemoryItem,
        vector: np.ndarray | None,
        near: list[tuple[MemoryItem, float, np.ndarray]],
        profile: str = "",
    ) -> _Judgements:
        """The verdicts on ``item`` (its own vector ``vector``) and each neighbour that has one, whether the model
        judge was unavailable for any pair (then those pairs were judged by the rules only), and where the rules
        stopped at a bound."""
        found = _Judgements()
        for neighbour, similarity, own in near:
            work = conflict_rules.Work()
            verdict, unavailable = await self._judge(item, neighbour, similarity, work, (vector, own), profile)
            found.judge_unavailable = found.judge_unavailable or unavailable
            if verdict is not None:
                found.judged.append(verdict)
            if work.gave_up is not None and verdict is None:
                log.warning("rules left %s / %s unjudged: %s", item.id, neighbour.id, work.gave_up)
                found.bounded.append(work.gave_up)
        return found

    async def _judge(
        self,
        item: MemoryItem,
        neighbour: MemoryItem,
        similarity: float,
        work: conflict_rules.Work,
        vectors: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
        profile: str = "",
    ) -> tuple[Judged | None, bool]:
        """The verdict on the pair, oriented by age: the older memory is the existing one (a neighbour can be
        newer when both arrived in one batch); and whether the model judge was wanted but unavailable (the
        rules' answer stands). The rules and the learned judge run in a worker thread, the rules within
        ``work``, the judge given both own vectors (``vectors``: the item's, the neighbour's) and their profile;
        the detector is ``rules:<rule>``, ``learned`` or ``llm:<model>``."""
        older, newer = (neighbour, item) if neighbour.created_at <= item.created_at else (item, neighbour)
        own = vectors if older is item else vectors[::-1]
        verdict = await asyncio.to_thread(
            conflict_rules.judge_with_learned,
            older.content,
            newer.content,
            similarity,
            floor=self._settings.conflict_similarity_floor,
            work=work,
            learned=self._settings.conflict_learned_judge,
            vectors=own,
            profile=profile or self._settings.embedding_profile,
        )
        if verdict is not None:
            detector = "learned" if verdict.rule == conflict_rules.LEARNED_RULE else f"rules:{verdict.rule}"
            return Judged(neighbour, similarity, verdict, detector), False
        if self._llm is None or same_session(older, newer):  # a model label would not be acted on
            return None, False
        user = f"EXISTING: {older.content}\n\nNEW: {newer.content}"
        try:
            raw = await self._llm.ask(JUDGE_PROMPT, user, "conflict_verdict", conflict_rules.LLM_JUDGE_SCHEMA)
        except LLMUnavailable as exc:
            log.info("conflict judge unavailable, rules only: %s", exc)
            return None, True
        verdict = conflict_rules.parse_llm_verdict(json.dumps(raw))  # anything malformed is None: no change
        return (Judged(neighbour, similarity, verdict, f"llm:{self._llm.model}") if verdict else None), False

    async def _apply(self, conn: asyncpg.Connection, event: Event, item: MemoryItem, judged: Judged) -> str:
        """Act on one verdict (the older of the two is the existing memory); returns a note for the stage."""
        found = [await items.get(conn, str(i.id), for_update=True) for i in (item, judged.neighbour)]
        pair = [p for p in found if p is not None and _live(p)]
        if len(pair) != 2:
            return ""
        existing, new = sorted(pair, key=lambda p: (p.created_at, str(p.id)))
        verdict = judged.verdict
        session = same_session(existing, new)
        plan = conflict_rules.outcome(verdict, existing.authority, new.authority, same_session=session)
        action = plan.action
        CONFLICT_OUTCOMES.labels(verdict.label, action).inc()
        actor = changes.Actor(event.tenant_id, by=CONSUMER, traceparent=event.traceparent)
        other = existing if new.id == item.id else new
        note = f"{verdict.label} with {other.id} ({action}{': same session' if session and action == 'none' else ''})"
        if action == "none":
            return note
        # Audit reasons name the label, the detector and the conflict, never the words of either memory: a
        # reader of one side may not be able to read the other. The explanation stays on the conflict, which
        # is shown only to callers who may read both.
        conflict_type = verdict.label if verdict.label in ("duplicate", "refinement") else "contradiction"
        opened = await self._changes.open_conflict(
            conn,
            actor,
            existing,
            new,
            conflict_type,
            judged.detector,
            score=round(verdict.score * judged.similarity, 4),
            rule=verdict.rule,
            explanation=verdict.explanation,
        )
        if opened is None:
            return f"{note}: already in an open conflict"
        weaker = {"propose": new, "dispute_new": new, "dispute_existing": existing}.get(action)
        if weaker is not None:
            to_state = "proposed" if action == "propose" else "disputed"
            if weaker.review_status != to_state and (to_state == "disputed" or weaker.review_status == "active"):
                await self._changes.change_status(
                    conn,
                    actor,
                    weaker,
                    to_state,
                    "propose" if to_state == "proposed" else "dispute",
                    f"conflict {opened}: {verdict.label} ({judged.detector})",
                )
        return note

    async def mark_failed(self, event: Event, error: Exception) -> None:
        await changes.stage_failed(self._pool, event, STAGE, error)


def same_session(a: MemoryItem, b: MemoryItem) -> bool:
    """Two turns of one conversation: both recorded with the same ``source_session``."""
    return a.source_session is not None and a.source_session != "" and a.source_session == b.source_session


def _live(item: MemoryItem) -> bool:
    return item.invalidated_at is None and item.superseded_by is None and item.review_status in lifecycle.LIVE_STATES


def _summary(
    candidates: int, notes: list[str], judge_unavailable: bool = False, bounded: list[str] | None = None
) -> str:
    found = "; ".join(notes) if notes else "no conflict"
    compared = f"{candidates} near {'memory' if candidates == 1 else 'memories'} compared"
    if judge_unavailable:
        compared += ", rules only (judge unavailable)"
    if bounded:
        pairs = "1 pair" if len(bounded) == 1 else f"{len(bounded)} pairs"
        found += f"; rules bounded on {pairs} ({bounded[0]})"
    return f"{compared}: {found}"[:500]
