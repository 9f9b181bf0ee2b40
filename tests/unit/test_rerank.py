"""The second stage of hybrid recall: its features, its relevance and its reason, all deterministic."""

from __future__ import annotations

from engram.domain import rerank


def _candidates() -> tuple[dict[str, rerank.Candidate], dict[str, float], dict[str, float]]:
    keyword = {"a": 0.09, "b": 0.03}
    semantic = {"b": 0.86, "c": 0.80}
    given = {
        "a": rerank.Candidate("Caroline: I went hiking with the kids last weekend.", 0.09, None, True),
        "b": rerank.Candidate("Melanie: We painted a sunrise together at the lake.", 0.03, 0.86, False),
        "c": rerank.Candidate("Melanie: Pottery class was fun.", None, 0.80, False),
    }
    return given, keyword, semantic


def test_each_candidate_gets_its_features_in_order() -> None:
    given, keyword, semantic = _candidates()
    vectors = rerank.features("When did Melanie paint a sunrise at the lake?", given, keyword, semantic)
    assert set(vectors) == {"a", "b", "c"}
    named = {key: dict(zip(rerank.FEATURES, v, strict=True)) for key, v in vectors.items()}
    assert named["a"]["keyword"] == 1.0 and named["b"]["keyword"] == 0.0 and named["c"]["keyword"] == 0.0
    assert named["b"]["semantic"] == 1.0 and named["a"]["semantic"] == 0.0
    assert named["a"]["keyword_place"] == 1.0 and named["b"]["keyword_place"] == 1 / 1.1
    assert named["c"]["keyword_place"] == 0.0
    assert named["b"]["both"] == 1.0 and named["a"]["both"] == 0.0
    assert named["a"]["subject"] == 1.0 and named["b"]["subject"] == 0.0
    # "melanie", "paint", "sunrise", "lake": b has all four ("painted" → "paint"), c only "melanie"
    assert named["b"]["coverage"] == 1.0 and named["c"]["coverage"] == 0.25 and named["a"]["coverage"] == 0.0
    assert abs(named["c"]["semantic_gap"] - (0.80 - 0.86)) < 1e-12
    assert abs(named["a"]["semantic_gap"] - (0.80 - 0.86)) < 1e-12  # not found: the list's lowest


def test_the_same_input_gives_the_same_relevance_and_reason() -> None:
    given, keyword, semantic = _candidates()
    first = rerank.features("Melanie paint sunrise", given, keyword, semantic)
    again = rerank.features("Melanie paint sunrise", dict(reversed(list(given.items()))), keyword, semantic)
    assert first == again
    for key, vector in first.items():
        assert 0.0 < rerank.relevance(vector) < 1.0
        assert rerank.explain(vector) == rerank.explain(again[key])
        assert rerank.explain(vector).startswith(f"reranked {rerank.relevance(vector):.3f}")


def test_light_stemming_keeps_short_words_whole() -> None:
    assert rerank.stem("painted") == "paint" and rerank.stem("paints") == "paint" and rerank.stem("painting") == "paint"
    assert rerank.stem("bus") == "bus" and rerank.stem("is") == "is"
    assert rerank.content_stems("The kids and I were painting!") == {"kid", "paint"}


def test_the_fitted_weights_rank_the_memory_that_covers_the_question_first() -> None:
    given, keyword, semantic = _candidates()
    vectors = rerank.features("When did Melanie paint a sunrise at the lake?", given, keyword, semantic)
    relevance = {key: rerank.relevance(vector) for key, vector in vectors.items()}
    # b: first of the semantic list, in both lists, every content word of the question; a: first of the keyword
    # list and its subject named, but none of the question's words; c: second by similarity, one word of four
    assert sorted(relevance, key=lambda k: -relevance[k]) == ["b", "a", "c"]
    assert (
        rerank.explain(vectors["b"])
        == f"reranked {relevance['b']:.3f} (semantic_place 1.00, length 0.46, semantic 1.00)"
    )
    assert rerank.explain(vectors["a"]).endswith("(keyword 1.00, subject 1.00, length 0.46)")
