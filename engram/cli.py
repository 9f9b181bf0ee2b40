"""The ``engram`` command: up, migrate, bootstrap-key, promote-proposed, doctor, serve; the verbs that talk to
a gateway (remember, recall, search, get, list, review, conflicts, events tail: ``engram/verbs.py``); and
``mcp``, the MCP server over stdio (``engram/mcp``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import runpy
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from engram import verbs
from engram.config import Settings
from engram.domain.validation import is_uuid
from engram.errors import EngramError, ValidationFailed

T = TypeVar("T")

SERVICES = ("gateway", "ingest", "recall", "embedder", "classifier", "conflicts", "promotion")


def _up(settings: Settings) -> int:
    from engram.runtime.stack import run_stack
    from engram.runtime.supervisor import ChildStartError

    try:
        asyncio.run(run_stack(settings))
    except ChildStartError as exc:  # what had started is stopped again; the message carries the log's tail
        print(f"engram: {exc}", file=sys.stderr)
        return 1
    print("engram: stopped", file=sys.stderr, flush=True)
    return 0


def _with_database(settings: Settings, work: Callable[[str], Coroutine[Any, Any, T]]) -> T:
    """Run ``work(database_url)`` against ENGRAM_DATABASE_URL, the running stack's database, or the
    embedded one started just for this command."""
    if settings.database_url:
        return asyncio.run(work(settings.database_url))
    home = settings.home.expanduser().resolve()
    stack_file = home / "stack.json"
    if stack_file.exists():
        return asyncio.run(work(json.loads(stack_file.read_text())["database_url"]))
    from engram.runtime.home_lock import hold_home
    from engram.runtime.postgres import EmbeddedPostgres

    with hold_home(home):
        server = EmbeddedPostgres(home / "pgdata", shared_buffers=settings.postgres_shared_buffers)
        url = server.start()
        try:
            return asyncio.run(work(url))
        finally:
            server.stop()


def _migrate(settings: Settings) -> int:
    from engram.db.migrate import migrate

    applied = _with_database(settings, lambda url: migrate(url, settings))
    print("applied: " + (", ".join(applied) if applied else "nothing (schema is up to date)"))
    return 0


def _bootstrap_key(settings: Settings) -> int:
    from engram.db.migrate import migrate
    from engram.runtime.dev_key import issue_admin_key

    async def issue(url: str) -> str:
        await migrate(url, settings)
        return await issue_admin_key(url, settings, "bootstrap key (engram bootstrap-key)")

    print(_with_database(settings, issue))
    return 0


def _promote(settings: Settings, tenant: str | None, limit: int, dry_run: bool) -> int:
    from engram.db.pool import create_pool
    from engram.pipeline.promotion import promote_proposed

    async def run(url: str) -> dict[str, int]:
        pool = await create_pool(url, role=settings.app_role, min_size=1, max_size=2)
        try:
            return dict(
                await promote_proposed(
                    pool, settings.events_subject_prefix, tenant_id=tenant, limit=limit, dry_run=dry_run
                )
            )
        finally:
            await pool.close()

    counts = _with_database(settings, run)
    print(json.dumps({"dry_run": dry_run, "counts": counts, "decided": sum(counts.values())}, sort_keys=True))
    return 0


def _doctor(settings: Settings, gateway: str | None, probes: list[str], as_json: bool) -> int:
    from engram import doctor

    named: dict[str, str] = {}
    for probe in probes:
        name, sep, url = probe.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise ValidationFailed(f"--probe must be NAME=URL with an http(s) URL; got {probe!r}", field="probe")
        named[name] = url
    return doctor.main(settings, gateway, named, as_json)


def _serve(name: str) -> int:
    sys.argv = [f"services.{name}"]
    runpy.run_module(f"services.{name}", run_name="__main__", alter_sys=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="engram", description="Trustable memory for AI agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("up", help="start the whole stack (embedded PostgreSQL and NATS unless URLs are set)")
    commands.add_parser("migrate", help="apply pending database migrations")
    commands.add_parser("bootstrap-key", help="print a new admin API key for the development tenant")
    promote = commands.add_parser("promote-proposed", help="promote the proposals every gate lets through")
    promote.add_argument("--tenant", help="one tenant's id (default: every tenant)")
    promote.add_argument("--limit", type=int, default=100, help="most proposals to decide (default 100)")
    promote.add_argument("--dry-run", action="store_true", help="report the decisions, write nothing")
    doctor = commands.add_parser("doctor", help="check a deployment: database, migrations, events, model, services")
    doctor.add_argument("--gateway", help="the gateway's base URL, to check its /ready")
    doctor.add_argument(
        "--probe", action="append", default=[], metavar="NAME=URL", help="another readiness URL to check (repeatable)"
    )
    doctor.add_argument("--json", action="store_true", help="one JSON object instead of one line per check")
    commands.add_parser(
        "mcp",
        help="run the MCP server over stdio for an agent (the gateway at ENGRAM_URL, with ENGRAM_API_KEY)",
    )
    serve = commands.add_parser("serve", help="run one service in the foreground")
    serve.add_argument("service", choices=SERVICES)
    verbs.add_parsers(commands)
    if not (sys.argv[1:] if argv is None else argv):  # bare `engram`: the help, as a usage error (argparse's 2)
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args.service)
    settings = Settings()
    try:
        if args.command in verbs.VERBS:
            return verbs.run(args, settings)
        if args.command == "up":
            return _up(settings)
        if args.command == "mcp":
            from engram.mcp.stdio import run as run_mcp

            return run_mcp(settings)
        if args.command == "doctor":
            return _doctor(settings, args.gateway, args.probe, args.json)
        if args.command == "bootstrap-key":
            return _bootstrap_key(settings)
        if args.command == "promote-proposed":
            if args.tenant and not is_uuid(args.tenant):
                raise ValidationFailed("--tenant must be a tenant id (a UUID)", field="tenant")
            if not 1 <= args.limit <= 100_000:
                raise ValidationFailed("--limit must be 1–100000", field="limit")
            return _promote(settings, args.tenant, args.limit, args.dry_run)
        return _migrate(settings)
    except EngramError as exc:
        print(f"engram: {exc.detail}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
