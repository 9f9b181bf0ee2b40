"""The Helm chart deploy/helm/engram: lint, schema, render, Kubernetes validation and what the manifests say.

Rendering uses the Helm SDK (helm-python-sdk, what ``helm template`` does); every rendered core object is checked
by kubernetes-validate in strict mode (unknown fields fail) against a current Kubernetes. The NATS subchart cannot
be downloaded here, so renders use an external NATS URL (nats.enabled=false).
"""

from __future__ import annotations

import json
from typing import Any

import helm_python
import kubernetes_validate
import pytest

from engram.events.durables import DURABLES
from services.classifier.service import CONSUMER as CLASSIFIER
from services.conflicts.service import CONSUMER as CONFLICTS
from services.promotion.service import TRIGGERS
from tests.support.helm_chart import (
    CHART,
    Manifest,
    component,
    container,
    container_port,
    deployments,
    merged,
    named,
    notes,
    of_kind,
    render,
    resolved_env,
    service_packages,
    service_target,
    values_file,
)

KUBERNETES = kubernetes_validate.latest_version()
CUSTOM_KINDS = {
    "ServiceMonitor",
    "PrometheusRule",
    "ScaledObject",
    "Cluster",
    "HTTPRoute",
}  # CRDs: no schema in kubernetes-validate
EXTERNAL_NATS = {
    "nats": {"enabled": False},
    "externalNats": {"url": "nats://nats.messaging:4222", "monitoringEndpoint": "nats.messaging:8222"},
}
SECRETS = {  # distinctive values, so a leak into another object can be found by search
    "databaseUrl": "postgresql://owner:OWNER-PW-7f3a@db:5432/engram",
    "appDatabaseUrl": "postgresql://engram_app:APP-PW-91c2@db:5432/engram",
    "internalToken": "INTERNAL-TOKEN-5d8e",
    "embeddingApiKey": "EMBED-KEY-2b7c",
    "llmApiKey": "LLM-KEY-64a1",
}
EVERYTHING_ON = {
    "serviceMonitor": {"enabled": True},
    "prometheusRule": {"enabled": True},
    "grafanaDashboards": {"enabled": True},
    "ingress": {"enabled": True, "className": "nginx", "tls": [{"secretName": "t", "hosts": ["engram.example.com"]}]},
    "httpRoute": {"enabled": True, "parentRefs": [{"name": "public"}], "hostnames": ["engram.example.com"]},
    "postgresql": {"cnpg": {"enabled": True}},
    "natsAuth": {"existingSecret": "nats-ids", "mode": "creds"},
    "services": {
        name: {"keda": {"enabled": True}, "pdb": {"enabled": True}}
        for name in ("embedder", "classifier", "conflicts", "promotion")
    }
    | {name: {"autoscaling": {"enabled": True}, "pdb": {"enabled": True}} for name in ("gateway", "ingest", "recall")},
}
VALUE_SETS = {
    "default": {},
    "dev": values_file("values-dev.yaml"),
    "ha": values_file("values-ha.yaml"),
    "everything-on": EVERYTHING_ON,
}
# Schema objects that hold Kubernetes structures passed through as they are (their own API server validates them).
PASSTHROUGH = {
    "global",
    "podSecurityContext",
    "containerSecurityContext",
    "affinity",
    "tolerations[]",
    "parentRefs[]",
    "postgresql.cnpg.resources",
    "postgresql.cnpg.backup",
    "nats",
}


def rendered(which: str, *extra: dict[str, Any]) -> list[Manifest]:
    return render(merged(VALUE_SETS[which], EXTERNAL_NATS, *extra))


def test_helm_lint_reports_no_errors_for_each_values_file() -> None:
    for values in ({}, VALUE_SETS["dev"], VALUE_SETS["ha"]):
        report = helm_python.lint(CHART, values, strict=False)
        assert report["errors"] == []
        # What lint still says, on purpose: the chart has no icon (INFO; a URL outside the repository), and the
        # optional nats subchart is not vendored (WARNING; `helm dependency update` fetches it, docs/deploy.md).
        said = {(m["severity"], m["error"]) for m in report["messages"]}
        assert said <= {(1, "icon is recommended"), (2, "chart directory is missing these dependencies: nats")}


@pytest.mark.parametrize("which", sorted(VALUE_SETS))
def test_every_rendered_core_object_is_valid_kubernetes(which: str) -> None:
    objects = rendered(which, {"secrets": SECRETS})
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "Service", "ConfigMap", "Job", "NetworkPolicy", "ServiceAccount"} <= kinds
    checked = 0
    for obj in objects:
        if obj["kind"] in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
        checked += 1
    assert checked >= 7 * 3 + 4  # a Deployment, Service and NetworkPolicy per service, and the shared objects


def test_the_custom_resources_have_the_shape_their_operators_expect() -> None:
    objects = rendered("everything-on")
    assert {o["kind"] for o in objects} >= CUSTOM_KINDS
    for obj in objects:
        if obj["kind"] in CUSTOM_KINDS:
            assert (
                obj["apiVersion"]
                == {
                    "ServiceMonitor": "monitoring.coreos.com/v1",
                    "PrometheusRule": "monitoring.coreos.com/v1",
                    "ScaledObject": "keda.sh/v1alpha1",
                    "Cluster": "postgresql.cnpg.io/v1",
                    "HTTPRoute": "gateway.networking.k8s.io/v1",
                }[obj["kind"]]
            )
    cluster = of_kind(objects, "Cluster")[0]
    assert "CREATE EXTENSION IF NOT EXISTS vector" in cluster["spec"]["bootstrap"]["initdb"]["postInitApplicationSQL"]
    route = of_kind(objects, "HTTPRoute")[0]
    backend = route["spec"]["rules"][0]["backendRefs"][0]
    gateway_service = named(objects, "Service", backend["name"])
    assert backend["port"] in [p["port"] for p in gateway_service["spec"]["ports"]]


def test_the_schema_rejects_a_typo_and_a_wrong_type_and_accepts_the_values_files() -> None:
    chart = helm_python.Chart.load(CHART)
    try:
        for values in VALUE_SETS.values():
            chart.validate_schema(values)
        with pytest.raises(helm_python.HelmValuesError, match="replicaCont"):
            chart.validate_schema({"services": {"gateway": {"replicaCont": 2}}})
        with pytest.raises(helm_python.HelmValuesError, match="replicaCount"):
            chart.validate_schema({"services": {"recall": {"replicaCount": "two"}}})
        with pytest.raises(helm_python.HelmValuesError, match="provider"):
            chart.validate_schema({"config": {"embedding": {"provider": "ollama"}}})
        with pytest.raises(helm_python.HelmValuesError, match="minReplicas"):
            chart.validate_schema({"services": {"gateway": {"autoscaling": {"minReplicas": 0}}}})
        with pytest.raises(helm_python.HelmValuesError, match="autoscaling"):
            chart.validate_schema({"services": {"classifier": {"autoscaling": {"enabled": True}}}})
    finally:
        chart.close()
    with pytest.raises(helm_python.HelmError, match="replicaCont"):
        render({"services": {"gateway": {"replicaCont": 2}}})  # an install refuses it too


def test_every_object_level_of_the_schema_is_closed() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    open_paths: list[str] = []

    def walk(node: dict[str, Any], path: str) -> None:
        if "$ref" in node:
            walk(schema["definitions"][node["$ref"].rsplit("/", 1)[1]], path)
            return
        if node.get("type") == "object":
            closed = node.get("additionalProperties") is False or isinstance(node.get("additionalProperties"), dict)
            leaf = path.rsplit(".", 1)[-1]
            if not closed and leaf not in PASSTHROUGH and path not in PASSTHROUGH:
                open_paths.append(path)
            for key, child in node.get("properties", {}).items():
                walk(child, f"{path}.{key}" if path else key)
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")

    walk(schema, "")
    assert open_paths == []
    assert schema["additionalProperties"] is False


def test_every_service_has_a_deployment_with_probes_resources_and_the_security_context() -> None:
    objects = rendered("default", {"secrets": SECRETS})
    found = deployments(objects)
    assert sorted(found) == service_packages()
    for name, workload in found.items():
        pod = workload["spec"]["template"]["spec"]
        spec = container(workload)
        assert spec["command"] == ["engram"] and spec["args"] == ["serve", name]
        assert {"readinessProbe", "livenessProbe", "startupProbe"} <= spec.keys(), name
        assert spec["resources"]["requests"].keys() >= {"cpu", "memory"} and "memory" in spec["resources"]["limits"]
        assert pod["securityContext"] | {"fsGroup": 10001} == {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "runAsGroup": 10001,
            "fsGroup": 10001,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        context = spec["securityContext"]
        assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        tmp = next(m for m in spec["volumeMounts"] if m["mountPath"] == "/tmp")
        assert next(v for v in pod["volumes"] if v["name"] == tmp["name"])["emptyDir"]
        assert pod["topologySpreadConstraints"]
        annotations = workload["spec"]["template"]["metadata"]["annotations"]
        assert {"checksum/config", "checksum/secret"} <= annotations.keys()
        env = resolved_env(objects, workload)
        if name != "gateway":
            assert env["ENGRAM_METRICS_HOST"] == "0.0.0.0"
            assert container_port(workload, "metrics") == int(env["ENGRAM_METRICS_PORT"])
    gateway = found["gateway"]
    probes = container(gateway)
    assert probes["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "http"}
    assert probes["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    for name, service in (("ingest", "engram.v1.IngestService"), ("recall", "engram.v1.RecallService")):
        readiness = container(found[name])["readinessProbe"]
        assert readiness["grpc"] == {"port": container_port(found[name], "grpc"), "service": service}


def test_the_gateway_reaches_ingest_and_recall_through_their_services() -> None:
    objects = rendered("default", {"secrets": SECRETS})
    env = resolved_env(objects, deployments(objects)["gateway"])
    for variable, target in (("ENGRAM_INGEST_ADDR", "ingest"), ("ENGRAM_RECALL_ADDR", "recall")):
        host, port = env[variable].rsplit(":", 1)
        behind, container_port_number = service_target(objects, host, int(port))
        served = resolved_env(objects, deployments(objects)[target])[variable]
        assert behind == target and served == f"0.0.0.0:{container_port_number}"


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return labels.items() >= selector.items()


def test_network_policies_admit_grpc_only_from_the_gateway_and_only_metrics_into_consumers() -> None:
    objects = rendered("default")
    workloads = deployments(objects)
    pod_labels = {name: w["spec"]["template"]["metadata"]["labels"] for name, w in workloads.items()}
    policies = {component(p): p for p in of_kind(objects, "NetworkPolicy")}
    assert sorted(policies) == service_packages()
    for name, policy in policies.items():
        spec = policy["spec"]
        assert _matches(spec["podSelector"]["matchLabels"], pod_labels[name])
        assert spec["policyTypes"] == ["Ingress"]  # egress stays open (PostgreSQL, NATS, model endpoints)
        open_ports = {int(port["port"]) for rule in spec["ingress"] for port in rule["ports"]}
        if name in ("ingest", "recall"):
            grpc_port = container_port(workloads[name], "grpc")
            assert open_ports == {grpc_port, container_port(workloads[name], "metrics")}
            grpc_rules = [r for r in spec["ingress"] if grpc_port in {int(p["port"]) for p in r["ports"]}]
            assert len(grpc_rules) == 1
            peers = grpc_rules[0]["from"]
            assert len(peers) == 1 and peers[0].keys() == {"podSelector"}
            admitted = [
                w for w, labels in pod_labels.items() if _matches(peers[0]["podSelector"]["matchLabels"], labels)
            ]
            assert admitted == ["gateway"]
        elif name == "gateway":
            assert open_ports == {container_port(workloads[name], "http")}
        else:
            assert open_ports == {container_port(workloads[name], "metrics")}


def test_the_metrics_ports_admit_only_the_configured_scrapers() -> None:
    scrapers = {"networkPolicy": {"metrics": {"namespaceLabels": {"kubernetes.io/metadata.name": "monitoring"}}}}
    objects = rendered("default", scrapers)
    for policy in of_kind(objects, "NetworkPolicy"):
        if component(policy) == "gateway":
            continue
        metrics_port = container_port(deployments(objects)[component(policy)], "metrics")
        rule = next(r for r in policy["spec"]["ingress"] if int(r["ports"][0]["port"]) == metrics_port)
        assert rule["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]


def test_the_migration_job_is_a_pre_install_and_pre_upgrade_hook_with_the_owner_url() -> None:
    objects = rendered("default", {"secrets": SECRETS})
    job = of_kind(objects, "Job")[0]
    annotations = job["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert "hook-succeeded" in annotations["helm.sh/hook-delete-policy"]
    spec = container(job)
    assert spec["command"] == ["engram"] and spec["args"] == ["migrate"]
    assert spec["securityContext"]["readOnlyRootFilesystem"] is True
    env = resolved_env(objects, job)
    assert env["ENGRAM_DATABASE_URL"] == SECRETS["databaseUrl"]
    # a hook runs before the release's own objects exist: its Secret must be a hook too, created first
    secret_name = next(v for v in spec["env"] if v["name"] == "ENGRAM_DATABASE_URL")["valueFrom"]["secretKeyRef"][
        "name"
    ]
    hook_secret = named(objects, "Secret", secret_name)["metadata"]["annotations"]
    assert hook_secret["helm.sh/hook"] == annotations["helm.sh/hook"]
    assert int(hook_secret["helm.sh/hook-weight"]) < int(annotations["helm.sh/hook-weight"])
    assert all("configMapRef" not in s for s in spec.get("envFrom", []))
    with_cnpg = of_kind(rendered("default", {"postgresql": {"cnpg": {"enabled": True}}}), "Job")[0]
    assert with_cnpg["metadata"]["annotations"]["helm.sh/hook"] == "post-install,pre-upgrade"


def test_no_secret_value_appears_in_a_configmap_and_the_owner_url_stays_with_the_migration() -> None:
    objects = rendered("default", {"secrets": SECRETS | {"natsUrl": "nats://user:NATS-PW-3e9f@nats:4222"}})
    secret = named(objects, "Secret", "mem-engram")
    secret_text = json.dumps(secret)
    assert "ENGRAM_INTERNAL_TOKEN" in secret_text and len(secret["data"]) == 6  # populated: six keys
    values = [*SECRETS.values(), "NATS-PW-3e9f"]
    configmaps = of_kind(objects, "ConfigMap")
    assert configmaps
    for configmap in configmaps:
        text = json.dumps(configmap)
        assert [v for v in values if v in text] == []
    for name, workload in deployments(objects).items():
        env = resolved_env(objects, workload)
        assert SECRETS["databaseUrl"] not in env.values(), name
        assert env["ENGRAM_APP_DATABASE_URL"] == SECRETS["appDatabaseUrl"]
        assert (env.get("ENGRAM_INTERNAL_TOKEN") == SECRETS["internalToken"]) == (
            name in ("gateway", "ingest", "recall")
        )
    existing = rendered("default", {"secrets": {"existingSecret": "mine"}})
    assert of_kind(existing, "Secret") == []
    refs = {
        v["valueFrom"]["secretKeyRef"]["name"]
        for d in of_kind(existing, "Deployment")
        for v in container(d)["env"]
        if "valueFrom" in v
    }
    assert refs == {"mine"}


def test_ha_values_run_three_replicas_of_everything_with_budgets_and_spread() -> None:
    objects = rendered("ha")
    hpas = {component(h): h["spec"] for h in of_kind(objects, "HorizontalPodAutoscaler")}
    scaled = {component(s): s["spec"] for s in of_kind(objects, "ScaledObject")}
    assert sorted(hpas) == ["gateway", "ingest", "recall"]
    assert sorted(scaled) == ["classifier", "conflicts", "embedder", "promotion"]
    budgets = {component(p) for p in of_kind(objects, "PodDisruptionBudget")}
    assert sorted(budgets) == service_packages()
    for name, workload in deployments(objects).items():
        least = hpas[name]["minReplicas"] if name in hpas else scaled[name]["minReplicaCount"]
        assert least == 3 and "replicas" not in workload["spec"], name  # the autoscaler owns the count
        pod = workload["spec"]["template"]["spec"]
        preferred = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert preferred[0]["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        spread = {(c["topologyKey"], c["whenUnsatisfiable"]) for c in pod["topologySpreadConstraints"]}
        assert spread == {("kubernetes.io/hostname", "DoNotSchedule"), ("topology.kubernetes.io/zone", "DoNotSchedule")}
    settings = of_kind(objects, "ConfigMap")[0]["data"]  # the credentials are in the existing Secret
    assert settings["ENGRAM_EMBEDDING_PROVIDER"] == "openai" and settings["ENGRAM_EMBEDDING_BASE_URL"]
    assert settings["ENGRAM_EVENTS_REPLICAS"] == "3"  # one copy of the event streams per NATS server
    dev = rendered("dev")
    assert all(d["spec"]["replicas"] == 1 for d in of_kind(dev, "Deployment"))
    assert of_kind(dev, "PodDisruptionBudget") == [] and of_kind(dev, "HorizontalPodAutoscaler") == []


def test_keda_watches_the_durable_consumers_the_services_declare() -> None:
    objects = rendered("ha")
    declared = {
        "embedder": {durable for durable, _ in DURABLES["embedder"]},
        "classifier": {CLASSIFIER},
        "conflicts": {CONFLICTS},
        "promotion": {durable for durable, _ in TRIGGERS},
    }
    for scaled in of_kind(objects, "ScaledObject"):
        name = component(scaled)
        triggers = scaled["spec"]["triggers"]
        assert {t["type"] for t in triggers} == {"nats-jetstream"}
        assert {t["metadata"]["consumer"] for t in triggers} == declared[name]
        assert {t["metadata"]["stream"] for t in triggers} == {"ENGRAM_EVENTS"}
        assert scaled["spec"]["scaleTargetRef"]["name"] == f"mem-engram-{name}"
    with pytest.raises(helm_python.HelmError, match="monitoringEndpoint"):
        render({"services": {"classifier": {"keda": {"enabled": True}}}, "externalNats": {"url": "nats://n:4222"}})


def test_notes_tell_how_to_reach_the_gateway_and_get_the_first_key() -> None:
    text = notes(merged(EXTERNAL_NATS, {"secrets": SECRETS}))
    assert "port-forward svc/mem-engram-gateway 8080:8080" in text
    assert '"args": ["bootstrap-key"]' in text
    overrides = text.split("--overrides='", 1)[1].split("'", 1)[0]
    pod = json.loads(overrides)
    env = {v["name"]: v for v in pod["spec"]["containers"][0]["env"]}
    assert env["ENGRAM_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "mem-engram",
        "key": "ENGRAM_DATABASE_URL",
    }
    assert "WARNING" not in text
    assert "WARNING: no database URL" in notes({})


def test_each_nats_client_gets_its_own_identity_from_the_nats_auth_secret() -> None:
    connecting = {"gateway", "ingest", "embedder", "classifier", "conflicts", "promotion"}  # recall needs no NATS
    objects = rendered("default", {"secrets": SECRETS, "natsAuth": {"existingSecret": "nats-ids"}})
    for name, workload in deployments(objects).items():
        refs = {
            v["name"]: v["valueFrom"]["secretKeyRef"]
            for v in container(workload)["env"]
            if "secretKeyRef" in v.get("valueFrom", {})
        }
        if name in connecting:
            assert refs["ENGRAM_NATS_USER"] == {"name": "nats-ids", "key": f"{name}-user"}
            assert refs["ENGRAM_NATS_PASSWORD"] == {"name": "nats-ids", "key": f"{name}-password"}
        else:
            assert "ENGRAM_NATS_USER" not in refs
    for mode, variable, key in (("nkey", "ENGRAM_NATS_NKEY_SEED", "nk"), ("creds", "ENGRAM_NATS_CREDS", "creds")):
        objects = rendered("default", {"secrets": SECRETS, "natsAuth": {"existingSecret": "nats-ids", "mode": mode}})
        for name in connecting:
            workload = deployments(objects)[name]
            env = {v["name"]: v.get("value") for v in container(workload)["env"]}
            [volume] = [v for v in workload["spec"]["template"]["spec"]["volumes"] if v["name"] == "nats-identity"]
            [mount] = [m for m in container(workload)["volumeMounts"] if m["name"] == "nats-identity"]
            [item] = volume["secret"]["items"]
            assert item["key"] == f"{name}.{key}" and env[variable] == f"{mount['mountPath']}/{item['path']}"
            assert mount["readOnly"] is True and "ENGRAM_NATS_USER" not in env
    plain = rendered("default", {"secrets": SECRETS})  # no natsAuth: no identity, as before
    for workload in deployments(plain).values():
        names = {v["name"] for v in container(workload)["env"]}
        assert not names & {"ENGRAM_NATS_USER", "ENGRAM_NATS_CREDS", "ENGRAM_NATS_NKEY_SEED"}
