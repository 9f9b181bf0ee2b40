"""``EngramClient``: the synchronous client. Each method sends one operation of ``operations`` (the same ones
``AsyncEngramClient`` sends) through the retry loop, and answers its model or raises an ``EngramError``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any, Literal, TypeVar, Unpack

import httpx

from engram_client import _core
from engram_client import models as m
from engram_client import operations as ops
from engram_client.errors import EngramError
from engram_client.operations import Call
from engram_client.retry import RetryPolicy

T = TypeVar("T")


class EngramClient:
    """A client of one Engram gateway.

    ``base_url`` defaults to ``ENGRAM_URL`` (then ``http://127.0.0.1:8080``), ``api_key`` to ``ENGRAM_API_KEY``.
    ``timeout`` is per request in seconds (or an ``httpx.Timeout``); ``retry`` says when a failed call is
    tried again (``NO_RETRIES`` turns that off). ``http_client`` is an httpx client to send through instead
    of one made here (its base URL, transport and hooks are used; closing this client leaves it open);
    ``transport`` and ``event_hooks`` are handed to the httpx client made here. ``sleep`` waits between tries.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = _core.DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = _core.base_url(base_url)
        self._auth = _core.headers(_core.api_key(api_key))
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._owned = http_client is None
        self._http = http_client or httpx.Client(
            base_url=self.base_url, timeout=timeout, transport=transport, event_hooks=event_hooks
        )

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def __enter__(self) -> EngramClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def send(self, call: Call[T]) -> T:
        """Send one operation, retrying as the policy allows; its answer, or the last error."""
        attempts = _core.Attempts(self._retry, call.idempotent)
        while True:
            attempts.attempt += 1
            try:
                request = self._http.build_request(call.method, call.path, **_core.request_args(call, self._auth))
                return _core.answer(call, self._http.send(request))
            except (EngramError, httpx.TransportError) as error:
                delay = attempts.next_delay(error)
                if delay is None:
                    if isinstance(error, EngramError):
                        raise
                    raise _core.connection_failed(error) from error
                self._sleep(delay)

    def _pages(self, page: Callable[[str | None], Call[m.Page[T]]]) -> Iterator[T]:
        cursor: str | None = None
        while True:
            answer = self.send(page(cursor))
            yield from answer.items
            if not answer.next_cursor:
                return
            cursor = answer.next_cursor

    # Memories

    def remember(
        self, content: str, *, idempotency_key: str | None = None, **fields: Unpack[ops.MemoryFields]
    ) -> m.Remembered:
        """Store a memory (``POST /v1/remember``); ``status`` says created, superseded or deduplicated."""
        return self.send(ops.remember(content, idempotency_key, fields))

    def remember_batch(self, items: list[ops.RememberItem], *, idempotency_key: str | None = None) -> m.Batch:
        """Store 1–100 memories, each on its own (``POST /v1/remember/batch``); one result per item."""
        return self.send(ops.remember_batch(items, idempotency_key))

    def observe(
        self, content: str, *, idempotency_key: str | None = None, **fields: Unpack[ops.ObserveFields]
    ) -> m.Observed:
        """Record a short-lived observation (``POST /v1/observe``)."""
        return self.send(ops.observe(content, idempotency_key, fields))

    def supersede(self, item_id: str, content: str, **fields: Unpack[ops.MemoryFields]) -> m.Remembered:
        """Replace a memory with a new one (``POST /v1/items/{id}/supersede``)."""
        return self.send(ops.supersede(item_id, content, fields))

    def recall(self, query: str | None = None, **fields: Unpack[ops.RecallFields]) -> m.Recall:
        """The best memories for a task within the budgets (``POST /v1/recall``); ``mode="startup"`` needs no query."""
        return self.send(ops.recall(query, fields))

    def search(self, query: str, **fields: Unpack[ops.SearchFields]) -> m.SearchResult:
        """The top ``limit`` memories by keyword, meaning or both (``POST /v1/search``)."""
        return self.send(ops.search(query, fields))

    def get(self, item_id: str) -> m.Item:
        return self.send(ops.get(item_id))

    def status(self, item_id: str) -> m.ItemStatus:
        """Where the memory is in the pipeline (``GET /v1/items/{id}/status``)."""
        return self.send(ops.status(item_id))

    def events(self, item_id: str) -> m.AuditTrail:
        """The memory's audit trail, oldest first (``GET /v1/items/{id}/events``)."""
        return self.send(ops.events(item_id))

    def promotion_readiness(self, item_id: str) -> m.Readiness:
        return self.send(ops.promotion_readiness(item_id))

    def list_items(
        self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[ops.ListFilters]
    ) -> m.Page[m.Item]:
        """One page of ``GET /v1/items``; ``iter_items`` walks every page."""
        return self.send(ops.list_items(filters, limit, cursor))

    def iter_items(self, *, page_size: int = 100, **filters: Unpack[ops.ListFilters]) -> Iterator[m.Item]:
        """Every item the filters match, page after page."""
        return self._pages(lambda cursor: ops.list_items(filters, page_size, cursor))

    def stats(self) -> m.Stats:
        return self.send(ops.stats())

    def patch(self, item_id: str, **fields: Unpack[ops.PatchFields]) -> m.Item:
        """Change tags, importance, pinned, visibility, subject or valid_to (``PATCH /v1/items/{id}``)."""
        return self.send(ops.patch(item_id, fields))

    def review(self, item_id: str, action: str, *, reason: str = "") -> m.Item:
        """Take a review action: activate, dispute, reject, archive, reactivate or withdraw."""
        return self.send(ops.review(item_id, action, reason))

    def verify(self, item_id: str, *, reason: str = "") -> m.Item:
        return self.send(ops.verify(item_id, reason))

    def invalidate(self, item_id: str, reason: str) -> m.Item:
        return self.send(ops.invalidate(item_id, reason))

    def delete(self, item_id: str, *, reason: str = "") -> m.Deleted:
        """Move the memory to the trash; ``trash_id`` restores it."""
        return self.send(ops.delete(item_id, reason))

    def trash(self, *, limit: int | None = None, cursor: str | None = None) -> m.Page[m.TrashEntry]:
        return self.send(ops.trash(limit, cursor))

    def iter_trash(self, *, page_size: int = 100) -> Iterator[m.TrashEntry]:
        return self._pages(lambda cursor: ops.trash(page_size, cursor))

    def restore(self, trash_id: str) -> m.Item:
        return self.send(ops.restore(trash_id))

    def bulk(
        self,
        action: Literal["archive", "delete"],
        filter: ops.BulkFilter,
        *,
        dry_run: bool = True,
        limit: int = 100,
        reason: str = "",
    ) -> m.BulkResult:
        """Archive or delete every memory matching ``filter``; a dry run (the default) writes nothing."""
        return self.send(ops.bulk(action, filter, dry_run, limit, reason))

    def expiry_candidates(self, *, within_days: int = 7, limit: int = 50, workspace_id: str | None = None) -> m.Items:
        return self.send(ops.expiry_candidates(within_days, limit, workspace_id))

    def feedback(
        self, item_id: str, verdict: Literal["useful", "noise"], *, recall_id: str | None = None
    ) -> m.FeedbackResult:
        return self.send(ops.feedback(item_id, verdict, recall_id))

    def classify(self, content: str) -> m.Classification:
        """What the classifier would say about a text; nothing is stored."""
        return self.send(ops.classify(content))

    def conflicts(
        self,
        *,
        status: str | None = None,
        type: str | None = None,
        item_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> m.Page[m.MemoryConflict]:
        """One page of conflicts (open ones unless ``status`` says otherwise; ``""`` for both)."""
        return self.send(ops.conflicts(status, type, item_id, limit, cursor))

    def iter_conflicts(
        self, *, status: str | None = None, type: str | None = None, item_id: str | None = None, page_size: int = 100
    ) -> Iterator[m.MemoryConflict]:
        return self._pages(lambda cursor: ops.conflicts(status, type, item_id, page_size, cursor))

    def resolve_conflict(
        self, conflict_id: str, resolution: str, *, reason: str = "", content: str | None = None
    ) -> m.Resolved:
        """keep_existing, accept_new, keep_both, or merge (with ``content``)."""
        return self.send(ops.resolve_conflict(conflict_id, resolution, reason, content))

    def edges(self, item_id: str) -> m.Edges:
        return self.send(ops.edges(item_id))

    def link(self, src_id: str, dst_id: str, type: str) -> m.Edge:
        """Link two memories (``POST /v1/edges``); an existing link is answered as it is."""
        return self.send(ops.link(src_id, dst_id, type))

    def unlink(self, edge_id: str) -> None:
        self.send(ops.unlink(edge_id))

    # The admin API (the admin scope)

    def admin_create_tenant(self, name: str) -> m.Created:
        return self.send(ops.admin_create_tenant(name))

    def admin_create_workspace(self, name: str, *, tenant_id: str | None = None) -> m.Created:
        return self.send(ops.admin_create_workspace(name, tenant_id))

    def admin_add_member(
        self, workspace_id: str, principal_id: str, role: str, *, tenant_id: str | None = None
    ) -> m.Membership:
        return self.send(ops.admin_add_member(workspace_id, principal_id, role, tenant_id))

    def admin_create_principal(
        self, name: str, type: str, *, trusted: bool = False, tenant_id: str | None = None
    ) -> m.Created:
        return self.send(ops.admin_create_principal(name, type, trusted, tenant_id))

    def admin_create_api_key(
        self, principal_id: str, *, scopes: list[str] | None = None, label: str = "", tenant_id: str | None = None
    ) -> m.IssuedKey:
        return self.send(ops.admin_create_api_key(principal_id, scopes, label, tenant_id))

    def admin_api_keys(self, *, tenant_id: str | None = None) -> m.ApiKeys:
        return self.send(ops.admin_list_api_keys(tenant_id))

    def admin_revoke_api_key(self, key_id: str, *, tenant_id: str | None = None) -> None:
        self.send(ops.admin_revoke_api_key(key_id, tenant_id))

    def admin_tenant_config(self, *, tenant_id: str | None = None) -> m.TenantConfig:
        return self.send(ops.admin_tenant_config(tenant_id))

    def admin_patch_tenant_config(
        self, *, tenant_id: str | None = None, **fields: Unpack[ops.TenantConfigFields]
    ) -> m.TenantConfig:
        return self.send(ops.admin_patch_tenant_config(tenant_id, fields))

    def admin_kinds(self, *, tenant_id: str | None = None) -> m.Kinds:
        return self.send(ops.admin_kinds(tenant_id))

    def admin_create_kind(self, name: str, *, tenant_id: str | None = None, **fields: Unpack[ops.KindFields]) -> m.Kind:
        return self.send(ops.admin_create_kind(name, tenant_id, fields))

    def admin_patch_kind(
        self, name: str, *, tenant_id: str | None = None, **fields: Unpack[ops.KindPatchFields]
    ) -> m.Kind:
        return self.send(ops.admin_patch_kind(name, tenant_id, fields))

    def admin_promote(self, *, dry_run: bool = True, limit: int = 100, tenant_id: str | None = None) -> m.Promotion:
        return self.send(ops.admin_promote(dry_run, limit, tenant_id))

    def admin_add_tunnel(
        self, from_wing: str, to_wing: str, *, from_room: str = "", to_room: str = "", tenant_id: str | None = None
    ) -> m.Tunnel:
        return self.send(ops.admin_add_tunnel(from_wing, to_wing, from_room, to_room, tenant_id))

    def admin_tunnels(self, *, tenant_id: str | None = None) -> m.Tunnels:
        return self.send(ops.admin_tunnels(tenant_id))

    def admin_remove_tunnel(self, tunnel_id: str, *, tenant_id: str | None = None) -> None:
        self.send(ops.admin_remove_tunnel(tunnel_id, tenant_id))
