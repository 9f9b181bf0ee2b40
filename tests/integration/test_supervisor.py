"""The process supervisor, with tiny Python children (real processes: not a unit test)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
import pytest

from engram.runtime.ports import free_port
from engram.runtime.process_tree import is_alive
from engram.runtime.supervisor import ChildSpec, ChildStartError, Supervisor
from tests.support.waiting import eventually


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def gone(pid: int) -> bool:
    """True when ``pid`` no longer exists at all (not even as a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def file_exists(path: Path) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return await asyncio.to_thread(path.exists)

    return probe


async def test_crashing_child_is_restarted_with_backoff(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    starts = tmp_path / "starts"
    code = f"import time; open({str(starts)!r}, 'a').write(f'{{time.monotonic()}}\\n'); raise SystemExit(1)"
    supervisor = Supervisor()
    try:
        await supervisor.start(ChildSpec(name="crasher", argv=py(code)))
        await eventually(
            lambda: starts.exists() and len(starts.read_text().split()) >= 3,
            timeout=10,
            interval=0.02,
            message="the crasher started three times",
        )
        assert supervisor.restarts("crasher") >= 2
    finally:
        await supervisor.stop()
    times = [float(t) for t in starts.read_text().split()]
    assert times[1] - times[0] >= 0.45  # first back-off 0.5 s
    assert times[2] - times[1] >= 0.95  # then doubled
    err = capfd.readouterr().err
    assert "supervisor: crasher exited with code 1; restarting in 0.5s" in err
    assert "supervisor: crasher exited with code 1; restarting in 1.0s" in err


async def test_killed_child_is_restarted_and_backoff_resets_after_stable_run(
    capfd: pytest.CaptureFixture[str],
) -> None:
    supervisor = Supervisor(stable_after=0.3)
    try:
        await supervisor.start(ChildSpec(name="sleeper", argv=py("import time; time.sleep(60)")))
        for expected in (1, 2):
            pid = supervisor.pid("sleeper")
            assert pid is not None
            await asyncio.sleep(0.4)  # longer than stable_after: the back-off starts over each time
            os.kill(pid, signal.SIGKILL)

            def restarted(n: int = expected) -> bool:
                return supervisor.restarts("sleeper") == n and supervisor.pid("sleeper") is not None

            await eventually(restarted, timeout=10, interval=0.02, message=f"sleeper restarted {expected} time(s)")
            assert supervisor.pid("sleeper") != pid
    finally:
        await supervisor.stop()
    err = capfd.readouterr().err
    assert err.count("supervisor: sleeper exited with code -9; restarting in 0.5s") == 2


async def test_child_that_exits_cleanly_is_not_restarted_when_restart_is_false(
    capfd: pytest.CaptureFixture[str],
) -> None:
    supervisor = Supervisor()
    try:
        await supervisor.start(ChildSpec(name="once", argv=py("pass"), restart=False))
        await eventually(lambda: supervisor.pid("once") is None, timeout=10, interval=0.02, message="once exited")
        await asyncio.sleep(0.7)
        assert supervisor.restarts("once") == 0
    finally:
        await supervisor.stop()
    assert "supervisor: once exited with code 0; not restarting" in capfd.readouterr().err


@pytest.mark.parametrize("own_session", [False, True], ids=["same-group", "own-session"])
async def test_stop_leaves_no_child_or_grandchild(tmp_path: Path, own_session: bool) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
        f"                     start_new_session={own_session})\n"
        f"open({str(pid_file)!r} + '.tmp', 'w').write(str(g.pid))\n"
        "import os\n"
        f"os.rename({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "time.sleep(60)\n"
    )
    supervisor = Supervisor()
    await supervisor.start(ChildSpec(name="parent", argv=py(code), ready=file_exists(pid_file)))
    child_pid = supervisor.pid("parent")
    assert child_pid is not None
    child, grandchild = psutil.Process(child_pid), psutil.Process(int(pid_file.read_text()))
    assert is_alive(grandchild)
    await supervisor.stop()
    assert not is_alive(child) and not is_alive(grandchild)  # dead at once (at most a zombie) ...
    await eventually(
        lambda: gone(child.pid) and gone(grandchild.pid),
        timeout=5,
        interval=0.02,
        message="child and grandchild reaped",
    )  # ... and reaped by init soon
    assert supervisor.pid("parent") is None


async def test_child_ignoring_sigterm_is_killed_after_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "ignoring"
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(marker)!r}, 'w').close()\n"
        "time.sleep(60)\n"
    )
    supervisor = Supervisor(stop_timeout=1.0)
    await supervisor.start(ChildSpec(name="stubborn", argv=py(code), ready=file_exists(marker)))
    pid = supervisor.pid("stubborn")
    assert pid is not None
    began = time.monotonic()
    await asyncio.wait_for(supervisor.stop(), 30)  # a hang guard: the child alone would sleep for 60 s
    assert time.monotonic() - began >= 1.0  # SIGTERM had its stop_timeout before the kill
    assert gone(pid)


