"""Start-up times: the embedded PostgreSQL (first start with initdb, then warm on the same data dir), the
embedded NATS server, and `engram up` (the real CLI, until it prints `gateway:`) on an empty ENGRAM_HOME and
again on the same one.

    python bench/startup.py [--runs 3]

Everything runs in fresh temporary directories under /tmp. Prints the machine and one line per measurement
(each run's seconds, then the median). The tests only check that these servers start and stop correctly.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engram.runtime.nats import EmbeddedNats
from engram.runtime.ports import free_port
from engram.runtime.postgres import EmbeddedPostgres

ROOT = Path(__file__).resolve().parent.parent


def scratch(prefix: str) -> Path:
    # Under /tmp (never /root): embedded PostgreSQL opens up the permissions of its data dir's parents.
    return Path(tempfile.mkdtemp(prefix=f"engram-bench-{prefix}-", dir="/tmp"))


def timed(start: Callable[[], object]) -> float:
    began = time.perf_counter()
    start()
    return time.perf_counter() - began


def postgres() -> tuple[float, float]:
    data_dir = scratch("pg") / "pgdata"
    first = EmbeddedPostgres(data_dir)
    try:
        cold = timed(first.start)
    finally:
        first.stop()
    again = EmbeddedPostgres(data_dir)
    try:
        warm = timed(again.start)
    finally:
        again.stop()
    return cold, warm


def nats() -> float:
    server = EmbeddedNats(scratch("nats") / "nats")
    try:
        return timed(server.start)
    finally:
        server.stop()


def engram_up(home: Path) -> float:
    """Seconds from `engram up` to its `gateway:` line; the stack is stopped (SIGTERM) afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_GATEWAY_PORT=str(free_port()), PYTHONUNBUFFERED="1")
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "engram.cli", "up"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout
        for line in process.stdout:
            if line.startswith("gateway: "):
                return time.perf_counter() - began
        raise RuntimeError(f"engram up exited with code {process.wait()} before it was ready")
    finally:
        process.terminate()
        process.wait(timeout=60)


def report(what: str, seconds: list[float]) -> None:
    runs = ", ".join(f"{s:.2f}" for s in seconds)
    print(f"{what:<44} {statistics.median(seconds):6.2f} s   (runs: {runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, Python {platform.python_version()}"
    )
    pg = [postgres() for _ in range(args.runs)]
    report("embedded PostgreSQL, first start (initdb)", [cold for cold, _ in pg])
    report("embedded PostgreSQL, warm start", [warm for _, warm in pg])
    report("embedded NATS, start", [nats() for _ in range(args.runs)])
    homes = [scratch("up") / "home" for _ in range(args.runs)]
    report("engram up, empty ENGRAM_HOME", [engram_up(home) for home in homes])
    report("engram up, again on the same ENGRAM_HOME", [engram_up(home) for home in homes])


if __name__ == "__main__":
    main()
