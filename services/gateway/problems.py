"""Errors as application/problem+json (RFC 9457) with a stable ``code``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engram.domain.ratelimit import retry_after_header
from engram.errors import (
    Conflict,
    EngramError,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
    most_specific,
)

PROBLEM = "application/problem+json"
log = logging.getLogger(__name__)

HTTP_STATUS: dict[type[EngramError], tuple[int, str]] = {
    EngramError: (500, "Internal error"),
    ValidationFailed: (422, "Invalid request"),
    NotFound: (404, "Not found"),
    Unauthenticated: (401, "Unauthenticated"),
    PermissionDenied: (403, "Forbidden"),
    Conflict: (409, "Conflict"),
    RateLimited: (429, "Too many requests"),
    Unavailable: (503, "Service unavailable"),
}
"""The HTTP status and problem title of each error class; a subclass not listed takes its nearest listed
ancestor's."""


def http_status(error: type[EngramError]) -> tuple[int, str]:
    """The HTTP status and title an error of this class is answered with."""
    return most_specific(HTTP_STATUS, error)


def problem_body(
    status: int, code: str, title: str, detail: str, *, field: str | None = None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The problem+json object."""
    body: dict[str, Any] = {
        "type": f"https://engram.dev/problems/{code}",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
    }
    if field:
        body["field"] = field
    if extra:
        body.update(extra)
    return body


def problem(
    status: int,
    code: str,
    title: str,
    detail: str,
    *,
    field: str | None = None,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = problem_body(status, code, title, detail, field=field, extra=extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def error_body(exc: EngramError) -> dict[str, Any]:
    """The problem+json object an error is answered with (its status is the object's ``status``)."""
    status, title = http_status(type(exc))
    return problem_body(status, exc.code, title, exc.detail, field=exc.field)


def validation_body(errors: Sequence[Any]) -> dict[str, Any]:
    """The ``validation_failed`` problem of a request the schema refused (``errors``: pydantic's)."""
    listed = [{"field": _field(tuple(e["loc"])), "rule": e["type"], "message": e["msg"]} for e in errors]
    first = listed[0] if listed else {"field": "body", "message": "invalid request"}
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in listed)
    return problem_body(
        422, "validation_failed", "Invalid request", detail, field=first["field"], extra={"errors": listed}
    )


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def install(app: FastAPI) -> None:
    @app.exception_handler(EngramError)
    async def engram_error(_: Request, exc: EngramError) -> JSONResponse:
        headers = {"Retry-After": "1"} if exc.retryable else None
        if isinstance(exc, Unauthenticated):
            headers = {"WWW-Authenticate": 'Bearer realm="engram"'}
        if isinstance(exc, RateLimited | Unavailable):
            headers = {"Retry-After": retry_after_header(exc.retry_after_s)}
        status, title = http_status(type(exc))
        return problem(status, exc.code, title, exc.detail, field=exc.field, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(validation_body(exc.errors()), status_code=422, media_type=PROBLEM)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in the gateway", exc_info=exc)
        return problem(500, "internal", "Internal error", "an unexpected error occurred; it has been logged")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return problem(exc.status_code, code, str(exc.detail), str(exc.detail))
