"""How long the conflict rules take to judge a pair of long memories (the rules run on every new memory
against its nearest neighbours, so a slow or backtracking rule would stall the conflicts consumer).

    python bench/judge.py [--repeat 20]

Pairs of synthetic memories of growing size (many numbers, a negation), each judged --repeat times. Prints
the size and the median and worst time per pair. The unit tests only check the verdicts.
"""

from __future__ import annotations

import argparse
import statistics
import time

from engram.domain.conflict_rules import judge


def pair(sentences: int) -> tuple[str, str]:
    existing = " ".join(f"Service {i} has {i % 7} replicas and a {i % 50} second timeout." for i in range(sentences))
    new = " ".join(
        f"Service {i} has {i % 5} replicas and does not use a {i % 40} second timeout." for i in range(sentences)
    )
    return existing, new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for sentences in (25, 100, 400, 1600):
        existing, new = pair(sentences)
        times = []
        for _ in range(args.repeat):
            began = time.perf_counter()
            verdict = judge(existing, new, 0.9)
            times.append(time.perf_counter() - began)
        label = verdict.label if verdict else "none"
        print(
            f"{len(existing.encode()):>7} bytes: median {statistics.median(times) * 1000:8.1f} ms, "
            f"worst {max(times) * 1000:8.1f} ms  ({label})"
        )


if __name__ == "__main__":
    main()
