"""Could ``possible_supersedes`` find its candidates in constant time with a similarity hash? MinHash of each
text's trigrams, split into b bands of r hashes; two texts are candidates when one band is equal (the band
keys would be an indexed array per memory, each candidate then verified with pg_trgm's ``similarity``).

    python bench/supersedes_lsh.py

Prints, for several (r, b): precision / recall on the MSRP test split at the 0.35 threshold when only band
candidates are verified (against verifying every pair), and the share of random pairs of unrelated texts
(MSRP sentences, LoCoMo turns) that are candidates — the share of a store every remember would read and verify.
Trigrams are pg_trgm's in pure Python (lower case, words of letters and digits, padded with two spaces in front
and one behind); "content" trigrams leave out stop words, words under three letters and the two-space word
starts. No database, no model. MSRP and LoCoMo are read from ../shared/bench at run time.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import struct
from collections.abc import Callable
from pathlib import Path

# ../shared/bench beside the repository (or beside the directory of worktrees)
DATA = next(
    (p / "shared" / "bench" for p in Path(__file__).resolve().parents[1:4] if (p / "shared" / "bench").exists()),
    Path(__file__).resolve().parents[2] / "shared" / "bench",
)
THRESHOLD = 0.35
HASHES = 256
STOP = set(
    "the a an and or of to in on at for with by from is are was were be been it its this that as he she they we "
    "you i his her their our not but have has had will would can said".split()
)
MASK = (1 << 64) - 1
_rng = random.Random(1)
_A = [_rng.getrandbits(64) | 1 for _ in range(HASHES)]
_B = [_rng.getrandbits(64) for _ in range(HASHES)]


def msrp(split: str) -> list[tuple[int, str, str]]:
    with (DATA / "msrp" / f"msr-para-{split}.tsv").open(encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        return [(int(r[0]), r[3], r[4]) for r in rows if len(r) >= 5]


def locomo_turns() -> list[str]:
    turns: list[str] = []
    for conversation in json.loads((DATA / "locomo" / "locomo10.json").read_text()):
        for value in conversation["conversation"].values():
            if isinstance(value, list):
                turns += [t["text"] for t in value if isinstance(t, dict) and "text" in t]
    return turns


def trigrams(text: str) -> set[str]:
    out: set[str] = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        padded = "  " + word + " "
        out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return out


def content_trigrams(text: str) -> set[str]:
    out: set[str] = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        if word not in STOP and len(word) >= 3:
            padded = " " + word + " "
            out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def minhash(grams: set[str]) -> list[int]:
    values = [struct.unpack("<Q", hashlib.blake2b(g.encode(), digest_size=8).digest())[0] for g in grams] or [0]
    return [min(((a * x + b) & MASK) >> 32 for x in values) for a, b in zip(_A, _B, strict=True)]


def candidates(m1: list[int], m2: list[int], r: int, b: int) -> bool:
    return any(m1[j * r : (j + 1) * r] == m2[j * r : (j + 1) * r] for j in range(b))


def main() -> None:
    test = msrp("test")
    unrelated = {"MSRP": [a for _, a, _ in msrp("train")][:500], "LoCoMo": locomo_turns()[:500]}
    shapes = [(2, 32), (2, 48), (3, 64), (3, 80), (4, 64)]
    for name, grams in (("all", trigrams), ("content", content_trigrams)):
        scored = [
            (label, jaccard(trigrams(a), trigrams(b)), minhash(grams(a)), minhash(grams(b))) for label, a, b in test
        ]
        positives = sum(1 for label, *_ in scored if label == 1)
        tp = sum(1 for label, s, *_ in scored if s >= THRESHOLD and label == 1)
        fp = sum(1 for label, s, *_ in scored if s >= THRESHOLD and label == 0)
        print(f"{name} trigrams; every pair verified: P {tp / (tp + fp):.3f} R {tp / positives:.3f}")
        pairs = {}
        for corpus, texts in unrelated.items():
            rng = random.Random(3)
            sketches = [minhash(grams(t)) for t in texts]
            picked = [(rng.randrange(len(texts)), rng.randrange(len(texts))) for _ in range(15000)]
            pairs[corpus] = (sketches, [(i, j) for i, j in picked if i != j])
        for r, b in shapes:
            hit: Callable[[list[int], list[int]], bool] = lambda x, y, r=r, b=b: candidates(x, y, r, b)  # noqa: E731
            tp = sum(1 for label, s, m1, m2 in scored if s >= THRESHOLD and label == 1 and hit(m1, m2))
            fp = sum(1 for label, s, m1, m2 in scored if s >= THRESHOLD and label == 0 and hit(m1, m2))
            rates = "  ".join(
                f"{corpus} {sum(1 for i, j in p if hit(s[i], s[j])) / len(p):.1%}" for corpus, (s, p) in pairs.items()
            )
            found = f"P {tp / (tp + fp):.3f} R {tp / positives:.3f}"
            print(f"  r={r} b={b}: {found}; unrelated pairs that are candidates: {rates}")


if __name__ == "__main__":
    main()
