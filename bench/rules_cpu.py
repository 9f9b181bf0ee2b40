"""CPU of the conflict rules per memory on conversation: each LoCoMo turn judged against the five turns before it,
as the conflicts consumer judges a new memory against its five nearest neighbours.

    python bench/rules_cpu.py [--data /work/shared/bench/locomo/locomo10.json] [--turns 400]

Prints CPU ms per pair and per memory (five pairs), and how many pairs got a verdict. Run it before and after a
change to the rules (same machine, same moment): the verdicts must not change, only the time.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from engram.domain.conflict_rules import judge


def turns(path: Path, n: int) -> list[str]:
    out: list[str] = []
    for sample in json.loads(path.read_text()):
        conversation, session = sample["conversation"], 1
        while f"session_{session}" in conversation:
            out += [f"{t['speaker']}: {t['text']}" for t in conversation[f"session_{session}"]]
            session += 1
    return out[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench/locomo/locomo10.json"))
    parser.add_argument("--turns", type=int, default=400)
    args = parser.parse_args()
    texts = turns(args.data, args.turns)
    pairs = [(texts[i - k], texts[i]) for i in range(5, len(texts)) for k in range(1, 6)]
    started = time.process_time()
    verdicts = [judge(existing, new, 0.85) for existing, new in pairs]
    spent = time.process_time() - started
    print(
        f"{len(pairs)} pairs: {spent * 1000 / len(pairs):.3f} CPU-ms per pair, "
        f"{spent * 1000 * 5 / len(pairs):.2f} per memory (5 pairs); "
        f"{sum(v is not None for v in verdicts)} verdicts"
    )


if __name__ == "__main__":
    main()
