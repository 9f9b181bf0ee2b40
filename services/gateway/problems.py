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

HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 415: "unsupported_media_type"}
"""The code of an HTTP error the framework (or ``media``) raises; any other is ``http_error``."""
HTTP_TITLES = {415: "Unsupported media type"}
"""Their titles where the detail is no title; otherwise the detail is both."""


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


def _invalid_json(exc: RequestValidationError) -> JSONResponse | None:
    """The answer to a body that is not JSON at all (pydantic's ``json_invalid`` at ``("body", <offset>)``):
    where the parse stopped, as a line and column, and why; None for any other validation error."""
    errors = exc.errors()
    if len(errors) != 1 or errors[0]["type"] != "json_invalid":
        return None
    loc = tuple(errors[0]["loc"])
    if len(loc) != 2 or loc[0] != "body" or not isinstance(loc[1], int):
        return None
    why = (errors[0].get("ctx") or {}).get("error") or errors[0]["msg"]
    return _not_json(exc.body if isinstance(exc.body, str) else "", loc[1], why)


def _not_json(doc: str, offset: int, why: str) -> JSONResponse:
    line = doc.count("\n", 0, offset) + 1
    column = offset - doc.rfind("\n", 0, offset)
    detail = f"body is not valid JSON (line {line}, column {column}): {why}"
    return problem(422, "invalid_json", "Invalid request", detail, field="body")


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
        if (unparsable := _invalid_json(exc)) is not None:
            return unparsable
        return JSONResponse(validation_body(exc.errors()), status_code=422, media_type=PROBLEM)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in the gateway", exc_info=exc)
        return problem(500, "internal", "Internal error", "an unexpected error occurred; it has been logged")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(bad := exc.__cause__, UnicodeDecodeError):  # FastAPI's 400 for a JSON body that is not UTF-8
            before = bad.object[: bad.start].decode(errors="replace")
            return _not_json(before, len(before), f"not UTF-8 ({bad.reason})")
        code = HTTP_CODES.get(exc.status_code, "http_error")
        title = HTTP_TITLES.get(exc.status_code, str(exc.detail))
        return problem(exc.status_code, code, title, str(exc.detail), field="body" if exc.status_code == 415 else None)
