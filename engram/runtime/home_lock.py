"""One `engram up` per ENGRAM_HOME: a second one would take over (and stop) the first one's servers."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.errors import EngramError

LOCK_FILE = "engram.lock"


class HomeInUseError(EngramError):
    code = "home_in_use"


@contextmanager
def hold_home(home: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``home`` for the life of the stack. The kernel drops it if we die."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise HomeInUseError(
                f"another `engram up` (pid {owner}) is already running with ENGRAM_HOME={home}; "
                "stop it first or choose another ENGRAM_HOME"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
