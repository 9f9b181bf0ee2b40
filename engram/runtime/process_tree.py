"""Signalling and waiting for process trees. A zombie counts as gone."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterable

import psutil


def is_alive(proc: psutil.Process) -> bool:
    """True while ``proc`` runs (the same process, not a reused pid, and not a zombie)."""
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def descendants(pid: int) -> list[psutil.Process]:
    """Every live descendant of ``pid`` right now."""
    try:
        children: list[psutil.Process] = psutil.Process(pid).children(recursive=True)
        return children
    except psutil.Error:
        return []


def group_members(pgid: int) -> list[psutil.Process]:
    """Every process in process group ``pgid`` right now."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(OSError, psutil.Error):
            if os.getpgid(proc.pid) == pgid:
                found.append(proc)
    return found


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pgid``; a group that is gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def signal_all(procs: Iterable[psutil.Process], sig: int) -> None:
    """Send ``sig`` to each process of ``procs`` that still runs."""
    for proc in procs:
        if is_alive(proc):
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)


def wait_gone_sync(procs: Iterable[psutil.Process], seconds: float) -> list[psutil.Process]:
    """Wait up to ``seconds`` for ``procs`` to end; returns those still alive."""
    deadline = time.monotonic() + seconds
    alive = [p for p in procs if is_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if is_alive(p)]
    return alive


async def wait_gone(procs: Iterable[psutil.Process], seconds: float) -> list[psutil.Process]:
    """Wait up to ``seconds`` for ``procs`` to end; returns those still alive."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    alive = [p for p in procs if is_alive(p)]
    while alive and loop.time() < deadline:
        await asyncio.sleep(0.02)
        alive = [p for p in alive if is_alive(p)]
    return alive


def kill_remains(pgid: int, procs: Iterable[psutil.Process], seconds: float = 5.0) -> list[psutil.Process]:
    """SIGKILL what is left of process group ``pgid`` and of ``procs``, and wait for it to end.

    Returns the processes that still could not be seen to end (should be empty).
    """
    procs = [*procs, *group_members(pgid)]
    signal_group(pgid, signal.SIGKILL)
    signal_all(procs, signal.SIGKILL)
    return wait_gone_sync(procs, seconds)
