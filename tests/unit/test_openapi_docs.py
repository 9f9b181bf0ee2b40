"""The reference is /openapi.json: every field of every request and answer model, every query parameter and
every operation says what it means there, so docs/api.md keeps only the concepts and examples; and every
link into docs/api.md still lands on a heading."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from engram.config import Settings
from services.gateway.app import create_app
from services.gateway.auth import POLICY, PUBLIC, caller

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORK_SCHEMAS = {"HTTPValidationError", "ValidationError"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return create_app(Settings()).openapi()


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def test_every_property_of_every_model_has_a_description(spec: dict[str, Any]) -> None:
    schemas = {name: s for name, s in spec["components"]["schemas"].items() if name not in FRAMEWORK_SCHEMAS}
    properties = [(name, prop, body) for name, s in schemas.items() for prop, body in s.get("properties", {}).items()]
    # positive control: the request bodies and the answers are all here
    assert {"RememberBody", "RecallBody", "ItemAnswer", "TrashPage", "TenantConfigBody", "Tunnel"} <= set(schemas)
    assert len(properties) > 200
    missing = [f"{name}.{prop}" for name, prop, body in properties if not str(body.get("description", "")).strip()]
    assert not missing, f"properties without a description: {missing}"


def test_every_query_parameter_has_a_description(spec: dict[str, Any]) -> None:
    queries = [
        (method, path, p)
        for method, path, op in _operations(spec)
        for p in op.get("parameters", [])
        if p["in"] == "query"
    ]
    assert len(queries) > 10  # positive control: the listings' and the admin routes' parameters
    missing = [f"{method} {path} ?{p['name']}" for method, path, p in queries if not p.get("description", "").strip()]
    assert not missing, f"query parameters without a description: {missing}"


def test_every_operation_has_a_summary_and_a_description(spec: dict[str, Any]) -> None:
    operations = _operations(spec)
    assert len(operations) > 30
    missing = [
        f"{method} {path} ({what})"
        for method, path, op in operations
        for what in ("summary", "description")
        if not op.get(what, "").strip()
    ]
    assert not missing, f"operations without a summary or a description: {missing}"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    headings = [line.lstrip("#") for line in _outside_code(doc.read_text()) if re.match(r"#{1,6} ", line)]
    return {_anchor(h) for h in headings}


def _outside_code(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def test_every_link_into_the_api_doc_lands_on_a_heading() -> None:
    api = ROOT / "docs" / "api.md"
    anchors = _anchors(api)
    assert {"post-v1remember", "the-secret-guard", "delete-v1edgesid", "patch-v1admintenant-config"} <= anchors
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "services").rglob("README.md")]
    links = 0
    broken = []
    for source in sources:
        for target, anchor in re.findall(r"\]\(([^)#\s]*api\.md|)#([^)\s]+)\)", source.read_text()):
            if not target and source != api:
                continue  # an anchor within another document
            if target and (source.parent / target).resolve() != api:
                continue
            links += 1
            if anchor not in anchors:
                broken.append(f"{source.relative_to(ROOT)}: {target}#{anchor}")
    assert links > 50  # positive control: api.md's own links and the other documents' links into it
    assert not broken, f"links to headings api.md does not have: {broken}"


def _authenticates(dependant: Dependant) -> bool:
    return dependant.call is caller or any(_authenticates(sub) for sub in dependant.dependencies)


def test_every_route_but_the_public_ones_declares_the_api_key_and_the_scopes_it_checks(
    spec: dict[str, Any],
) -> None:
    scheme = spec["components"]["securitySchemes"]["ApiKey"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer" and "admin" in scheme["description"]
    # what `caller` enforces, read off the routes: the policy a route declares, when the route depends on it and
    # the policy is not `public` (a public route reads no key)
    enforced: dict[tuple[str, str], list[str]] = {}
    for route in iter_route_contexts(create_app(Settings()).routes):
        if isinstance(route.original_route, APIRoute) and route.include_in_schema:
            policy = route.openapi_extra[POLICY]
            scopes = policy.split("|") if _authenticates(route.dependant) and policy != PUBLIC else []
            enforced |= {(method.lower(), route.path_format): scopes for method in route.methods}
    operations = _operations(spec)
    declared = {
        (method, path): [scope for requirement in op.get("security", []) for scope in requirement["ApiKey"]]
        for method, path, op in operations
    }
    assert len(declared) > 40
    assert declared == enforced
    # positive control: only the probes go without a key
    assert {operation for operation, scopes in enforced.items() if not scopes} == {
        ("get", "/health"),
        ("get", "/ready"),
    }
    for method, path, op in operations:
        if "security" in op:
            note = "Requires scope: " + " or ".join(f"`{s}`" for s in declared[(method, path)]) + "."
            assert op["description"].endswith(note), f"{method.upper()} {path}"
