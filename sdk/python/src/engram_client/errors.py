"""What a call can raise. Every error the API answers is ``application/problem+json`` with a stable ``code``;
the client raises the class of its status, carrying the code, the field and the whole problem:

    EngramError              base; also an unexpected status (500 ``internal``, 405, …)
    ├── ValidationFailed     422: ``validation_failed``, ``secret_detected``; ``field`` names the culprit,
    │                        ``errors`` lists each schema problem
    ├── Unauthorized         401 ``unauthenticated``: no, a wrong or a revoked API key
    ├── Forbidden            403: ``insufficient_scope``, ``review_not_allowed``, ``workspace_read_only``, …
    ├── NotFound             404: no such thing, or one the caller may not see
    ├── Conflict             409: ``invalid_transition``, ``not_live``, ``already_resolved``, …
    ├── RateLimited          429 ``rate_limited``; ``retry_after`` is the seconds the server asked to wait
    ├── Unavailable          503 ``unavailable``: a downstream service did not answer; retryable
    └── ConnectionFailed     no answer at all: connection refused, a timeout, a dropped connection

``status`` is the HTTP status (``None`` for ``ConnectionFailed``). The client retries 429 and 503 itself
(see ``RetryPolicy``); an error reaches the caller once the retries are spent or cannot help.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx


class EngramError(Exception):
    """An answer that is not a success, or no answer at all."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        code: str = "internal",
        field: str | None = None,
        problem: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {detail}" if status is None else f"{status} {code}: {detail}")
        self.detail = detail
        self.status = status
        self.code = code
        self.field = field
        self.problem: dict[str, Any] = problem or {}


class ValidationFailed(EngramError):
    """The request broke a rule; ``field`` names it and ``errors`` lists the schema problems, if any."""

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.problem.get("errors") or [])


class Unauthorized(EngramError):
    pass


class Forbidden(EngramError):
    pass


class NotFound(EngramError):
    pass


class Conflict(EngramError):
    pass


class RateLimited(EngramError):
    def __init__(self, detail: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.retry_after = retry_after


class Unavailable(EngramError):
    def __init__(self, detail: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.retry_after = retry_after


class ConnectionFailed(EngramError):
    """The request got no answer (``__cause__`` holds the httpx error)."""


BY_STATUS: dict[int, type[EngramError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: ValidationFailed,
    429: RateLimited,
    503: Unavailable,
}


def retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def from_response(response: httpx.Response) -> EngramError:
    """The error an unsuccessful answer stands for, read from its problem+json body (or its status alone)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    problem: dict[str, Any] = body if isinstance(body, dict) else {}
    status = response.status_code
    code = str(problem.get("code") or ("internal" if status >= 500 else "http_error"))
    detail = str(problem.get("detail") or response.reason_phrase or f"HTTP {status}")
    field = problem.get("field")
    common: dict[str, Any] = {"status": status, "code": code, "field": field, "problem": problem}
    if status == 429:
        return RateLimited(detail, retry_after=retry_after(response), **common)
    if status == 503:
        return Unavailable(detail, retry_after=retry_after(response), **common)
    return BY_STATUS.get(status, EngramError)(detail, **common)
