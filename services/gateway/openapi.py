"""The OpenAPI document's security: the API-key scheme, and on each operation the scopes it needs.

Authentication is the ``auth.caller`` dependency reading the route's scope policy, which FastAPI cannot turn
into a security requirement by itself. ``install`` adds them: ``components.securitySchemes.ApiKey`` (HTTP
bearer), and on every operation whose route depends on ``caller`` a ``security`` list with one requirement
per scope its policy accepts (OpenAPI 3.1 lets a non-OAuth requirement name roles; of several requirements,
any one suffices), plus a sentence in its description. Swagger UI then shows an Authorize button and a lock
on each such route. What is documented is derived from what ``caller`` enforces, never written twice.

It also documents the errors as they are answered (``problems``): FastAPI describes a 422 as its own
``HTTPValidationError`` in application/json, which the gateway never sends; every operation's 422 and a
``default`` response (any other error: 401, 403, 404, 409, 415, 429, 503) are ``Problem`` in
application/problem+json.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from services.gateway.auth import POLICY, PUBLIC, caller
from services.gateway.problems import PROBLEM

SCHEME = "ApiKey"
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "eng_<key_id>_<secret>",
    "description": "An Engram API key, sent as `Authorization: Bearer eng_<key_id>_<secret>` (in Swagger UI's "
    "Authorize dialog, paste the key alone). Each operation lists the scopes that let it in; a key needs one "
    "of them, and a key with the `admin` scope passes every scope check.",
}

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "An error (RFC 9457). `code` is stable and says which; `field` names the part of the request "
    "at fault when there is one; `errors` lists each rule a request broke (`validation_failed`).",
    "properties": {
        "type": {"type": "string", "description": "https://engram.dev/problems/<code>"},
        "title": {"type": "string", "description": "The kind of error, short."},
        "status": {"type": "integer", "description": "The HTTP status, repeated."},
        "detail": {"type": "string", "description": "What was wrong, for a person."},
        "code": {"type": "string", "description": "Stable: what a client branches on."},
        "field": {"type": "string", "description": "The part of the request at fault (`tags[1]`, `metadata.k`)."},
        "errors": {
            "type": "array",
            "description": "Each rule the request broke: its field, the rule's name, a message.",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "rule": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
    "required": ["type", "title", "status", "detail", "code"],
}
PROBLEM_CONTENT = {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
INVALID = "The request breaks a rule (`validation_failed`, `invalid_json`, or a service's rule), naming the field."
OTHER = (
    "Any other error: 401 without a valid key, 403 without the scope, 404, 409, 415 for a body not sent as JSON, "
    "429 (with Retry-After), 503 while a dependency is down."
)
FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` declare the API-key scheme and each authenticated operation's scopes."""
    generate = app.openapi

    def document() -> dict[str, Any]:
        spec = generate()  # FastAPI's own, cached until the routes change; the changes below are idempotent
        spec.setdefault("components", {}).setdefault("securitySchemes", {})[SCHEME] = BEARER
        for path, method, scopes in authenticated_operations(app):
            operation = spec["paths"][path][method]
            operation["security"] = [{SCHEME: [scope]} for scope in scopes]
            note = "Requires scope: " + " or ".join(f"`{scope}`" for scope in scopes) + "."
            description = operation.get("description", "")
            if not description.endswith(note):
                operation["description"] = f"{description}\n\n{note}".lstrip()
        document_problems(spec)
        return spec

    app.openapi = document  # type: ignore[method-assign]


def document_problems(spec: dict[str, Any]) -> None:
    """Each operation's 422 and ``default`` answers as the problem+json the gateway sends (idempotent)."""
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = PROBLEM_SCHEMA
    for operations in spec["paths"].values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if "422" in responses:
                responses["422"] = {"description": INVALID, "content": PROBLEM_CONTENT}
            responses.setdefault("default", {"description": OTHER, "content": PROBLEM_CONTENT})
    for name in FASTAPI_VALIDATION:  # referenced by nothing now
        schemas.pop(name, None)


def authenticated_operations(app: FastAPI) -> Iterator[tuple[str, str, list[str]]]:
    """(path, lower-case method, scopes of which the caller needs one) for each documented operation that
    authenticates its caller; a route that never calls ``caller`` is not listed, whatever it declares."""
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        policy = (route.openapi_extra or {}).get(POLICY)
        path = route.path_format
        if not isinstance(policy, str) or policy == PUBLIC or path is None or caller not in _calls(route.dependant):
            continue
        for method in sorted(route.methods or ()):
            yield path, method.lower(), policy.split("|")


def _calls(dependant: Dependant) -> Iterator[Callable[..., Any] | None]:
    yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)
