"""Offline prototypes of recall ideas on the LoCoMo dev conversations, without a stack.

Reads what one dev run of ``locomo.py`` wrote:

    cd bench && python locomo.py --split dev --data …/locomo10_evidence_corrected.json \\
        --candidates /tmp/dev-candidates.json --vectors /tmp/dev-vectors.npz
    python bench/locomo_offline.py /tmp/dev-candidates.json /tmp/dev-vectors.npz --data …

and replays Engram's hybrid ranking in Python: the first stage as dumped (ts_rank keyword scores and
similarities of each list's 50 best), the weighted sum (dense share 0.25), the subject boost (×2) and session
context (±2 places, 0.2 of the hit's score, half per further place). Each idea then changes one part and is
scored with the harness's metrics on the same questions. Dev only: the script refuses holdout conversations.
The dump must come from a run with ts_rank keyword scores (before ``keyword_idf``, or with it off), as the
figures in docs/benchmarks.md (2026-12-02, "LoCoMo: rarity-weighted keyword scores") were read from.

``--grid`` instead replays the weights (dense share, session context, subject boost, and k1 of an offline BM25
with b = 0 and df over the three dev conversations) on a dump with rarity weighting (the default since c8186e7),
the turns' trust in the score and the session lift as recall applies it; with ``--rankings`` (the same run's
``--dump``) it first says how often the replay of the defaults puts the same ten first as the service did.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from locomo import CATEGORY_NAMES, DATA, DEV, Conversation, Turn, by_category, evidence, load, mean, score

from engram.domain.scoring import asks

TOKEN = re.compile(r"[^\W_]+")
# PostgreSQL's English stop words (the 'english' text search configuration drops these)
PG_STOP = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves what which who whom this that these those am is are
    was were be been being have has had having do does did doing a an the and but if or because as until while
    of at by for with about against between into through during before after above below to from up down in out
    on off over under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don should now""".split()
)
try:
    from snowballstemmer import stemmer

    _STEM = stemmer("english")

    def stem(word: str) -> str:
        return str(_STEM.stemWord(word))
except ImportError:  # pragma: no cover

    def stem(word: str) -> str:
        return word


def lexemes(text: str) -> list[str]:
    """Roughly what to_tsvector('english', …) keeps: lower-cased words without stop words, stemmed."""
    return [stem(w) for w in (t.lower() for t in TOKEN.findall(text)) if w not in PG_STOP]


def indexed(turn: Turn) -> str:
    """content + index_context: the speaker and text, the date in words with its weekday, the subject."""
    date = f"{turn.date:%-d %B %Y} ({turn.date:%A})" if turn.date else ""
    return f"{turn.speaker}: {turn.text} {date} {turn.speaker}"


