"""The shipped alerting/recording rules and Grafana dashboards: every PromQL expression parses, every alert
carries a summary, a description and a runbook that docs/operations.md has, and every dashboard loads in
Grafana 11+ with its queries going to the data source variable. (That the metrics they read exist on the
running services is tests/e2e/test_observability_metrics.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml

from tests.support.compose import ROOT, load_compose
from tests.support.helm_chart import CHART, of_kind, render
from tests.support.observability import (
    DASHBOARDS_DIR,
    OPERATIONS,
    RULES_DIR,
    alerts,
    as_promql,
    dashboard_files,
    dashboards,
    expressions,
    heading_anchors,
    metric_names,
    panels,
    rule_files,
    rules,
    used_metric_names,
)

DATASOURCE_VARIABLE = "${DS_PROMETHEUS}"
EXPECTED_ALERTS = {
    "EngramHighErrorRate",
    "EngramRecallSlow",
    "EngramRememberSlow",
    "EngramConsumerLagGrowing",
    "EngramDeadLetters",
    "EngramOutboxStuck",
    "EngramSearchableSLOFastBurn",
    "EngramSearchableSLOSlowBurn",
    "EngramGatewayNotReady",
}


def test_the_rules_and_dashboards_are_there() -> None:
    assert rule_files() and dashboard_files()
    assert {alert["alert"] for alert in alerts()} == EXPECTED_ALERTS
    assert {"overview.json", "pipeline.json", "recall.json", "quality.json"} <= set(dashboards())


@pytest.mark.parametrize("expr", expressions())
def test_every_expression_parses(expr: str) -> None:
    promql_parser.parse(as_promql(expr))


def test_a_broken_expression_is_caught() -> None:
    with pytest.raises(ValueError):
        promql_parser.parse(as_promql("sum by (route) (rate(engram_http_request_duration_seconds_count[5m])"))


def test_metric_names_are_found_and_histogram_series_map_to_their_family() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le) (rate(engram_http_request_duration_seconds_bucket{route="/v1/recall"}'
        "[5m])))"
    )
    assert metric_names(expr) == {"engram_http_request_duration_seconds"}
    assert metric_names("engram:http_requests:rate5m > 1") == set()
    assert {"engram_consumer_pending", "engram_outbox_oldest_age_seconds"} <= used_metric_names()


def test_rule_files_are_in_the_standard_format() -> None:
    for path in rule_files():
        document = yaml.safe_load(path.read_text())
        assert set(document) == {"groups"}, path
        for group in document["groups"]:
            assert group["name"] and group["rules"], path
            for rule in group["rules"]:
                assert ("record" in rule) != ("alert" in rule), rule
                if "record" in rule:
                    # level:metric:operations, the Prometheus naming convention for recorded series
                    assert re.fullmatch(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["record"]), rule["record"]
    names = [rule.get("record") or rule.get("alert") for rule in rules()]
    assert len(names) == len(set(names)), "a rule name is used twice"


def test_every_alert_has_a_severity_summary_description_and_a_runbook_in_the_operations_doc() -> None:
    anchors = heading_anchors(OPERATIONS.read_text())
    for alert in alerts():
        assert alert["labels"]["severity"] in {"critical", "warning", "info"}, alert["alert"]
        annotations: dict[str, Any] = alert["annotations"]
        assert annotations["summary"] and annotations["description"], alert["alert"]
        page, _, anchor = annotations["runbook_url"].partition("#")
        assert page == "docs/operations.md", alert["alert"]
        assert anchor in anchors, f"{alert['alert']}: docs/operations.md has no heading #{anchor}"
        assert anchor == alert["alert"].lower()


def test_the_anchor_check_tells_headings_from_code() -> None:
    anchors = heading_anchors("## What to watch\n```\n# not-a-heading\n```\n### EngramOutboxStuck\n")
    assert anchors == {"what-to-watch", "engramoutboxstuck"}


@pytest.mark.parametrize("name", [path.name for path in dashboard_files()])
def test_every_dashboard_loads_in_grafana_11_with_its_datasource_variable(name: str) -> None:
    dashboard = dashboards()[name]
    assert dashboard["uid"] and dashboard["title"]
    assert dashboard["schemaVersion"] >= 39
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    source = variables["DS_PROMETHEUS"]
    assert source["type"] == "datasource" and source["query"] == "prometheus"
    found = panels(dashboard)
    assert found
    ids = [panel["id"] for panel in found]
    assert len(ids) == len(set(ids)), f"{name}: duplicate panel ids"
    for panel in found:
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == DATASOURCE_VARIABLE, f"{name}: {panel['title']}"
        assert panel["targets"], f"{name}: {panel['title']} has no query"
        for target in panel["targets"]:
            assert target.get("datasource", panel["datasource"])["uid"] == DATASOURCE_VARIABLE


def test_dashboard_uids_are_unique() -> None:
    uids = [dashboard["uid"] for dashboard in dashboards().values()]
    assert len(uids) == len(set(uids))


def test_compose_loads_the_rules_and_provisions_the_dashboards() -> None:
    compose = load_compose()
    prometheus = compose["services"]["prometheus"]
    mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in prometheus["volumes"]}
    config = yaml.safe_load((ROOT / "deploy/compose/prometheus.yml").read_text())
    for pattern in config["rule_files"]:
        directory, _, glob = pattern.rpartition("/")
        assert (ROOT / mounts[directory]).resolve() == RULES_DIR
        assert {p.name for p in RULES_DIR.glob(glob)} == {p.name for p in rule_files()}
    grafana = compose["services"]["grafana"]
    mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in grafana["volumes"]}
    providers = yaml.safe_load((ROOT / "deploy/compose/grafana/provisioning/dashboards/engram.yaml").read_text())
    paths = {(ROOT / mounts[p["options"]["path"]]).resolve() for p in providers["providers"]}
    assert DASHBOARDS_DIR in paths


def test_the_chart_ships_the_same_rules_and_dashboards() -> None:
    copies = {p.relative_to(CHART / "files"): p.read_bytes() for p in (CHART / "files").rglob("*") if p.is_file()}
    originals = {Path("prometheus") / p.name: p.read_bytes() for p in rule_files()}
    originals |= {Path("grafana") / p.name: p.read_bytes() for p in dashboard_files()}
    assert copies == originals, "copy deploy/prometheus and deploy/grafana into deploy/helm/engram/files again"


def test_the_chart_renders_a_prometheus_rule_and_sidecar_dashboards_when_enabled() -> None:
    external_nats = {"nats": {"enabled": False}, "externalNats": {"url": "nats://nats.messaging:4222"}}
    assert not of_kind(render(external_nats), "PrometheusRule")
    objects = render(
        external_nats
        | {
            "prometheusRule": {"enabled": True, "labels": {"release": "kps"}},
            "grafanaDashboards": {"enabled": True},
        }
    )
    [rule] = of_kind(objects, "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kps"
    assert rule["spec"] == yaml.safe_load(rule_files()[0].read_text())
    shipped = {
        name: json.loads(text)
        for config_map in of_kind(objects, "ConfigMap")
        if config_map["metadata"]["labels"].get("grafana_dashboard") == "1"
        for name, text in config_map["data"].items()
    }
    assert shipped == dashboards()
