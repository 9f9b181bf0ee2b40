"""A small asyncio process supervisor: start children, restart crashed ones with back-off, stop them all.

Each child runs in its own session (process group), so stopping it signals the whole group; after the
stop timeout, what is left of the group and of the child's descendants (even those that left the group)
is SIGKILLed: nothing survives ``stop()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

from engram.runtime.logfiles import with_tail
from engram.runtime.process_tree import (
    descendants,
    group_members,
    signal_all,
    signal_group,
    wait_gone,
)

ReadyProbe = Callable[[], Awaitable[bool]]


@dataclass(frozen=True)
class ChildSpec:
    """What to run and how.

    ``ready`` is polled (every 0.1 s, up to ``ready_timeout`` s) after the first spawn until it returns
    True; ``start()`` returns only then. ``log_path`` None: output goes to ours, each line prefixed with
    ``[name]``. ``stop_signal`` goes to the whole process group unless ``signal_group`` is False (then
    only to the child, e.g. a PostgreSQL postmaster that stops its own children).
    """

    name: str
    argv: list[str]
    env: dict[str, str] | None = None
    user: str | None = None
    ready: ReadyProbe | None = None
    restart: bool = True
    log_path: Path | None = None
    cwd: Path | None = None
    stop_signal: signal.Signals = signal.SIGTERM
    signal_group: bool = True
    ready_timeout: float = 60.0


class ChildStartError(RuntimeError):
    """A child exited, or was not ready in time, while being started."""


@dataclass
class _Child:
    spec: ChildSpec
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    monitor: asyncio.Task[None] | None = None
    pumps: list[asyncio.Task[None]] = field(default_factory=list)


def _say(message: str) -> None:
    print(f"supervisor: {message}", file=sys.stderr, flush=True)


class Supervisor:
    """Runs children; restarts one that exits unexpectedly after 0.5 s, 1 s, 2 s … (capped), reset once
    it has run ``stable_after`` s. ``stop()`` stops children in reverse start order.
    """

    def __init__(
        self,
        *,
        stop_timeout: float = 10.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        stable_after: float = 30.0,
    ) -> None:
        self.stop_timeout = stop_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stable_after = stable_after
        self._children: dict[str, _Child] = {}

    def restarts(self, name: str) -> int:
        return self._children[name].restarts

    def pid(self, name: str) -> int | None:
        """Pid of the child's current process (None while it is down)."""
        proc = self._children[name].process
        return proc.pid if proc is not None and proc.returncode is None else None

    @property
    def names(self) -> list[str]:
        return list(self._children)

    async def start(self, spec: ChildSpec) -> None:
        """Spawn the child, wait until its ``ready`` probe passes, then watch it.

        Raises ``ChildStartError`` (after stopping the child) when it exits or is not ready in time.
        """
        if spec.name in self._children:
            raise ValueError(f"a child named {spec.name!r} was already started")
        child = _Child(spec)
        self._children[spec.name] = child
        await self._spawn(child)
        try:
            await self._await_ready(child)
        except ChildStartError:
            await self._stop_child(child)
            raise
        child.monitor = asyncio.create_task(self._watch(child), name=f"supervise-{spec.name}")

    async def stop(self) -> None:
        """Stop every child, in reverse start order; returns when none of their processes is left."""
        for child in reversed(list(self._children.values())):
            await self._stop_child(child)

    # -- internals ---------------------------------------------------------------------------------

    async def _spawn(self, child: _Child) -> asyncio.subprocess.Process:
        spec = child.spec
        kwargs: dict[str, Any] = {"stdin": asyncio.subprocess.DEVNULL, "start_new_session": True}
        if spec.user is not None and os.geteuid() == 0:
            entry = pwd.getpwnam(spec.user)
            kwargs |= {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        elif spec.user is not None and pwd.getpwuid(os.geteuid()).pw_name != spec.user:
            raise ChildStartError(f"{spec.name}: cannot run as {spec.user!r} without root")
        log: IO[bytes] | None = None
        if spec.log_path is not None:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = spec.log_path.open("ab")
            kwargs |= {"stdout": log, "stderr": asyncio.subprocess.STDOUT}
        else:
            kwargs |= {"stdout": asyncio.subprocess.PIPE, "stderr": asyncio.subprocess.PIPE}
        try:
            proc = await asyncio.create_subprocess_exec(*spec.argv, env=spec.env, cwd=spec.cwd, **kwargs)
        finally:
            if log is not None:
                log.close()
        child.process = proc
        if log is None:
            assert proc.stdout is not None and proc.stderr is not None
            child.pumps = [p for p in child.pumps if not p.done()] + [
                asyncio.create_task(_pump(spec.name, proc.stdout, sys.stdout)),
                asyncio.create_task(_pump(spec.name, proc.stderr, sys.stderr)),
            ]
        return proc

    async def _await_ready(self, child: _Child) -> None:
        spec, proc = child.spec, child.process
        assert proc is not None
        if spec.ready is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + spec.ready_timeout
        while True:
            if proc.returncode is not None:
                raise ChildStartError(
                    with_tail(f"{spec.name} exited with code {proc.returncode} while starting", spec.log_path)
                )
            with contextlib.suppress(Exception):
                if await asyncio.wait_for(spec.ready(), timeout=max(0.1, deadline - loop.time())):
                    return
            if loop.time() > deadline:
                raise ChildStartError(
                    with_tail(f"{spec.name} not ready after {spec.ready_timeout:.0f}s", spec.log_path)
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_exited(proc), timeout=0.1)

    async def _watch(self, child: _Child) -> None:
        """Wait for the child to exit; restart it with back-off unless it is being stopped."""
        loop = asyncio.get_running_loop()
        name, delay, started = child.spec.name, self.backoff_initial, loop.time()
        while True:
            proc = child.process
            if proc is not None:
                if not await _first_of(_exited(proc), child.stopping.wait()):
                    return
                await self._clear_group(proc.pid, [])
                if not child.spec.restart:
                    _say(f"{name} exited with code {proc.returncode}; not restarting")
                    return
                if loop.time() - started >= self.stable_after:
                    delay = self.backoff_initial
                _say(f"{name} exited with code {proc.returncode}; restarting in {delay:.1f}s")
            if not await _first_of(asyncio.sleep(delay), child.stopping.wait()):
                return
            delay = min(delay * 2, self.backoff_max)
            try:
                await self._spawn(child)
            except (OSError, ChildStartError) as exc:
                _say(f"{name} could not be restarted: {exc}; retrying in {delay:.1f}s")
                child.process = None
                continue
            child.restarts += 1
            started = loop.time()

    async def _stop_child(self, child: _Child) -> None:
        child.stopping.set()
        if child.monitor is not None:
            await child.monitor
        proc = child.process
        if proc is not None:
            members = descendants(proc.pid)
            if proc.returncode is None:
                if child.spec.signal_group:
                    signal_group(proc.pid, child.spec.stop_signal)
                else:
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(child.spec.stop_signal)
                try:
                    await asyncio.wait_for(_exited(proc), timeout=self.stop_timeout)
                except TimeoutError:
                    _say(f"{child.spec.name} did not stop within {self.stop_timeout:.0f}s; killing it")
                    signal_group(proc.pid, signal.SIGKILL)
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    await _exited(proc)
            await self._clear_group(proc.pid, members)
        for pump in child.pumps:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(pump, timeout=1.0)

    async def _clear_group(self, pgid: int, members: list[psutil.Process]) -> None:
        """SIGKILL what is left of a dead child's process group and of its known descendants."""
        members = [*members, *group_members(pgid)]
        signal_group(pgid, signal.SIGKILL)
        signal_all(members, signal.SIGKILL)
        left = await wait_gone(members, 5.0)
        if left:
            _say(f"processes {[p.pid for p in left]} survived SIGKILL")


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """Wait for the process itself to exit (``Process.wait()`` in 3.11 also waits for its pipes to close,
    which a grandchild may hold open)."""
    while proc.returncode is None:  # noqa: ASYNC110 - the exit is only observable by polling here
        await asyncio.sleep(0.05)
    return proc.returncode


async def _first_of(main: Awaitable[object], stop: Awaitable[object]) -> bool:
    """Await ``main`` unless ``stop`` finishes first; True when ``main`` finished."""
    main_task = asyncio.ensure_future(main)
    stop_task = asyncio.ensure_future(stop)
    try:
        done, _ = await asyncio.wait({main_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (main_task, stop_task):
            task.cancel()
    return main_task in done and not stop_task.done()


async def _pump(name: str, stream: asyncio.StreamReader, out: IO[str]) -> None:
    """Copy a child's output to ``out`` line by line, each line prefixed with ``[name]``."""
    pending = b""
    while chunk := await stream.read(65_536):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            print(f"[{name}] {line.decode('utf-8', errors='replace')}", file=out, flush=True)
    if pending:
        print(f"[{name}] {pending.decode('utf-8', errors='replace')}", file=out, flush=True)
