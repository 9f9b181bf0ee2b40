"""Render the Helm chart deploy/helm/engram with the Helm SDK (helm-python-sdk) and read what it declares.

No helm binary or cluster runs here: ``render`` is what ``helm template`` does, returning the manifests as
Python objects, and the small readers below pick the parts tests look at (a Deployment's container, its env
resolved through the rendered ConfigMap and Secret, the Service that fronts a port).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from helm_python import Chart

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "engram"
RELEASE = "mem"
NAMESPACE = "engram-test"

Manifest = dict[str, Any]


def service_packages() -> list[str]:
    """Every Engram service: the packages under services/."""
    return sorted(p.name for p in (ROOT / "services").iterdir() if (p / "__init__.py").exists())


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge value layers, later ones winning (what repeated ``-f``/``--set`` do)."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = merged(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out


def values_file(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((CHART / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


def render(values: Mapping[str, Any]) -> list[Manifest]:
    """The chart's objects for ``values`` (merged over values.yaml by Helm), hooks included, NOTES left out."""
    chart = Chart.load(CHART)
    try:
        rendered = chart.render(dict(values), name=RELEASE, namespace=NAMESPACE)
    finally:
        chart.close()
    objects: list[Manifest] = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt"):
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return objects


def notes(values: Mapping[str, Any]) -> str:
    chart = Chart.load(CHART)
    try:
        rendered = chart.render(dict(values), name=RELEASE, namespace=NAMESPACE)
    finally:
        chart.close()
    return next(text for path, text in rendered.items() if path.endswith("NOTES.txt"))


def of_kind(objects: list[Manifest], kind: str) -> list[Manifest]:
    return [o for o in objects if o["kind"] == kind]


def named(objects: list[Manifest], kind: str, name: str) -> Manifest:
    found = [o for o in of_kind(objects, kind) if o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def component(obj: Manifest) -> str:
    return str(obj["metadata"]["labels"]["app.kubernetes.io/component"])


def deployments(objects: list[Manifest]) -> dict[str, Manifest]:
    """Deployments by component (gateway, ingest, …)."""
    return {component(d): d for d in of_kind(objects, "Deployment")}


def container(workload: Manifest) -> Manifest:
    containers = workload["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, "one container per Engram pod"
    return dict(containers[0])


def _secret_data(secret: Manifest) -> dict[str, str]:
    data = {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}
    return {**data, **(secret.get("stringData") or {})}


def resolved_env(objects: list[Manifest], workload: Manifest) -> dict[str, str]:
    """The container's environment as the kubelet builds it from the rendered objects: envFrom first, then env
    (a missing optional secret key leaves the variable unset; a missing required one fails)."""
    spec = container(workload)
    env: dict[str, str] = {}
    for source in spec.get("envFrom", []):
        if "configMapRef" in source:
            env.update(named(objects, "ConfigMap", source["configMapRef"]["name"])["data"])
        else:
            env.update(_secret_data(named(objects, "Secret", source["secretRef"]["name"])))
    for var in spec.get("env", []):
        if "value" in var:
            env[var["name"]] = str(var["value"])
            continue
        ref = var["valueFrom"]
        if "secretKeyRef" in ref:
            key_ref, data = ref["secretKeyRef"], _secret_data(named(objects, "Secret", ref["secretKeyRef"]["name"]))
        else:
            key_ref, data = ref["configMapKeyRef"], named(objects, "ConfigMap", ref["configMapKeyRef"]["name"])["data"]
        if key_ref["key"] in data:
            env[var["name"]] = data[key_ref["key"]]
        elif not key_ref.get("optional", False):
            raise KeyError(f"{var['name']}: key {key_ref['key']} is not in {key_ref['name']}")
    return env


def container_port(workload: Manifest, port: int | str) -> int:
    """A probe's port (a number, or a container port's name) as a number."""
    if isinstance(port, int):
        return port
    for declared in container(workload).get("ports", []):
        if declared["name"] == port:
            return int(declared["containerPort"])
    raise KeyError(f"no container port named {port!r}")


def service_target(objects: list[Manifest], host: str, port: int) -> tuple[str, int]:
    """The component and container port behind the Service address ``host:port``."""
    for service in of_kind(objects, "Service"):
        if service["metadata"]["name"] != host:
            continue
        selector = service["spec"]["selector"]
        for workload in of_kind(objects, "Deployment"):
            if workload["spec"]["template"]["metadata"]["labels"].items() >= selector.items():
                for declared in service["spec"]["ports"]:
                    if int(declared["port"]) == port:
                        return component(workload), container_port(workload, declared["targetPort"])
    raise KeyError(f"no Service in front of {host}:{port}")
