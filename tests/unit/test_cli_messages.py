"""What the command line says when used as a new user would: bare `engram` shows the help, and a gateway port
that is taken is one line naming the setting to change, with no traceback and nothing started."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def _env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return env | settings


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], env=env or _env(), capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        yield int(holder.getsockname()[1])


def test_bare_engram_prints_the_help() -> None:
    asked = _run("-m", "engram.cli", "--help")
    assert asked.returncode == 0 and "start the whole stack" in asked.stdout  # positive control: --help
    bare = _run("-m", "engram.cli")
    assert bare.returncode == 2  # argparse's status for a missing command
    assert bare.stdout == "" and bare.stderr == asked.stdout
    assert "error" not in bare.stderr


def test_a_busy_port_stops_the_gateway_with_one_line_naming_the_setting(taken_port: int) -> None:
    env = _env(
        ENGRAM_GATEWAY_HOST="127.0.0.1",
        ENGRAM_GATEWAY_PORT=str(taken_port),
        ENGRAM_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",  # never reached: the port is checked first
        ENGRAM_NATS_URL="nats://127.0.0.1:1",
        ENGRAM_INTERNAL_TOKEN="t" * 32,
    )
    gateway = _run("-m", "services.gateway", env=env)
    assert gateway.returncode != 0
    assert gateway.stderr.strip().splitlines() == [
        f"engram gateway: port {taken_port} on 127.0.0.1 is already in use; set ENGRAM_GATEWAY_PORT to a free port "
        "or stop what listens there"
    ]


def test_engram_up_on_a_busy_gateway_port_starts_nothing_and_names_the_setting(taken_port: int, tmp_path: Path) -> None:
    home = tmp_path / "home"
    up = _run("-m", "engram.cli", "up", env=_env(ENGRAM_HOME=str(home), ENGRAM_GATEWAY_PORT=str(taken_port)))
    assert up.returncode == 1
    assert up.stderr.strip().splitlines() == [
        f"engram: port {taken_port} on 127.0.0.1 is already in use; set ENGRAM_GATEWAY_PORT to a free port "
        "or stop what listens there"
    ]
    assert not (home / "pgdata").exists() and not (home / "stack.json").exists()
