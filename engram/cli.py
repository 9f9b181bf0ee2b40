"""The ``engram`` command: up, migrate, serve."""

from __future__ import annotations

import argparse
import asyncio
import runpy
import sys

from engram.config import Settings

SERVICES = ("gateway", "ingest", "recall", "embedder")


def _up(settings: Settings) -> int:
    from engram.errors import EngramError
    from engram.runtime.stack import run_stack

    try:
        asyncio.run(run_stack(settings))
    except EngramError as exc:
        print(f"engram: {exc.detail}", file=sys.stderr)
        return 1
    return 0


def _migrate(settings: Settings) -> int:
    from engram.db.migrate import migrate

    async def run(url: str) -> list[str]:
        return await migrate(url, settings)

    if settings.database_url:
        applied = asyncio.run(run(settings.database_url))
    else:
        from engram.runtime.postgres import EmbeddedPostgres

        settings.home.mkdir(parents=True, exist_ok=True)
        server = EmbeddedPostgres(settings.home.resolve() / "pgdata")
        url = server.start()
        try:
            applied = asyncio.run(run(url))
        finally:
            server.stop()
    print("applied: " + (", ".join(applied) if applied else "nothing (schema is up to date)"))
    return 0


def _serve(name: str) -> int:
    sys.argv = [f"services.{name}"]
    runpy.run_module(f"services.{name}", run_name="__main__", alter_sys=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="engram", description="Trustable memory for AI agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("up", help="start the whole stack (embedded PostgreSQL and NATS unless URLs are set)")
    commands.add_parser("migrate", help="apply pending database migrations")
    serve = commands.add_parser("serve", help="run one service in the foreground")
    serve.add_argument("service", choices=SERVICES)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args.service)
    settings = Settings()
    return _up(settings) if args.command == "up" else _migrate(settings)


if __name__ == "__main__":
    sys.exit(main())
