"""False alarms on conversation: load LoCoMo chats one memory per turn and count what the conflicts consumer
would do between ordinary turns — contradiction conflicts per 1,000 turns, automatic supersessions,
refinement suggestions and recorded duplicates.

    python bench/conversation_conflicts.py --data PATH/locomo10.json [--only conv-26 conv-30 …] [--show 10]

Each turn becomes a memory as a new user would store it with ``remember``: kind ``fact``, one author (so one
authority), one workspace per conversation, ``source_session`` ``<sample>:S<n>`` per session, in the order the turns
were said, content ``<speaker>: <text>`` (as bench/locomo.py stores them; ``--bare``: the text alone). The
consumer's choices are replayed in this process rather than through a running stack: the same embedding model
(passage vectors, via bench/passage_vectors.py), the consumer's neighbour rule (the 5 nearest live memories of the
conversation at least ``floor - 0.05`` similar), ``conflict_rules.judge_with_learned`` (the rules, then the learned
judge as the consumer runs it, given both turns' own vectors; ``--rules-only``: ``conflict_rules.judge`` alone, as
with ``ENGRAM_CONFLICT_LEARNED_JUDGE=false``) and ``conflict_rules.outcome`` of the code on the path. A superseded
turn leaves the candidates, as it would. Run it against another checkout's rules with ``PYTHONPATH=<checkout> python
bench/conversation_conflicts.py …`` (how the "before" figures were taken).

``--kinds same|across`` gives each turn the kind the classifier would (the local kind model on the same vectors;
a kind only a writer may choose, singleton or review-gated, stays ``fact``), prints how many turns got each kind,
and applies the consumer's kind rule: an episodic turn (``observation``, ``diary_entry``) is never compared nor a
candidate, and the candidates are of the new turn's kind (``same``, the consumer before
docs/adr/0007-conflicts-compared-across-kinds.md) or of any other kind (``across``, since). Without it every turn
is a ``fact`` and every turn is compared with every other: the most that could be flagged.

Data: LoCoMo (CC BY-NC 4.0), read from where ``--data`` points at run time, never copied into the repository.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from passage_vectors import passages

from engram.db.conflicts import SEARCHED_PER_NEIGHBOUR
from engram.domain import conflict_rules

NEIGHBOURS = 5  # services/conflicts/service.py
EPISODIC_KINDS = ("observation", "diary_entry")  # services/conflicts/service.py
WRITER_ONLY_KINDS = ("preference", "invariant", "doctrine")  # singleton or review-gated: the classifier keeps fact
CANDIDATE_MARGIN = 0.05
AUTHORITY = 50  # one author: every turn has the same authority


@dataclass
class Turn:
    dia_id: str
    session: str
    content: str
    superseded: bool = False
    kind: str = "fact"


def load(path: Path, only: list[str], speaker: bool = True) -> dict[str, list[Turn]]:
    out: dict[str, list[Turn]] = {}
    for sample in json.loads(path.read_text()):
        if only and sample["sample_id"] not in only:
            continue
        conv, turns, n = sample["conversation"], [], 1
        while f"session_{n}" in conv:
            for turn in conv[f"session_{n}"]:
                text = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
                content = f"{turn['speaker']}: {text}" if speaker else text
                turns.append(Turn(turn["dia_id"], f"{sample['sample_id']}:S{n}", content))
            n += 1
        out[sample["sample_id"]] = turns
    return out


def classify_kinds(turns: list[Turn], vectors: np.ndarray) -> None:
    """Each turn's kind as the classifier would set it on a memory written without one."""
    from engram.domain.classification import classify
    from engram.pipeline.kind_model import load_kind_model

    model = load_kind_model()
    for turn, vector in zip(turns, vectors, strict=True):
        kind = classify(turn.content, model=model, vector=vector).kind
        turn.kind = "fact" if kind in WRITER_ONLY_KINDS else kind


