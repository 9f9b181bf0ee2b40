"""What the embedded servers share when a test or tool runs one on its own (no supervisor): start as a
child in its own session, wait for readiness with the log tail on failure, stop with a signal then SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from engram.runtime.logfiles import with_tail
from engram.runtime.process_tree import descendants, kill_remains


class ForegroundServer:
    """Subclasses provide ``name``, ``stop_signal``, ``url``, ``log_path``, ``prepare()``, ``is_ready()``
    and ``popen_args()``."""

    name = "server"
    stop_signal = signal.SIGTERM
    poll_interval_s = 0.01
    _process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        raise NotImplementedError

    @property
    def log_path(self) -> Path:
        raise NotImplementedError

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    def prepare(self) -> None:
        raise NotImplementedError

    def is_ready(self) -> bool:
        raise NotImplementedError

    def popen_args(self) -> tuple[list[str], dict[str, Any]]:
        """argv and extra ``subprocess.Popen`` keyword arguments (e.g. the user to run as)."""
        raise NotImplementedError

    async def ready(self) -> bool:
        """``is_ready()`` for a supervisor's readiness probe."""
        return self.is_ready()

    def start(self, timeout: float = 60.0) -> str:
        """Prepare, start as a child and wait until ready; returns the URL.

        Blocking (use ``asyncio.to_thread`` from async code). Raises ``RuntimeError`` with the tail of the
        server log when the server exits or is not ready within ``timeout`` s.
        """
        if self._process is not None and self._process.poll() is None:
            return self.url
        self.prepare()
        argv, extra = self.popen_args()
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **extra
            )
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            code = self._process.poll()
            if code is not None:
                self._process = None
                raise RuntimeError(with_tail(f"{self.name} exited with code {code} while starting", self.log_path))
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(with_tail(f"{self.name} not ready after {timeout:.0f}s", self.log_path))
            time.sleep(self.poll_interval_s)
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        """Stop with ``stop_signal``; SIGKILL the server and what it started after ``timeout`` s."""
        proc, self._process = self._process, None
        if proc is None:
            return
        children = descendants(proc.pid)
        if proc.poll() is None:
            proc.send_signal(self.stop_signal)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        kill_remains(proc.pid, children)
