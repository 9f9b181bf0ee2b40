"""Which endpoint a request reaches. FastAPI takes the first route, in the order they were added, whose path
matches, so a literal path such as ``/v1/items/expiry-candidates`` only works while it is added before
``/v1/items/{item_id}``. The requests go through the real app; a stand-in for the caller dependency notes
the route that was chosen and stops the request there, before authentication."""

from __future__ import annotations

import inspect
import re

import pytest
from fastapi import FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.errors import PermissionDenied
from services.gateway.app import create_app
from services.gateway.auth import caller
from services.gateway.routes import RESOURCES

ID = "00000000-0000-4000-8000-0000000000aa"


@pytest.fixture(scope="module")
def reach() -> tuple[FastAPI, list[str]]:
    app = create_app(Settings())
    reached: list[str] = []

    async def probe(request: Request) -> CallerContext:
        reached.append(request.scope["route"].name)
        raise PermissionDenied("routing probe", code="routing_probe")

    app.dependency_overrides[caller] = probe
    return app, reached


def _endpoint(reach: tuple[FastAPI, list[str]], method: str, path: str) -> str | None:
    app, reached = reach
    reached.clear()
    answer = TestClient(app).request(method, path)  # no `with`: the lifespan (database, gRPC) never starts
    if not reached:
        return None
    assert answer.status_code == 403 and answer.json()["code"] == "routing_probe", answer.text
    return reached[0]


@pytest.mark.parametrize(
    ("method", "path", "endpoint"),
    [
        # literal paths under /v1/items: each must win over the templated route of the same method
        ("GET", "/v1/items/expiry-candidates", "expiry_candidates"),
        ("POST", "/v1/items/bulk", "bulk"),
        # the listing has no segment after /items: no templated item route takes it
        ("GET", "/v1/items", "list_items"),
        # the templated routes still take every id
        ("GET", f"/v1/items/{ID}", "get_item"),
        ("DELETE", f"/v1/items/{ID}", "delete_item"),
        ("PATCH", f"/v1/items/{ID}", "patch_item"),
        ("GET", f"/v1/items/{ID}/edges", "list_edges"),
        ("GET", f"/v1/items/{ID}/status", "get_status"),
        ("GET", f"/v1/items/{ID}/events", "get_events"),
        ("GET", f"/v1/items/{ID}/promotion-readiness", "promotion_readiness"),
        ("POST", f"/v1/items/{ID}/supersede", "supersede"),
        ("POST", f"/v1/items/{ID}/invalidate", "invalidate"),
        ("POST", f"/v1/items/{ID}/review", "review"),
        ("POST", f"/v1/items/{ID}/verify", "verify"),
        # a literal word only belongs to the method it was added for: these are read as item ids
        ("GET", "/v1/items/bulk", "get_item"),
        ("DELETE", "/v1/items/expiry-candidates", "delete_item"),
        ("GET", "/v1/trash", "list_trash"),
        ("POST", f"/v1/trash/{ID}/restore", "restore"),
        ("DELETE", f"/v1/edges/{ID}", "unlink"),
        ("POST", "/v1/edges", "link"),
    ],
)
def test_order_sensitive_requests_reach_their_endpoint(
    reach: tuple[FastAPI, list[str]], method: str, path: str, endpoint: str
) -> None:
    assert _endpoint(reach, method, path) == endpoint


def test_every_v1_route_is_reached_by_its_own_path(reach: tuple[FastAPI, list[str]]) -> None:
    routes = [r for module in RESOURCES for r in module.router.routes if isinstance(r, APIRoute)]
    assert len(routes) == 28  # every v1 route outside the admin API; a new one is counted here
    for route in routes:
        path = "/v1" + re.sub(r"\{[a-z_]+\}", ID, route.path)
        for method in route.methods:
            assert _endpoint(reach, method, path) == route.name, f"{method} {path}"


def test_an_unknown_path_reaches_no_endpoint(reach: tuple[FastAPI, list[str]]) -> None:
    # positive control for the probe: it records nothing when no route matches
    assert _endpoint(reach, "GET", "/v1/itemz") is None


def test_latency_is_labelled_by_the_full_route_template(reach: tuple[FastAPI, list[str]]) -> None:
    def count(route: str) -> float:
        value = REGISTRY.get_sample_value(
            "engram_http_request_duration_seconds_count", {"route": route, "method": "POST", "status": "403"}
        )
        return value or 0.0

    before = count("/v1/items/{item_id}/supersede"), count("/v1/remember")
    assert _endpoint(reach, "POST", f"/v1/items/{ID}/supersede") == "supersede"
    assert _endpoint(reach, "POST", "/v1/remember") == "remember"
    assert (count("/v1/items/{item_id}/supersede"), count("/v1/remember")) == (before[0] + 1, before[1] + 1)
    assert count("/remember") == 0  # not the nested router's own part of the path


def _calls(dependant: Dependant) -> list[object]:
    return [dependant.call, *(call for sub in dependant.dependencies for call in _calls(sub))]


def test_no_route_or_dependency_of_the_api_runs_in_a_worker_thread() -> None:
    # FastAPI runs a plain function (a route or a dependency) in anyio's worker threads: a thread hop and two
    # context switches on every request that reaches it. Every callable of the API's routes is a coroutine.
    threaded: set[str] = set()
    routes = 0
    for route in iter_route_contexts(create_app(Settings()).routes):
        if isinstance(route.original_route, APIRoute) and route.path_format.startswith("/v1/"):
            routes += 1
            for call in _calls(route.dependant):
                if call is not None and not inspect.iscoroutinefunction(call):
                    threaded.add(f"{route.path_format}: {getattr(call, '__qualname__', call)}")
    assert routes > 40
    assert threaded == set()
