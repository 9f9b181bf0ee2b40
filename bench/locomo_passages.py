"""Dense recall on the LoCoMo dev conversations with each turn embedded together with the turn before it in its
session, replayed offline on one dev run's dump (no stack; dev only).

    cd bench && python locomo.py --split dev --data …/locomo10_evidence_corrected.json \\
        --candidates /tmp/dev-candidates.json --vectors /tmp/dev-vectors.npz
    python locomo_passages.py /tmp/dev-candidates.json /tmp/dev-vectors.npz --data …

The embedder stores ``passage(content, valid_from)`` ("8 May 2023 (Monday): Caroline: …"); here each turn is
embedded in-process with the same model (``passage_vectors``; about 0.3 s of CPU a turn, cached) as
``passage(previous content + "\\n" + content, valid_from)``, the previous turn of the same session first.
The semantic list (the 50 nearest) is taken from those vectors, the keyword list as dumped, and recall is
replayed as ``locomo_offline.py`` does (dense share, subject boost, trust, session context with the reply
factor); MRR and R@10 on all dev and with each conversation left out.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from locomo import DATA, DEV, evidence, mean, score
from locomo_offline import Conv, load_dev_dump, service_like, top
from passage_vectors import passages

from engram.domain.content import passage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates")
    parser.add_argument("vectors")
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--trust", type=float, default=0.94)
    args = parser.parse_args()
    dumped, stored, qvecs, convs = load_dev_dump(args.candidates, args.vectors, args.data)
    texts, keys = [], []
    for sid, conv in convs.items():
        for i, turn in enumerate(conv.turns):
            before = conv.turns[i - 1] if i and conv.turns[i - 1].session == turn.session else None
            texts.append(passage((before.content + "\n" if before else "") + turn.content, turn.date))
            keys.append(f"{sid}/{turn.dia_id}")
    with_previous = dict(zip(keys, passages(texts), strict=True))
    prepared = {
        sid: Conv(conv, {k.split("/", 1)[1]: v for k, v in stored.items() if k.startswith(sid + "/")})
        for sid, conv in convs.items()
    }
    pooled: Counter[str] = Counter()
    for c in prepared.values():
        pooled.update(c.df)
    for c in prepared.values():
        c.pooled = (pooled, sum(p.n for p in prepared.values()))
    rows = []
    counters: Counter[str] = Counter()
    for d in dumped:
        sid = str(d["conversation"])
        n = counters[sid]
        counters[sid] += 1
        c, q = prepared[sid], convs[sid].questions[n]
        qv = qvecs[f"{sid}/{n}"] / np.linalg.norm(qvecs[f"{sid}/{n}"])
        kw = {x["external_id"]: x["keyword"] for x in d["candidates"] if x["keyword"] is not None}
        de = {x["external_id"]: x["dense"] for x in d["candidates"] if x["dense"] is not None}
        sims = np.stack([with_previous[f"{sid}/{x}"] for x in c.order]) @ qv
        rows.append((sid, c, q, kw, de, top({x: float(s) for x, s in zip(c.order, sims, strict=True)}, 50)))
    for name, dense_weight, reply, new in (
        ("stored vectors, reply ×1 (before)", 0.35, 1.0, False),
        ("stored vectors, reply ×2 (session_replies)", 0.35, 2.0, False),
        ("with the previous turn, reply ×1", 0.35, 1.0, True),
        ("with the previous turn, reply ×2", 0.35, 2.0, True),
        ("with the previous turn, dense 0.45, reply ×2", 0.45, 2.0, True),
    ):
        scored = [
            (
                sid,
                score(
                    [[x] for x in service_like(c, q, kw, nd if new else de, dense_weight, 1.0, 0.4, args.trust, reply)],
                    evidence(q),
                    0,
                ),
            )
            for sid, c, q, kw, de, nd in rows
        ]
        m = mean([s for _, s in scored])
        left = " ".join(
            f"without {cv} {mean([s for sid, s in scored if sid != cv])['mrr']:.3f} / "
            f"{mean([s for sid, s in scored if sid != cv])['r10']:.3f}"
            for cv in DEV
        )
        print(f"{name:46s} MRR {m['mrr']:.3f} R@10 {m['r10']:.3f} nDCG {m['ndcg10']:.3f} | {left}", flush=True)


if __name__ == "__main__":
    main()
