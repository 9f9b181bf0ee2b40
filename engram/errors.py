"""The one error hierarchy. Each error has a stable ``code`` (a subclass's own, or a more specific one given
when raised: ``PermissionDenied(..., code="authority_too_low")``), a ``retryable`` flag, a ``detail`` for
humans and, when one field of the request is at fault, its ``field``.

    EngramError            anything unexpected (``internal``); a bug or a broken invariant. Retrying does not help.
    ├── ValidationFailed   the request breaks a rule: a bad value, an unknown kind, a secret in the content, a
    │                      malformed cursor. ``field`` names the culprit. Retrying the same request does not help.
    ├── NotFound           no such item, or one the caller may not read: the two are told apart nowhere.
    │                      Retrying does not help.
    ├── Unauthenticated    no valid API key, internal token or caller context. Retrying does not help.
    ├── PermissionDenied   the caller is known but may not do this: a missing scope, too little authority, a
    │                      review action its role does not allow, a read-only workspace. Retrying does not help.
    ├── Conflict           the request clashes with the current state: a name taken, a duplicate live item,
    │                      an item already invalidated or a conflict already resolved, a concurrent write.
    │                      Retrying helps only once that state has changed.
    ├── RateLimited        the tenant's or key's rate limit is spent. Retryable after ``retry_after_s`` seconds.
    └── Unavailable        a dependency (database, NATS, a downstream service, the embedding endpoint) cannot
                           be reached right now, or the outbox backlog is over its bound (``backlog_full``).
                           Retryable after ``retry_after_s`` seconds.

Four more live next to what raises them and never cross an edge: ``MigrationError``
(``engram/db/migrate.py``) and ``HomeInUseError`` (``engram/runtime/home_lock.py``), both reported by the CLI,
``SettingsError`` (``engram/config.py``), a setting a service needs is missing, reported as it starts, and
``CannotListen`` (``engram/runtime/ports.py``), a port taken or an address that cannot be bound, reported by
``engram up`` and by the gateway as it starts.

The edges translate, nowhere else, each with a mapping keyed by class (the most specific class in the error's
MRO wins, see ``most_specific``): a gRPC status code in ``engram/rpc/errors.py`` (services), and an HTTP status
and title in ``services/gateway/problems.py`` (the gateway's problem+json). The class name, code and field cross
gRPC in trailing metadata, so the gateway raises the same class with the same code.

Errors also drive the pipeline (``engram/events/consumer.py``): a consumer retries only what ``is_retryable``
allows, and takes a ``NotFound`` (the event's item was deleted meanwhile) as handled, not as a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


class EngramError(Exception):
    code = "internal"
    retryable = False

    def __init__(self, detail: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        if code is not None:
            self.code = code


class ValidationFailed(EngramError):
    """The request breaks a rule; ``field`` names the offending field."""

    code = "validation_failed"


class NotFound(EngramError):
    code = "not_found"


class Unauthenticated(EngramError):
    code = "unauthenticated"


class PermissionDenied(EngramError):
    code = "permission_denied"


class Conflict(EngramError):
    code = "conflict"


class RateLimited(EngramError):
    code = "rate_limited"
    retryable = True

    def __init__(
        self, detail: str, *, retry_after_s: float = 1.0, field: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(detail, field=field, code=code)
        self.retry_after_s = retry_after_s


class Unavailable(EngramError):
    """A dependency (database, NATS, a downstream service) cannot be reached right now, or cannot keep up (the
    outbox backlog is over its bound). Retryable after ``retry_after_s`` seconds."""

    code = "unavailable"
    retryable = True

    def __init__(
        self, detail: str, *, retry_after_s: float = 1.0, field: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(detail, field=field, code=code)
        self.retry_after_s = retry_after_s


def is_retryable(error: BaseException) -> bool:
    """Whether trying the same thing again may succeed: an Engram error says so itself (its ``retryable``
    flag); anything else (a dropped connection, a deadlock, a bug not yet understood) is given the benefit of
    the doubt. The pipeline's consumers dead-letter a non-retryable failure at once instead of redelivering it."""
    if isinstance(error, EngramError):
        return error.retryable
    return True


def most_specific(table: Mapping[type[EngramError], T], error: type[EngramError]) -> T:
    """The value an edge's table gives the nearest class in ``error``'s MRO (every table maps EngramError)."""
    for cls in error.__mro__:
        if cls in table:
            return table[cls]
    return table[EngramError]
