"""The one error hierarchy. Each error has a stable ``code`` and a ``retryable`` flag; the edges translate
it to a gRPC status (services) and to an HTTP problem+json (gateway), nowhere else."""

from __future__ import annotations


class EngramError(Exception):
    code = "internal"
    retryable = False
    http_status = 500
    title = "Internal error"

    def __init__(self, detail: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        if code is not None:
            self.code = code


class ValidationFailed(EngramError):
    """The request breaks a rule; ``field`` names the offending field."""

    code = "validation_failed"
    http_status = 422
    title = "Invalid request"


class NotFound(EngramError):
    code = "not_found"
    http_status = 404
    title = "Not found"


class Unauthenticated(EngramError):
    code = "unauthenticated"
    http_status = 401
    title = "Unauthenticated"


class PermissionDenied(EngramError):
    code = "permission_denied"
    http_status = 403
    title = "Forbidden"


class Conflict(EngramError):
    code = "conflict"
    http_status = 409
    title = "Conflict"


class RateLimited(EngramError):
    code = "rate_limited"
    retryable = True
    http_status = 429
    title = "Too many requests"

    def __init__(self, detail: str, *, retry_after_s: float = 1.0, field: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(detail, field=field, code=code)
        self.retry_after_s = retry_after_s


class Unavailable(EngramError):
    """A dependency (database, NATS, a downstream service) cannot be reached right now."""

    code = "unavailable"
    retryable = True
    http_status = 503
    title = "Service unavailable"


ERRORS_BY_CODE: dict[str, type[EngramError]] = {
    cls.code: cls for cls in (EngramError, ValidationFailed, NotFound, Unauthenticated, PermissionDenied,
                              Conflict, RateLimited, Unavailable)
}

# For codes that specialise a class (e.g. ``authority_too_low`` is a PermissionDenied): the HTTP status finds it.
ERRORS_BY_STATUS: dict[str, type[EngramError]] = {
    str(cls.http_status): cls for cls in (ValidationFailed, NotFound, Unauthenticated, PermissionDenied, Conflict,
                                          RateLimited, Unavailable)
}
