"""The OpenAPI document's security: the API-key scheme, and on each operation the scopes it needs.

Authentication is the ``auth.caller`` dependency reading the route's scope policy, which FastAPI cannot turn
into a security requirement by itself. ``install`` adds them: ``components.securitySchemes.ApiKey`` (HTTP
bearer), and on every operation whose route depends on ``caller`` a ``security`` list with one requirement
per scope its policy accepts (OpenAPI 3.1 lets a non-OAuth requirement name roles; of several requirements,
any one suffices), plus a sentence in its description. Swagger UI then shows an Authorize button and a lock
on each such route. What is documented is derived from what ``caller`` enforces, never written twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from services.gateway.auth import POLICY, PUBLIC, caller

SCHEME = "ApiKey"
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "eng_<key_id>_<secret>",
    "description": "An Engram API key, sent as `Authorization: Bearer eng_<key_id>_<secret>` (in Swagger UI's "
    "Authorize dialog, paste the key alone). Each operation lists the scopes that let it in; a key needs one "
    "of them, and a key with the `admin` scope passes every scope check.",
}


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
        return spec

    app.openapi = document  # type: ignore[method-assign]


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
