"""The ``engram`` verbs that talk to a gateway through the Python SDK (``engram_client``): remember, recall,
search, get, list, review, conflicts; and ``events tail``, which reads the event stream.

Where: ``ENGRAM_URL`` and ``ENGRAM_API_KEY``, else the ``engram up`` stack running in ``ENGRAM_HOME`` (its
gateway from ``stack.json``, its development key from ``dev-key``). ``--json`` prints the API's JSON answer;
otherwise a compact table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.config import Settings
from engram.errors import ValidationFailed

if TYPE_CHECKING:
    from engram_client import EngramClient
    from engram_client.models import Model

PREVIEW = 60


def _stack(home: Path) -> dict[str, Any]:
    from engram.runtime.stack import STACK_FILE

    stack_file = home / STACK_FILE
    return json.loads(stack_file.read_text()) if stack_file.exists() else {}


def target(settings: Settings) -> tuple[str | None, str | None]:
    """The gateway URL and API key: the environment's, else the running ``engram up`` stack's."""
    from engram.runtime.dev_key import DEV_KEY_FILE

    home = settings.home.expanduser()
    url = os.environ.get("ENGRAM_URL") or _stack(home).get("gateway")
    key = os.environ.get("ENGRAM_API_KEY")
    dev_key = home / DEV_KEY_FILE
    if not key and dev_key.exists():
        key = dev_key.read_text().strip()
    return url, key


def nats_url(settings: Settings) -> str:
    url = settings.nats_url or _stack(settings.home.expanduser()).get("nats_url")
    if not url:
        raise ValidationFailed("no NATS URL: set ENGRAM_NATS_URL, or run `engram up` in ENGRAM_HOME", field="nats_url")
    return str(url)


def add_parsers(commands: Any) -> None:
    """The verbs' subcommands, on the ``engram`` parser's subparsers."""
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print the API's JSON answer instead of a table")

    remember = commands.add_parser("remember", parents=[as_json], help="store a memory")
    remember.add_argument("content", help="the memory's text; - reads it from stdin")
    remember.add_argument("--kind", help="its kind (default: fact, or what the classifier says)")
    remember.add_argument("--tag", action="append", default=[], dest="tags", help="a tag (repeatable)")
    remember.add_argument("--importance", type=float, help="0–1")
    remember.add_argument("--subject", help="what it is about (names a singleton slot)")
    remember.add_argument("--visibility", choices=["private", "workspace", "tenant", "public"])
    remember.add_argument("--workspace", help="the workspace id (default: the tenant's default workspace)")
    remember.add_argument("--pinned", action="store_true", help="startup recall puts it first; it never expires")

    recall = commands.add_parser("recall", parents=[as_json], help="recall memories for a task (or a session start)")
    recall.add_argument("query", nargs="?", help="the task; leave out with --mode startup")
    recall.add_argument("--mode", choices=["hybrid", "keyword", "semantic", "startup"], default=None)
    recall.add_argument("--limit", type=int, help="the item budget: 1–200 (default 10)")
    recall.add_argument("--kind", action="append", default=[], dest="kinds", help="only this kind (repeatable)")
    recall.add_argument("--tag", action="append", default=[], dest="tags", help="only with this tag (repeatable)")

    search = commands.add_parser("search", parents=[as_json], help="search memories by keyword, meaning or both")
    search.add_argument("query")
    search.add_argument("--mode", choices=["hybrid", "keyword", "semantic"], default=None)
    search.add_argument("--limit", type=int, help="how many: 1–200 (default 10)")
    search.add_argument("--kind", action="append", default=[], dest="kinds", help="only this kind (repeatable)")
    search.add_argument("--tag", action="append", default=[], dest="tags", help="only with this tag (repeatable)")

    get = commands.add_parser("get", parents=[as_json], help="read one memory")
    get.add_argument("item_id")

    listing = commands.add_parser("list", parents=[as_json], help="list memories, newest first, one page")
    listing.add_argument("--kind", help="kinds, comma-separated")
    listing.add_argument("--review-status", help="review statuses, comma-separated")
    listing.add_argument("--tag", help="only items with this tag")
    listing.add_argument("--workspace", help="only items in this workspace")
    listing.add_argument("--include-superseded", action="store_true", help="also superseded and invalidated ones")
    listing.add_argument("--limit", type=int, default=20, help="the page size: 1–500 (default 20)")
    listing.add_argument("--cursor", help="the previous page's next_cursor")

    review = commands.add_parser(
        "review", parents=[as_json], help="list the review queue, or take a review action on a memory"
    )
    review.add_argument("item_id", nargs="?", help="the memory; leave out to list the queue (proposed, disputed)")
    review.add_argument(
        "action", nargs="?", choices=["activate", "dispute", "reject", "archive", "reactivate", "withdraw"]
    )
    review.add_argument("--reason", default="", help="why (kept on the audit row)")
    review.add_argument("--limit", type=int, default=20, help="the queue's page size (default 20)")

    conflicts = commands.add_parser("conflicts", parents=[as_json], help="list conflicts, or resolve one")
    conflicts.add_argument("--status", choices=["open", "resolved", "all"], default="open")
    conflicts.add_argument("--item", help="only conflicts this memory is part of")
    conflicts.add_argument("--limit", type=int, default=20, help="the page size (default 20)")
    conflicts.add_argument("--cursor", help="the previous page's next_cursor")
    conflict_verbs = conflicts.add_subparsers(dest="conflict_command")
    resolve = conflict_verbs.add_parser("resolve", parents=[as_json], help="decide a conflict (review scope)")
    resolve.add_argument("conflict_id")
    resolve.add_argument("resolution", choices=["keep_existing", "accept_new", "keep_both", "merge"])
    resolve.add_argument("--reason", default="")
    resolve.add_argument("--content", help="the merged memory (merge only)")

    events = commands.add_parser("events", help="the event stream")
    event_verbs = events.add_subparsers(dest="events_command", required=True)
    tail = event_verbs.add_parser(
        "tail", help="print events as JSON lines as they are published (an ephemeral consumer; Ctrl-C stops)"
    )
    tail.add_argument("--since", help="start this far back (30s, 10m, 2h, 7d) or at an ISO 8601 time with an offset")
    tail.add_argument("--types", default="", help="comma-separated event types, e.g. memory.created,conflict.detected")
    tail.add_argument("--tenant", help="only this tenant's events (a UUID)")
    tail.add_argument("--count", type=int, help="stop after this many events")


VERBS = ("remember", "recall", "search", "get", "list", "review", "conflicts", "events")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a verb; an error answer of the gateway is printed with its code (and field) and exits 1."""
    if args.command == "events":
        return _tail(args, settings)
    from engram_client import EngramClient, EngramError

    url, key = target(settings)
    try:
        with EngramClient(url, key) as client:
            answer = _call(client, args)
    except EngramError as exc:
        if args.json and exc.problem:
            print(json.dumps(exc.problem), file=sys.stderr)
        else:
            print(
                f"engram: {exc.code}: {exc.detail}" + (f" (field: {exc.field})" if exc.field else ""), file=sys.stderr
            )
        return 1
    if args.json:
        print(json.dumps(answer.model_dump(mode="json", exclude_unset=True), indent=2))  # the keys as received
    else:
        _print_human(args, answer)
    return 0


