"""The stack as `engram up` starts it, as a subprocess of the real CLI: started, inspected and stopped by the
e2e tests (and driven through REST with ``client()``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

START_TIMEOUT_S = 180.0


@dataclass
class Stack:
    home: Path
    port: int
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None
    url: str = ""
    output: list[str] = field(default_factory=list)
    pump: threading.Thread | None = None

    def start(self) -> Stack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(ENGRAM_HOME=str(self.home), ENGRAM_GATEWAY_PORT=str(self.port), PYTHONUNBUFFERED="1")
        env.update(self.extra_env)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engram.cli", "up"],
            env=env,
            cwd=self.home.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        ready = threading.Event()

        def pump() -> None:
            assert self.process and self.process.stdout
            with self.process.stdout:  # closed at EOF: the pipe is this thread's alone
                for line in self.process.stdout:
                    self.output.append(line.rstrip())
                    if line.startswith("gateway: "):
                        self.url = line.split(" ", 1)[1].strip()
                        ready.set()

        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()
        if not ready.wait(START_TIMEOUT_S):
            self.stop()
            raise AssertionError("engram up did not become ready:\n" + "\n".join(self.output[-40:]))
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
        pids: list[int] = []
        if self.process is not None and self.process.poll() is None:
            pids = [p.pid for p in self.children()]
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)
        if self.pump is not None:
            self.pump.join(timeout=10)  # the rest of the output, up to EOF
        return pids

    @property
    def dev_key(self) -> str:
        return (self.home / "dev-key").read_text().strip()

    def client(self, authenticated: bool = True) -> httpx.Client:
        headers = {"authorization": f"Bearer {self.dev_key}"} if authenticated else {}
        return httpx.Client(base_url=self.url, timeout=30.0, headers=headers)
