"""The twelve MCP tools: one REST call each through the Python SDK, with the caller's own key (``Connect``).

Each method's docstring is the tool description an agent reads, and its ``Field`` descriptions document the
arguments. An error answer of the API becomes a tool error (``isError``) naming its code and field; nothing
an API call raises reaches the server loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from engram_client import AsyncEngramClient, EngramError
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from engram.domain.values import RecallMode, Resolution, ReviewAction, SearchMode, Visibility
from engram.mcp.shapes import describe, hit, summary

T = TypeVar("T")
Ctx = Context[Any, Any]
Connect = Callable[[Ctx], AbstractAsyncContextManager[AsyncEngramClient]]
"""The client of the caller of this request: the process's own over stdio, the request's key over HTTP."""
Result = dict[str, Any]

ItemId = Annotated[str, Field(description="The memory's id (a UUID), as a recall, search, list or remember gave it.")]
Tags = Annotated[list[str] | None, Field(description="Labels to filter or group by, e.g. ['ops', 'deploys'].")]
Kinds = Annotated[list[str] | None, Field(description="Only these kinds, e.g. ['fact', 'preference'].")]
WorkspaceId = Annotated[str | None, Field(description="A workspace id; default: the tenant's default workspace.")]
Reason = Annotated[str, Field(description="Why, in a sentence; kept on the memory's audit trail.")]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
CHANGE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


def given(**fields: Any) -> dict[str, Any]:
    """The optional fields that were given (not None): exactly what the request body carries."""
    return {name: value for name, value in fields.items() if value is not None}


class Tools:
    def __init__(self, connect: Connect) -> None:
        self._connect = connect

    @asynccontextmanager
    async def _client(self, ctx: Ctx) -> AsyncIterator[AsyncEngramClient]:
        try:
            async with self._connect(ctx) as client:
                yield client
        except EngramError as exc:
            raise ToolError(describe(exc)) from exc

    async def _run(self, ctx: Ctx, call: Callable[[AsyncEngramClient], Awaitable[T]]) -> T:
        async with self._client(ctx) as client:
            return await call(client)

    def register(self, add: Callable[..., None]) -> None:
        """Add each tool with ``add(fn, name=…, annotations=…)`` (``MCPServer.add_tool``)."""
        add(self.remember, name="remember", annotations=WRITE)
        add(self.observe, name="observe", annotations=WRITE)
        add(self.recall, name="recall", annotations=READ)
        add(self.search, name="search", annotations=READ)
        add(self.get, name="get", annotations=READ)
        add(self.list_items, name="list", annotations=READ)
        add(self.supersede, name="supersede", annotations=CHANGE)
        add(self.invalidate, name="invalidate", annotations=CHANGE)
        add(self.feedback, name="feedback", annotations=WRITE)
        add(self.review, name="review", annotations=CHANGE)
        add(self.conflicts, name="conflicts", annotations=READ)
        add(self.resolve, name="resolve", annotations=CHANGE)

    async def remember(
        self,
        ctx: Ctx,
        content: Annotated[str, Field(description="One self-contained statement, as a colleague would write it.")],
        kind: Annotated[
            str | None, Field(description="fact, preference, decision, procedure, …; default: the classifier's.")
        ] = None,
        tags: Tags = None,
        subject: Annotated[
            str | None, Field(description="What it is about, e.g. 'alice.diet'; names a slot that holds one value.")
        ] = None,
        importance: Annotated[float | None, Field(description="0–1; how much it matters.")] = None,
        visibility: Annotated[Visibility | None, Field(description="Who may read it; default: workspace.")] = None,
        pinned: Annotated[bool | None, Field(description="Always in the startup working set; never expires.")] = None,
        workspace_id: WorkspaceId = None,
    ) -> Result:
        """Store a durable memory: a fact, preference, decision or procedure worth knowing in a later session.

        Recall or search first. If a memory on the same subject exists and has changed, call `supersede` with
        its id instead: a second memory that contradicts the first is flagged as a conflict for review. The
        answer's `status` is created, superseded or deduplicated (the same text is stored once), and
        `possible_supersedes` lists similar recent memories of the same kind this one may replace (older ones
        are flagged later as conflicts): supersede them if it does. For raw
        conversation turns or tool output use `observe`. Secrets (keys, passwords) are refused."""
        fields = given(
            kind=kind,
            tags=tags,
            subject=subject,
            importance=importance,
            visibility=visibility,
            pinned=pinned,
            workspace_id=workspace_id,
        )
        stored = await self._run(ctx, lambda c: c.remember(content, **fields))
        return {
            "id": stored.id,
            "status": stored.status,
            "review_status": stored.review_status,
            "kind": stored.item.kind,
            "superseded": list(stored.superseded),
            "possible_supersedes": [p.model_dump(mode="json") for p in stored.possible_supersedes],
        }

    async def observe(
        self,
        ctx: Ctx,
        content: Annotated[str, Field(description="The raw turn, message or tool output, as it was.")],
        source_session: Annotated[str | None, Field(description="The conversation or run it came from.")] = None,
        tags: Tags = None,
        workspace_id: WorkspaceId = None,
    ) -> Result:
        """Record a raw observation (a conversation turn, a tool's output) as short-lived evidence.

        Observations expire unless promoted; use `remember` for knowledge that should last. The answer has the
        observation's `id`, its `status` (created or deduplicated) and when it `expires_at`."""
        fields = given(source_session=source_session, tags=tags, workspace_id=workspace_id)
        observed = await self._run(ctx, lambda c: c.observe(content, **fields))
        return observed.model_dump(mode="json")

    async def recall(
        self,
        ctx: Ctx,
        query: Annotated[str | None, Field(description="The task or question; leave out with mode 'startup'.")] = None,
        mode: Annotated[
            RecallMode | None,
            Field(description="hybrid (default), keyword, semantic, or startup: the session's working set."),
        ] = None,
        item_budget: Annotated[int | None, Field(description="Most memories to return: 1–200, default 10.")] = None,
        token_budget: Annotated[int | None, Field(description="Most estimated tokens in all, default 4000.")] = None,
        kinds: Kinds = None,
        tags: Tags = None,
        workspace_id: WorkspaceId = None,
        as_of: Annotated[
            str | None, Field(description="An ISO 8601 time with an offset (Z or ±HH:MM): what was believed then.")
        ] = None,
    ) -> Result:
        """Recall the memories that matter for a task, best first, within the budgets.

        Call it before answering from memory and before writing one. Each item has its `id`, `score` and the
        `reasons` it was chosen. After using them, call `feedback` with the answer's `recall_id`: useful for the
        memories that helped, noise for those that did not. mode 'startup' (no query) gives the working set a
        session starts with: pinned memories, preferences and recent decisions."""
        fields = given(
            mode=mode,
            item_budget=item_budget,
            token_budget=token_budget,
            kinds=kinds,
            tags=tags,
            workspace_id=workspace_id,
            as_of=as_of,
        )
        answer = await self._run(ctx, lambda c: c.recall(query, **fields))
        return {
            "recall_id": answer.recall_id,
            "mode": answer.mode,
            "items": [hit(h) for h in answer.items],
            "omitted": answer.omitted,
        }

    async def search(
        self,
        ctx: Ctx,
        query: Annotated[str, Field(description="Words or a question to look for.")],
        mode: Annotated[SearchMode | None, Field(description="hybrid (default), keyword or semantic.")] = None,
        limit: Annotated[int | None, Field(description="How many: 1–200, default 10.")] = None,
        kinds: Kinds = None,
        tags: Tags = None,
        workspace_id: WorkspaceId = None,
    ) -> Result:
        """Search memories by keyword, meaning or both: the top `limit`, each with its `id`, `score` and
        `reasons`. Use it to find a memory to supersede or invalidate; use `recall` to gather context."""
        fields = given(mode=mode, limit=limit, kinds=kinds, tags=tags, workspace_id=workspace_id)
        answer = await self._run(ctx, lambda c: c.search(query, **fields))
        return {"mode": answer.mode, "items": [hit(h) for h in answer.items]}

    async def get(self, ctx: Ctx, item_id: ItemId) -> Result:
        """Read one memory whole: its text, kind, review status, provenance, validity and supersession."""
        item = await self._run(ctx, lambda c: c.get(item_id))
        return item.model_dump(mode="json")

    async def list_items(
        self,
        ctx: Ctx,
        kind: Annotated[list[str] | None, Field(description="Only these kinds.")] = None,
        review_status: Annotated[
            list[str] | None, Field(description="Only these review statuses: active, proposed, disputed, …")
        ] = None,
        tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
        subject: Annotated[str | None, Field(description="Only memories about this subject.")] = None,
        workspace_id: WorkspaceId = None,
        include_superseded: Annotated[bool, Field(description="Also superseded and invalidated ones.")] = False,
        limit: Annotated[int, Field(description="The page size: 1–500.")] = 20,
        cursor: Annotated[str | None, Field(description="The previous page's next_cursor.")] = None,
    ) -> Result:
        """List memories newest first, one page at a time (pass `next_cursor` back as `cursor`)."""
        filters = given(
            kind=kind,
            review_status=review_status,
            tag=tag,
            subject=subject,
            workspace_id=workspace_id,
            include_superseded=include_superseded or None,
        )
        page = await self._run(ctx, lambda c: c.list_items(limit=limit, cursor=cursor, **filters))
        return {"items": [summary(i) for i in page.items], "next_cursor": page.next_cursor}

    async def supersede(
        self,
        ctx: Ctx,
        item_id: ItemId,
        content: Annotated[str, Field(description="The memory as it now stands, whole (not a diff).")],
        kind: Annotated[str | None, Field(description="Its kind; default: the old memory's.")] = None,
        tags: Tags = None,
        subject: Annotated[str | None, Field(description="What it is about.")] = None,
    ) -> Result:
        """Replace a memory that changed with its new version: the old one stays as history, and recall answers
        the new one. Use this, not `remember`, when a preference, fact or decision you already stored has
        changed. The answer has the new memory's `id` and the ids it `superseded`."""
        fields = given(kind=kind, tags=tags, subject=subject)
        stored = await self._run(ctx, lambda c: c.supersede(item_id, content, **fields))
        return {
            "id": stored.id,
            "status": stored.status,
            "review_status": stored.review_status,
            "superseded": list(stored.superseded),
        }

    async def invalidate(self, ctx: Ctx, item_id: ItemId, reason: Reason) -> Result:
        """Mark a memory as no longer true, with no replacement (when there is one, `supersede` it instead).
        It leaves recall but stays in the history."""
        item = await self._run(ctx, lambda c: c.invalidate(item_id, reason))
        return summary(item)

    async def feedback(
        self,
        ctx: Ctx,
        item_id: ItemId,
        verdict: Annotated[Literal["useful", "noise"], Field(description="useful: it helped; noise: it did not.")],
        recall_id: Annotated[str | None, Field(description="The recall_id of the recall that returned it.")] = None,
    ) -> Result:
        """Say whether a recalled memory helped. Give it for the memories a recall returned once you have used
        them: useful ones rank higher next time, noise sinks. Giving the same verdict again changes nothing."""
        answer = await self._run(ctx, lambda c: c.feedback(item_id, verdict, recall_id=recall_id))
        return answer.model_dump(mode="json")

    async def review(
        self,
        ctx: Ctx,
        item_id: Annotated[
            str | None, Field(description="The memory to act on; leave out to list the review queue.")
        ] = None,
        action: Annotated[ReviewAction | None, Field(description="The review action (needs item_id).")] = None,
        reason: Reason = "",
        limit: Annotated[int, Field(description="The queue's page size.")] = 20,
    ) -> Result:
        """Curate: without `item_id`, list the review queue (proposed and disputed memories); with `item_id`
        and `action`, take that review action (activate, dispute, reject, archive, reactivate, withdraw).
        Most actions need the review scope; an author may withdraw their own proposal."""
        if item_id is None:
            page = await self._run(ctx, lambda c: c.list_items(limit=limit, review_status=["proposed", "disputed"]))
            return {"items": [summary(i) for i in page.items], "next_cursor": page.next_cursor}
        if action is None:
            raise ToolError("validation_failed: review with an item_id needs an action (field: action)")
        chosen = action
        item = await self._run(ctx, lambda c: c.review(item_id, chosen, reason=reason))
        return summary(item)

    async def conflicts(
        self,
        ctx: Ctx,
        status: Annotated[Literal["open", "resolved", "all"], Field(description="Which conflicts.")] = "open",
        item_id: Annotated[str | None, Field(description="Only conflicts this memory is part of.")] = None,
        limit: Annotated[int, Field(description="The page size.")] = 20,
        cursor: Annotated[str | None, Field(description="The previous page's next_cursor.")] = None,
    ) -> Result:
        """List contradictions and near-duplicates found between memories, each with both memories' ids, its
        type, score and explanation. Decide one with `resolve`."""
        wanted = "" if status == "all" else status
        page = await self._run(ctx, lambda c: c.conflicts(status=wanted, item_id=item_id, limit=limit, cursor=cursor))
        return {"items": [c.model_dump(mode="json") for c in page.items], "next_cursor": page.next_cursor}

    async def resolve(
        self,
        ctx: Ctx,
        conflict_id: Annotated[str, Field(description="The conflict's id, from `conflicts`.")],
        resolution: Annotated[
            Resolution, Field(description="keep_existing, accept_new, keep_both, or merge (with content).")
        ],
        reason: Reason = "",
        content: Annotated[str | None, Field(description="The merged memory's text (merge only).")] = None,
    ) -> Result:
        """Decide a conflict (the review scope): keep the existing memory, accept the new one, keep both, or
        merge them into one new memory whose text you give."""
        answer = await self._run(
            ctx, lambda c: c.resolve_conflict(conflict_id, resolution, reason=reason, content=content)
        )
        return {
            "conflict": answer.conflict.model_dump(mode="json"),
            "existing": summary(answer.existing),
            "new": summary(answer.new),
            "merged": summary(answer.merged) if answer.merged else None,
        }
