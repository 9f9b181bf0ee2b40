"""What the sync and the async client share around a call: where the API is, the headers every request
carries, reading an answer into its model or its error, and one retry loop's bookkeeping."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx

from engram_client import errors
from engram_client.operations import Call
from engram_client.retry import RetryPolicy

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 30.0
VERSION = "0.1.0"


def base_url(given: str | None) -> str:
    """The argument, else ``ENGRAM_URL``, else the local gateway's default address."""
    return (given or os.environ.get("ENGRAM_URL") or DEFAULT_URL).rstrip("/")


def api_key(given: str | None) -> str | None:
    """The argument, else ``ENGRAM_API_KEY``; None sends no key (a gateway with authentication off)."""
    return given or os.environ.get("ENGRAM_API_KEY") or None


def headers(key: str | None) -> dict[str, str]:
    out = {"User-Agent": f"engram-client/{VERSION}", "Accept": "application/json"}
    if key:
        out["Authorization"] = f"Bearer {key}"
    return out


def request_args(call: Call[Any], auth: dict[str, str]) -> dict[str, Any]:
    """The keyword arguments of ``httpx.Client.build_request`` for ``call``."""
    args: dict[str, Any] = {"headers": {**auth, **call.headers}}
    if call.params:
        args["params"] = call.params
    if call.json is not None:
        args["json"] = call.json
    return args


def answer(call: Call[T], response: httpx.Response) -> T:
    """The call's answer model; the matching ``EngramError`` for anything but a 2xx."""
    if not response.is_success:
        raise errors.from_response(response)
    if call.answer is None:
        return cast(T, None)
    model: Any = call.answer
    return cast(T, model.model_validate(response.json()))


@dataclass
class Attempts:
    """One call's tries so far, and whether (and how long) to wait before the next."""

    policy: RetryPolicy
    idempotent: bool
    attempt: int = 0
    waited_s: float = 0.0

    def next_delay(self, error: BaseException) -> float | None:
        delay = self.policy.delay(self.attempt, error, idempotent=self.idempotent, waited_s=self.waited_s)
        if delay is not None:
            self.waited_s += delay
        return delay


def connection_failed(error: httpx.TransportError) -> errors.ConnectionFailed:
    """A transport failure as the caller sees it."""
    return errors.ConnectionFailed(f"{type(error).__name__}: {error}".rstrip(": "), code="connection_failed")