def min_max(values: dict[str, float]) -> dict[str, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high - low < 1e-12:
        return dict.fromkeys(values, 1.0)
    return {k: (v - low) / (high - low) for k, v in values.items()}


class Conv:
    def __init__(self, conv: Conversation, vectors: dict[str, np.ndarray]) -> None:
        self.conv = conv
        self.turns = {t.dia_id: t for t in conv.turns}
        self.order = [t.dia_id for t in conv.turns]
        self.place = {d: n for n, d in enumerate(self.order)}
        self.docs = {t.dia_id: lexemes(indexed(t)) for t in conv.turns}
        self.tf = {d: Counter(ws) for d, ws in self.docs.items()}
        self.df: Counter[str] = Counter()
        for ws in self.docs.values():
            self.df.update(set(ws))
        self.n = len(self.docs)
        self.avglen = sum(len(ws) for ws in self.docs.values()) / self.n
        self.matrix = np.stack([vectors[d] / np.linalg.norm(vectors[d]) for d in self.order])

    pooled: tuple[Counter[str], int] | None = None  # df and N over every conversation of the tenant

    def idf(self, term: str) -> float:
        df, n = (self.pooled[0].get(term, 0), self.pooled[1]) if self.pooled else (self.df.get(term, 0), self.n)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def bm25(self, terms: list[str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
        out: dict[str, float] = {}
        for term in set(terms):
            if term not in self.df:
                continue
            idf = self.idf(term)
            for d, tf in self.tf.items():
                f = tf.get(term, 0)
                if f:
                    norm = f * (k1 + 1) / (f + k1 * (1 - b + b * len(self.docs[d]) / self.avglen))
                    out[d] = out.get(d, 0.0) + idf * norm
        return out

    def dense(self, qv: np.ndarray) -> dict[str, float]:
        sims = self.matrix @ (qv / np.linalg.norm(qv))
        return {d: float(s) for d, s in zip(self.order, sims, strict=True)}

    def session_context(
        self,
        scored: dict[str, float],
        weight: float = 0.2,
        seeds: int = 10,
        width: int = 2,
        trust: float = 1.0,
        reply: float = 1.0,
    ) -> dict[str, float]:
        """``reply``: the factor on the lift of the turn right after a seed that asks (``scoring.asks``)."""
        best = sorted(scored, key=lambda d: -scored[d])[:seeds]
        lifts: dict[str, float] = {}
        for seed in best:
            place = self.place[seed]
            session = self.turns[seed].session
            asking = asks(self.turns[seed].content)
            for off in [*range(-width, 0), *range(1, width + 1)]:
                p = place + off
                if 0 <= p < len(self.order) and self.turns[self.order[p]].session == session:
                    lift = weight * scored[seed] * 0.5 ** (abs(off) - 1) * trust
                    if asking and off == 1:
                        lift *= reply
                    d = self.order[p]
                    lifts[d] = max(lifts.get(d, 0.0), lift)
        out = dict(scored)
        for d, lift in lifts.items():
            out[d] = out.get(d, 0.0) + lift
        return out


def top(values: dict[str, float], k: int) -> dict[str, float]:
    return dict(sorted(values.items(), key=lambda kv: -kv[1])[:k])


def names_subject(question: str, speaker: str) -> bool:
    qw = {w.lower() for w in TOKEN.findall(question)}
    return any(len(w) >= 3 and w.lower() in qw for w in TOKEN.findall(speaker))


Ranker = Callable[[Conv, dict[str, object], np.ndarray, dict[str, object]], list[str]]


def fuse_rank(
    c: Conv,
    q: dict[str, object],
    kw: dict[str, float],
    de: dict[str, float],
    dense_weight: float = 0.25,
    boost: float = 1.0,
    context: float = 0.2,
) -> dict[str, float]:
    k, d = min_max(kw), min_max(de)
    fused = {x: (1 - dense_weight) * k.get(x, 0.0) + dense_weight * d.get(x, 0.0) for x in k.keys() | d.keys()}
    question = str(q["question"])
    for x in fused:
        if boost and names_subject(question, c.turns[x].speaker):
            fused[x] *= 1 + boost
    return c.session_context(fused, context) if context else fused


def rocchio(
    c: Conv,
    q: dict[str, object],
    qv: np.ndarray,
    d: dict[str, object],
    first: dict[str, float],
    m: int,
    beta: float,
    share: float,
    kw: dict[str, float],
) -> dict[str, float]:
    """A second semantic list for the query vector moved towards the m best first-stage hits' vectors; the
    keyword list as before, the dense side the max of the two lists' similarities (the second at ``share``)."""
    best = ranked(first)[:m]
    centroid = np.mean([c.matrix[c.place[x]] for x in best], axis=0)
    moved = qv / np.linalg.norm(qv) + beta * centroid
    de = top(c.dense(qv), 50)
    for x, sim in top(c.dense(moved), 50).items():
        de[x] = max(de.get(x, -1.0), share * sim + (1 - share) * de.get(x, sim))
    return c.session_context(fuse_rank(c, q, kw, de, context=0), 0.2)


def entity_links(
    c: Conv, q: dict[str, object], first: dict[str, float], seeds: int, decay: float, rare: int
) -> dict[str, float]:
    """Memories sharing a rare word (a capitalised one or among the seed's ``rare`` rarest) with one of the best
    hits, not named by the query, join at ``decay`` × the hit's score × the shared words' idf share."""
    qterms = set(lexemes(str(q["question"])))
    out = dict(first)
    for seed in ranked(first)[:seeds]:
        terms = sorted({t for t in c.docs[seed] if t not in qterms and c.df[t] > 1}, key=lambda t: -c.idf(t))[:rare]
        if not terms:
            continue
        total = sum(c.idf(t) for t in terms)
        for x, tf in c.tf.items():
            if x == seed:
                continue
            shared = sum(c.idf(t) for t in terms if t in tf)
            if shared:
                lift = decay * first[seed] * shared / total
                out[x] = max(out.get(x, 0.0), lift) if x not in first else out[x] + lift * 0.5
    return out


def decomposed(c: Conv, question: str, mode: str) -> dict[str, float]:
    """Query decomposition by rules: the question split on "and" and commas, each part's BM25 (b = 0) normalised,
    combined by ``mode`` (max, mean, or half the whole question's and half the best part's)."""
    parts = [p for p in re.split(r",? and |, ", question) if lexemes(p)]
    whole = c.bm25(lexemes(question), 1.2, 0.0)
    if len(parts) < 2:
        return whole
    subs = [min_max(c.bm25(lexemes(p), 1.2, 0.0)) for p in parts]
    keys: set[str] = set().union(*subs)
    if mode == "max":
        return {k: max(s.get(k, 0.0) for s in subs) for k in keys}
    if mode == "mean":
        return {k: sum(s.get(k, 0.0) for s in subs) / len(subs) for k in keys}
    w = min_max(whole)
    return {k: 0.5 * w.get(k, 0.0) + 0.5 * max(s.get(k, 0.0) for s in subs) for k in keys | set(w)}


def ranked(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: (-scores[d], d))


def evaluate(name: str, rows: list[tuple[int, list[str], set[str]]]) -> dict[str, float]:
    scored = [score([[d] for d in r], rel, 0) for _, r, rel in rows]
    m = mean(scored)
    cats = by_category(scored, [c for c, _, _ in rows])
    print(
        f"{name:60s} R@5 {m['r5']:.3f} R@10 {m['r10']:.3f} MRR {m['mrr']:.3f} nDCG {m['ndcg10']:.3f} | "
        + " ".join(f"{k[:6]} {v:.3f}" for k, v in cats.items()),
        flush=True,
    )
    return m


def service_like(
    c: Conv,
    q: dict[str, object],
    kw: dict[str, float],
    de: dict[str, float],
    dense_weight: float,
    boost: float,
    context: float,
    trust: float,
    reply: float = 1.0,
) -> list[str]:
    """The service's order as closely as the dump allows: the weighted sum and the subject boost times a trust
    the same for every turn, session context lifting from the 10 best by weight × the hit's score (trust in it)
    × trust, ties to the later turn (recall sorts by score, then newest first), scores rounded as it rounds."""
    fused = fuse_rank(c, q, kw, de, dense_weight, boost, context=0)
    scored = {x: round(v * trust, 6) for x, v in fused.items()}
    # in recall's order before the lift, so the ten seeds are recall's ten (a stable sort keeps ties in it)
    scored = dict(sorted(scored.items(), key=lambda kv: (-kv[1], -c.place[kv[0]])))
    if context:
        scored = {x: round(v, 6) for x, v in c.session_context(scored, context, trust=trust, reply=reply).items()}
    return sorted(scored, key=lambda d: (-scored[d], -c.place[d]))


def grid(
    questions: list[tuple[Conv, dict[str, object], np.ndarray, dict[str, object]]],
    dumped_lists: Callable[[dict[str, object]], tuple[dict[str, float], dict[str, float]]],
    rankings_path: str,
    trust: float,
) -> None:
    """The weights grid around the defaults, replayed on the dumped first stage; with ``rankings_path`` first how
    closely the replay of the defaults follows the service's own rankings of the same run."""
    lists = [dumped_lists(d) for _, _, _, d in questions]
    rel = [evidence(q) for _, q, _, _ in questions]
    cats = [int(q["category"]) for _, q, _, _ in questions]  # type: ignore[call-overload]

    def metrics(order: Callable[[int], list[str]]) -> dict[str, float]:
        scored = [score([[d] for d in order(n)], rel[n], 0) for n in range(len(questions))]
        m = mean(scored)
        m["multi"] = by_category(scored, cats).get("multi-hop", 0.0)
        return m

    if rankings_path:
        service = {
            (str(r["conversation"]), str(r["question"])): [ids[0] for ids in r["engram"] if ids]
            for r in json.loads(Path(rankings_path).read_text())
        }
        served = [service.get((c.conv.sample_id, str(q["question"])), []) for c, q, _, _ in questions]
        m = mean([score([[d] for d in served[n]], rel[n], 0) for n in range(len(questions))])
        print(f"service, as dumped: R@10 {m['r10']:.3f} MRR {m['mrr']:.3f} nDCG {m['ndcg10']:.3f}")
        for t in sorted({trust, 0.8, 1.0}):
            same = top1 = 0
            for n, (c, q, _, _) in enumerate(questions):
                mine = service_like(c, q, *lists[n], 0.25, 1.0, 0.2, t)[:10]
                same += mine == served[n][:10]
                top1 += bool(mine) and bool(served[n]) and mine[0] == served[n][0]
            m = metrics(lambda n, t=t: service_like(questions[n][0], questions[n][1], *lists[n], 0.25, 1.0, 0.2, t))
            print(
                f"replay of the defaults, trust {t}: R@10 {m['r10']:.3f} MRR {m['mrr']:.3f} nDCG {m['ndcg10']:.3f}; "
                f"same ten as the service {same}/{len(questions)}, same first {top1}/{len(questions)}"
            )
    keyword_lists: dict[str, list[dict[str, float]]] = {"dumped": [kw for kw, _ in lists]}
    for k1 in (0.8, 1.2, 1.6):
        keyword_lists[f"k1 {k1}"] = [top(c.bm25(lexemes(str(q["question"])), k1, 0.0), 50) for c, q, _, _ in questions]
    print("keyword  dense  context  boost |  R@5   R@10   MRR    nDCG")
    for name, kws in keyword_lists.items():
        for dw in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45):
            for ctx in (0.0, 0.1, 0.2, 0.3, 0.4):
                for boost in (0.5, 1.0):
                    m = metrics(
                        lambda n, kws=kws, dw=dw, ctx=ctx, boost=boost: service_like(
                            questions[n][0], questions[n][1], kws[n], lists[n][1], dw, boost, ctx, trust
                        )
                    )
                    print(
                        f"{name:8s} {dw:5.2f}  {ctx:7.1f}  {boost:5.1f} | {m['r5']:.3f}  {m['r10']:.3f}  "
                        f"{m['mrr']:.3f}  {m['ndcg10']:.3f} | multi-hop R@10 {m['multi']:.3f}",
                        flush=True,
                    )


REPLY_FACTORS = (1.0, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0)


def replies(
    questions: list[tuple[Conv, dict[str, object], np.ndarray, dict[str, object]]],
    dumped_lists: Callable[[dict[str, object]], tuple[dict[str, float], dict[str, float]]],
    rankings_path: str,
    trust: float,
) -> None:
    """The reply factor of session context (``session_replies``: the turn right after a hit that asks gains this
    many times the lift), replayed at the current defaults (dense 0.35, boost 1.0, session context 0.4): MRR and
    R@10 on all dev and with each conversation left out, and the factor the other two conversations choose for
    each one. With ``rankings_path``, how often each factor's ten equal the service's ten of that run."""
    lists = [dumped_lists(d) for _, _, _, d in questions]
    rel = [evidence(q) for _, q, _, _ in questions]
    convs = [c.conv.sample_id for c, _, _, _ in questions]
    served = None
    if rankings_path:
        service = {
            (str(r["conversation"]), str(r["question"])): [ids[0] for ids in r["engram"] if ids]
            for r in json.loads(Path(rankings_path).read_text())
        }
        served = [service.get((c.conv.sample_id, str(q["question"])), []) for c, q, _, _ in questions]
    rows: dict[float, list[dict[str, float]]] = {}
    for factor in REPLY_FACTORS:
        orders = [
            service_like(c, q, *lists[n], 0.35, 1.0, 0.4, trust, factor) for n, (c, q, _, _) in enumerate(questions)
        ]
        rows[factor] = [score([[d] for d in orders[n]], rel[n], 0) for n in range(len(questions))]
        m = mean(rows[factor])
        out = [f"reply ×{factor:<4}: MRR {m['mrr']:.3f} R@10 {m['r10']:.3f} nDCG {m['ndcg10']:.3f} |"]
        for left in DEV:
            k = mean([r for r, cv in zip(rows[factor], convs, strict=True) if cv != left])
            out.append(f"without {left} {k['mrr']:.3f} / {k['r10']:.3f}")
        if served is not None:
            same = sum(orders[n][:10] == served[n][:10] for n in range(len(questions)))
            out.append(f"| same ten as the service {same}/{len(questions)}")
        print(" ".join(out), flush=True)
    for left in DEV:
        kept = {f: mean([r for r, cv in zip(rows[f], convs, strict=True) if cv != left])["mrr"] for f in rows}
        chosen = max(kept, key=lambda f: kept[f])
        before = mean([r for r, cv in zip(rows[1.0], convs, strict=True) if cv == left])
        after = mean([r for r, cv in zip(rows[chosen], convs, strict=True) if cv == left])
        print(
            f"{left} left out: the other two choose ×{chosen}; on {left} MRR {before['mrr']:.3f} → {after['mrr']:.3f}, "
            f"R@10 {before['r10']:.3f} → {after['r10']:.3f}"
        )


def load_dev_dump(
    candidates: str, vectors: str, data: str
) -> tuple[list[dict[str, Any]], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, Any]]:
    """A dev run's dump: its first-stage candidates, the turns' and questions' vectors by key, and the dev
    conversations; refused if a holdout conversation is in it."""
    dumped = json.loads(Path(candidates).read_text())
    if any(d["conversation"] not in DEV for d in dumped):
        raise SystemExit("the dump holds a holdout conversation: refusing")
    npz = np.load(vectors)
    turns = {str(k): v for k, v in zip(npz["turn_keys"], npz["turns"], strict=True)}
    questions = {str(k): v for k, v in zip(npz["question_keys"], npz["questions"], strict=True)}
    return dumped, turns, questions, {c.sample_id: c for c in load(Path(data), DEV)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates")
    parser.add_argument("vectors")
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--only", default="", help="run only the experiments whose name contains this")
    parser.add_argument(
        "--grid",
        action="store_true",
        help="instead of the ideas: the weights grid (dense share × session context × subject boost × k1) over the "
        "dumped first stage (a dump with rarity weighting, the default since c8186e7)",
    )
    parser.add_argument(
        "--replies",
        action="store_true",
        help="instead of the ideas: the reply factor of session context (session_replies) at the current defaults",
    )
    parser.add_argument(
        "--rankings", default="", help="with --grid or --replies: locomo.py --dump of the same run, to compare"
    )
    parser.add_argument(
        "--trust",
        type=float,
        default=0.94,
        help="with --grid: the turns' trust (0.94: source trust 1.0, confidence 0.7, as locomo.py stores them)",
    )
    args = parser.parse_args()
    dumped, vectors, qvecs, convs = load_dev_dump(args.candidates, args.vectors, args.data)
    prepared = {
        sid: Conv(conv, {k.split("/", 1)[1]: v for k, v in vectors.items() if k.startswith(sid + "/")})
        for sid, conv in convs.items()
    }
    questions = []  # (conv, question, query vector, dumped first stage)
    counters: Counter[str] = Counter()
    for d in dumped:
        sid = str(d["conversation"])
        n = counters[sid]
        counters[sid] += 1
        q = convs[sid].questions[n]
        assert q["question"] == d["question"], (q["question"], d["question"])
        questions.append((prepared[sid], q, qvecs[f"{sid}/{n}"], d))

    def run(name: str, ranker: Ranker) -> dict[str, float]:
        if args.only and args.only not in name:
            return {}
        rows = [(int(q["category"]), ranker(c, q, qv, d), evidence(q)) for c, q, qv, d in questions]  # type: ignore[call-overload]
        return evaluate(name, rows)

    def dumped_lists(d: dict[str, object]) -> tuple[dict[str, float], dict[str, float]]:
        kw, de = {}, {}
        for cand in d["candidates"]:  # type: ignore[attr-defined]
            if cand["keyword"] is not None:
                kw[cand["external_id"]] = cand["keyword"]
            if cand["dense"] is not None:
                de[cand["external_id"]] = cand["dense"]
        return kw, de

    pooled: Counter[str] = Counter()
    for c in prepared.values():
        pooled.update(c.df)
    pooled_n = sum(c.n for c in prepared.values())
    if args.replies:
        for c in prepared.values():
            c.pooled = (pooled, pooled_n)
        replies(questions, dumped_lists, args.rankings, args.trust)
        return
    if args.grid:
        for c in prepared.values():
            c.pooled = (pooled, pooled_n)
        grid(questions, dumped_lists, args.rankings, args.trust)
        return
    for label in ("per conversation", "pooled over the tenant"):
        for c in prepared.values():
            c.pooled = (pooled, pooled_n) if label.startswith("pooled") else None
        run(f"bm25 [{label}] alone", lambda c, q, qv, d: ranked(c.bm25(lexemes(str(q["question"])))))
        run(
            f"bm25 [{label}] + dense + context",
            lambda c, q, qv, d: ranked(
                fuse_rank(c, q, top(c.bm25(lexemes(str(q["question"]))), 50), dumped_lists(d)[1])
            ),
        )
    for c in prepared.values():
        c.pooled = None
    for k1 in (0.5, 1.2, 2.0):
        for b in (0.0, 0.3, 0.75):
            run(
                f"bm25 k1 {k1} b {b} + dense + context",
                lambda c, q, qv, d, k1=k1, b=b: ranked(
                    fuse_rank(c, q, top(c.bm25(lexemes(str(q["question"])), k1, b), 50), dumped_lists(d)[1])
                ),
            )
    run(
        "dumped first stage, weighted sum, no context",
        lambda c, q, qv, d: ranked(fuse_rank(c, q, *dumped_lists(d), context=0)),
    )
    run(
        "dumped first stage + session context (= Engram today)",
        lambda c, q, qv, d: ranked(fuse_rank(c, q, *dumped_lists(d))),
    )
    run(
        "offline dense top-50 (check)",
        lambda c, q, qv, d: ranked(fuse_rank(c, q, dumped_lists(d)[0], top(c.dense(qv), 50))),
    )
    run("bm25 alone (pg stems)", lambda c, q, qv, d: ranked(c.bm25(lexemes(str(q["question"])))))
    run("ts_rank keyword alone (dumped)", lambda c, q, qv, d: ranked(dumped_lists(d)[0]))
    for k in (50, 100):
        run(
            f"bm25 top-{k} as keyword list + dense 50 + context",
            lambda c, q, qv, d, k=k: ranked(
                fuse_rank(c, q, top(c.bm25(lexemes(str(q["question"]))), k), dumped_lists(d)[1])
            ),
        )
    for dw in (0.15, 0.25, 0.35, 0.5):
        for boost in (0.0, 0.5, 1.0):
            run(
                f"bm25 keyword, dense {dw}, boost {boost}",
                lambda c, q, qv, d, dw=dw, boost=boost: ranked(
                    fuse_rank(c, q, top(c.bm25(lexemes(str(q["question"]))), 50), dumped_lists(d)[1], dw, boost)
                ),
            )
    base = lambda c, q, d: fuse_rank(c, q, *dumped_lists(d), context=0)  # noqa: E731
    bm = lambda c, q, d: fuse_rank(c, q, top(c.bm25(lexemes(str(q["question"]))), 50), dumped_lists(d)[1], context=0)  # noqa: E731
    bm0 = lambda c, q, d: fuse_rank(  # noqa: E731
        c, q, top(c.bm25(lexemes(str(q["question"])), 1.2, 0.0), 50), dumped_lists(d)[1], context=0
    )
    for dw in (0.15, 0.25, 0.35):
        for boost in (0.5, 1.0):
            for ctx in (0.2, 0.3):
                run(
                    f"bm25 b 0 k1 0.8, dense {dw}, boost {boost}, context {ctx}",
                    lambda c, q, qv, d, dw=dw, boost=boost, ctx=ctx: ranked(
                        fuse_rank(
                            c,
                            q,
                            top(c.bm25(lexemes(str(q["question"])), 0.8, 0.0), 50),
                            dumped_lists(d)[1],
                            dw,
                            boost,
                            ctx,
                        )
                    ),
                )
    for mode in ("max", "mean", "blend"):
        run(
            f"decomposed on 'and' and commas (bm25 b 0), {mode}",
            lambda c, q, qv, d, mode=mode: ranked(
                fuse_rank(c, q, top(decomposed(c, str(q["question"]), mode), 50), dumped_lists(d)[1])
            ),
        )
    for first_name, first in (("ts_rank", base), ("bm25", bm), ("bm25 b 0", bm0)):
        for m in (3, 5, 10):
            for beta in (0.5, 1.0, 2.0):
                for share in (0.5, 1.0):
                    run(
                        f"rocchio[{first_name}] top-{m} beta {beta} share {share}",
                        lambda c, q, qv, d, m=m, beta=beta, share=share, first=first: ranked(
                            rocchio(
                                c,
                                q,
                                qv,
                                d,
                                first(c, q, d),
                                m,
                                beta,
                                share,
                                dumped_lists(d)[0] if first is base else top(c.bm25(lexemes(str(q["question"]))), 50),
                            )
                        ),
                    )
        for seeds in (3, 5):
            for decay in (0.3, 0.5):
                for rare in (2, 3):
                    run(
                        f"entity[{first_name}] seeds {seeds} decay {decay} min-idf-rank {rare}",
                        lambda c, q, qv, d, seeds=seeds, decay=decay, rare=rare, first=first: ranked(
                            c.session_context(entity_links(c, q, first(c, q, d), seeds, decay, rare), 0.2)
                        ),
                    )
    print("categories:", CATEGORY_NAMES)


if __name__ == "__main__":
    main()
