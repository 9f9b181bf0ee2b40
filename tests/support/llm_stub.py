"""A local OpenAI-compatible chat server for tests: the real client code runs against it.

``StubLLM.answers`` is a queue of what to do with the next requests: a dict (answered as the JSON content),
a str (answered as raw content, e.g. not JSON), ``"timeout"`` (sleeps past any client timeout) or ``"error"``
(HTTP 500). An empty queue answers with ``default``. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from engram.runtime.ports import free_port
from tests.support.waiting import eventually

TIMEOUT = "timeout"
ERROR = "error"


class StubLLM:
    def __init__(self) -> None:
        self.answers: list[Any] = []
        self.default: Any = ERROR
        self.requests: list[dict[str, Any]] = []
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._complete)

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        answer = self.answers.pop(0) if self.answers else self.default
        if answer == TIMEOUT:
            await asyncio.sleep(30)
        if answer == ERROR:
            return JSONResponse({"error": {"message": "stub failure"}}, status_code=500)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return JSONResponse(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "stub"),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@contextlib.asynccontextmanager
async def running_stub() -> AsyncIterator[StubLLM]:
    stub = StubLLM()
    server = uvicorn.Server(
        uvicorn.Config(stub.app, host="127.0.0.1", port=stub.port, log_level="warning", timeout_graceful_shutdown=1)
    )
    task = asyncio.create_task(server.serve())
    try:
        await eventually(
            lambda: server.started,
            timeout=10,
            interval=0.01,  # uvicorn offers a flag, not an event
            message="the stub LLM server did not start",
        )
        yield stub
    finally:
        server.should_exit = True
        await task