def _call(client: EngramClient, args: argparse.Namespace) -> Model:
    if args.command == "remember":
        content = sys.stdin.read() if args.content == "-" else args.content
        optional = {
            "kind": args.kind,
            "importance": args.importance,
            "subject": args.subject,
            "visibility": args.visibility,
            "workspace_id": args.workspace,
        }
        fields: dict[str, Any] = {name: value for name, value in optional.items() if value is not None}
        if args.tags:
            fields["tags"] = args.tags
        if args.pinned:
            fields["pinned"] = True
        return client.remember(content, **fields)
    if args.command in ("recall", "search"):
        filters: dict[str, Any] = {"kinds": args.kinds, "tags": args.tags}
        if args.mode:
            filters["mode"] = args.mode
        if args.command == "search":
            return client.search(args.query, **filters, **({"limit": args.limit} if args.limit else {}))
        if args.limit:
            filters["item_budget"] = args.limit
        return client.recall(args.query, **filters)
    if args.command == "get":
        return client.get(args.item_id)
    if args.command == "list":
        listed = {
            "kind": args.kind,
            "review_status": args.review_status,
            "tag": args.tag,
            "workspace_id": args.workspace,
            "include_superseded": args.include_superseded or None,
        }
        given: dict[str, Any] = {name: value for name, value in listed.items() if value is not None}
        return client.list_items(limit=args.limit, cursor=args.cursor, **given)
    if args.command == "review":
        if args.item_id is None:
            return client.list_items(limit=args.limit, review_status=["proposed", "disputed"])
        if args.action is None:
            raise ValidationFailed("review ITEM_ID needs an ACTION (activate, dispute, …)", field="action")
        return client.review(args.item_id, args.action, reason=args.reason)
    if args.conflict_command == "resolve":
        return client.resolve_conflict(args.conflict_id, args.resolution, reason=args.reason, content=args.content)
    status = "" if args.status == "all" else args.status
    return client.conflicts(status=status, item_id=args.item, limit=args.limit, cursor=args.cursor)


