"""pg_trgm's trigrams in Python, the sketches' estimate and the cache of sketches (engram/domain/trigrams.py).
Agreement with PostgreSQL's own ``similarity()`` is tested against the database in
tests/integration/test_possible_supersedes_cache.py."""

from __future__ import annotations

import random

import pytest

from engram.domain import trigrams
from engram.domain.trigrams import SketchTable, candidates, estimate, similarity, sketch


def test_trigrams_are_pg_trgms_for_ascii_words() -> None:
    # show_trgm('Café déjà vu ÉLAN') under LC_CTYPE C: accented letters separate words
    assert trigrams.trigrams("Café déjà vu ÉLAN") == {
        "  c", "  d", "  j", "  l", "  v", " ca", " d ", " j ", " la", " vu", "af ", "an ", "caf", "lan", "vu ",
    }  # fmt: skip
    assert trigrams.trigrams("東京タワー 😀") == frozenset()
    assert trigrams.trigrams("snake_case") == trigrams.trigrams("snake case")
    assert trigrams.trigrams("KELVIN \u212a") == trigrams.trigrams("kelvin")  # the Kelvin sign is no word letter
    assert "  k" in trigrams.trigrams("KELVIN \u212a")
    assert {"  é", " éc", "éco"} <= trigrams.trigrams("École", unicode_words=True)


def test_similarity_is_the_jaccard_index_of_the_sets() -> None:
    a, b = trigrams.trigrams("a b"), trigrams.trigrams("a c")
    assert similarity(a, b) == pytest.approx(2 / 6)
    assert similarity(a, a) == 1.0
    assert similarity(frozenset(), frozenset()) == 0.0 and similarity(a, frozenset()) == 0.0


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(300)]
    return [" ".join(rng.choice(words) for _ in range(rng.choice([1, 3, 8, 20, 150]))) for _ in range(n)]


def test_the_estimate_is_never_below_the_similarity() -> None:
    texts = _texts(300, 1)
    grams, sketches = [trigrams.trigrams(t) for t in texts], [sketch(t) for t in texts]
    collided = 0
    for i in range(len(texts)):
        for j in range(i, min(i + 40, len(texts))):
            exact = similarity(grams[i], grams[j])
            assert estimate(sketches[i], sketches[j]) >= exact - 1e-12, (texts[i], texts[j])
            collided += sketches[i].lost > 0
    assert collided  # the long texts lose bits: the bound is exercised, not only exact sketches


def test_candidates_hold_every_entry_at_the_floor_best_estimate_first() -> None:
    texts = _texts(400, 2)
    window = [(n, sketch(t)) for n, t in enumerate(texts[1:])]
    query = trigrams.trigrams(texts[0])
    found = candidates(sketch(texts[0]), window, 0.3)
    keys = [k for _, k in found]
    reaching = {n for n, t in enumerate(texts[1:]) if similarity(query, trigrams.trigrams(t)) >= 0.3}
    assert reaching and reaching <= set(keys)
    assert len(keys) < len(window)  # a filter: most entries are left out
    assert [e for e, _ in found] == sorted((e for e, _ in found), reverse=True)
    assert candidates(sketch(""), window, 0.3) == [] and candidates(sketch(texts[0]), [], 0.3) == []
    assert len(candidates(sketch("東京"), window, 0.0)) == len(window)  # similarity() 0 reaches a threshold of 0


def test_the_table_drops_the_least_recently_used_but_never_the_windows() -> None:
    table = SketchTable(8)
    for key in "abcdefgh":
        assert table.put(key.encode(), sketch(key))
    assert table.lookup([b"a", b"z"]) == [b"z"]  # a is used since: the others are older
    assert table.put(b"i", sketch("i"))  # full: an eighth (one) dropped, one of the oldest
    assert b"a" in table and b"i" in table and len(table) == 8 and sum(k.encode() in table for k in "bcdefgh") == 6
    assert table.lookup([bytes([n]) for n in range(20)] + [k.encode() for k in "acdefghi"]) != []
    # every entry is in the window being scored: nothing can be dropped, the caller keeps the sketch
    assert not table.put(b"j", sketch("j")) and b"j" not in table and len(table) == 8
    with pytest.raises(ValueError, match="capacity"):
        SketchTable(0)


def test_the_tables_candidates_are_candidates_over_held_and_passed_sketches() -> None:
    texts = [
        f"The {w} database runs on port {p} for the {t} team."
        for w in ("staging", "billing", "search")
        for p in (6543, 6544, 7000)
        for t in ("ops", "data")
    ] + ["Lunch is at noon.", "", "東京"]
    keys = [f"{n:016d}".encode() for n in range(len(texts))]
    table = SketchTable(5)  # smaller than the window: the rest is passed in
    assert table.lookup(keys) == keys
    extra = {k: sketch(t) for k, t in zip(keys, texts, strict=True) if not table.put(k, sketch(t))}
    assert len(extra) == len(keys) - 5
    table.lookup(keys)
    for query in (texts[0], "The staging database now runs on port 6544.", "", "Lunch"):
        for floor in (0.0, 0.3):
            expected = candidates(sketch(query), list(zip(keys, (sketch(t) for t in texts), strict=True)), floor)
            assert table.candidates(sketch(query), keys, floor, extra) == expected
    assert table.candidates(sketch(texts[0]), [], 0.3) == []