async def test_children_stop_in_reverse_start_order(tmp_path: Path) -> None:
    log = tmp_path / "order"
    supervisor = Supervisor()
    for name in ("first", "second", "third"):
        marker = tmp_path / name
        code = (
            "import signal, sys, time\n"
            f"def bye(*_): open({str(log)!r}, 'a').write({name!r} + '\\n'); sys.exit(0)\n"
            "signal.signal(signal.SIGTERM, bye)\n"
            f"open({str(marker)!r}, 'w').close()\n"
            "time.sleep(60)\n"
        )
        await supervisor.start(ChildSpec(name=name, argv=py(code), ready=file_exists(marker)))
    await supervisor.stop()
    assert log.read_text().split() == ["third", "second", "first"]


async def test_output_is_prefixed_or_logged(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    log_path = tmp_path / "logs" / "quiet.log"
    supervisor = Supervisor()
    try:
        await supervisor.start(
            ChildSpec(
                name="talker", argv=py("import sys; print('hello'); print('oops', file=sys.stderr)"), restart=False
            )
        )
        await supervisor.start(
            ChildSpec(name="quiet", argv=py("print('to the file')"), restart=False, log_path=log_path)
        )
        await eventually(
            lambda: supervisor.pid("talker") is None and supervisor.pid("quiet") is None,
            timeout=10,
            interval=0.02,
            message="talker and quiet exited",
        )
    finally:
        await supervisor.stop()
    captured = capfd.readouterr()
    assert "[talker] hello" in captured.out
    assert "[talker] oops" in captured.err
    assert log_path.read_text() == "to the file\n"


async def test_child_exiting_before_ready_fails_start_with_log_tail(tmp_path: Path) -> None:
    log_path = tmp_path / "broken.log"
    supervisor = Supervisor()
    with pytest.raises(ChildStartError, match=r"(?s)broken exited with code 3 while starting.*no config here"):
        await supervisor.start(
            ChildSpec(
                name="broken",
                argv=py("import sys; print('no config here'); sys.exit(3)"),
                ready=file_exists(tmp_path / "never"),
                log_path=log_path,
            )
        )
    await supervisor.stop()


async def test_ready_timeout_fails_start_and_stops_child() -> None:
    supervisor = Supervisor()
    port = free_port()
    with pytest.raises(ChildStartError, match="slow not ready after"):
        await supervisor.start(
            ChildSpec(
                name="slow",
                argv=py(f"import time; time.sleep(60)  # {port}"),
                ready=lambda: asyncio.sleep(0, result=False),
                ready_timeout=0.5,
            )
        )
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if f"# {port}" in " ".join(p.info["cmdline"] or [])]
    assert not [p for p in leftovers if is_alive(p)]
    await supervisor.stop()
