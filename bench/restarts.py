"""Refused writes while ingest is killed (SIGKILL) and restarted by the supervisor, with 4 writers.

    python bench/restarts.py --kills 5                       # the gateway's default retry budget (2 s)
    python bench/restarts.py --kills 5 --retry-budget-s 0    # without the retry, for comparison

Starts its own stack (`engram up`) in a temp dir, lets the writers run, then kills ingest ``--kills`` times,
``--every-s`` apart, and counts the answers: acknowledged, refused (by status) and transport errors. Every
refusal should be a 503 with Retry-After. Prints a JSON report; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
from soak import Soak, stack_processes, start_stack


def ingest_pid(root_pid: int) -> int | None:
    found = stack_processes(root_pid).get("ingest", [])
    return found[0].pid if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--every-s", type=float, default=20)
    parser.add_argument("--retry-budget-s", type=float, help="ENGRAM_GATEWAY_RETRY_BUDGET_S (default: the default)")
    args = parser.parse_args()
    env = {} if args.retry_budget_s is None else {"ENGRAM_GATEWAY_RETRY_BUDGET_S": str(args.retry_budget_s)}
    home = Path(tempfile.mkdtemp(prefix="engram-restarts-", dir="/tmp")) / "home"
    process, url, key = start_stack(home, env)
    clients = Soak(url, key, os.urandom(4).hex(), pause_s=0.02)
    threads = [threading.Thread(target=clients.writer, args=(n,), daemon=True) for n in range(args.writers)]
    per_kill: list[dict[str, float]] = []
    try:
        for thread in threads:
            thread.start()
        time.sleep(args.every_s)
        for _ in range(args.kills):
            before_errors, before_acked = sum(clients.errors.values()), len(clients.acknowledged)
            pid = ingest_pid(process.pid)
            assert pid is not None, "no ingest process"
            killed_at = time.monotonic()
            psutil.Process(pid).send_signal(signal.SIGKILL)
            while ingest_pid(process.pid) in (None, pid):
                time.sleep(0.05)
            respawned_s = time.monotonic() - killed_at
            time.sleep(args.every_s)
            per_kill.append(
                {
                    "respawned_after_s": round(respawned_s, 2),
                    "refused": sum(clients.errors.values()) - before_errors,
                    "acknowledged": len(clients.acknowledged) - before_acked,
                }
            )
    finally:
        clients.stop.set()
        for thread in threads:
            thread.join(timeout=60)
        process.terminate()
        process.wait(timeout=120)
    statuses: Counter[str] = Counter(clients.errors)
    report = {
        "writers": args.writers,
        "retry_budget_s": args.retry_budget_s if args.retry_budget_s is not None else "default (2)",
        "kills": per_kill,
        "refused_per_kill_mean": round(sum(k["refused"] for k in per_kill) / max(len(per_kill), 1), 1),
        "acknowledged": len(clients.acknowledged),
        "errors": dict(statuses),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