def replay(
    turns: list[Turn],
    vectors: np.ndarray,
    floor: float,
    counts: Counter[str],
    shown: list[str],
    kinds: str | None = None,
    rules_only: bool = False,
    searched: np.ndarray | None = None,
) -> None:
    knows_sessions = "same_session" in inspect.signature(conflict_rules.outcome).parameters
    knows_vectors = (
        hasattr(conflict_rules, "judge_with_learned")
        and "vectors" in inspect.signature(conflict_rules.judge_with_learned).parameters
    )
    for i, new in enumerate(turns):
        if i == 0 or (kinds and new.kind in EPISODIC_KINDS):
            continue
        sims = vectors[:i] @ vectors[i]
        order = np.argsort(-sims)
        if searched is not None:  # the consumer with context passages: 4 × 5 read by the searched vectors
            deep = np.argsort(-(searched[:i] @ vectors[i]))[: NEIGHBOURS * SEARCHED_PER_NEIGHBOUR]
            order = deep[np.argsort(-sims[deep])]
        live = [
            j
            for j in order
            if not turns[j].superseded
            and not (kinds and turns[j].kind in EPISODIC_KINDS)
            and not (kinds == "same" and turns[j].kind != new.kind)
        ][:NEIGHBOURS]
        for j in live:
            similarity = float(sims[j])
            if similarity < floor - CANDIDATE_MARGIN:
                break
            old = turns[j]
            if rules_only or not hasattr(conflict_rules, "judge_with_learned"):  # an older checkout: rules only
                verdict = conflict_rules.judge(old.content, new.content, similarity, floor=floor)
            else:
                own = {"vectors": (vectors[j], vectors[i])} if knows_vectors else {}  # as the consumer hands them
                verdict = conflict_rules.judge_with_learned(old.content, new.content, similarity, floor=floor, **own)
            if verdict is None:
                continue
            session = old.session == new.session
            extra = {"same_session": session} if knows_sessions else {}
            plan = conflict_rules.outcome(verdict, AUTHORITY, AUTHORITY, **extra)
            where = "same session" if session else "across sessions"
            counts[f"{verdict.label} → {plan.action} ({where})"] += 1
            if plan.action == "supersede":
                old.superseded = True
                counts["supersessions"] += 1
            if verdict.label == "contradiction" and plan.opens_conflict:
                counts["contradiction conflicts"] += 1
                counts[f"contradiction conflicts by {verdict.rule.split(':')[0]}"] += 1
                shown.append(f"[{verdict.rule}, {similarity:.2f}] {old.content!r} / {new.content!r}")
            if verdict.label == "duplicate" and plan.action == "record":
                counts["duplicates recorded"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="locomo10.json")
    parser.add_argument("--only", nargs="*", default=[], help="sample ids (default: all ten conversations)")
    parser.add_argument("--floor", type=float, default=0.85, help="ENGRAM_CONFLICT_SIMILARITY_FLOOR")
    parser.add_argument("--show", type=int, default=10, help="contradiction pairs to print")
    parser.add_argument(
        "--kinds", choices=("same", "across"), help="classify the turns and compare within one kind or across kinds"
    )
    parser.add_argument("--rules-only", action="store_true", help="the rules alone, without the learned judge")
    parser.add_argument(
        "--context",
        action="store_true",
        help="candidates as the consumer finds them with context passages: from the searched vectors (each turn "
        "after the first of its session embedded with the turn before it), compared by their own",
    )
    parser.add_argument(
        "--bare", action="store_true", help="store each turn's text without '<speaker>: ' (a chat stored unattributed)"
    )
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"LoCoMo data not found at {args.data}")
    conversations = load(args.data, args.only, speaker=not args.bare)
    everything = [t for turns in conversations.values() for t in turns]
    started = time.monotonic()
    matrix = passages([t.content for t in everything])
    searched = None
    if args.context:
        joined = [
            (turns[i - 1].content + "\n" if i and turns[i - 1].session == t.session else "") + t.content
            for turns in conversations.values()
            for i, t in enumerate(turns)
        ]
        searched = passages(joined)
    embedded = time.monotonic() - started
    if args.kinds:
        classify_kinds(everything, matrix)
    counts: Counter[str] = Counter()
    shown: list[str] = []
    at = 0
    for turns in conversations.values():
        part = None if searched is None else searched[at : at + len(turns)]
        replay(turns, matrix[at : at + len(turns)], args.floor, counts, shown, args.kinds, args.rules_only, part)
        at += len(turns)
    total = len(everything)
    report = {
        "conversations": list(conversations),
        "turns": total,
        "contradiction_conflicts": counts["contradiction conflicts"],
        "contradictions_per_1000_turns": round(1000 * counts["contradiction conflicts"] / total, 2),
        "automatic_supersessions": counts["supersessions"],
        "duplicates_recorded": counts["duplicates recorded"],
        "contradiction_conflicts_by_rule": {k.split(" by ")[1]: v for k, v in sorted(counts.items()) if " by " in k},
        "outcomes": {k: v for k, v in sorted(counts.items()) if "→" in k},
        "content": "<text>" if args.bare else "<speaker>: <text>",
        "context_passages": args.context,
        "learned_judge": not args.rules_only and hasattr(conflict_rules, "judge_with_learned"),
        "embedding_seconds": round(embedded, 1),
    }
    if args.kinds:
        report["kinds"] = args.kinds
        report["turns_by_kind"] = dict(Counter(t.kind for t in everything).most_common())
    print(json.dumps(report, indent=2))
    for line in shown[: args.show]:
        print(line)


if __name__ == "__main__":
    main()
