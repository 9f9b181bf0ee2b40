"""CPU an attacker can buy with one request: the conflict rules on adversarial pairs of texts, and the
classifier under a tenant's placement rules at their limits (security review findings 1 and 2).

    python bench/adversarial_cpu.py [--repeat 3]

Prints, for each adversarial pair, the verdict, the steps the rules counted and why they stopped (if they
did), with the median time per pair; then the time to classify a 16 KB text under 200 placement phrases of
200 characters, compiled (first call) and from the cache. The unit tests check the counted work, not times.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from engram.domain.classification import classify, parse_placement_rules
from engram.domain.classification.placement import compiled
from engram.domain.conflict_rules import MAX_ANALYSED_CHARS, Work, judge


def _pairs() -> dict[str, tuple[str, str]]:
    return {
        "3,000 numbers in one clause": (
            "price " + " ".join(str(i) for i in range(3000)),
            "price " + " ".join(str(i + 1) for i in range(3000)),
        ),
        "600 sentences with amounts": (
            " ".join(f"The price is {i} dollars." for i in range(600)),
            " ".join(f"The price is {i + 1} dollars." for i in range(600)),
        ),
        "2,500 counted numbers": (
            " ".join(f"cost {i}" for i in range(2500)),
            " ".join(f"cost {i + 7}" for i in range(2500)),
        ),
        "3,500 'use' in one clause": ("We use " + "use " * 3500, "We uses " + "uses " * 3500),
        "1,500 negated clauses": (
            " ".join(f"x{i % 50} is not y." for i in range(1500)),
            " ".join(f"x{i % 50} is y z w." for i in range(1500)),
        ),
    }


def _median(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, (existing, new) in _pairs().items():
        existing, new = existing[:MAX_ANALYSED_CHARS], new[:MAX_ANALYSED_CHARS]
        work = Work()
        verdict = judge(existing, new, 0.9, work=work)
        seconds = _median(args.repeat, partial(judge, existing, new, 0.9))
        label = verdict.rule if verdict else "none"
        print(f"{name:30} {seconds * 1000:8.1f} ms  {work.spent:6,} steps  {label:24} {work.gave_up or ''}")
    phrases = [(f"zq{n:05d}x " * 23)[:200] for n in range(200)]
    rules = parse_placement_rules([{"wing": f"w{i}", "any_of": phrases[i * 100 : i * 100 + 100]} for i in range(2)])
    text = ("the quick brown fox jumps over the lazy dog " * 400)[:16_000]
    compiled.cache_clear()
    began = time.perf_counter()
    classify(text, rules)
    first = time.perf_counter() - began
    cached = _median(args.repeat, lambda: classify(text, rules))
    print(f"classify 16 KB under 200 phrases: first call {first * 1000:.1f} ms, cached {cached * 1000:.1f} ms")


if __name__ == "__main__":
    main()
