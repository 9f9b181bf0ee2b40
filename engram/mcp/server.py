"""Engram's MCP server: the instructions an agent gets at connection, the tools (``tools.py``), the resource
``engram://items/{id}`` and the ``startup`` prompt. The same server runs over stdio (``engram mcp``) and over
streamable HTTP on the gateway (``/mcp``); only how a request reaches its caller's API client differs
(``Connect``)."""

from __future__ import annotations

import json
from typing import Any

from engram_client import EngramError, NotFound
from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from engram.mcp.shapes import describe
from engram.mcp.tools import Connect, Ctx, Tools

NAME = "engram"
VERSION = "0.1.0"
STARTUP_ITEMS = 20

INSTRUCTIONS = """\
Engram is your long-term memory, shared with the people and agents of your workspace. Every answer says why:
recall and search results carry each memory's id, a score and the reasons it was chosen.

- At the start of a session, load the working set: the `startup` prompt, or `recall` with mode "startup".
- Before answering from memory, `recall` with the task. Before writing, `search` or `recall` for the subject.
- When something you already stored has changed, call `supersede` with that memory's id and the new text.
  Do not `remember` a second memory that contradicts the first: it is flagged as a conflict for review.
  When a memory is simply no longer true, `invalidate` it with a reason.
- `remember` durable knowledge (facts, preferences, decisions, procedures), one self-contained statement
  each. Record raw conversation turns and tool output with `observe`: they expire unless promoted.
- After using recalled memories, give `feedback` with the recall's recall_id: useful for those that helped,
  noise for those that did not. It tunes what later recalls return.
- Cite memory ids when you act on them. Never store secrets (keys, passwords): they are refused.
- A tool error starts with its code (insufficient_scope, not_found, validation_failed, rate_limited, …) and
  names the field at fault; fix that and try again, or tell the user.
"""


def build_server(connect: Connect) -> MCPServer:
    """The server, each request reaching the API as its caller through ``connect``."""
    server: MCPServer = MCPServer(NAME, title="Engram memory", version=VERSION, instructions=INSTRUCTIONS)
    Tools(connect).register(server.add_tool)

    @server.resource(
        "engram://items/{id}",
        name="item",
        title="A memory",
        description="One memory, whole, as JSON (GET /v1/items/{id}).",
        mime_type="application/json",
    )
    async def item(id: str, ctx: Ctx) -> str:
        try:
            async with connect(ctx) as client:
                found = await client.get(id)
        except NotFound as exc:
            raise ResourceNotFoundError(describe(exc)) from exc
        except EngramError as exc:
            raise ResourceError(describe(exc)) from exc
        return json.dumps(found.model_dump(mode="json"))

    @server.prompt(
        name="startup",
        title="Engram working set",
        description="Recall the memories a session starts with (pinned, preferences, recent decisions) and "
        "hand them to the model as the first message.",
    )
    async def startup(ctx: Ctx, workspace_id: str | None = None) -> list[UserMessage]:
        fields: dict[str, Any] = {"workspace_id": workspace_id} if workspace_id else {}
        try:
            async with connect(ctx) as client:
                answer = await client.recall(mode="startup", item_budget=STARTUP_ITEMS, **fields)
        except EngramError as exc:
            raise ValueError(describe(exc)) from exc
        lines = [f"- [{h.item.id}] ({h.item.kind}, score {h.score:.2f}) {h.item.content}" for h in answer.items]
        text = (
            f"Your memory working set from Engram (recall_id {answer.recall_id}). Rely on it, supersede what "
            "has changed, and give feedback on what helped:\n" + ("\n".join(lines) or "(nothing stored yet)")
        )
        return [UserMessage(text)]

    return server
