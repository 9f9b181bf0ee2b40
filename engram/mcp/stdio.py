"""``engram mcp``: the MCP server over stdin/stdout, for an agent that starts it as a subprocess. Every call
goes to the gateway through one SDK client with the process's key: ``ENGRAM_URL`` and ``ENGRAM_API_KEY``,
else the running ``engram up`` stack's gateway and development key (as the CLI verbs find them)."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from engram_client import AsyncEngramClient

from engram.config import Settings
from engram.mcp.server import build_server
from engram.mcp.tools import Ctx
from engram.verbs import target


async def serve(settings: Settings) -> None:
    url, key = target(settings)
    async with AsyncEngramClient(url, key) as client:

        @asynccontextmanager
        async def connect(_: Ctx) -> AsyncIterator[AsyncEngramClient]:
            yield client

        await build_server(connect).run_stdio_async()


def run(settings: Settings) -> int:
    """Serve until the agent closes stdin. Logs go to stderr: stdout carries the protocol."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    anyio.run(serve, settings)
    return 0
