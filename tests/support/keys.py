"""API keys for tests: the type of the ``make_key`` fixture, which issues keys through the real identity code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

KeyMaker = Callable[..., Awaitable[str]]
"""``await make_key(ctx, scopes)`` → an Authorization header value (``Bearer …``) for that principal."""
