"""A quick look at false alarms of the pure rules on conversation, without the pipeline or any vector: each LoCoMo
turn against the 5 earlier turns of its conversation that share the most words with it (word Jaccard at least
0.2: a lexical stand-in for the consumer's 5 nearest by e5 vector, which bench/conversation_conflicts.py embeds
in about 45 minutes), ``conflict_rules.judge`` with the similarity given as 0.9 (above the floor), counting the
contradiction verdicts by rule. For a before/after of a rules change in seconds; the full figure stays
bench/conversation_conflicts.py's.

    python bench/conversation_rules_quick.py --data PATH/locomo10.json [--bare] [--show 20]
    PYTHONPATH=<other checkout> python bench/conversation_rules_quick.py …   # the same with another checkout's rules

Data: LoCoMo (CC BY-NC 4.0), read from where ``--data`` points at run time, never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

from engram.domain import conflict_rules

NEIGHBOURS = 5
LEAST_JACCARD = 0.2
SIMILARITY = 0.9
WORD = re.compile(r"[a-z0-9']+")
STOP = frozenset(
    "the a an and or but i you he she it we they is are was were be to of in on at for with my your that this so "
    "just".split()
)


def turns_of(sample: dict, speaker: bool) -> list[str]:
    conv, n, turns = sample["conversation"], 1, []
    while f"session_{n}" in conv:
        for turn in conv[f"session_{n}"]:
            text = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
            turns.append(f"{turn['speaker']}: {text}" if speaker else text)
        n += 1
    return turns


def nearest(words: list[set[str]], i: int) -> list[int]:
    scored = []
    for j in range(i):
        union = words[i] | words[j]
        share = len(words[i] & words[j]) / len(union) if union else 0.0
        if share >= LEAST_JACCARD:
            scored.append((share, j))
    return [j for _, j in sorted(scored, reverse=True)[:NEIGHBOURS]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="locomo10.json")
    parser.add_argument("--bare", action="store_true", help="each turn's text without '<speaker>: '")
    parser.add_argument("--show", type=int, default=20, help="contradiction pairs to print")
    args = parser.parse_args()
    started = time.process_time()
    counts: Counter[str] = Counter()
    shown: list[str] = []
    total = 0
    for sample in json.loads(args.data.read_text()):
        turns = turns_of(sample, speaker=not args.bare)
        words = [set(WORD.findall(t.lower())) - STOP for t in turns]
        total += len(turns)
        for i, new in enumerate(turns):
            for j in nearest(words, i):
                verdict = conflict_rules.judge(turns[j], new, SIMILARITY)
                if verdict is not None and verdict.label == "contradiction":
                    counts[verdict.rule.split(":")[0]] += 1
                    shown.append(f"{verdict.rule}: {turns[j]!r} / {new!r}")
    report = {
        "turns": total,
        "content": "<text>" if args.bare else "<speaker>: <text>",
        "contradictions": sum(counts.values()),
        "by_rule": dict(counts.most_common()),
        "cpu_seconds": round(time.process_time() - started, 1),
    }
    print(json.dumps(report, indent=2))
    for line in shown[: args.show]:
        print(line[:400])


if __name__ == "__main__":
    main()
