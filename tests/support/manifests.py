"""Run what a deployment manifest declares as a local process, then probe what it declares.

No container engine or cluster runs here, so the tests of the Helm chart and docker-compose.yml take each
container's command, args and environment from the rendered manifest, start them as a local process (the
``engram`` executable resolves to this virtualenv's), and probe the port and path the manifest's readiness
probe or healthcheck names. A manifest whose command, port or probe path does not match the program fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

BIN = Path(sys.executable).parent


def local_argv(argv: Sequence[str]) -> list[str]:
    """A container's argv with its executable found in this virtualenv (``engram`` → ``.venv/bin/engram``)."""
    if not argv:
        raise ValueError("the manifest declares no command")
    executable = argv[0]
    found = BIN / executable if (BIN / executable).exists() else shutil.which(executable)
    if found is None:
        raise FileNotFoundError(f"the manifest's command {executable!r} is not installed here")
    return [str(found), *argv[1:]]


@contextlib.contextmanager
def declared_process(argv: Sequence[str], env: Mapping[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` with exactly the manifest's ``env`` (plus PATH and HOME so Python starts), output to ``log``;
    stopped with SIGTERM (then SIGKILL) on exit, whatever happened."""
    base = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(log.parent)}
    with log.open("wb") as out:
        process = subprocess.Popen(
            local_argv(argv), env={**base, **env}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)


def _fail(process: subprocess.Popen[bytes], log: Path, what: str) -> AssertionError:
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    state = f"exited with {process.returncode}" if process.poll() is not None else "still running"
    return AssertionError(f"{what}; the process {state}. Its output ends:\n{tail}")


def wait_http(
    process: subprocess.Popen[bytes], log: Path, url: str, timeout_s: float = 120, status: int = 200
) -> httpx.Response:
    """Poll ``url`` until it answers ``status`` (the process must stay up meanwhile)."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise _fail(process, log, f"{url} never answered {status}")
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == status:
                return response
            last = f"{response.status_code} {response.text[:200]}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(0.3)
    raise _fail(process, log, f"{url} did not answer {status} within {timeout_s:.0f} s (last: {last})")


def wait_grpc_serving(
    process: subprocess.Popen[bytes], log: Path, address: str, service: str = "", timeout_s: float = 120
) -> None:
    """Poll the gRPC health service at ``address`` until ``service`` is SERVING (what a gRPC probe checks)."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise _fail(process, log, f"gRPC health at {address} never answered SERVING")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.RpcError as exc:
                last = exc.code().name
            time.sleep(0.3)
    raise _fail(process, log, f"gRPC health at {address} not SERVING within {timeout_s:.0f} s (last: {last})")
