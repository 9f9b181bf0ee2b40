"""The helpers that run a manifest's declared command (tests/support/manifests.py) against real servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.runtime.ports import free_port
from tests.support.manifests import declared_process, wait_grpc_serving, wait_http

pytestmark = pytest.mark.timeout(300)


def test_a_process_that_cannot_start_fails_the_probe_with_its_output(migrated: str, tmp_path: Path) -> None:
    log = tmp_path / "gateway.log"
    env = {"ENGRAM_DATABASE_URL": migrated}  # no NATS URL, no gRPC addresses: the gateway refuses to start
    with declared_process(["engram", "serve", "gateway"], env, log) as process:
        with pytest.raises(AssertionError, match="ENGRAM_NATS_URL"):
            wait_http(process, log, "http://127.0.0.1:1/ready", timeout_s=60)


def test_grpc_health_of_a_declared_recall_server(migrated: str, tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    env = {"ENGRAM_DATABASE_URL": migrated, "ENGRAM_RECALL_ADDR": address}
    log = tmp_path / "recall.log"
    with declared_process(["engram", "serve", "recall"], env, log) as process:
        wait_grpc_serving(process, log, address, "engram.v1.RecallService")
