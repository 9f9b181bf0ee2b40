"""What an idle stack costs: CPU per process per second and the requests NATS serves, with nothing to do; then
remember → searchable for lone memories spaced out so each arrives at an idle pipeline.

    cd bench && BENCH_PORT=18800 nice -n 19 python idle_cpu.py --seconds 60 --lag-samples 20
    cd bench && BENCH_PORT=18800 nice -n 19 python idle_cpu.py --checkout /tmp/idle-ab   # another commit's code

Starts ``engram up`` from ``--checkout`` (its code on PYTHONPATH, this venv), waits ``--settle`` seconds after
the gateway is ready, then reads each process's CPU time (/proc, as latency.py does) and NATS's ``/varz``
message counts before and after ``--seconds`` of nothing. ``in_msgs`` counts what clients sent NATS: idle, the
consumers' pull requests and the lag reporter's ``consumer_info`` calls. Then ``--lag-samples`` times: a pause of
1 s to ``--pause-max`` (3 s), one remember, and the time until semantic search returns it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import launch, process_cpu, searchable_lag  # noqa: E402


def nats_monitor(root_pid: int) -> str:
    """The monitoring URL of the stack's nats-server (its ``-m`` port, from its command line)."""
    for part in psutil.Process(root_pid).children(recursive=True):
        argv = part.cmdline()
        if argv and argv[0].endswith("nats-server") and "-m" in argv:
            return f"http://127.0.0.1:{argv[argv.index('-m') + 1]}"
    raise RuntimeError("no nats-server with a monitoring port under the stack")


def varz(monitor: str) -> dict[str, int]:
    data = httpx.get(f"{monitor}/varz", timeout=5).json()
    return {k: int(data[k]) for k in ("in_msgs", "out_msgs", "in_bytes", "out_bytes")}


def idle(root_pid: int, seconds: float) -> dict[str, Any]:
    monitor = nats_monitor(root_pid)
    cpu_before, nats_before = process_cpu(root_pid), varz(monitor)
    time.sleep(seconds)
    cpu_after, nats_after = process_cpu(root_pid), varz(monitor)
    cpu = {k: round((v - cpu_before.get(k, 0.0)) / seconds * 1000, 2) for k, v in cpu_after.items()}
    cpu.pop("load generator", None)
    return {
        "cpu_ms_per_s": dict(sorted(cpu.items())),
        "cpu_ms_per_s_total": round(sum(cpu.values()), 2),
        "nats_per_s": {k: round((nats_after[k] - nats_before[k]) / seconds, 1) for k in nats_after},
    }


async def lone_lags(url: str, key: str, samples: int, pause_max: float) -> dict[str, float]:
    """Remember → searchable for lone memories, each after a pause longer than any old fetch window."""
    async with httpx.AsyncClient(base_url=url, timeout=60, headers={"authorization": f"Bearer {key}"}) as client:
        return await searchable_lag(client, samples, pause_max_s=pause_max)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose code the stack runs")
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--lag-samples", type=int, default=20)
    parser.add_argument("--pause-max", type=float, default=3.0, help="probes 1 s to this apart")
    parser.add_argument("--out", type=Path, help="append the result as one JSON line")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=checkout
    ).stdout.strip()
    home = Path(tempfile.mkdtemp(prefix="engram-bench-idle-", dir="/tmp")) / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    process, url, key = launch(env, home, checkout)
    try:
        time.sleep(args.settle)
        result: dict[str, Any] = {"commit": commit, "checkout": str(checkout), "seconds": args.seconds}
        result.update(idle(process.pid, args.seconds))
        if args.lag_samples:
            result["lone_remember_to_searchable"] = asyncio.run(lone_lags(url, key, args.lag_samples, args.pause_max))
    finally:
        process.terminate()
        process.wait(timeout=60)
        shutil.rmtree(home.parent, ignore_errors=True)
    print(json.dumps(result, indent=1))
    if args.out:
        with args.out.open("a") as out:
            out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
