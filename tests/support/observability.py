"""The shipped Prometheus rules and Grafana dashboards, read the way Prometheus and Grafana read them: their
PromQL expressions and the Engram metric names those expressions use."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "deploy/prometheus"
DASHBOARDS_DIR = ROOT / "deploy/grafana"
OPERATIONS = ROOT / "docs/operations.md"

# Grafana replaces these before it sends a query; a range of the same shape keeps the expression parseable.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}
ENGRAM_METRIC = re.compile(r"\bengram_[a-zA-Z0-9_]+")
HISTOGRAM_SERIES = re.compile(r"_(bucket|sum|count)$")


def rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*.yaml"))


def dashboard_files() -> list[Path]:
    return sorted(DASHBOARDS_DIR.glob("*.json"))


def rules() -> list[dict[str, Any]]:
    """Every recording and alerting rule of every rule file."""
    found: list[dict[str, Any]] = []
    for path in rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            found.extend(group["rules"])
    return found


def alerts() -> list[dict[str, Any]]:
    return [rule for rule in rules() if "alert" in rule]


def dashboards() -> dict[str, dict[str, Any]]:
    return {path.name: json.loads(path.read_text()) for path in dashboard_files()}


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those inside rows included."""
    found: list[dict[str, Any]] = []
    for panel in dashboard.get("panels", []):
        found.append(panel)
        found.extend(panel.get("panels", []))
    return found


def panel_expressions() -> list[str]:
    return [
        target["expr"]
        for dashboard in dashboards().values()
        for panel in panels(dashboard)
        for target in panel.get("targets", [])
        if "expr" in target
    ]


def expressions() -> list[str]:
    """Every PromQL expression shipped: rule expressions and dashboard panel queries."""
    return [str(rule["expr"]) for rule in rules()] + panel_expressions()


def as_promql(expr: str) -> str:
    """The query as Grafana sends it to Prometheus (its interval variables substituted)."""
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def metric_names(expr: str) -> set[str]:
    """The Engram metric families an expression reads (``_bucket``/``_sum``/``_count`` mapped to the histogram's
    name as /metrics announces it in ``# HELP``)."""
    return {HISTOGRAM_SERIES.sub("", name) for name in ENGRAM_METRIC.findall(expr)}


def used_metric_names() -> set[str]:
    return set().union(*(metric_names(expr) for expr in expressions()))


def exposed_metric_names(text: str) -> set[str]:
    """The metric families a /metrics page announces (``# HELP``/``# TYPE`` lines); counters announce their name
    without ``_total``, so both spellings count."""
    names: set[str] = set()
    for line in text.splitlines():
        if line.startswith(("# HELP ", "# TYPE ")):
            name = line.split()[2]
            names.update({name, f"{name}_total"})
    return names


def heading_anchors(markdown: str) -> set[str]:
    """The anchors a Markdown renderer gives the headings (lower case, punctuation dropped, spaces to hyphens)."""
    anchors: set[str] = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not re.match(r"#{1,6} ", line):
            continue
        title = line.lstrip("#").strip().lower()
        anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors
