"""docker-compose.yml: valid for a spec-compliant parser, every service there with its dependencies and
healthcheck, no secret written into the file, and Prometheus scraping what the services serve."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.support.compose import (
    COMPOSE_FILE,
    ENV_EXAMPLE,
    ROOT,
    MissingVariable,
    interpolate,
    load_compose,
    raw_compose,
    read_env_file,
)

ENGRAM_SERVICES = sorted(p.name for p in (ROOT / "services").iterdir() if (p / "__main__.py").exists())
OBSERVABILITY = ("prometheus", "grafana", "otel-collector")
SECRET_NAME = re.compile(r"PASSWORD|TOKEN|SECRET|API_KEY|PRIVATE_KEY", re.IGNORECASE)
REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-?+][^}]*)?\}$")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = compose["services"]
    assert isinstance(found, dict)
    return found


def engram_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The compose services that run the engram image (migrate and the seven services)."""
    return {name: s for name, s in services(compose).items() if str(s.get("image", "")).startswith("engram:")}


def test_the_parser_accepts_the_file_with_the_example_settings(compose: dict[str, Any]) -> None:
    assert set(services(compose)) >= {"postgres", "nats", "migrate", *ENGRAM_SERVICES, *OBSERVABILITY}


def test_a_dependency_condition_the_spec_does_not_know_is_rejected() -> None:
    text = COMPOSE_FILE.read_text().replace("service_completed_successfully", "service_finished", 1)
    with pytest.raises(ValueError, match="service_finished"):
        load_compose(text=text)


def test_compose_refuses_to_start_without_each_secret() -> None:
    example = read_env_file()
    required = ("POSTGRES_PASSWORD", "ENGRAM_APP_DB_PASSWORD", "ENGRAM_INTERNAL_TOKEN", "GRAFANA_ADMIN_PASSWORD")
    for name in required:
        without = {key: value for key, value in example.items() if key != name}
        with pytest.raises(MissingVariable) as refused:
            load_compose(env=without)
        assert refused.value.name == name
        with pytest.raises(MissingVariable):  # set but empty counts as missing for `:?`
            load_compose(env={**without, name: ""})


def test_interpolation_follows_the_compose_rules() -> None:
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate("$$SET ${SET} $SET ${UNSET:-d} ${EMPTY:-d} ${EMPTY-d} ${SET:+alt} ${UNSET+alt}", env) == (
        "$SET x x d d  alt "
    )
    with pytest.raises(MissingVariable, match="UNSET"):
        interpolate("${UNSET?why}", env)


def test_every_service_directory_has_a_compose_service_serving_it(compose: dict[str, Any]) -> None:
    running = {s["command"][1]: name for name, s in engram_services(compose).items() if s["command"][0] == "serve"}
    assert sorted(running) == ENGRAM_SERVICES
    for service, name in running.items():
        assert services(compose)[name]["command"] == ["serve", service]
    assert services(compose)["migrate"]["command"] == ["migrate"]


def test_every_engram_service_builds_and_runs_the_one_image(compose: dict[str, Any]) -> None:
    for name, service in engram_services(compose).items():
        assert service["image"] == "engram:dev", name
        build = service["build"]
        assert (build if isinstance(build, str) else build["context"]) == ".", name


def test_every_engram_service_waits_for_the_migration_and_healthy_servers(compose: dict[str, Any]) -> None:
    for name in ENGRAM_SERVICES:
        depends = services(compose)[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["postgres"]["condition"] == "service_healthy", name
        assert depends["nats"]["condition"] == "service_healthy", name
    assert services(compose)["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    gateway = services(compose)["gateway"]["depends_on"]
    assert gateway["ingest"]["condition"] == gateway["recall"]["condition"] == "service_healthy"


def test_every_long_running_service_has_a_healthcheck_and_a_restart_policy(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        if name in ("migrate", "otel-collector"):  # one-shot; the collector's image has no shell or HTTP client
            continue
        test = service.get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL"), f"{name} has no healthcheck"
        assert service.get("restart") in ("unless-stopped", "always", "on-failure"), name
    assert services(compose)["migrate"]["restart"] == "no"


def test_engram_services_probe_ready_on_the_port_they_serve(compose: dict[str, Any]) -> None:
    for name in ENGRAM_SERVICES:
        service = services(compose)[name]
        url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", " ".join(service["healthcheck"]["test"]))
        assert url, f"{name}'s healthcheck requests no local URL"
        port_var = "ENGRAM_GATEWAY_PORT" if name == "gateway" else "ENGRAM_METRICS_PORT"
        assert url.group(1) == service["environment"][port_var], f"{name} probes a port it does not serve"
        assert url.group(2) == "/ready", name


def test_engram_containers_run_read_only_with_a_tmpfs(compose: dict[str, Any]) -> None:
    for name, service in engram_services(compose).items():
        assert service["read_only"] is True, name
        assert any(str(mount).split(":")[0] == "/tmp" for mount in service["tmpfs"]), name


def test_the_gateway_is_published_on_8080(compose: dict[str, Any]) -> None:
    published = services(compose)["gateway"]["ports"]
    assert any(str(port).endswith("8080:8080") for port in published)
    assert services(compose)["gateway"]["environment"]["ENGRAM_GATEWAY_PORT"] == "8080"


def test_observability_services_run_only_in_their_profile(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        if name in OBSERVABILITY:
            assert service["profiles"] == ["observability"], name
        else:
            assert "profiles" not in service, f"{name} would not start with a plain `docker compose up`"


def _secret_problems(name: str, env: dict[str, Any]) -> list[str]:
    problems = []
    for key, value in env.items():
        value = str(value)
        if SECRET_NAME.search(key) and not REFERENCE.match(value):
            problems.append(f"{name}: {key} is written into the file, not a ${{...}} reference")
        if "://" in value:
            password = urlsplit(value).password
            if password is not None and not REFERENCE.match(password):
                problems.append(f"{name}: {key} carries a literal password")
    return problems


def test_no_secret_is_written_into_the_file() -> None:
    raw = raw_compose()
    problems = [p for name, s in raw["services"].items() for p in _secret_problems(name, s.get("environment") or {})]
    assert problems == []
    # and the check bites: a literal token or a password inside a URL is reported
    planted = {"ENGRAM_INTERNAL_TOKEN": "s3cret", "ENGRAM_APP_DATABASE_URL": "postgresql://a:pw@postgres/engram"}
    assert len(_secret_problems("planted", planted)) == 2


def test_the_example_env_holds_placeholders_only_and_real_env_files_stay_private() -> None:
    example = read_env_file()
    for key, value in example.items():
        if SECRET_NAME.search(key):
            assert value.startswith("CHANGE-ME"), f"{ENV_EXAMPLE.name}: {key} looks like a real secret"
    values = yaml.safe_dump(raw_compose())  # the file's values (its comments name no real variable)
    required = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*):\?", values))
    assert "POSTGRES_PASSWORD" in required
    assert required <= set(example), f"{ENV_EXAMPLE.name} lacks {required - set(example)}"
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT, check=False).returncode
    assert ignored == 0, ".env is not git-ignored"


def _scrape_targets() -> dict[str, tuple[str, str]]:
    """Prometheus' static targets: ``host:port`` → (job, metrics path)."""
    config = yaml.safe_load((ROOT / "deploy/compose/prometheus.yml").read_text())
    return {
        target: (job["job_name"], job.get("metrics_path", "/metrics"))
        for job in config["scrape_configs"]
        for static in job.get("static_configs", [])
        for target in static["targets"]
    }


def test_prometheus_scrapes_every_service_on_its_metrics_port(compose: dict[str, Any]) -> None:
    targets = _scrape_targets()
    for name in ENGRAM_SERVICES:
        env = services(compose)[name]["environment"]
        port = env["ENGRAM_GATEWAY_PORT"] if name == "gateway" else env["ENGRAM_METRICS_PORT"]
        assert f"{name}:{port}" in targets, f"prometheus.yml does not scrape {name}:{port}"
        assert targets[f"{name}:{port}"][1] == "/metrics"
    hosts = {target.split(":")[0] for target in targets} - {"127.0.0.1", "localhost"}
    assert hosts <= set(services(compose)), f"prometheus.yml scrapes hosts compose does not run: {hosts}"


def test_supporting_files_mounted_by_compose_exist(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is not in the repository"


def test_the_collector_pipelines_use_what_it_defines() -> None:
    config = yaml.safe_load((ROOT / "deploy/compose/otel-collector.yaml").read_text())
    for name, pipeline in config["service"]["pipelines"].items():
        for kind in ("receivers", "processors", "exporters"):
            missing = set(pipeline.get(kind, [])) - set(config.get(kind, {}))
            assert not missing, f"pipeline {name} uses undefined {kind}: {missing}"
    assert "otlp" in config["receivers"] and {"debug", "prometheus"} <= set(config["exporters"])
    assert "otel-collector:8889" in _scrape_targets()


def test_grafana_is_provisioned_with_prometheus_and_the_dashboards_folder(compose: dict[str, Any]) -> None:
    provisioning = ROOT / "deploy/compose/grafana/provisioning"
    sources = yaml.safe_load((provisioning / "datasources/prometheus.yaml").read_text())["datasources"]
    assert sources[0]["url"] == "http://prometheus:9090"
    provider = yaml.safe_load((provisioning / "dashboards/engram.yaml").read_text())["providers"][0]
    mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in services(compose)["grafana"]["volumes"]}
    dashboards = mounts[provider["options"]["path"]]
    assert Path(ROOT / dashboards).is_dir()
