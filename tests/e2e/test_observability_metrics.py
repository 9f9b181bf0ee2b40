"""Every metric the shipped alert/recording rules and Grafana dashboards read is served by the running stack,
and the route labels the latency alerts select are the ones the gateway really records."""

from __future__ import annotations

import httpx
import pytest

from tests.support.observability import exposed_metric_names, used_metric_names
from tests.support.stack import Stack

# a stack may take 180 s to start: far above the default per-test timeout
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def scrape(stack: Stack) -> dict[str, str]:
    urls: dict[str, str] = stack.info()["metrics"]  # type: ignore[assignment]
    assert {"gateway", "ingest", "recall", "embedder", "classifier", "conflicts", "promotion"} <= set(urls)
    pages: dict[str, str] = {}
    for service, url in urls.items():
        response = httpx.get(url, timeout=10.0)
        assert response.status_code == 200, f"{service}: {url} answered {response.status_code}"
        pages[service] = response.text
    return pages


def test_every_metric_used_by_rules_and_dashboards_is_served(stack: Stack) -> None:
    served = set().union(*(exposed_metric_names(text) for text in scrape(stack).values()))
    used = used_metric_names()
    assert used, "no Engram metric found in the rules and dashboards"
    missing = sorted(used - served)
    assert not missing, f"rules or dashboards read metrics no service serves: {missing}"


def test_the_alerted_routes_are_the_route_labels_the_gateway_records(stack: Stack) -> None:
    with stack.client() as client:
        written = client.post("/v1/remember", json={"content": "The staging database is rebuilt every Sunday."})
        assert written.status_code in (200, 201), written.text
        assert client.post("/v1/recall", json={"query": "staging database"}).status_code == 200
    gateway = scrape(stack)["gateway"]
    for route in ("/v1/remember", "/v1/recall"):
        assert f'route="{route}"' in gateway, f"the gateway records no samples with route={route}"
