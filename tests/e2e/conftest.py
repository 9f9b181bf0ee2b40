"""Start the stack exactly as `engram up` does (a subprocess of the real CLI) and drive it through REST."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest

from engram.runtime.ports import free_port

START_TIMEOUT_S = 180.0


@dataclass
class Stack:
    home: Path
    port: int
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None
    url: str = ""
    output: list[str] = field(default_factory=list)
    startup_seconds: float = 0.0

    def start(self) -> Stack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(ENGRAM_HOME=str(self.home), ENGRAM_GATEWAY_PORT=str(self.port), PYTHONUNBUFFERED="1")
        env.update(self.extra_env)
        started = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "-m", "engram.cli", "up"], env=env, cwd=self.home.parent,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()

        def pump() -> None:
            assert self.process and self.process.stdout
            for line in self.process.stdout:
                self.output.append(line.rstrip())
                if line.startswith("gateway: "):
                    self.url = line.split(" ", 1)[1].strip()
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(START_TIMEOUT_S):
            self.stop()
            raise AssertionError("engram up did not become ready:\n" + "\n".join(self.output[-40:]))
        self.startup_seconds = time.monotonic() - started
        return self

    def info(self) -> dict[str, str]:
        return json.loads((self.home / "stack.json").read_text())  # type: ignore[no-any-return]

    def children(self) -> list[psutil.Process]:
        assert self.process
        return psutil.Process(self.process.pid).children(recursive=True)

    def service_pid(self, name: str) -> int:
        for child in self.children():
            try:
                if f"services.{name}" in " ".join(child.cmdline()):
                    return child.pid
            except psutil.Error:  # exited (or a zombie not reaped yet)
                continue
        raise AssertionError(f"no {name} process")

    def stop(self) -> list[int]:
        """SIGTERM like Ctrl-C would; return the pids that were running under it."""
        if self.process is None or self.process.poll() is not None:
            return []
        pids = [p.pid for p in self.children()]
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        return pids

    @property
    def dev_key(self) -> str:
        return (self.home / "dev-key").read_text().strip()

    def client(self, authenticated: bool = True) -> httpx.Client:
        headers = {"authorization": f"Bearer {self.dev_key}"} if authenticated else {}
        return httpx.Client(base_url=self.url, timeout=30.0, headers=headers)


def wait_for(check, timeout: float = 60.0, interval: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(home=tmp_path_factory.mktemp("e2e") / "home", port=free_port()).start()
    yield running
    running.stop()