def _print_human(args: argparse.Namespace, answer: Model) -> None:
    from engram_client.models import Item, Page, Recalled

    data = answer.model_dump(mode="json")
    if args.command == "remember":
        print(f"{data['status']}: {data['id']} ({data['item']['kind']}, {data['review_status']})")
    elif args.command in ("recall", "search"):
        hits: list[Recalled] = getattr(answer, "items", [])
        _table(
            ["score", "id", "kind", "status", "content"],
            [[f"{h.score:.3f}", h.item.id, h.item.kind, h.item.review_status, _preview(h.item.content)] for h in hits],
        )
    elif isinstance(answer, Item):
        width = max(len(k) for k in data)
        for name, value in data.items():
            if value not in (None, [], {}):
                print(f"{name:<{width}}  {value if isinstance(value, str) else json.dumps(value)}")
    elif isinstance(answer, Page):
        if args.command == "conflicts":
            rows = [[c["id"], c["type"], c["status"], c["existing_item_id"], c["new_item_id"]] for c in data["items"]]
            _table(["id", "type", "status", "existing", "new"], rows)
        else:
            rows = [
                [i["id"], i["kind"], i["review_status"], (i["created_at"] or "")[:19], _preview(i["content"])]
                for i in data["items"]
            ]
            _table(["id", "kind", "status", "created", "content"], rows)
        if answer.next_cursor:
            print(f"more: --cursor {answer.next_cursor}")
    else:  # a resolved conflict
        conflict = data["conflict"]
        print(f"{conflict['id']}: {conflict['resolution']}")


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def _table(header: list[str], rows: Sequence[Sequence[str]]) -> None:
    if not rows:
        print("(none)")
        return
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _tail(args: argparse.Namespace, settings: Settings) -> int:
    from engram.events import connection
    from engram.events.tail import since_time, subjects, tail

    if args.count is not None and args.count < 1:
        raise ValidationFailed("--count must be at least 1", field="count")
    filters = subjects(settings.events_subject_prefix, args.types.split(","), args.tenant)
    since = since_time(args.since) if args.since else None

    def emit(line: str) -> None:
        print(line, flush=True)

    def ready() -> None:
        print(f"engram: tailing {', '.join(filters)} on {settings.events_stream} (Ctrl-C stops)", file=sys.stderr)
        sys.stderr.flush()

    identity = connection.credentials(settings)  # ENGRAM_NATS_USER/PASSWORD, _CREDS or _NKEY_SEED, as the services
    asyncio.run(tail(nats_url(settings), settings.events_stream, filters, since, emit, ready, args.count, identity))
    return 0
